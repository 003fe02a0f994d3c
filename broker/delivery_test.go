package broker

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/message"
)

// syncBuf is a log sink the delivery goroutines write to while the test reads.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) count(sub string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Count(s.b.String(), sub)
}

// logBroker is testBroker with its log written to buf.
func logBroker(t *testing.T, dir string, buf *syncBuf) (*Broker, func()) {
	t.Helper()
	return testBrokerLog(t, dir, nil, zerolog.New(buf))
}

// TestPoisonSetAside stages undeliverable timer and delay messages ahead of
// good ones, as a client could before names were checked at the send, and as
// an old store or a property added at delivery still can: the good ones are
// delivered on time, the poison is set aside once and stays aside after a
// restart.
func TestPoisonSetAside(t *testing.T) {
	dir := t.TempDir()
	var buf syncBuf
	b, stop := logBroker(t, dir, &buf)
	now := time.Now().UnixMilli()
	stage := func(topic string, qid int32, props string) {
		t.Helper()
		m := testMsg(topic, props)
		m.QueueID = qid
		if _, err := b.Store.Put(m); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("x", 200) // beyond a topic's 127 bytes
	// Timer: a bad REAL_TOPIC, then properties that only overflow once
	// TIMER_ENQUEUE_MS / TIMER_DEQUEUE_MS are added, then a good one.
	stage(message.TimerTopic, 0, props("TIMER_OUT_MS", itoa(now+100), "REAL_TOPIC", long, "REAL_QID", "0"))
	pad := strings.Repeat("p", message.MaxPropertiesLen-60)
	stage(message.TimerTopic, 0, props("TIMER_OUT_MS", itoa(now+100), "REAL_TOPIC", "Real", "REAL_QID", "0", "P", pad))
	stage(message.TimerTopic, 0, props("TIMER_OUT_MS", itoa(now+300), "REAL_TOPIC", "Real", "REAL_QID", "0", "id", "good"))
	// Delay level 1: a bad REAL_TOPIC ahead of a good one.
	stage(message.ScheduleTopic, 0, props("DELAY", "1", "REAL_TOPIC", long, "REAL_QID", "0"))
	stage(message.ScheduleTopic, 0, props("DELAY", "1", "REAL_TOPIC", "Real", "REAL_QID", "1", "id", "good"))

	if !waitFor(t, 5*time.Second, func() bool {
		return b.Store.MaxOffset("Real", 0) == 1 && b.Store.MaxOffset("Real", 1) == 1
	}) {
		t.Fatalf("good messages behind the poison not delivered: timer %d, delay %d\n%s",
			b.Store.MaxOffset("Real", 0), b.Store.MaxOffset("Real", 1), buf.b.String())
	}
	waitFor(t, time.Second, func() bool { return buf.count("set aside") >= 3 })
	if n := buf.count("timer message cannot be delivered, set aside"); n != 2 {
		t.Errorf("timer set-aside lines = %d, want 2", n)
	}
	if n := buf.count("delayed message cannot be delivered, set aside"); n != 1 {
		t.Errorf("delay set-aside lines = %d, want 1", n)
	}
	stop()

	var buf2 syncBuf
	b2, _ := logBroker(t, dir, &buf2)
	m := testMsg("Real", props("TIMER_DELAY_MS", "100", "id", "after"))
	if _, err := b2.Sends.Put(m); err != nil {
		t.Fatal(err)
	}
	if !waitFor(t, 5*time.Second, func() bool { return b2.Store.MaxOffset("Real", 0) == 2 }) {
		t.Fatal("timer message after the restart not delivered")
	}
	if n := buf2.count("set aside"); n != 0 {
		t.Errorf("poison back after restart: %d set-aside lines\n%s", n, buf2.b.String())
	}
	if got := b2.Store.MaxOffset("Real", 1); got != 1 {
		t.Errorf("delay level redelivered after restart: Real-1 max offset %d", got)
	}
}
