package broker

import (
	"encoding/base64"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker/send"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

func recallOn(c *Config) { c.RecallMessageEnable = true }

// sendTimerMsg sends a timer message to Real due at due with UNIQ_KEY id
// and returns its recall handle.
func sendTimerMsg(t *testing.T, b *Broker, id string, due int64) string {
	t.Helper()
	var res send.Result
	if err := b.Sends.Send(sendReq("Real", props("TIMER_DELIVER_MS", itoa(due), "UNIQ_KEY", id, "id", id), "x"), &res, nil); err != nil {
		t.Fatal(err)
	}
	return res.RecallHandle
}

func recall(b *Broker, topic, handle string) error {
	r, _, err := b.Sends.Recall(send.RecallRequest{ProducerGroup: "PG", Topic: topic, Handle: handle})
	if err != nil {
		return err
	}
	return b.Sends.Send(&r, &send.Result{}, nil)
}

// A recalled timer message is not delivered, before or after a restart;
// the others are, and the delete marker never is.
func TestRecallTimerMessage(t *testing.T) {
	dir := t.TempDir()
	b, stop := testBroker(t, dir, recallOn)
	now := time.Now().UnixMilli()
	h1 := sendTimerMsg(t, b, "U1", now+700)
	h2 := sendTimerMsg(t, b, "U2", now+700)
	h3 := sendTimerMsg(t, b, "U3", now+1500)
	sendTimerMsg(t, b, "U4", now+1500)
	raw, err := base64.URLEncoding.DecodeString(h1)
	if want := "v1 Real b " + strconv.FormatInt(now+701, 10) + " U1"; err != nil || string(raw) != want {
		t.Fatalf("handle %q decodes to %q (%v), want %q", h1, raw, err, want)
	}
	if err := recall(b, "Real", h1); err != nil {
		t.Fatal(err)
	}
	if err := recall(b, "Real", h3); err != nil {
		t.Fatal(err)
	}
	if !waitFor(t, 3*time.Second, func() bool { return realIDs(t, b) == "U2" }) {
		t.Fatalf("delivered %q, want U2 (U1 recalled)", realIDs(t, b))
	}
	stop() // U3 recalled, U4 waiting: the marker is read again after the restart
	b2, _ := testBroker(t, dir, recallOn)
	if !waitFor(t, 3*time.Second, func() bool { return realIDs(t, b2) == "U2,U4" }) {
		t.Fatalf("after the restart delivered %q, want U2,U4 (U3 recalled)", realIDs(t, b2))
	}
	time.Sleep(200 * time.Millisecond)
	if got := realIDs(t, b2); got != "U2,U4" {
		t.Errorf("delivered %q, want U2,U4", got)
	}
	if err := recall(b2, "Real", h2); !refusedWith(err, remoting.IllegalOperation, "recall failed, timestamp invalid") {
		t.Errorf("recall of a delivered message: %v", err)
	}
}

func refusedWith(err error, code int32, remark string) bool {
	var r *remoting.Refusal
	return errors.As(err, &r) && r.Code == code && r.Remark == remark
}

// Each refusal with Apache's code and remark, and nothing stored.
func TestRecallRefusals(t *testing.T) {
	b, _ := testBroker(t, t.TempDir(), recallOn)
	now := time.Now().UnixMilli()
	h := sendTimerMsg(t, b, "U1", now+60_000)
	end := b.Store.MaxPhyOffset()
	enc := func(s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) }
	ts := strconv.FormatInt(now+60_000, 10)
	for _, tc := range []struct {
		name, topic, handle string
		code                int32
		remark              string
	}{
		{"no topic", "Nope", h, remoting.TopicNotExist, "recall failed, the topic[Nope] not exist"},
		{"empty topic", "", h, remoting.TopicNotExist, "recall failed, the topic[] not exist"},
		{"not base64", "Real", "%%%", remoting.IllegalOperation, "recall handle is invalid"},
		{"empty", "Real", "", remoting.IllegalOperation, "recall handle is invalid"},
		{"v2", "Real", enc("v2 Real b " + ts + " U1"), remoting.IllegalOperation, "recall handle is invalid"},
		{"short", "Real", enc("v1 Real b " + ts), remoting.IllegalOperation, "recall handle is invalid"},
		{"other topic", "Real", enc("v1 Other b " + ts + " U1"), remoting.IllegalOperation, "recall failed, topic not match"},
		{"other broker", "Real", enc("v1 Real b2 " + ts + " U1"), remoting.IllegalOperation, "recall failed, broker service not available"},
		{"past", "Real", enc("v1 Real b " + itoa(now-1) + " U1"), remoting.IllegalOperation, "recall failed, timestamp invalid"},
		{"not a number", "Real", enc("v1 Real b x U1"), remoting.IllegalOperation, "recall failed, timestamp invalid"},
		{"too far", "Real", enc("v1 Real b " + itoa(now+4*24*3600*1000) + " U1"), remoting.IllegalOperation, "recall failed, timestamp invalid"},
	} {
		if _, _, err := b.Sends.Recall(send.RecallRequest{Topic: tc.topic, Handle: tc.handle}); !refusedWith(err, tc.code, tc.remark) {
			t.Errorf("%s: %v, want %d %q", tc.name, err, tc.code, tc.remark)
		}
	}
	unpadded := enc("v1 Real b " + ts + " U1 extra")
	for len(unpadded) > 0 && unpadded[len(unpadded)-1] == '=' {
		unpadded = unpadded[:len(unpadded)-1]
	}
	if _, id, err := b.Sends.Recall(send.RecallRequest{Topic: "Real", Handle: unpadded}); err != nil || id != "U1" {
		t.Errorf("an unpadded handle with an extra field (Java's decoder takes it): %v %q", err, id)
	}
	b.updateConfig(func(c *Config) { c.RecallMessageEnable = false })
	for _, r := range []send.RecallRequest{{Topic: "Real", Handle: h}, {Topic: "Real"}, {}} { // 5.3.3: whatever the header
		if _, _, err := b.Sends.Recall(r); !refusedWith(err, remoting.NoPermission, "recall failed, operation is forbidden") {
			t.Errorf("recall disabled, %+v: %v", r, err)
		}
	}
	b.updateConfig(func(c *Config) {
		c.RecallMessageEnable, c.BrokerPermission, c.AllowRecallWhenBrokerNotWriteable = true, message.PermRead, false
	})
	if _, _, err := b.Sends.Recall(send.RecallRequest{Topic: "Real", Handle: h}); !refusedWith(err, remoting.ServiceNotAvailable, "recall failed, broker service not available") {
		t.Errorf("broker not writeable: %v", err)
	}
	if n := b.Store.MaxPhyOffset(); n != end {
		t.Errorf("a refused recall stored something: commit log end %d -> %d", end, n)
	}
}
