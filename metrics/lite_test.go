package metrics

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/store"
)

// liteGaugeBroker is a broker with its store started, LMQs on, LITE parent
// topic P (1 queue) and lite groups G and L bound to it.
func liteGaugeBroker(t testing.TB, edit func(*store.Config)) *broker.Broker {
	t.Helper()
	cfg := broker.DefaultConfig()
	cfg.BrokerName = "b"
	cfg.BrokerIP1 = "127.0.0.1"
	cfg.NamesrvAddr = ""
	cfg.Store.StorePathRootDir = t.TempDir()
	cfg.Store.MappedFileSizeCommitLog = 16 << 20
	cfg.Store.EnableLmq, cfg.Store.EnableMultiDispatch = true, true
	if edit != nil {
		edit(&cfg.Store)
	}
	b, err := broker.New(cfg, testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Store.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = b.Shutdown(context.Background())
		_ = b.Store.Shutdown(context.Background())
	})
	if err := b.Topics.Put(tables.TopicConfig{TopicName: "P", ReadQueueNums: 1, WriteQueueNums: 1,
		Perm: message.PermRead | message.PermWrite, Attributes: map[string]string{tables.AttrMessageType: "LITE"}}); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"G", "L"} {
		gc := tables.DefaultGroupConfig(g)
		gc.Attributes = map[string]string{"+" + tables.AttrLiteBindTopic: "P"}
		if err := b.Groups.Put(gc); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// putLMQs stores one message of P indexed in each of lmqs.
func putLMQs(t testing.TB, b *broker.Broker, lmqs string) {
	t.Helper()
	h := netip.MustParseAddrPort("127.0.0.1:1234")
	if _, err := b.Store.Put(&store.PutMessage{Topic: "P", Body: []byte("x"), BornHost: h, StoreHost: h,
		Properties:    string(message.AppendProperty(nil, message.PropInnerMultiDispatch, lmqs)),
		BornTimestamp: time.Now().UnixMilli()}); err != nil {
		t.Fatal(err)
	}
}

// TestLiteGauges: the lite groups' rows as Apache's LiteConsumerLagCalculator
// makes them — lag and ready summed per group and parent over the LMQs the
// group has an offset of, lag latency from the lite pops' notes — only when
// enabled; a lite group has no row of the other groups' kind; a group with
// a row of that kind for the parent keeps it alone (one label set once).
func TestLiteGauges(t *testing.T) {
	b := liteGaugeBroker(t, nil)
	for i := 0; i < 5; i++ {
		lmqs := "%LMQ%$P$a"
		if i < 3 {
			lmqs += ",%LMQ%$P$b"
		}
		if i < 2 {
			lmqs += ",%LMQ%$Q$x,%LMQ%plain"
		}
		putLMQs(t, b, lmqs)
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { return b.Store.MaxOffset("%LMQ%$P$a", 0) == 5 })
	b.Offsets.Commit("G", "%LMQ%$P$a", 0, 2) // 3 behind
	b.Offsets.Commit("G", "%LMQ%$P$b", 0, 1) // 2 behind
	b.Offsets.Commit("G", "%LMQ%$Q$x", 0, 0) // 2 behind, another parent
	b.Offsets.Commit("G", "%LMQ%plain", 0, 0)
	b.Offsets.Commit("H", "%LMQ%$P$a", 0, 5)  // caught up: no row
	b.Offsets.Commit("H", "%LMQ%$P$b", 0, -1) // below 0 counts 0
	b.Offsets.Commit("N", "%LMQ%$P$a", 0, 1)  // not a lite group: counted all the same
	b.Offsets.Commit("C", "%LMQ%$P$a", 0, 4)  // a group that also consumes P as a topic
	if err := b.Groups.Put(tables.DefaultGroupConfig("C")); err != nil {
		t.Fatal(err)
	}
	consumerSub(b, 1, "C", "CONSUME_PASSIVELY", "P", "*")
	consumerSub(b, 2, "L", "CONSUME_POP", "P", "*") // a lite group online by heartbeat
	b.Offsets.Commit("C", "P", 0, 0)
	oldest := time.Now().UnixMilli() - 5_000
	b.LiteLag.Update("G", "P", "%LMQ%$P$a", oldest, 50)
	b.LiteLag.Update("G", "P", "%LMQ%$P$b", oldest+1000, 50)

	src := sourceOf(b)
	var count, latency bool
	src.LiteLagEnabled = func() (bool, bool) { return count, latency }
	c := newCollector(src, nil, testutil.Logger())
	if got := gauges(t, c); len(got) != 1 || got["C/P/false"] == nil {
		t.Fatalf("lite metrics off: rows %v, want C's only", got)
	}
	count, latency = true, true
	before := time.Now().UnixMilli()
	got := gauges(t, c)
	after := time.Now().UnixMilli()
	if lat := got["G/P/false"]["lagLatency"]; lat < float64(before-oldest) || lat > float64(after-oldest) {
		t.Errorf("G/P lag latency %v, want now - %d", lat, oldest)
	}
	delete(got["G/P/false"], "lagLatency")
	want := map[string]map[string]float64{
		"G/P/false": {"lag": 5, "ready": 5},
		"G/Q/false": {"lag": 2, "ready": 2},
		"N/P/false": {"lag": 4, "ready": 4},
		// C's row is the other groups' kind: P's 5 messages from offset
		// 0, not the lite row's 1.
		"C/P/false": {"lag": 5, "ready": 5, "inflight": 0},
	}
	for _, n := range []string{"lagLatency", "queueingLatency"} {
		if got["C/P/false"][n] <= 0 {
			t.Errorf("C/P %s %v", n, got["C/P/false"][n])
		}
		delete(got["C/P/false"], n)
	}
	if len(got) != len(want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	for k, w := range want {
		for n, v := range w {
			if got[k][n] != v {
				t.Errorf("%s %s = %v, want %v (%v)", k, n, got[k][n], v, got[k])
			}
		}
		if len(got[k]) != len(w) {
			t.Errorf("%s: %v, want %v", k, got[k], w)
		}
	}
	b.Stats.OutLite("G", "P", 3, 300)
	reg := prometheus.NewRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	found := false
	for _, mf := range mfs {
		if mf.GetName() != "rocketmq_messages_out_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			found = found || (l["consumer_group"] == "G" && l["topic"] == "P" && l["is_retry"] == "false" &&
				l["is_system"] == "false" && m.GetCounter().GetValue() == 3)
		}
	}
	if !found {
		t.Errorf("no lite messages out with is_retry=\"false\" in %v", mfs)
	}
}

// BenchmarkLiteGauges is one scrape's lite rows at 100,000 lite topics of
// one parent, each with one message and a group's offset (half of them
// behind), and the lite pops' notes at topK. Its setup makes 100,000 queue
// files: with TMPDIR on a tmpfs it takes seconds, on a busy disk minutes.
func BenchmarkLiteGauges(b *testing.B) {
	const lmqs, perMsg = 100_000, 100
	br := liteGaugeBroker(b, func(c *store.Config) {
		c.MappedFileSizeConsumeQueue = 100 * 20
		c.MaxMappedConsumeQueueFiles = 16
	})
	var names []byte
	for i := 0; i < lmqs; i += perMsg {
		names = names[:0]
		for j := i; j < i+perMsg; j++ {
			if j > i {
				names = append(names, ',')
			}
			names = append(names, "%LMQ%$P$l"...)
			names = strconv.AppendInt(names, int64(j), 10)
		}
		putLMQs(b, br, string(names))
	}
	// Queue files are made off the dispatch path, in order: the last LMQ's
	// file means none is being made during the timed part.
	last := filepath.Join(br.Config().Store.StorePathRootDir, "consumequeue", "%LMQ%$P$l"+strconv.Itoa(lmqs-1), "0")
	testutil.WaitFor(b, 20*time.Minute, func() bool {
		files, _ := os.ReadDir(last)
		return br.Store.LmqNum() == lmqs && len(files) > 0
	})
	for j := 0; j < lmqs; j++ {
		lmq := "%LMQ%$P$l" + strconv.Itoa(j)
		br.Offsets.Commit("G", lmq, 0, int64(j%2))
		if j < 50 {
			br.LiteLag.Update("G", "P", lmq, int64(j), 50)
		}
	}
	src := sourceOf(br)
	src.LiteLagEnabled = func() (bool, bool) { return true, true }
	c := newCollector(src, nil, testutil.Logger())
	emit := func(string, float64, ...string) {}
	if rows := c.liteRows(); rows[groupTopic{"G", "P"}].lag != lmqs/2 {
		b.Fatalf("rows %v", rows)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		emitLite(c.liteRows(), emit)
	}
}
