package tables

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The filter cache stays within its byte budget however many distinct
// expressions arrive, and refuses expressions past the length bound.
func TestFiltersBounded(t *testing.T) {
	var f Filters
	f.SetLimits(1<<20, 4096)
	long := strings.Repeat("a||", 2000) // 6000 bytes
	if _, err := f.Tags(long); !errors.Is(err, ErrExpressionTooLong) {
		t.Fatalf("Tags of %d bytes: %v", len(long), err)
	}
	if _, err := f.Compile("a > " + strings.Repeat("1", 5000)); !errors.Is(err, ErrExpressionTooLong) {
		t.Fatalf("Compile of 5004 bytes: %v", err)
	}
	for i := 0; i < 2000; i++ {
		expr := fmt.Sprintf("%d||%s", i, strings.Repeat("t||", 1300)) // ~3.9 KB, 1300 tags
		s, err := f.Tags(expr)
		if err != nil || !s.MatchTag([]byte("t")) {
			t.Fatalf("expression %d: %v", i, err)
		}
		if _, err := f.Compile(fmt.Sprintf("a = %d AND b = '%s'", i, strings.Repeat("x", 3000))); err != nil {
			t.Fatalf("sql %d: %v", i, err)
		}
		if b := f.CacheBytes(); b > 1<<20 {
			t.Fatalf("after %d expressions the cache counts %d bytes, bound %d", i+1, b, 1<<20)
		}
	}
	f.mu.RLock()
	n, m := len(f.tags), len(f.m)
	f.mu.RUnlock()
	if n == 0 || m == 0 {
		t.Errorf("cache empty: %d tag and %d sql entries", n, m)
	}
	t.Logf("%d tag and %d sql entries in %d bytes", n, m, f.CacheBytes())
}

// The pull path's lookup of a cached TAG expression.
func BenchmarkFiltersTagsHit(b *testing.B) {
	var f Filters
	f.SetLimits(DefaultFilterCacheMaxBytes, DefaultFilterExpressionMaxLength)
	if _, err := f.Tags("TagA||TagB"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Tags("TagA||TagB"); err != nil {
			b.Fatal(err)
		}
	}
}
