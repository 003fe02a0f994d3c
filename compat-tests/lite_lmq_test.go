package compattest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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

// TestApacheReadsRocketgoLMQ: a store rocketgo wrote with lite messages
// (enableLmq, enableMultiDispatch) opens in Apache 5.5.0's broker
// (reference/run.sh, same store, broker name and flags), which serves the
// lite topic's LMQ to the official Go client's pull: the same messages at
// the same LMQ offsets, then its own next lite message at the next offset.
// Skipped without java and mvn.
func TestApacheReadsRocketgoLMQ(t *testing.T) {
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("Apache interop needs %s (Java 17 + Maven) on PATH: %v", tool, err)
		}
	}
	const flags = "enableLmq=true\nenableMultiDispatch=true\n"
	c := newClusterConf(t, "lite-apache", flags)
	topic := uniq("LiteApache")
	createTopic(t, c, topic)
	p := newProducer(t, c)
	var bodies []string
	for i := range 6 {
		body := fmt.Sprintf("lite-%d", i)
		m := primitive.NewMessage(topic, []byte(body))
		m.WithProperty("__LITE_TOPIC", "l1")
		p.mustSend(t, m)
		bodies = append(bodies, body)
	}
	p.shutdown()
	if graceful, _ := c.stopBroker(); !graceful {
		t.Fatal("rocketgo broker did not stop gracefully")
	}

	// Apache's broker on rocketgo's directory (run.sh writes its own
	// broker.properties there; later keys win).
	script, err := filepath.Abs(filepath.Join("reference", "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	port, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.dir, "broker.extra.properties"),
		[]byte(flags+"brokerName="+c.brokerName+"\nmappedFileSizeCommitLog=67108864\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ap, err := startProc("apache-broker-lmq", script, []string{"broker", strconv.Itoa(port), c.nsAddr, c.dir, clusterName},
		filepath.Join(c.dir, "apache-broker.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ap.stop() })
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("tail of the Apache broker's log:\n%s", tailFile(ap.logPath, 40))
		}
	})
	apAddr := fmt.Sprintf("127.0.0.1:%d", port)
	if err := waitTCP(ap, apAddr, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, func() bool {
		_, r, _, err := queryRoute(c.nsAddr, topic)
		return err == nil && r.hasBroker(apAddr)
	})

	pc, err := rocketmq.NewPullConsumer(consumer.WithNsResolver(resolver(c)), consumer.WithGroupName(uniq("LiteApacheGroup")),
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
	lmq := "%LMQ%$" + topic + "$l1"
	mq := &primitive.MessageQueue{Topic: lmq, BrokerName: c.brokerName, QueueId: 0}
	// read checks the LMQ holds want; with retried, the last body may be
	// there more than once (a send retried after a client-side timeout on a
	// loaded machine may have been stored the first time too).
	read := func(want []string, retried bool) {
		t.Helper()
		var got []*primitive.MessageExt
		var last error
		waitFor(t, 30*time.Second, func() bool {
			res, err := pc.PullFrom(context.Background(), mq, 0, 32)
			if last = err; err != nil {
				return false
			}
			got = res.GetMessageExts()
			return len(got) >= len(want)
		})
		if len(got) != len(want) && !(retried && len(got) > len(want)) {
			t.Fatalf("Apache serves %d messages of %s, want %d (last error %v)", len(got), lmq, len(want), last)
		}
		for i, m := range got {
			w := want[min(i, len(want)-1)]
			// QueueOffset is the parent queue's: the record's, as Apache serves it.
			if string(m.Body) != w || m.GetProperty("INNER_MULTI_QUEUE_OFFSET") != strconv.Itoa(i) {
				t.Fatalf("Apache's %s message %d: body %q queue offset %d properties %v", lmq, i, m.Body, m.QueueOffset, m.GetProperties())
			}
		}
	}
	read(bodies, false)

	// Apache goes on from rocketgo's LMQ offsets.
	p2 := newProducer(t, c)
	m := primitive.NewMessage(topic, []byte("apache-next"))
	m.WithProperty("__LITE_TOPIC", "l1")
	waitFor(t, 30*time.Second, func() bool {
		r, err := p2.sendSync(context.Background(), m)
		return err == nil && r.Status == primitive.SendOK
	})
	read(append(bodies, "apache-next"), true)
}
