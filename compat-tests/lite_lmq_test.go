package compattest

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// TestLiteTopicLMQ: the official Go client sends messages with the
// __LITE_TOPIC property (what Apache 5.5's proxy sets for a lite send) to a
// rocketgo broker with enableLmq and enableMultiDispatch on, then pulls them
// from the lite topic's light message queue %LMQ%$<topic>$<lite>, queue 0:
// each lite topic's messages, in order, at LMQ offsets 0, 1, …, with
// INNER_MULTI_DISPATCH and INNER_MULTI_QUEUE_OFFSET as Apache's store
// writes them; a message without the property is in no LMQ. The broker is
// then restarted and the LMQ read again (rebuilt from disk).
func TestLiteTopicLMQ(t *testing.T) {
	c := newClusterConf(t, "lite-lmq", "enableLmq=true\nenableMultiDispatch=true\n")
	topic := uniq("LiteParent")
	createTopic(t, c, topic)
	p := newProducer(t, c)
	const n = 10
	want := map[string][]string{}
	var parentQueue *primitive.MessageQueue
	for i := range n {
		lite := "lite-a"
		if i%3 == 2 {
			lite = "lite-b"
		}
		body := fmt.Sprintf("%s-%d", lite, i)
		m := primitive.NewMessage(topic, []byte(body))
		m.WithProperty("__LITE_TOPIC", lite)
		r := p.mustSend(t, m)
		parentQueue = r.MessageQueue
		want[lite] = append(want[lite], body)
	}
	p.mustSend(t, primitive.NewMessage(topic, []byte("plain")))

	pc, err := rocketmq.NewPullConsumer(consumer.WithNsResolver(resolver(c)), consumer.WithGroupName(uniq("LiteGroup")),
		consumer.WithInstance(uniq("pull")))
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Subscribe(topic, consumer.MessageSelector{}); err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(); err != nil {
		t.Fatalf("pull consumer start: %v", err)
	}
	defer func() { _ = pc.Shutdown() }()
	// The parent's queue first: the client learns the broker's address
	// from the parent topic's route (an LMQ has none).
	if _, err := pc.PullFrom(context.Background(), parentQueue, 0, 1); err != nil {
		t.Fatalf("pull of the parent topic: %v", err)
	}
	check := func(stage string) {
		t.Helper()
		for lite, bodies := range want {
			lmq := "%LMQ%$" + topic + "$" + lite
			mq := &primitive.MessageQueue{Topic: lmq, BrokerName: c.brokerName, QueueId: 0}
			var got []*primitive.MessageExt
			waitFor(t, 10*time.Second, func() bool {
				res, err := pc.PullFrom(context.Background(), mq, 0, 32)
				if err != nil {
					t.Logf("%s: pull %s: %v", stage, lmq, err)
					return false
				}
				got = res.GetMessageExts()
				return len(got) >= len(bodies)
			})
			if len(got) != len(bodies) {
				t.Fatalf("%s: %s holds %d messages, want %d", stage, lmq, len(got), len(bodies))
			}
			for i, m := range got {
				if string(m.Body) != bodies[i] || m.Topic != topic ||
					m.GetProperty("INNER_MULTI_DISPATCH") != lmq ||
					m.GetProperty("INNER_MULTI_QUEUE_OFFSET") != strconv.Itoa(i) ||
					m.GetProperty("__LITE_TOPIC") != lite {
					t.Fatalf("%s: %s message %d: body %q topic %q properties %v", stage, lmq, i, m.Body, m.Topic, m.GetProperties())
				}
			}
		}
	}
	check("live")

	if graceful, _ := c.stopBroker(); !graceful {
		t.Fatal("broker did not stop gracefully")
	}
	if err := c.startBroker(); err != nil {
		t.Fatalf("restart: %v", err)
	}
	check("after restart")
}
