package message

import (
	"testing"
)

// FuzzParseExtraInfo: any string parses or is refused with ErrBadExtraInfo,
// never panics; a handle built by AppendExtraInfo parses back to its fields.
func FuzzParseExtraInfo(f *testing.F) {
	f.Add("0 1700000000000 60000 0 0 broker-a 3 17")
	f.Add("5 1700000000000 60000 2 1 broker-a 0 9")
	f.Add("5 1700000000000 60000 999 0 b 0")
	f.Add("")
	f.Add("a b c d e f g h")
	f.Add("1 2 3 99999999999 0 b 1")
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseExtraInfo(s)
		if err != nil {
			return
		}
		if e.Retry != "0" && e.Retry != "1" && e.Retry != "2" {
			t.Fatalf("retry %q accepted", e.Retry)
		}
		if e.MsgQueueOffset < 0 || e.BrokerName == "" || e.Retry != "0" {
			return // not a shape AppendExtraInfo writes
		}
		again, err := ParseExtraInfo(string(AppendExtraInfo(nil, e.CkQueueOffset, e.PopTime, e.InvisibleTime,
			e.ReviveQid, "T", e.BrokerName, e.QueueID, e.MsgQueueOffset)))
		if err != nil || again.CkQueueOffset != e.CkQueueOffset || again.PopTime != e.PopTime ||
			again.QueueID != e.QueueID || again.MsgQueueOffset != e.MsgQueueOffset {
			t.Fatalf("round trip of %q: %+v %v", s, again, err)
		}
	})
}
