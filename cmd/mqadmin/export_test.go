package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestPrettyQuirks: what fastjson2's PrettyFormat printed in Apache 5.5's
// exportMetrics for a map whose values are all null and an empty set, an
// array of numbers on one line, and Double.toString's forms.
func TestPrettyQuirks(t *testing.T) {
	v := fjObject{{"env", fjMap{{"cpuNum", nil}, {"mem", nil}}}, {"clients", fjSet{}}, {"next", fjArray{fjLong(1000), fjLong(5000)}},
		{"empty", fjMap{}}, {"set", fjSet{fjString("a"), fjString("b")}}}
	var b strings.Builder
	v.write(&b, 0)
	want := "{\n\t\"env\":{\n\t\t\n\t},\n\t\"clients\":[\n\t\t\n\t],\n\t\"next\":[1000,5000],\n\t\"empty\":{},\n\t\"set\":[\n\t\t\"a\",\n\t\t\"b\"\n\t]\n}"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
	for v, want := range map[float64]string{0: "0.0", 1.5: "1.5", 12345678: "1.2345678E7", 0.0001: "1.0E-4", -2: "-2.0", 1e-3: "0.001"} {
		if got := javaDouble(v); got != want {
			t.Errorf("javaDouble(%v) = %s, want %s", v, got, want)
		}
	}
}

// TestJavaPrintf: a text given to Java's printf as its format prints with
// %n and %% replaced, and not at all (an exception) with any other %.
func TestJavaPrintf(t *testing.T) {
	for in, want := range map[string]string{"a%nb": "a\nb", "100%%": "100%", "topic='%RETRY%G'": "", "plain\n": "plain\n", "end%": ""} {
		var out, errOut bytes.Buffer
		javaPrintf(&admin{out: &out, errOut: &errOut}, in)
		if out.String() != want || (want == "") != (errOut.Len() > 0) {
			t.Errorf("%q: out %q err %q, want %q", in, out.String(), errOut.String(), want)
		}
	}
}
