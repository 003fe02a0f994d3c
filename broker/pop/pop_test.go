package pop

import (
	"strings"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
)

// popNow runs one pop through the service and waits for its answer.
func popNow(t *testing.T, h *harness, r Request) Result {
	t.Helper()
	done := make(chan Result, 1)
	errs := make(chan error, 1)
	_, err := h.Pop(&r, func() Completion {
		return Completion{Done: func(res Result, err error) {
			if err != nil {
				errs <- err
				return
			}
			done <- res
		}}
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		return res
	case err := <-errs:
		t.Fatal(err)
	case <-time.After(10 * time.Second):
		t.Fatal("pop not answered")
	}
	return Result{}
}

// The checkpoint bookkeeping: an ack of a normal message and one of a
// message popped from the retry topic (by its POP_CK handle) each find
// their checkpoint, which goes once all is acked; a revived checkpoint goes
// too; the revive offset follows the oldest live checkpoint.
func TestPopCheckpoints(t *testing.T) {
	h := newHarness(t)
	putT(t, h, "A", "B")
	req := Request{Group: "G", Topic: "T", QueueID: 0, MaxMsgNums: 32, InvisibleTime: 60_000, InitMode: 1}
	res := popNow(t, h, req)
	if res.Status != Found || res.Count != 2 || res.StartOffsetInfo != "0 0 0" || res.MsgOffsetInfo != "0 0 0,1" {
		t.Fatalf("pop %+v", res)
	}
	res.Release()
	if h.live() != 1 {
		t.Fatalf("live checkpoints %d", h.live())
	}
	first := string(message.AppendExtraInfo(nil, 0, res.PopTime, 60_000, 0, "T", "b", 0, 0))
	if err := h.Ack(&AckRequest{Group: "G", Topic: "T", QueueID: 0, ExtraInfo: first, Offset: 0}); err != nil {
		t.Fatal(err)
	}
	if h.live() != 1 {
		t.Fatal("checkpoint gone with one offset of two acked")
	}
	// Offset 1 revives (its invisible time made past), into %RETRY%G_T.
	h.mu.Lock()
	for _, ck := range h.cks {
		ck.invisibleTime = -60_000
	}
	h.mu.Unlock()
	h.revivePass(time.Now().UnixMilli())
	if h.live() != 0 {
		t.Fatalf("live checkpoints after the revive %d", h.live())
	}
	retry := message.PopRetryTopic("T", "G")
	testutil.WaitFor(t, 10*time.Second, func() bool { return h.st.MaxOffset(retry, 0) == 1 })
	retried := map[stats.PopRetryKey]int64{}
	h.revive.RangeRetries(func(k stats.PopRetryKey, n int64) bool { retried[k] = n; return true })
	if len(retried) != 1 || retried[stats.PopRetryKey{Group: "G", Topic: "T", Status: "PUT_OK"}] != 1 {
		t.Errorf("revive retries counted %v", retried)
	}
	var got Result
	for range 100 { // the retry topic is read first in 20 % of pops, after the topic otherwise
		if got = popNow(t, h, req); got.Status == Found {
			break
		}
	}
	if got.Status != Found || got.Count != 1 {
		t.Fatalf("pop of the retry topic %+v", got)
	}
	v, _, err := message.DecodeRecordView(got.Vec[0])
	if err != nil {
		t.Fatal(err)
	}
	handle := message.Property(string(v.Properties), message.PropPopCK)
	got.Release()
	if string(v.Topic) != "T" || v.ReconsumeTimes != 1 || !strings.Contains(handle, " 1 b 0 0") {
		t.Fatalf("retried message topic %s reconsume %d handle %q", v.Topic, v.ReconsumeTimes, handle)
	}
	e, err := message.ParseExtraInfo(handle)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Ack(&AckRequest{Group: "G", Topic: e.RealTopic("T", "G"), QueueID: e.QueueID, ExtraInfo: handle,
		Offset: e.MsgQueueOffset}); err != nil {
		t.Fatal(err)
	}
	if h.live() != 0 {
		t.Fatal("the retried message's checkpoint outlived its ack")
	}
	// The ack's record must be in the revive queue before the offset is
	// committed past it: dispatch is asynchronous.
	testutil.WaitFor(t, 10*time.Second, func() bool { return h.st.DispatchedPhyOffset() == h.st.MaxPhyOffset() })
	h.commitReviveOffset()
	topic := ReviveTopic("c")
	if off, _ := h.offsets.Query(ReviveGroup, topic, 0); off != h.st.MaxOffset(topic, 0) {
		t.Fatalf("revive offset %d, revive log end %d", off, h.st.MaxOffset(topic, 0))
	}
}
