package main

import "testing"

// TestDecodeTraces: a trace message's body as the clients write it (Pub
// with the offset id and client host, SubBefore, SubAfter with its time
// and group) decodes to the rows queryMsgTraceById prints for the message
// asked for; a short or non-numeric field is an error, not a panic.
func TestDecodeTraces(t *testing.T) {
	f := func(fields ...string) string {
		s := ""
		for _, x := range fields {
			s += x + traceContentSplitor
		}
		return s + traceFieldSplitor
	}
	body := f("Pub", "1700000000000", "DefaultRegion", "PG", "T", "ID1", "TagA", "K1", "127.0.0.1:10911", "5", "3", "0", "OFF1", "true", "127.0.0.1") +
		f("SubBefore", "1700000000100", "DefaultRegion", "CG", "req", "ID1", "0", "K1") +
		f("SubAfter", "req", "ID1", "7", "false", "K1", "0", "1700000000200", "CG") +
		f("SubAfter", "req", "ID2", "7", "true", "K1", "0", "1700000000200", "CG")
	views, err := decodeTraces("ID1", body, "10.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if len(views) != 3 {
		t.Fatalf("%d views: %+v", len(views), views)
	}
	if v := views[0]; v.typ != "Pub" || v.group != "PG" || v.cost != 3 || v.status != "success" || v.clientHost != "10.0.0.1" || v.timestamp != 1700000000000 {
		t.Errorf("Pub: %+v", v)
	}
	if v := views[2]; v.typ != "SubAfter" || v.group != "CG" || v.cost != 7 || v.status != "failed" || v.timestamp != 1700000000200 {
		t.Errorf("SubAfter: %+v", v)
	}
	for _, bad := range []string{f("Pub", "x"), f("Pub", "nan", "r", "g", "t", "ID1", "", "", "", "5", "3", "0"), f("SubAfter", "r", "ID1", "x", "true", "k")} {
		if _, err := decodeTraces("ID1", bad, ""); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if v, err := decodeTraces("ID1", "", ""); err != nil || len(v) != 0 {
		t.Errorf("empty body: %v %v", v, err)
	}
}
