package broker

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/store"
)

func TestMain(m *testing.M) {
	store.FakeDiskUsage(0.5) // no test depends on how full the host disk is
	testutil.VerifyNoLeaks(m)
}

// waitFor polls cond every 10 ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// testBroker opens a broker on a temp store without serving; run starts the
// store and the delay and timer loops, stopped by t.Cleanup.
func testBroker(t *testing.T, dir string, edit func(*Config)) (*Broker, func()) {
	t.Helper()
	return testBrokerLog(t, dir, edit, zerolog.Nop())
}

// testConfig is the configuration of the test brokers on the store dir.
func testConfig(dir string) Config {
	cfg := DefaultConfig()
	cfg.BrokerName = "b"
	cfg.BrokerIP1 = "127.0.0.1"
	cfg.Store.StorePathRootDir = dir
	cfg.Store.MappedFileSizeCommitLog = 1 << 20
	cfg.Store.AccessMessageInMemoryMaxRatio = 0 // tests of the residency check write 17 MiB, not GiBs
	cfg.Store.MessageDelayLevel = "1s 2s"
	return cfg
}

// testBrokerLog is testBroker logging to log.
func testBrokerLog(t *testing.T, dir string, edit func(*Config), log zerolog.Logger) (*Broker, func()) {
	t.Helper()
	cfg := testConfig(dir)
	if edit != nil {
		edit(&cfg)
	}
	b, err := New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	var wg sync.WaitGroup
	quit := make(chan struct{})
	stop := func() {
		once.Do(func() {
			close(quit)
			wg.Wait()
			if err := b.persistAll(); err != nil {
				t.Error(err)
			}
			if err := b.Store.Shutdown(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	if err := b.Store.Start(); err != nil {
		t.Fatal(err)
	}
	b.timers.FenceAt(b.Store.MaxPhyOffset())
	for _, fn := range b.schedulers() {
		wg.Add(1)
		go func() { defer wg.Done(); fn(quit) }()
	}
	t.Cleanup(stop)
	return b, stop
}

func testMsg(topic, props string) *store.PutMessage {
	h := netip.MustParseAddrPort("127.0.0.1:1234")
	return &store.PutMessage{Topic: topic, Body: []byte("hello"), Properties: props, BornHost: h, StoreHost: h,
		BornTimestamp: time.Now().UnixMilli()}
}

func props(kv ...string) string {
	var b []byte
	for i := 0; i+1 < len(kv); i += 2 {
		b = message.AppendProperty(b, kv[i], kv[i+1])
	}
	return string(b)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestDelayDeliveryAndOffsetFile(t *testing.T) {
	dir := t.TempDir()
	b, stop := testBroker(t, dir, nil)
	sent := time.Now()
	for i := 0; i < 3; i++ {
		m := testMsg("Real", props("DELAY", "1", "K", "v"))
		m.QueueID = 2
		if _, err := b.Sends.Put(m); err != nil {
			t.Fatal(err)
		}
	}
	if !waitFor(t, 5*time.Second, func() bool { return b.Store.MaxOffset("Real", 2) == 3 }) {
		t.Fatalf("delayed messages not delivered to Real-2 within 5 s")
	}
	if d := time.Since(sent); d < time.Second {
		t.Errorf("level 1 (1 s) delivered after %s", d)
	}
	es := b.Store.ReadQueue("Real", 2, 0, 10)
	rec, err := b.Store.RecordAt(es[0].PhyOffset, es[0].Size)
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := message.DecodeRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	pm := message.ParseProperties(r.Properties)
	// As Apache's: DELAY stays (serialised before it is cleared), no WAIT.
	if pm["K"] != "v" || pm["REAL_TOPIC"] != "Real" || pm["DELAY"] != "1" || pm["WAIT"] != "" || string(r.Body) != "hello" {
		t.Errorf("delivered record: props=%v body=%q", pm, r.Body)
	}
	// The deliveries count as Apache's: out of SCHEDULE_TOPIC_XXXX to
	// SCHEDULE_CONSUMER, into Real as delay (b.put counted nothing).
	var in, out int64
	counted := func() bool { // the last count may follow the dispatch seen above
		b.Stats.RangeIn(func(k stats.TopicType, f *stats.InFlow) bool {
			if k == (stats.TopicType{Topic: "Real", Type: stats.MessageDelay}) {
				in = f.Msgs.Load()
			}
			return true
		})
		b.Stats.RangeOut(func(k stats.GroupTopic, f *stats.Flow) bool {
			if k == (stats.GroupTopic{Group: message.ScheduleConsumerGroup, Topic: message.ScheduleTopic}) {
				out = f.Msgs.Load()
			}
			return true
		})
		return in == 3 && out == 3
	}
	if !waitFor(t, 2*time.Second, counted) {
		t.Errorf("delay deliveries counted in %d out %d, want 3 3", in, out)
	}
	stop()
	raw, err := os.ReadFile(filepath.Join(dir, "config", "delayOffset.json"))
	if err != nil || string(raw) != `{"offsetTable":{1:3}}` {
		t.Fatalf("delayOffset.json = %q, %v", raw, err)
	}
}

func TestTimerDeliveryOrderAndRestart(t *testing.T) {
	dir := t.TempDir()
	b, stop := testBroker(t, dir, nil)
	now := time.Now().UnixMilli()
	put := func(b *Broker, id string, due int64) {
		t.Helper()
		m := testMsg("Real", props("TIMER_DELIVER_MS", itoa(due), "id", id))
		if _, err := b.Sends.Put(m); err != nil {
			t.Fatal(err)
		}
		if m.Topic != message.TimerTopic {
			t.Fatalf("%s staged in %s", id, m.Topic)
		}
	}
	put(b, "c", now+600)
	put(b, "a", now+200)
	put(b, "b", now+400)
	put(b, "late", now+1500)
	ids := func(b *Broker) []string {
		var out []string
		for _, e := range b.Store.ReadQueue("Real", 0, 0, 100) {
			rec, err := b.Store.RecordAt(e.PhyOffset, e.Size)
			if err != nil {
				t.Fatal(err)
			}
			r, _, _ := message.DecodeRecord(rec)
			pm := message.ParseProperties(r.Properties)
			// As Apache's: REAL_TOPIC stays (serialised before it is cleared), no WAIT.
			if pm["REAL_TOPIC"] != "Real" || pm["TIMER_DEQUEUE_MS"] == "" || pm["WAIT"] != "" {
				t.Errorf("delivered props %v", pm)
			}
			out = append(out, pm["id"])
		}
		return out
	}
	if !waitFor(t, 3*time.Second, func() bool { return b.Store.MaxOffset("Real", 0) == 3 }) {
		t.Fatal("three timer messages not delivered within 3 s")
	}
	if d := time.Now().UnixMilli() - now; d < 600 {
		t.Errorf("third message delivered %d ms after send, asked 600", d)
	}
	if got := strings.Join(ids(b), ","); got != "a,b,c" {
		t.Errorf("delivery order %s, want a,b,c", got)
	}
	wantTimer(t, b, 4, 3, 1, now+1500)
	stop()

	b2, _ := testBroker(t, dir, nil)
	if !waitFor(t, 3*time.Second, func() bool { return b2.Store.MaxOffset("Real", 0) == 4 }) {
		t.Fatal("pending timer message not delivered after restart")
	}
	if d := time.Now().UnixMilli() - now; d < 1500 {
		t.Errorf("late message delivered %d ms after send, asked 1500", d)
	}
	waitFor(t, 300*time.Millisecond, func() bool { return b2.Store.MaxOffset("Real", 0) > 4 })
	if got := strings.Join(ids(b2), ","); got != "a,b,c,late" {
		t.Errorf("after restart: %s, want a,b,c,late (no redelivery)", got)
	}
	wantTimer(t, b2, 1, 1, 0, 0) // since the restart: only the one still waiting was read
}

// wantTimer waits for topic Real's TimerStats (and the head's due time).
func wantTimer(t *testing.T, b *Broker, enq, deq, timing, headDue int64) {
	t.Helper()
	var f *stats.TimerFlow
	ok := waitFor(t, 3*time.Second, func() bool {
		f = nil
		b.Timer.RangeTopics(func(topic string, x *stats.TimerFlow) bool {
			if topic == "Real" {
				f = x
			}
			return true
		})
		return f != nil && f.Enqueued.Load() == enq && f.Dequeued.Load() == deq && f.Timing.Load() == timing &&
			b.Timer.HeadDue.Load() == headDue && b.Timer.Behind.Load() == 0
	})
	if !ok {
		if f == nil {
			t.Fatal("no timer figures for Real")
		}
		t.Fatalf("timer: enqueued %d dequeued %d timing %d head %d behind %d, want %d %d %d %d 0", f.Enqueued.Load(),
			f.Dequeued.Load(), f.Timing.Load(), b.Timer.HeadDue.Load(), b.Timer.Behind.Load(), enq, deq, timing, headDue)
	}
}

func TestLocks(t *testing.T) {
	l := tables.NewLocks(time.Minute)
	now := time.Now()
	q := []tables.MessageQueue{{Topic: "T", BrokerName: "b", QueueID: 0}, {Topic: "T", BrokerName: "b", QueueID: 1}}
	if got := l.TryLock("G", "A", 1, q, now); len(got) != 2 {
		t.Fatalf("A locked %v", got)
	}
	if got := l.TryLock("G", "B", 2, q, now); len(got) != 0 {
		t.Fatalf("B got %v while A holds both", got)
	}
	if got := l.TryLock("G2", "B", 2, q, now); len(got) != 2 {
		t.Fatalf("other group: %v", got)
	}
	l.Unlock("G", "B", q[:1]) // not B's: no effect
	l.Unlock("G", "A", q[:1])
	if got := l.TryLock("G", "B", 2, q, now); len(got) != 1 || got[0].QueueID != 0 {
		t.Fatalf("after unlock of q0 B got %v", got)
	}
	if got := l.TryLock("G", "B", 2, q, now.Add(61*time.Second)); len(got) != 2 {
		t.Fatalf("after A's lock expired B got %v", got)
	}
	if !l.Held("G", now) || l.Held("G", now.Add(3*time.Minute)) {
		t.Fatal("Held wrong")
	}
	l.ConnClosed(2)
	if l.Held("G", now) {
		t.Fatal("locks survive their connection")
	}
	if got := l.TryLock("G", "A", 3, q, now); len(got) != 2 {
		t.Fatalf("after B's connection closed A got %v", got)
	}
}
