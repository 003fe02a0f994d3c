package broker

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// The filter cache stays within its byte budget however many distinct
// expressions arrive, and refuses expressions past the length bound.
func TestFiltersBounded(t *testing.T) {
	var f Filters
	f.setLimits(1<<20, 4096)
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

// Past maxParkedPulls a place is refused; answering a hold frees its place.
func TestHoldsBound(t *testing.T) {
	h := newHolds(func(string, int32) int64 { return 0 }, 2, zerolog.Nop())
	if !h.Reserve("a") || !h.Reserve("b") || h.Reserve("c") {
		t.Fatal("bound of 2 not applied")
	}
	answered := 0
	for i := 0; i < 2; i++ {
		h.Park("T", 0, 0, time.Hour, nil, func() { answered++ })
	}
	if h.Parked() != 2 {
		t.Fatalf("parked %d", h.Parked())
	}
	h.releaseQueue(queueKey{"T", 0}, func(*hold) bool { return true })
	if h.Parked() != 0 || answered != 2 || !h.Reserve("d") {
		t.Fatalf("after release: parked %d, answered %d", h.Parked(), answered)
	}
}

// The pull path's lookup of a cached TAG expression.
func BenchmarkFiltersTagsHit(b *testing.B) {
	var f Filters
	f.setLimits(defaultFilterCacheMaxBytes, defaultFilterExpressionMaxLength)
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
