package processor

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// liteTopics is how many lite topics the lite benchmarks spread over, all
// under one parent.
const liteTopics = 100000

// BenchmarkLite100k measures lite topics at 100,000 under one parent over
// a real socket, one request at a time, 1 KiB messages:
//   - setup: one message to each lite topic (the LMQ made on disk) and one
//     client subscribed to all of them; B/lite is the broker's heap growth
//     per lite topic for both (store queue, offsets, subscription);
//   - send: SEND_MESSAGE_V2 round-robin over the lite topics (an op is
//     one message); send-parent-only is the same without a lite topic;
//   - pop+ack: POP_LITE_MESSAGE of up to 32 across the client's lite
//     topics, then one ACK_MESSAGE with liteTopic per message, as the
//     proxy acks (an op is one message popped and acked).
func BenchmarkLite100k(b *testing.B) {
	br, cl, call := liteBenchBroker(b)
	body := make([]byte, 1024)
	send := func(i int) {
		req := sendV2("P", body)
		req.Set("i", message.SetProperties("", message.PropLiteTopic, "l"+strconv.Itoa(i%liteTopics)))
		if r := call(req); r.Code != remoting.Success {
			b.Fatalf("send: %d %s", r.Code, r.Remark)
		}
	}
	before := heapInUse()
	for i := range liteTopics {
		send(i)
	}
	// Queue files are made off the dispatch path, in order: the last lite
	// topic's file means the creations that would compete with the timed
	// part are over.
	last := filepath.Join(br.Config().Store.StorePathRootDir, "consumequeue", message.LiteQueue("P", "l"+strconv.Itoa(liteTopics-1)), "0")
	testutil.WaitFor(b, 10*time.Minute, func() bool {
		files, _ := os.ReadDir(last)
		return br.Store.LmqNum() == liteTopics && len(files) > 0
	})
	names := make([]string, 0, 10000)
	for i := 0; i < liteTopics; i += cap(names) {
		names = names[:0]
		for j := i; j < i+cap(names); j++ {
			names = append(names, strconv.Quote("l"+strconv.Itoa(j)))
		}
		action := "PARTIAL_ADD"
		body := `{"subscriptionSet":[{"action":"` + action + `","clientId":"c1","group":"G","topic":"P","liteTopicSet":[` +
			strings.Join(names, ",") + `],"version":1}]}`
		if r := call(remoting.NewRequest(remoting.LiteSubscriptionCtl, map[string]string{}, []byte(body))); r.Code != remoting.Success {
			b.Fatalf("subscribe: %d %s", r.Code, r.Remark)
		}
	}
	perLite := float64(heapInUse()-before) / liteTopics
	_ = cl

	// The same sends without a lite topic: what the lite dispatch adds.
	b.Run("send-parent-only", func(b *testing.B) {
		b.SetBytes(1024)
		for range b.N {
			if r := call(sendV2("P", body)); r.Code != remoting.Success {
				b.Fatalf("send: %d %s", r.Code, r.Remark)
			}
		}
	})
	b.Run("send", func(b *testing.B) {
		b.SetBytes(1024)
		b.ReportMetric(perLite, "B/lite")
		for i := range b.N {
			send(i)
		}
	})
	b.Run("pop+ack", func(b *testing.B) {
		b.SetBytes(1024)
		b.ReportMetric(perLite, "B/lite")
		for done := 0; done < b.N; {
			resp := call(popLiteReq("c1", 32, time.Minute, 0))
			if resp.Code != remoting.Success {
				// Drained (or the events not offered yet): more messages, untimed.
				b.StopTimer()
				for i := range 32 * 64 {
					send(done + i)
				}
				b.StartTimer()
				continue
			}
			ms, _ := decodePopLiteAnswer(b, resp)
			for _, m := range ms {
				if r := call(ackLiteReq(m)); r.Code != remoting.Success {
					b.Fatalf("ack: %d %s", r.Code, r.Remark)
				}
			}
			done += len(ms)
		}
	})
}

// liteBenchBroker is liteBroker for a benchmark: one event loop, lite on,
// P (LITE, 8 queues) and the lite group G.
func liteBenchBroker(b *testing.B) (*broker.Broker, *remoting.Client, func(*remoting.Command) *remoting.Command) {
	b.Helper()
	br := runBroker(b, oneLoop(func(c *broker.Config) {
		c.Store.EnableLmq, c.Store.EnableMultiDispatch = true, true
	}), nil)
	if err := br.Topics.Put(tables.TopicConfig{TopicName: "P", ReadQueueNums: 8, WriteQueueNums: 8,
		Perm: message.PermRead | message.PermWrite, Attributes: map[string]string{tables.AttrMessageType: "LITE"}}); err != nil {
		b.Fatal(err)
	}
	gc := tables.DefaultGroupConfig("G")
	gc.Attributes = map[string]string{"+" + tables.AttrLiteBindTopic: "P"}
	if err := br.Groups.Put(gc); err != nil {
		b.Fatal(err)
	}
	cl := remoting.NewClient(testutil.Logger())
	b.Cleanup(func() { _ = cl.Close() })
	call := func(req *remoting.Command) *remoting.Command {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, err := cl.Invoke(ctx, br.Config().Addr(), req)
		if err != nil {
			b.Fatal(err)
		}
		return resp
	}
	return br, cl, call
}

// heapInUse is the live heap after a full collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
