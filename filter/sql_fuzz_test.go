package filter

import (
	"strings"
	"testing"
)

// FuzzCompile: the parser never panics, errors are parse errors, and a
// compiled expression evaluates without panicking.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{"a > 5", "a BETWEEN 1 AND 3 OR b IN ('x','y')", "NOT (c IS NULL)", "TAGS = 'A' AND x CONTAINS 'y'",
		"a NOT STARTSWITH 'p' -- c\n", "/* x */ -a < -1.5e3", "TRUE", "(a = 'it''s')", "a >= 10L AND b <> 'z'"} {
		f.Add(s)
	}
	props := map[string]string{"a": "6", "b": "x", "c": "", "TAGS": "A", "x": "yy"}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Compile(src)
		if err != nil {
			if !strings.Contains(err.Error(), "column") {
				t.Fatalf("Compile(%q) error without position: %v", src, err)
			}
			return
		}
		e.Match(getter(props))
		if e.String() != src {
			t.Fatalf("String() = %q", e.String())
		}
	})
}
