package remoting

import (
	"errors"
	"testing"
)

// The pop headers survive Encode → frame → Decode, and a @CFNotNull field
// left out is reported as missing.
func TestPopHeadersRoundTrip(t *testing.T) {
	in := PopMessageRequestHeader{ConsumerGroup: "G", Topic: "T", QueueID: -1, MaxMsgNums: 32,
		InvisibleTime: 60000, PollTime: 15000, BornTime: 1700000000000, InitMode: 1,
		ExpType: "TAG", Exp: "a || b", Order: true, AttemptID: "x", BrokerName: "b0"}
	req := &Command{Code: PopMessage}
	in.Encode(req)
	var out PopMessageRequestHeader
	if err := out.Decode(req); err != nil || out != in {
		t.Fatalf("pop request: %+v %v, want %+v", out, err, in)
	}

	rh := PopMessageResponseHeader{PopTime: 5, InvisibleTime: 6, ReviveQid: 7, RestNum: 8,
		StartOffsetInfo: "0 0 1", MsgOffsetInfo: "0 0 1", OrderCountInfo: ""}
	resp := &Command{}
	rh.Encode(resp)
	var rh2 PopMessageResponseHeader
	if err := rh2.Decode(resp); err != nil || rh2 != rh {
		t.Fatalf("pop response: %+v %v", rh2, err)
	}

	ack := AckMessageRequestHeader{ConsumerGroup: "G", Topic: "T", QueueID: 3, ExtraInfo: "0 1 2", Offset: 9}
	c := &Command{}
	ack.Encode(c)
	var ack2 AckMessageRequestHeader
	if err := ack2.Decode(c); err != nil || ack2 != ack {
		t.Fatalf("ack: %+v %v", ack2, err)
	}

	ch := ChangeInvisibleTimeRequestHeader{ConsumerGroup: "G", Topic: "T", QueueID: 3, ExtraInfo: "e", Offset: 9, InvisibleTime: 1000}
	c = &Command{}
	ch.Encode(c)
	var ch2 ChangeInvisibleTimeRequestHeader
	if err := ch2.Decode(c); err != nil || ch2 != ch {
		t.Fatalf("change: %+v %v", ch2, err)
	}

	n := NotificationResponseHeader{HasMsg: true}
	c = &Command{}
	n.Encode(c)
	var n2 NotificationResponseHeader
	if err := n2.Decode(c); err != nil || n2 != n {
		t.Fatalf("notification: %+v %v", n2, err)
	}

	// invisibleTime missing: Apache's decoder refuses the @CFNotNull field.
	c = &Command{ExtFields: Fields(map[string]string{"consumerGroup": "G", "topic": "T", "queueId": "0",
		"maxMsgNums": "1", "pollTime": "0", "bornTime": "0", "initMode": "0"})}
	if err := out.Decode(c); !errors.Is(err, ErrMissingField) {
		t.Fatalf("missing invisibleTime: %v", err)
	}
	c.Set("invisibleTime", "soon")
	if err := out.Decode(c); !errors.Is(err, ErrBadField) {
		t.Fatalf("bad invisibleTime: %v", err)
	}
}
