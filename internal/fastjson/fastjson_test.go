package fastjson

import "testing"

// TestFieldsHostile: truncated or malformed answers are errors,
// never a panic or a loop.
func TestFieldsHostile(t *testing.T) {
	for _, b := range []string{"", "{", "[]", `{"a"`, `{"a":`, `{"a":1`, `{"a":1,`, `{"a" 1}`, `{{"x":1}:`, `{"a":"\`,
		`{"a":{"b":[1,2}`, `{:1}`, "\x00", `{"a":1 "b":2}`} {
		if _, err := Fields([]byte(b)); err == nil {
			t.Errorf("%q accepted", b)
		}
	}
	if fs, err := Fields([]byte(` { } `)); err != nil || len(fs) != 0 {
		t.Errorf("empty object: %v %v", fs, err)
	}
}
