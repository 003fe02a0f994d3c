package jsonlib

import (
	stdjson "encoding/json"
	"testing"
)

// Strings decode as encoding/json decodes them, invalid UTF-8 included,
// and what is written reads back the same.
func FuzzLikeEncodingJSON(f *testing.F) {
	f.Add([]byte("{\"A\":\"x\xffy\",\"B\":[\"\xc3\",\"ok\"],\"C\":null}"))
	f.Add([]byte(`{"A":"\ufffd","B":["a\u00e9"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		type doc struct {
			A string
			B []string
			C string
		}
		var ours, std doc
		errOurs := Std.Unmarshal(data, &ours)
		errStd := stdjson.Unmarshal(data, &std)
		if errOurs != nil || errStd != nil {
			return // what each refuses is json-iterator's business; the test is about strings
		}
		if ours.A != std.A || ours.C != std.C || len(ours.B) != len(std.B) {
			t.Fatalf("decoded %+v, encoding/json %+v", ours, std)
		}
		for i := range ours.B {
			if ours.B[i] != std.B[i] {
				t.Fatalf("decoded %q, encoding/json %q", ours.B, std.B)
			}
		}
		out, err := Std.Marshal(ours)
		if err != nil {
			t.Fatal(err)
		}
		var again doc
		if err := Std.Unmarshal(out, &again); err != nil || again.A != ours.A || again.C != ours.C {
			t.Fatalf("written %s reads back %+v (%v)", out, again, err)
		}
	})
}
