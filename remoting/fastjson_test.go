package remoting

import (
	"encoding/json"
	"testing"
)

// Apache's name server writes brokerAddrs with unquoted integer keys
// (fastjson); QuoteIntKeys makes them JSON without touching strings or
// numbers that are values.
func TestQuoteIntKeys(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"fastjson broker addrs", `{"brokerAddrs":{0:"a:1",1:"b:2"},"n":3}`, `{"brokerAddrs":{"0":"a:1","1":"b:2"},"n":3}`},
		{"already quoted", `{"brokerAddrs":{"0":"a:1"}}`, `{"brokerAddrs":{"0":"a:1"}}`},
		{"digits inside strings", `{"k":"{0:x}","m":{ 12 :"y"}}`, `{"k":"{0:x}","m":{ "12" :"y"}}`},
		{"escaped quote", `{"k":"a\"{1:2","m":{1:"z"}}`, `{"k":"a\"{1:2","m":{"1":"z"}}`},
		{"array numbers stay", `{"a":[1,2,3],"b":{-1:"n"}}`, `{"a":[1,2,3],"b":{"-1":"n"}}`},
		{"truncated", `{"a":{1`, `{"a":{1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := string(QuoteIntKeys([]byte(tc.in)))
			if got != tc.want {
				t.Fatalf("QuoteIntKeys(%s) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzQuoteIntKeys: any input gives an answer and never a panic; valid
// JSON stays valid JSON.
func FuzzQuoteIntKeys(f *testing.F) {
	for _, s := range []string{`{"brokerAddrs":{0:"a:1"}}`, `{"a":[1,2]}`, `{"k":"\"{1:"}`, `{1`, `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out := QuoteIntKeys(b)
		if json.Valid(b) && !json.Valid(out) {
			t.Fatalf("valid %q became invalid %q", b, out)
		}
	})
}
