package broker

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/timer"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// realIDs lists the "id" property of what topic Real holds, in order.
func realIDs(t *testing.T, b *Broker) string {
	t.Helper()
	var out []string
	for _, e := range b.Store.ReadQueue("Real", 0, 0, 100) {
		rec, err := b.Store.RecordAt(e.PhyOffset, e.Size)
		if err != nil {
			t.Fatal(err)
		}
		r, _, _ := message.DecodeRecord(rec)
		out = append(out, message.ParseProperties(r.Properties)["id"])
	}
	return strings.Join(out, ",")
}

func putTimer(t *testing.T, b *Broker, id string, due int64) {
	t.Helper()
	if _, err := b.Sends.Put(testMsg("Real", props("TIMER_DELIVER_MS", itoa(due), "id", id))); err != nil {
		t.Fatal(err)
	}
}

// asSlave opens the broker on dir with its store but no delivery loop, as a
// slave is, lets fn run, and persists and closes it.
func asSlave(t *testing.T, dir string, fn func(*Broker)) {
	t.Helper()
	b, err := New(testConfig(dir), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Store.Start(); err != nil {
		t.Fatal(err)
	}
	fn(b)
	if err := b.persistAll(); err != nil {
		t.Error(err)
	}
	if err := b.Store.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// checkpointAnswer is the master's GET_TIMER_CHECK_POINT answer; without
// the low offset, as an Apache master answers.
func checkpointAnswer(t *testing.T, b *Broker, withLow bool) *remoting.Command {
	t.Helper()
	body, low, err := b.Role.TimerCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	resp := &remoting.Command{Body: body}
	if withLow {
		resp.Set(timer.LowOffsetField, strconv.FormatInt(low, 10))
	}
	return resp
}

// A slave that becomes master continues the timer from its master's
// checkpoint: what the master delivered is not delivered again, what was
// waiting is delivered when due. The slave's store is a copy of the
// master's (what replication gives it) without the master's
// timerProgress.json.
func TestSlaveTakesTimerProgress(t *testing.T) {
	dirM := t.TempDir()
	m, stopM := testBroker(t, dirM, nil)
	now := time.Now().UnixMilli()
	putTimer(t, m, "a", now+100)
	putTimer(t, m, "b", now+200)
	putTimer(t, m, "late", now+1500)
	if !waitFor(t, 3*time.Second, func() bool { return m.Store.MaxOffset("Real", 0) == 2 }) {
		t.Fatal("a and b not delivered")
	}
	waitFor(t, time.Second, func() bool { _, low, _ := m.Role.TimerCheckpoint(); return low == 2 })
	fromRocketgo, fromApache := checkpointAnswer(t, m, true), checkpointAnswer(t, m, false)
	if got := binary.BigEndian.Uint64(fromRocketgo.Body[24:]); got != 3 {
		t.Fatalf("lastTimerQueueOffset %d, want 3", got)
	}
	stopM()

	for _, tc := range []struct {
		name string
		resp *remoting.Command // nil: the slave copied nothing
		want string
	}{
		{"rocketgo master", fromRocketgo, "a,b,late"},
		{"Apache master", fromApache, "a,b,late"},
		{"no copy", nil, "a,b,a,b,late"}, // what the copy is for
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(dirM)); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(dir, "config", "timerProgress.json")); err != nil {
				t.Fatal(err)
			}
			if tc.resp != nil {
				asSlave(t, dir, func(s *Broker) {
					if err := s.timers.TakeCheckpoint(tc.resp); err != nil {
						t.Fatal(err)
					}
				})
			}
			b, _ := testBroker(t, dir, nil)
			if !waitFor(t, 3*time.Second, func() bool { return strings.HasSuffix(realIDs(t, b), "late") }) {
				t.Fatalf("late not delivered: %s", realIDs(t, b))
			}
			if d := time.Now().UnixMilli() - now; d < 1500 {
				t.Errorf("late delivered %d ms after send, asked 1500", d)
			}
			if got := realIDs(t, b); got != tc.want {
				t.Errorf("delivered %s, want %s", got, tc.want)
			}
		})
	}
}

// A checkpoint past the local timer queue's end (a slave behind its master,
// or a tail truncated) is clamped to it: a message written there later was
// read by no one and is delivered, though due before the copied read time.
func TestTimerCheckpointClampedToQueue(t *testing.T) {
	dir := t.TempDir()
	asSlave(t, dir, func(s *Broker) {
		c := make([]byte, timer.CheckpointLen)
		binary.BigEndian.PutUint64(c[0:], uint64(time.Now().Add(time.Hour).UnixMilli()))
		binary.BigEndian.PutUint64(c[24:], 50)
		if err := s.timers.TakeCheckpoint(&remoting.Command{Body: c}); err != nil {
			t.Fatal(err)
		}
	})
	b, _ := testBroker(t, dir, nil)
	putTimer(t, b, "new", time.Now().UnixMilli()+100)
	if !waitFor(t, 3*time.Second, func() bool { return realIDs(t, b) == "new" }) {
		t.Fatalf("a message written past the clamped checkpoint was not delivered: %q", realIDs(t, b))
	}
}

// A master's answer is hostile until checked; a refused one changes nothing,
// and a broker whose timer runs takes none.
func TestTakeTimerCheckpointRefuses(t *testing.T) {
	b, _ := testBroker(t, t.TempDir(), nil)
	body := func(read, enq int64) []byte {
		c := make([]byte, timer.CheckpointLen)
		binary.BigEndian.PutUint64(c[0:], uint64(read))
		binary.BigEndian.PutUint64(c[24:], uint64(enq))
		return c
	}
	withLow := func(c []byte, low string) *remoting.Command {
		r := &remoting.Command{Body: c}
		r.Set(timer.LowOffsetField, low)
		return r
	}
	for name, resp := range map[string]*remoting.Command{
		"short body":      {Body: make([]byte, 31)},
		"negative read":   {Body: body(-1, 3)},
		"negative offset": {Body: body(1, -3)},
		"low past end":    withLow(body(1, 3), "4"),
		"low negative":    withLow(body(1, 3), "-1"),
		"low not number":  withLow(body(1, 3), "x"),
	} {
		if err := b.timers.TakeCheckpoint(resp); err == nil || err == timer.ErrRunning {
			t.Errorf("%s: %v, want a refusal of the answer", name, err)
		}
	}
	waitFor(t, time.Second, b.timers.Running)
	if err := b.timers.TakeCheckpoint(&remoting.Command{Body: body(1, 0)}); err != timer.ErrRunning {
		t.Errorf("taken while the timer runs here: %v", err)
	}
}

// Timer and delay messages sent while their loops read the staging queue
// are all delivered: a loop that found nothing to read must not take an
// entry dispatched meanwhile for an unreadable slot.
func TestStagedMessagesNotSkippedUnderLoad(t *testing.T) {
	b, _ := testBroker(t, t.TempDir(), nil)
	const senders, each = 4, 300
	var wg sync.WaitGroup
	for g := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				p := props("TIMER_DELAY_MS", strconv.Itoa(50+i%7))
				if i%2 == 1 {
					p = props("DELAY", "1")
				}
				if _, err := b.Sends.Put(testMsg("Real", p)); err != nil {
					t.Error(err)
					return
				}
				if i%16 == g {
					time.Sleep(time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	if !waitFor(t, 10*time.Second, func() bool { return b.Store.MaxOffset("Real", 0) == senders*each }) {
		t.Fatalf("delivered %d of %d staged messages", b.Store.MaxOffset("Real", 0), senders*each)
	}
}
