package processor

import (
	"context"
	"testing"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
)

// newBrokerProcs opens a broker (store and tables, no server) for handler
// benchmarks and tests that call handler methods directly.
func newBrokerProcs(tb testing.TB) *brokerProcs {
	tb.Helper()
	cfg := broker.DefaultConfig()
	cfg.BrokerName = "b"
	cfg.BrokerIP1 = "127.0.0.1"
	cfg.NamesrvAddr = ""
	cfg.Store.StorePathRootDir = tb.TempDir()
	cfg.Store.MappedFileSizeCommitLog = 1 << 20
	b, err := broker.New(cfg, testutil.Logger())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	return &brokerProcs{b: b, log: testutil.Logger()}
}

// The send checks of a known topic run per request: they must stay a table
// lookup, with no name validation (a topic in the table was validated when
// it was created).
func BenchmarkCheckSendKnownTopic(b *testing.B) {
	p := newBrokerProcs(b)
	if err := p.b.Topics.Put(broker.TopicConfig{TopicName: "BenchTopic_with_a_realistic_name-01", ReadQueueNums: 8,
		WriteQueueNums: 8, Perm: broker.PermRead | broker.PermWrite}); err != nil {
		b.Fatal(err)
	}
	h := sendHeader{producerGroup: "PG", topic: "BenchTopic_with_a_realistic_name-01", defaultTopic: "TBW102",
		defaultTopicQueueNums: 4, queueID: 3}
	c := &remoting.Conn{Remote: "127.0.0.1:1"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.checkSend(c, &h); err != nil {
			b.Fatal(err)
		}
	}
}

// GET_TOPIC_STATS_INFO of a topic with the most queues a request can give it
// (maxTopicQueueNums): the bound on what one stats request costs.
func BenchmarkTopicStatsMaxQueues(b *testing.B) {
	p := newBrokerProcs(b)
	n := p.b.Config().MaxTopicQueueNums
	if err := p.b.Topics.Put(broker.TopicConfig{TopicName: "Wide", ReadQueueNums: n, WriteQueueNums: n,
		Perm: broker.PermRead | broker.PermWrite}); err != nil {
		b.Fatal(err)
	}
	req := remoting.NewRequest(remoting.GetTopicStatsInfo, map[string]string{"topic": "Wide"}, nil)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if resp := p.topicStats(nil, req); resp.Code != remoting.Success {
			b.Fatal(resp.Remark)
		}
	}
}
