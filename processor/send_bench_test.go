package processor

import (
	"context"
	"net"
	"strconv"
	"testing"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// newBrokerProcs opens a broker (store and tables, no server) for handler
// benchmarks and tests that call handler methods directly.
func newBrokerProcs(tb testing.TB) (*brokerProcs, *broker.Broker) {
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
	return procsOf(ServicesOf(b), testutil.Logger()), b
}

// GET_TOPIC_STATS_INFO of a topic with the most queues a request can give it
// (maxTopicQueueNums): the bound on what one stats request costs.
func BenchmarkTopicStatsMaxQueues(b *testing.B) {
	p, br := newBrokerProcs(b)
	n := br.Config().MaxTopicQueueNums
	if err := br.Topics.Put(tables.TopicConfig{TopicName: "Wide", ReadQueueNums: n, WriteQueueNums: n,
		Perm: message.PermRead | message.PermWrite}); err != nil {
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

// sendBroker serves a broker with the processor table on one event loop
// (runBroker, oneLoop); edit changes the configuration first.
func sendBroker(tb testing.TB, edit func(*broker.Config)) *broker.Broker {
	tb.Helper()
	return runBroker(tb, oneLoop(edit), nil)
}

// sendFrames is n requests as mqbench writes them: SEND_MESSAGE_V2 with a
// binary header and a 1 KiB body, or, with batch > 0, SEND_BATCH_MESSAGE of
// batch such messages.
func sendFrames(tb testing.TB, topic string, n, batch int) []byte {
	tb.Helper()
	code, body := remoting.SendMessageV2, make([]byte, 1024)
	if batch > 0 {
		code, body = remoting.SendBatchMessage, nil
		for i := range batch {
			var err error
			if body, err = message.AppendBatchMessage(body, 0, make([]byte, 1024),
				"UNIQ_KEY\x017F0000011B2C18B4AAC27A5C1B2D"+strconv.Itoa(1000+i)+"\x02"); err != nil {
				tb.Fatal(err)
			}
		}
	}
	req := &remoting.Command{Code: code, Opaque: 7, Serialize: remoting.RocketMQ, Body: body,
		ExtFields: remoting.Fields(map[string]string{
			"a": "PG", "b": topic, "c": "TBW102", "d": "4", "e": "3", "f": "0", "g": "1700000000000", "h": "0",
			"i": "KEYS\x01k1\x02UNIQ_KEY\x017F0000011B2C18B4AAC27A5C1B2D0000\x02WAIT\x01true\x02", "j": "0", "k": "false", "m": "false",
		})}
	var out []byte
	for range n {
		out = remoting.AppendFrame(out, req)
	}
	return out
}

// BenchmarkSendServed measures a send's whole path in the broker over a real
// socket: frame decode, header decode, the send service (checks, hooks,
// store append), the answer's encoding. Requests are pipelined 64 at a time
// on one connection; the client side allocates nothing, so allocs/op are
// the broker's (dispatch and flush included).
func BenchmarkSendServed(b *testing.B) {
	for _, bc := range []struct {
		name  string
		batch int
	}{{"single", 0}, {"batch16", 16}} {
		b.Run(bc.name, func(b *testing.B) {
			br := sendBroker(b, nil)
			if err := br.Topics.Put(tables.TopicConfig{TopicName: "BenchTopic", ReadQueueNums: 8, WriteQueueNums: 8,
				Perm: message.PermRead | message.PermWrite}); err != nil {
				b.Fatal(err)
			}
			nc, err := net.Dial("tcp", br.Config().Addr())
			if err != nil {
				b.Fatal(err)
			}
			defer nc.Close()
			const window = 64
			frames := sendFrames(b, "BenchTopic", window, bc.batch)
			in := make([]byte, 64<<10)
			testutil.Pipeline(b, nc, frames, window, in) // warm up: pools, queue files
			b.ReportAllocs()
			b.SetBytes(int64(len(frames) / window))
			b.ResetTimer()
			for i := 0; i < b.N; i += window {
				testutil.Pipeline(b, nc, frames, window, in)
			}
		})
	}
}
