package pop

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

// parkPop starts a pop that parks; its answer comes on the channel.
func parkPop(t *testing.T, h *harness, r Request, gone func() bool) <-chan Result {
	t.Helper()
	done := make(chan Result, 1)
	res, err := h.Pop(&r, func() Completion {
		return Completion{Done: func(res Result, err error) {
			if err != nil {
				t.Errorf("parked pop refused: %v", err)
			}
			done <- res
		}, Gone: gone}
	})
	if err != nil || res.Status != Later {
		t.Fatalf("pop not parked: %v %v", res.Status, err)
	}
	return done
}

func (h *harness) polling(t *testing.T, queueID int32) int32 {
	t.Helper()
	n, err := h.PollingInfo("G", "T", queueID, "test")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A pop that finds nothing waits on the store's arrival waiter: a message
// for its topic answers it; at its end it answers POLLING_TIMEOUT; one
// whose requester went away is dropped unanswered and frees its count.
// POLLING_INFO counts the pops waiting on a queue; a notification parks
// and is dropped the same way.
func TestPopLongPolling(t *testing.T) {
	h := newHarness(t)
	req := Request{Group: "G", Topic: "T", QueueID: -1, MaxMsgNums: 32, InvisibleTime: 60_000, InitMode: 1,
		PollTime: 60_000, BornTime: time.Now().UnixMilli()}
	got := parkPop(t, h, req, nil)
	// The pop runs on a goroutine of its own (Go), which parks it.
	testutil.WaitFor(t, 10*time.Second, func() bool { return h.polling(t, -1) == 1 })
	putT(t, h, "A")
	select {
	case res := <-got:
		if res.Status != Found || res.Count != 1 {
			t.Fatalf("woken pop: %v, %d messages", res.Status, res.Count)
		}
		res.Release()
	case <-time.After(10 * time.Second):
		t.Fatal("a message did not wake the parked pop")
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return h.polling(t, -1) == 0 })

	short := req
	short.PollTime, short.BornTime = 100, time.Now().UnixMilli()
	select {
	case res := <-parkPop(t, h, short, nil):
		if res.Status != NotFound {
			t.Fatalf("pop at its end: %v", res.Status)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("parked pop not answered at its end")
	}

	var gone atomic.Bool
	left := req
	left.BornTime = time.Now().UnixMilli()
	answered := parkPop(t, h, left, gone.Load)
	testutil.WaitFor(t, 10*time.Second, func() bool { return h.polling(t, -1) == 1 })
	gone.Store(true)
	testutil.WaitFor(t, 10*time.Second, func() bool { return h.polling(t, -1) == 0 })
	putT(t, h, "B")
	select {
	case res := <-answered:
		t.Fatalf("answered a requester that went away: %v", res.Status)
	case <-time.After(100 * time.Millisecond):
	}

	// A notification whose requester went away frees its place the same way.
	var closed atomic.Bool
	n := NotificationRequest{Group: "G", Topic: "T", QueueID: 1, PollTime: 60_000, BornTime: time.Now().UnixMilli(),
		Remote: "test", Gone: closed.Load}
	_, later, err := h.Notification(&n, func(res NotificationResult) { t.Errorf("answered a notification that went away: %+v", res) })
	if err != nil || !later {
		t.Fatalf("notification not parked: %v %v", later, err)
	}
	if got := h.polling(t, 1); got != 1 {
		t.Fatalf("POLLING_INFO %d, want 1", got)
	}
	closed.Store(true)
	testutil.WaitFor(t, 10*time.Second, func() bool { return h.polling(t, 1) == 0 })
}
