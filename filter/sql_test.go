package filter

import (
	"errors"
	"strings"
	"testing"
)

func getter(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestMatch(t *testing.T) {
	props := map[string]string{"a": "6", "b": "abc", "f": "2.5", "t": "true", "TAGS": "TagA", "neg": "-3", "big": "3000000000"}
	for _, tc := range []struct {
		expr string
		want bool
	}{
		{"a > 5", true},
		{"a > 6", false},
		{"a >= 6 AND a <= 6", true},
		{"a < 7.5", true},
		{"a = 6", true},
		{"a = '6'", true},
		{"a <> 6", false},
		{"a = 6.0", true},
		{"f > 2", false}, // "2.5" as a Long fails: evaluation error, no match
		{"f > 2.4", true},
		{"f BETWEEN 2.0 AND 3.0", true},
		{"a BETWEEN 0 AND 3", false},
		{"a NOT BETWEEN 0 AND 3", true},
		{"b = 'abc'", true},
		{"b = 5", false}, // conversion error
		{"NOT (b = 5)", false},
		{"b IN ('x', 'abc')", true},
		{"b NOT IN ('x', 'abc')", false},
		{"missing IN ('x')", false},
		{"missing NOT IN ('x')", false},
		{"missing IS NULL", true},
		{"b IS NOT NULL", true},
		{"missing > 1", false},
		{"NOT (missing > 1)", false},
		{"missing > 1 OR a = 6", true},
		{"missing > 1 AND a = 6", false},
		{"TAGS = 'TagA' AND a > 1", true},
		{"tags = 'TagA'", false}, // names are case-sensitive
		{"b CONTAINS 'b'", true},
		{"b NOT CONTAINS 'b'", false},
		{"b STARTSWITH 'ab' and b endswith 'bc'", true},
		{"b NOT STARTSWITH 'x'", true},
		{"missing NOT CONTAINS 'x'", false},
		{"b CONTAINS ''", false},
		{"TRUE", true},
		{"FALSE OR TRUE", true},
		{"t", false}, // a property is a string, never Boolean TRUE
		{"neg < -2", true},
		{"neg = -3", true},
		{"-a < 0", false}, // negating a string property gives NULL
		{"big > 2147483647", true},
		{"a > 5 -- comment\n", true},
		{"/* c */ a > 5", true},
		{"a > 5L", true},
		{"a > 1e0", true},
		{"(a > 5) = TRUE", true},
	} {
		e, err := Compile(tc.expr)
		if err != nil {
			t.Errorf("Compile(%q): %v", tc.expr, err)
			continue
		}
		if got := e.Match(getter(props)); got != tc.want {
			t.Errorf("%q on %v = %v, want %v", tc.expr, props, got, tc.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct{ expr, where string }{
		{"", "column 1"},
		{"a >", "column 4"},
		{"a > 'x'", "column 5"},
		{"a = NULL", "column 5"},
		{"5", "column 1"},
		{"a", ""}, // a bare property is a boolean cast: valid
		{"a IN (1)", "column 7"},
		{"'x' IN ('x')", "column 1"},
		{"a > 0.0", "column 5"}, // Apache refuses floats below Double.MIN_VALUE
		{"a BETWEEN 1 2", "column 13"},
		{"a > 5 b", "column 7"},
		{"a # 5", "column 3"},
		{"b = 'unterminated", "column 5"},
		{"a > 007", "column 5"},
		{"a > 99999999999999999999", "column 5"},
		{"NOT 5", "column 5"},
		{"TRUE = 'x'", "column 1"},
		{"a > TRUE", "column 5"},
	} {
		_, err := Compile(tc.expr)
		if tc.where == "" {
			if err != nil {
				t.Errorf("Compile(%q): %v", tc.expr, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrParse) || !strings.Contains(err.Error(), tc.where) {
			t.Errorf("Compile(%q) = %v, want a parse error at %s", tc.expr, err, tc.where)
		}
	}
}

func TestMatchAllocs(t *testing.T) {
	e, err := Compile("a > 5 AND b IN ('x', 'abc') AND TAGS = 'TagA'")
	if err != nil {
		t.Fatal(err)
	}
	get := getter(map[string]string{"a": "6", "b": "abc", "TAGS": "TagA"})
	if n := testing.AllocsPerRun(100, func() { e.Match(get) }); n != 0 {
		t.Errorf("Match allocates %v times", n)
	}
}

func TestDepthLimit(t *testing.T) {
	if _, err := Compile(strings.Repeat("(", 10000) + "a" + strings.Repeat(")", 10000)); !errors.Is(err, ErrParse) {
		t.Errorf("deep nesting: %v", err)
	}
	if _, err := Compile(strings.Repeat("NOT ", 100) + "a"); err != nil {
		t.Errorf("100 NOTs: %v", err)
	}
}
