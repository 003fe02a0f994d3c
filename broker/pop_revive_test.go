package broker

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
func popDue(t *testing.T, b *Broker, group string) {
	t.Helper()
	res := popNow(t, b, PopRequest{Group: group, Topic: "T", QueueID: 0, MaxMsgNums: 32, InvisibleTime: 60_000, InitMode: 1})
	if res.Status != PopFound {
		t.Fatalf("pop %+v", res)
	}
	res.Release()
	b.pop.mu.Lock()
	for _, ck := range b.pop.cks {
		ck.invisibleTime = -60_000
	}
	b.pop.mu.Unlock()
}

// A group whose pop retry topic name would be over 127 characters: the
// first revive moves the message to %DLQ%<group>, no retry topic is made.
func TestReviveInvalidRetryTopicGoesToDLQ(t *testing.T) {
	b := pullBroker(t, nil)
	putT(t, b, "A")
	group := strings.Repeat("g", message.GroupMaxLength)
	popDue(t, b, group)
	b.pop.revivePass(time.Now().UnixMilli())
	if n := b.pop.live(); n != 0 {
		t.Fatalf("live checkpoints after the revive %d", n)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return b.Store.MaxOffset(message.DLQGroupPrefix+group, 0) == 1 })
	if _, ok := b.Topics.Get(message.PopRetryTopic("T", group)); ok {
		t.Fatal("a retry topic with an invalid name was created")
	}
}

// A revive whose writes fail backs off (1 s, 2 s, 4 s, ...), is not tried
// before its time, and after reviveMaxAttempts goes to the DLQ; with the DLQ
// failing too it stays, tried every reviveRetryMax.
func TestReviveWriteFailureBacksOffThenDLQ(t *testing.T) {
	b := pullBroker(t, nil)
	putT(t, b, "A")
	popDue(t, b, "G")
	var retryPuts, dlqPuts int
	dlqFails := true
	b.pop.putFault = func(m *store.PutMessage) error {
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
		b.pop.mu.Lock()
		defer b.pop.mu.Unlock()
		for _, c := range b.pop.cks {
			return c
		}
		return nil
	}
	for i := 1; i < reviveMaxAttempts; i++ {
		b.pop.revivePass(now)
		b.pop.revivePass(now) // not due again yet: no attempt
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
	b.pop.revivePass(now)
	if c := ck(); c == nil || c.reviveFails != reviveMaxAttempts || dlqPuts != 1 || c.reviveNext-now != reviveRetryMax.Milliseconds() {
		t.Fatalf("after %d attempts: ck %+v dlq puts %d", reviveMaxAttempts, c, dlqPuts)
	}
	now += reviveRetryMax.Milliseconds()
	dlqFails = false
	b.pop.revivePass(now)
	if n := b.pop.live(); n != 0 || dlqPuts != 2 {
		t.Fatalf("live %d dlq puts %d after the DLQ accepts", n, dlqPuts)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return b.Store.MaxOffset(message.DLQGroupPrefix+"G", 0) == 1 })
	if b.Store.MaxOffset(message.PopRetryTopic("T", "G"), 0) != 0 {
		t.Fatal("the retry topic got the message")
	}
}
