package proxy

import (
	"testing"
	"time"

	v2 "github.com/rocketgo/rocketgo/apis/v2"
	"github.com/rocketgo/rocketgo/message"
)

// Receipt handles as Apache's ExtraInfoUtil builds them and ReceiptHandle
// decodes them.
func TestReceiptHandle(t *testing.T) {
	h := string(message.AppendExtraInfo(nil, 5, 1700000000000, 60000, 3, "%RETRY%G+T", "b1", 2, 7)) + " 1234"
	if h != "5 1700000000000 60000 3 2 b1 2 7 1234" {
		t.Fatalf("extraInfo = %q", h)
	}
	r, err := parseReceiptHandle(h)
	if err != nil {
		t.Fatal(err)
	}
	if r.brokerName != "b1" || r.queueID != 2 || r.offset != 7 || r.commitLogOffset != 1234 ||
		r.realTopic("T", "G") != "%RETRY%G+T" || !r.expired(time.UnixMilli(1700000060000)) || r.expired(time.UnixMilli(1700000059999)) {
		t.Fatalf("parsed %+v", r)
	}
	if r, _ := parseReceiptHandle("5 1 2 3 0 b 0 7"); r.commitLogOffset != -1 || r.realTopic("T", "G") != "T" {
		t.Fatalf("8-field handle parsed as %+v", r)
	}
	// Apache's ReceiptHandle.decode throws: INTERNAL_SERVER_ERROR with Java's message.
	for bad, msg := range map[string]string{
		"": "Parse failed, dataList size 1", "1 2 3": "Parse failed, dataList size 3",
		"x 1 2 3 0 b 0 7": `For input string: "x"`, "5 1 2 3 0 b q 7": `For input string: "q"`,
		"5 1 2 3 0 b 0 7 z": `For input string: "z"`,
	} {
		_, err := parseReceiptHandle(bad)
		if st := statusOf(err); st.GetCode() != v2.Code_INTERNAL_SERVER_ERROR || st.GetMessage() != msg {
			t.Errorf("handle %q: %v, want INTERNAL_SERVER_ERROR %q", bad, st, msg)
		}
	}
	if got := offsetInfo("0 1 5;1 0 9;bad"); got["0@1"] != 5 || got["1@0"] != 9 || len(got) != 2 {
		t.Fatalf("offsetInfo = %v", got)
	}
}

// FuzzReceiptHandle: a handle a client sends never panics the parser.
func FuzzReceiptHandle(f *testing.F) {
	f.Add("5 1700000000000 60000 3 2 b1 2 7 1234")
	f.Add("1 2 3")
	f.Fuzz(func(t *testing.T, s string) {
		if h, err := parseReceiptHandle(s); err == nil && h.raw != s {
			t.Fatalf("parsed %q as %+v", s, h)
		}
	})
}
