package metrics

import (
	"context"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/broker/pop"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// gaugeBroker is a broker with its store started (no server) and topic T of
// two queues holding 10 messages in queue 0, stored about a second ago.
func gaugeBroker(t testing.TB) *broker.Broker {
	t.Helper()
	cfg := broker.DefaultConfig()
	cfg.BrokerName = "b"
	cfg.BrokerIP1 = "127.0.0.1"
	cfg.NamesrvAddr = ""
	cfg.Store.StorePathRootDir = t.TempDir()
	cfg.Store.MappedFileSizeCommitLog = 1 << 20
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
	if err := b.Topics.Put(tables.TopicConfig{TopicName: "T", ReadQueueNums: 2, WriteQueueNums: 2,
		Perm: message.PermRead | message.PermWrite}); err != nil {
		t.Fatal(err)
	}
	h := netip.MustParseAddrPort("127.0.0.1:1234")
	for i := 0; i < 10; i++ {
		if _, err := b.Store.Put(&store.PutMessage{Topic: "T", Body: []byte("hello"), BornHost: h, StoreHost: h,
			BornTimestamp: time.Now().UnixMilli()}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for b.Store.MaxOffset("T", 0) < 10 {
		if time.Now().After(deadline) {
			t.Fatal("messages not dispatched")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // latencies measurably above 0
	return b
}

func consumerOn(b *broker.Broker, id uint64, group, consumeType string) {
	consumerSub(b, id, group, consumeType, "T", "*")
}

func consumerSub(b *broker.Broker, id uint64, group, consumeType, topic, expr string) {
	c := &remoting.Conn{ID: id, Remote: "127.0.0.1:9"}
	b.Clients.RegisterConsumer(c, "c", remoting.LangGo, 317, tables.ConsumerInfo{Group: group, ConsumeType: consumeType,
		MessageModel: "CLUSTERING", Subscriptions: []*tables.Subscription{tables.NewTagSubscription(topic, expr, 1)}}, false)
}

// TestConsumerGaugesTags: a group subscribed by tag counts only the messages
// it would receive (Apache's estimateAccumulation; 10 messages: below the
// sampling bounds, counted in full).
func TestConsumerGaugesTags(t *testing.T) {
	b := gaugeBroker(t)
	if err := b.Topics.Put(tables.TopicConfig{TopicName: "F", ReadQueueNums: 1, WriteQueueNums: 1,
		Perm: message.PermRead | message.PermWrite}); err != nil {
		t.Fatal(err)
	}
	h := netip.MustParseAddrPort("127.0.0.1:1234")
	for i := 0; i < 10; i++ {
		tag := []string{"a", "b"}[i%2]
		if _, err := b.Store.Put(&store.PutMessage{Topic: "F", Body: []byte("x"), BornHost: h, StoreHost: h,
			Properties:    string(message.AppendProperty(nil, message.PropTags, tag)),
			BornTimestamp: time.Now().UnixMilli()}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for b.Store.MaxOffset("F", 0) < 10 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	for i, g := range []struct{ name, expr string }{{"A", "a"}, {"AB", "a || b"}, {"C", "c"}} {
		if err := b.Groups.Put(tables.DefaultGroupConfig(g.name)); err != nil {
			t.Fatal(err)
		}
		consumerSub(b, uint64(i+1), g.name, "CONSUME_PASSIVELY", "F", g.expr)
		b.Offsets.Commit(g.name, "F", 0, 0)
	}
	got := gauges(t, newCollector(sourceOf(b), nil, testutil.Logger()))
	for k, want := range map[string]float64{"A/F/false": 5, "AB/F/false": 10, "C/F/false": 0} {
		if got[k]["lag"] != want || got[k]["ready"] != want {
			t.Errorf("%s: %v, want lag and ready %v", k, got[k], want)
		}
	}
}

// TestConsumerGauges: a push group that committed 4 of queue 0's 10, one
// that committed nothing, a pop group with 3 popped and not acknowledged,
// and a group that is offline (no figures, as Apache's calculator).
func TestConsumerGauges(t *testing.T) {
	b := gaugeBroker(t)
	for _, g := range []string{"Push", "Fresh", "Pop", "Gone"} {
		if err := b.Groups.Put(tables.DefaultGroupConfig(g)); err != nil {
			t.Fatal(err)
		}
	}
	consumerOn(b, 1, "Push", "CONSUME_PASSIVELY")
	consumerOn(b, 2, "Fresh", "CONSUME_PASSIVELY")
	consumerOn(b, 3, "Pop", "CONSUME_POP")
	b.Offsets.Commit("Push", "T", 0, 4)
	b.Offsets.Commit("Gone", "T", 0, 1)
	b.Offsets.Commit("Pop", "T", 0, 5)
	b.Offsets.Commit("Pop", "T", 1, 0)
	popped := make(chan error, 1)
	if _, err := b.Pops.Pop(&pop.Request{Group: "Pop", Topic: "T", QueueID: 0, MaxMsgNums: 3, InvisibleTime: 60_000},
		func() pop.Completion {
			return pop.Completion{Done: func(res pop.Result, err error) {
				if err == nil && res.Count != 3 {
					err = context.DeadlineExceeded
				}
				if res.Release != nil {
					res.Release()
				}
				popped <- err
			}}
		}); err != nil {
		t.Fatal(err)
	}
	if err := <-popped; err != nil {
		t.Fatalf("pop: %v", err)
	}

	got := gauges(t, newCollector(sourceOf(b), nil, testutil.Logger()))
	for _, w := range []struct {
		key                         string
		lag, inflight, ready        float64
		lagLatency, queueingLatency bool // > 0
	}{
		{"Push/T/false", 6, 0, 6, true, true},
		// Nothing committed: no lag (the consumer offset is the end), the
		// queueing latency from offset 0 (Apache's pull offset then).
		{"Fresh/T/false", 0, 0, 0, false, true},
		// Popped 5..7 of queue 0 (committed 8), 3 in flight: lag 2 + 3.
		{"Pop/T/false", 5, 3, 2, true, true},
		{"Pop/T/true", 0, 0, 0, false, false}, // no retry topic yet
	} {
		g, ok := got[w.key]
		if !ok {
			t.Errorf("%s: no figures in %v", w.key, got)
			continue
		}
		if g["lag"] != w.lag || g["inflight"] != w.inflight || g["ready"] != w.ready ||
			(g["lagLatency"] > 0) != w.lagLatency || (g["queueingLatency"] > 0) != w.queueingLatency {
			t.Errorf("%s: %v, want lag %v inflight %v ready %v latencies > 0 %v %v", w.key, g, w.lag, w.inflight,
				w.ready, w.lagLatency, w.queueingLatency)
		}
		if g["lagLatency"] > 60_000 || g["queueingLatency"] > 60_000 {
			t.Errorf("%s: latency beyond the test's age: %v", w.key, g)
		}
	}
	if _, ok := got["Gone/T/false"]; ok {
		t.Errorf("an offline group has figures: %v", got)
	}
}

// TestReserveTime: the age of the store's first message.
func TestReserveTime(t *testing.T) {
	b := gaugeBroker(t)
	v := -1.0
	for _, m := range collect(t, newCollector(sourceOf(b), nil, testutil.Logger())) {
		if descName(m.Desc()) == "rocketmq_storage_message_reserve_time_milliseconds" {
			d, _ := sample(t, m)
			v = d.GetGauge().GetValue()
		}
	}
	if v < 50 || v > 60_000 { // gaugeBroker stored them 50 ms or more before
		t.Fatalf("reserve time %v ms", v)
	}
}

// sample is m's value and labels.
func sample(t *testing.T, m prometheus.Metric) (*dto.Metric, map[string]string) {
	t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatal(err)
	}
	l := map[string]string{}
	for _, p := range d.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return &d, l
}

func collect(t *testing.T, c prometheus.Collector) []prometheus.Metric {
	t.Helper()
	ch := make(chan prometheus.Metric, 1024)
	go func() { c.Collect(ch); close(ch) }()
	var out []prometheus.Metric
	for m := range ch {
		out = append(out, m)
	}
	return out
}

// gauges collects c's consumer gauges by group/topic/is_retry.
func gauges(t *testing.T, c *collector) map[string]map[string]float64 {
	t.Helper()
	names := map[string]string{
		"rocketmq_consumer_lag_messages":                  "lag",
		"rocketmq_consumer_lag_latency_milliseconds":      "lagLatency",
		"rocketmq_consumer_inflight_messages":             "inflight",
		"rocketmq_consumer_queueing_latency_milliseconds": "queueingLatency",
		"rocketmq_consumer_ready_messages":                "ready",
	}
	out := map[string]map[string]float64{}
	for _, m := range collect(t, c) {
		short, ok := names[descName(m.Desc())]
		if !ok {
			continue
		}
		d, l := sample(t, m)
		k := l["consumer_group"] + "/" + l["topic"] + "/" + l["is_retry"]
		if out[k] == nil {
			out[k] = map[string]float64{}
		}
		out[k][short] = d.GetGauge().GetValue()
	}
	return out
}

// descName is a Desc's metric name (client_golang exposes it only in String).
func descName(d *prometheus.Desc) string {
	s := d.String()
	const p = `fqName: "`
	i := strings.Index(s, p)
	if i < 0 {
		return ""
	}
	s = s[i+len(p):]
	return s[:strings.IndexByte(s, '"')]
}

// BenchmarkConsumerGauges is one scrape's consumer gauges at the cap: 1,000
// online groups on a topic of 20 queues, each with a committed offset
// (20,000 queues read).
func BenchmarkConsumerGauges(b *testing.B) {
	br := gaugeBroker(b)
	if err := br.Topics.Put(tables.TopicConfig{TopicName: "T", ReadQueueNums: 20, WriteQueueNums: 20,
		Perm: message.PermRead | message.PermWrite}); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		g := "G" + strconv.Itoa(i)
		if err := br.Groups.Put(tables.DefaultGroupConfig(g)); err != nil {
			b.Fatal(err)
		}
		consumerOn(br, uint64(i+1), g, "CONSUME_PASSIVELY")
		br.Offsets.Commit(g, "T", 0, int64(i%10))
	}
	c := newCollector(sourceOf(br), nil, testutil.Logger())
	emit := func(string, float64, ...string) {}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.consumerGauges(emit, nil)
	}
}

// sourceOf is what cmd/mqbroker hands New of b.
func sourceOf(b *broker.Broker) Source {
	cfg := b.Config()
	return Source{Store: b.Store, Topics: b.Topics, Groups: b.Groups, Offsets: b.Offsets, Clients: b.Clients,
		Stats: &b.Stats, Tx: &b.Tx, Timer: &b.Timer, Revive: &b.Revive,
		StoreRoot: cfg.Store.StorePathRootDir, TimerWheel: cfg.TimerWheelEnable,
		Permission: func() int32 { return b.Config().BrokerPermission }, TimerTiming: b.Role.TimerTiming,
		EachPopInFlight: b.Pops.EachInFlight, LiteLag: &b.LiteLag,
		LiteLagEnabled: func() (bool, bool) {
			c := b.Config()
			return c.LiteLagCountMetricsEnable, c.LiteLagLatencyMetricsEnable
		}}
}
