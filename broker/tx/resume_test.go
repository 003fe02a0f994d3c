package tx

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
	"github.com/rocketgo/rocketgo/store/storetest"
)

// TestResumeCheckHalfMessage: a message parked in TRANS_CHECK_MAX_TIME_TOPIC
// goes back to queue 0 of the half topic with its check count reset and
// every other property kept; a bad id or offset is SYSTEM_ERROR with
// Apache's remark.
func TestResumeCheckHalfMessage(t *testing.T) {
	h := newHarness(t, t.TempDir(), nil)
	m := &store.PutMessage{Topic: message.TransCheckMaxTimeTopic, Body: []byte("hello"),
		Properties: message.SetProperties("", message.PropRealTopic, "biz", message.PropTransactionCheckTimes, "16"),
		BornHost:   testHost, StoreHost: testHost, BornTimestamp: time.Now().UnixMilli()}
	pr, err := h.st.Put(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.ResumeCheckHalfMessage(message.OffsetMsgID(testHost, pr.PhysicalOffset)); err != nil {
		t.Fatalf("resume: %v", err)
	}
	recs := storetest.WaitRecords(t, h.st, message.TransHalfTopic, 0, 1)
	props := message.ParseProperties(recs[0].Properties)
	if props[message.PropTransactionCheckTimes] != "0" || props[message.PropRealTopic] != "biz" || string(recs[0].Body) != "hello" {
		t.Errorf("half message put back: props %v body %q", props, recs[0].Body)
	}
	for _, bad := range []string{"", "nonsense", message.OffsetMsgID(netip.MustParseAddrPort("127.0.0.1:1"), 1<<40)} {
		var r *remoting.Refusal
		if err := h.ResumeCheckHalfMessage(bad); !errors.As(err, &r) || r.Code != remoting.SystemError || r.Remark != remarkResumeFailed {
			t.Errorf("resume %q: %v, want SYSTEM_ERROR %q", bad, err, remarkResumeFailed)
		}
	}
}

// A slave refuses END_TRANSACTION with SLAVE_NOT_AVAILABLE and no remark,
// before anything is queued.
func TestEndTransactionOnSlave(t *testing.T) {
	h := newHarness(t, t.TempDir(), func(c *Config) { c.Slave = true })
	queued, err := h.EndTransaction(&EndRequest{}, func(error) { t.Error("answered later") })
	var r *remoting.Refusal
	if queued || !errors.As(err, &r) || r.Code != remoting.SlaveNotAvailable || r.Remark != "" || !errors.Is(err, ErrSlave) {
		t.Fatalf("slave: queued %v, %v", queued, err)
	}
}
