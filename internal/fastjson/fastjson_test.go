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

// TestElements: an array of fastjson objects (GET_BROKER_CONSUME_STATS'
// consumeStatsList) splits into its elements; malformed ones are errors.
func TestElements(t *testing.T) {
	es, err := Elements([]byte(` [{"g":[{"offsetTable":{{"queueId":0}:{"brokerOffset":1}}}]}, {}] `))
	if err != nil || len(es) != 2 || string(es[1]) != "{}" {
		t.Fatalf("%q %v", es, err)
	}
	if es, err := Elements([]byte(`[]`)); err != nil || len(es) != 0 {
		t.Fatalf("empty: %q %v", es, err)
	}
	for _, b := range []string{"", "[", "{}", `[1`, `[1,`, `[1 2]`, `[{]`, `[,]`} {
		if _, err := Elements([]byte(b)); err == nil {
			t.Errorf("%q accepted", b)
		}
	}
}
