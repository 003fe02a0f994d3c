package pop

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/store"
)

func TestReviveBackoff(t *testing.T) {
	want := []time.Duration{time.Second, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second,
		16 * time.Second, 30 * time.Second, 30 * time.Second}
	for fails, w := range want {
		if got := reviveBackoff(int32(fails)); got != w {
			t.Errorf("reviveBackoff(%d) = %v, want %v", fails, got, w)
		}
	}
	if got := reviveBackoff(1 << 30); got != reviveRetryMax {
		t.Errorf("reviveBackoff(huge) = %v", got)
	}
}

// popDue pops T's messages for group and makes the checkpoint due.
func popDue(t *testing.T, h *harness, group string) {
	t.Helper()
	res := popNow(t, h, Request{Group: group, Topic: "T", QueueID: 0, MaxMsgNums: 32, InvisibleTime: 60_000, InitMode: 1})
	if res.Status != Found {
		t.Fatalf("pop %+v", res)
	}
	res.Release()
	h.mu.Lock()
	for _, ck := range h.cks {
		ck.invisibleTime = -60_000
	}
	h.mu.Unlock()
}

// A group of the longest name: its pop retry topic, 129 characters, is a
// valid retry topic (Apache 5.5 allows 255), made by the first revive, which
// moves the message there.
func TestReviveLongGroup(t *testing.T) {
	h := newHarness(t)
	putT(t, h, "A")
	group := strings.Repeat("g", message.GroupMaxLength)
	popDue(t, h, group)
	h.revivePass(time.Now().UnixMilli())
	if n := h.live(); n != 0 {
		t.Fatalf("live checkpoints after the revive %d", n)
	}
	retry := message.PopRetryTopic("T", group)
	testutil.WaitFor(t, 10*time.Second, func() bool { return h.st.MaxOffset(retry, 0) == 1 })
	if h.st.MaxOffset(message.DLQGroupPrefix+group, 0) != 0 {
		t.Fatal("the message went to the DLQ")
	}
}

// A revive whose writes fail backs off (1 s, 2 s, 4 s, ...), is not tried
// before its time, and after reviveMaxAttempts goes to the DLQ; with the DLQ
// failing too it stays, tried every reviveRetryMax.
func TestReviveWriteFailureBacksOffThenDLQ(t *testing.T) {
	h := newHarness(t)
	putT(t, h, "A")
	popDue(t, h, "G")
	var retryPuts, dlqPuts int
	dlqFails := true
	h.putFault = func(m *store.PutMessage) error {
		if strings.HasPrefix(m.Topic, message.DLQGroupPrefix) {
			dlqPuts++
			if dlqFails {
				return errors.New("test: dlq write refused")
			}
			return nil
		}
		retryPuts++
		return errors.New("test: retry write refused")
	}
	now := time.Now().UnixMilli()
	ck := func() *popCk {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, c := range h.cks {
			return c
		}
		return nil
	}
	for i := 1; i < reviveMaxAttempts; i++ {
		h.revivePass(now)
		h.revivePass(now) // not due again yet: no attempt
		c := ck()
		if c == nil || c.reviveFails != int32(i) || retryPuts != i || dlqPuts != 0 {
			t.Fatalf("attempt %d: ck %+v retry puts %d dlq puts %d", i, c, retryPuts, dlqPuts)
		}
		if wait := c.reviveNext - now; wait != reviveBackoff(int32(i)).Milliseconds() {
			t.Fatalf("attempt %d: next in %d ms", i, wait)
		}
		now = c.reviveNext
	}
	// The last attempt: the retry write fails, then the DLQ's.
	h.revivePass(now)
	if c := ck(); c == nil || c.reviveFails != reviveMaxAttempts || dlqPuts != 1 || c.reviveNext-now != reviveRetryMax.Milliseconds() {
		t.Fatalf("after %d attempts: ck %+v dlq puts %d", reviveMaxAttempts, c, dlqPuts)
	}
	now += reviveRetryMax.Milliseconds()
	dlqFails = false
	h.revivePass(now)
	if n := h.live(); n != 0 || dlqPuts != 2 {
		t.Fatalf("live %d dlq puts %d after the DLQ accepts", n, dlqPuts)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return h.st.MaxOffset(message.DLQGroupPrefix+"G", 0) == 1 })
	if h.st.MaxOffset(message.PopRetryTopic("T", "G"), 0) != 0 {
		t.Fatal("the retry topic got the message")
	}
}
