package config

import "testing"

func TestQuoteBareKeys(t *testing.T) {
	for in, want := range map[string]string{
		`{"offsetTable":{"T@G":{0:250,1:249},"x":{-1:3}}}`: `{"offsetTable":{"T@G":{"0":250,"1":249},"x":{"-1":3}}}`,
		"{\n\t0:1,\n\t\"a\":[1,2,{3:4}]}":                  "{\n\t\"0\":1,\n\t\"a\":[1,2,{\"3\":4}]}",
		`{"s":"{0:1,\"2:3"}`:                               `{"s":"{0:1,\"2:3"}`,
		`{"0":1}`:                                          `{"0":1}`,
	} {
		if got := string(QuoteBareKeys([]byte(in))); got != want {
			t.Errorf("QuoteBareKeys(%s)\n got %s\nwant %s", in, got, want)
		}
	}
}

func TestQuoteBareKeysEdges(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{0:"a",1:"b"}`, `{"0":"a","1":"b"}`},
		{`{"k":{-1:[1,2]}}`, `{"k":{"-1":[1,2]}}`},
		{`[1,{2:3}]`, `[1,{"2":3}]`},
		{`{"s":"{0:\"x\"}"}`, `{"s":"{0:\"x\"}"}`},
		{`{ 7 : 8 }`, `{ "7" : 8 }`},
		{`{"unterminated`, `{"unterminated`},
	}
	for _, tt := range tests {
		if got := string(QuoteBareKeys([]byte(tt.in))); got != tt.want {
			t.Errorf("QuoteBareKeys(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
