package broker

import "testing"

func TestQuoteBareKeys(t *testing.T) {
	for in, want := range map[string]string{
		`{"offsetTable":{"T@G":{0:250,1:249},"x":{-1:3}}}`: `{"offsetTable":{"T@G":{"0":250,"1":249},"x":{"-1":3}}}`,
		"{\n\t0:1,\n\t\"a\":[1,2,{3:4}]}":                  "{\n\t\"0\":1,\n\t\"a\":[1,2,{\"3\":4}]}",
		`{"s":"{0:1,\"2:3"}`:                               `{"s":"{0:1,\"2:3"}`,
		`{"0":1}`:                                          `{"0":1}`,
	} {
		if got := string(quoteBareKeys([]byte(in))); got != want {
			t.Errorf("quoteBareKeys(%s)\n got %s\nwant %s", in, got, want)
		}
	}
}
