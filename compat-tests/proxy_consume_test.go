package compattest

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
)

// proxyTargets is ROCKETGO_PROXY_TARGETS split: which broker the proxy
// fronts in the consumption tests (default rocketgo and apache; apache
// needs ROCKETGO_JAVA=1). A local proxy (ROCKETGO_PROXY_IMPL=local) is
// inside a rocketgo broker: rocketgo only.
func proxyTargets(t *testing.T) []string {
	if proxyImpl() == "local" {
		return []string{"rocketgo"}
	}
	if os.Getenv("ROCKETGO_PROXY_TARGETS") != "" {
		return targetKinds(t, "ROCKETGO_PROXY_TARGETS")
	}
	return []string{"rocketgo", "apache"}
}

// requirePop skips when the broker answers POP_MESSAGE with
// REQUEST_CODE_NOT_SUPPORTED (a rocketgo build without the pop family).
func requirePop(t *testing.T, c *cluster) {
	t.Helper()
	if !popServed(t, c) {
		t.Skipf("broker %s does not serve POP_MESSAGE (REQUEST_CODE_NOT_SUPPORTED)", c.brokerAddr)
	}
}

// popServed probes the broker with a POP_MESSAGE that finds nothing.
func popServed(t *testing.T, c *cluster) bool {
	t.Helper()
	resp, err := rawInvoke(c.brokerAddr, newRequest(200050, map[string]string{
		"consumerGroup": "CID_PROBE", "topic": "TBW102", "queueId": "-1", "maxMsgNums": "1", "invisibleTime": "60000",
		"pollTime": "0", "bornTime": "0", "initMode": "1", "order": "false",
	}, nil), 5*time.Second)
	if err != nil {
		t.Fatalf("probe POP_MESSAGE: %v", err)
	}
	return resp.Code != 3
}

// TestProxySimpleConsumer: messages sent by the 4.x Remoting Go client are
// received by the Go v5 SDK's SimpleConsumer through mqproxy (POP_MESSAGE
// on the broker), acknowledged (ACK_MESSAGE), one made visible again early
// with ChangeInvisibleDuration (CHANGE_MESSAGE_INVISIBLETIME) and received
// a second time; and the reverse, the v5 producer to the same consumer.
func TestProxySimpleConsumer(t *testing.T) {
	for _, kind := range proxyTargets(t) {
		t.Run(kind, func(t *testing.T) { testProxySimpleConsumer(t, kind) })
	}
}

func testProxySimpleConsumer(t *testing.T, kind string) {
	b := startTxBroker(t, kind, "proxy-pop-"+kind+"-"+proxyImpl())
	c := b.c
	requirePop(t, c)
	topic := uniq("PC")
	createTopic(t, c, topic)
	pp := startProxy(t, c, "")

	var want []string
	p4 := newProducer(t, c)
	for i := 0; i < 8; i++ {
		id := "v4-" + strconv.Itoa(i)
		p4.mustSend(t, newMsg(topic, id, "TA"))
		want = append(want, id)
	}
	p5 := newV5Producer(t, pp, rmq.WithTopics(topic))
	for i := 0; i < 4; i++ {
		id := "v5-" + strconv.Itoa(i)
		m := &rmq.Message{Topic: topic, Body: []byte("body-" + id)}
		m.AddProperty(idProp, id)
		m.SetTag("TA")
		if _, err := p5.Send(context.Background(), m); err != nil {
			t.Fatalf("v5 send %s: %v", id, err)
		}
		want = append(want, id)
	}

	cfg := sdkConfig(pp)
	cfg.ConsumerGroup = uniq("SCG")
	sc, err := rmq.NewSimpleConsumer(cfg, rmq.WithAwaitDuration(5*time.Second),
		rmq.WithSubscriptionExpressions(map[string]*rmq.FilterExpression{topic: rmq.NewFilterExpression("TA")}))
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Start(); err != nil {
		t.Fatalf("v5 SimpleConsumer start: %v", err)
	}
	t.Cleanup(func() { _ = sc.GracefulStop() })

	got := map[string]int{}
	attempts := map[string]int32{}
	changed := false
	deadline := time.Now().Add(60 * time.Second)
	done := func() bool {
		for _, id := range want {
			if got[id] == 0 {
				return false
			}
		}
		return got["v4-3"] >= 2
	}
	for !done() && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		mvs, err := sc.Receive(ctx, 16, 20*time.Second)
		cancel()
		if err != nil {
			continue // MESSAGE_NOT_FOUND after a long poll: receive again
		}
		for _, mv := range mvs {
			id := mv.GetProperties()[idProp]
			got[id]++
			attempts[id] = mv.GetDeliveryAttempt()
			if id == "v4-3" && !changed {
				// Visible again in 1 s instead of 20 s: received again.
				if err := sc.ChangeInvisibleDuration(mv, time.Second); err != nil {
					t.Fatalf("ChangeInvisibleDuration: %v", err)
				}
				changed = true
				continue
			}
			if tag := mv.GetTag(); tag == nil || *tag != "TA" {
				t.Errorf("%s tag %v", id, tag)
			}
			if err := sc.Ack(context.Background(), mv); err != nil {
				t.Fatalf("ack %s: %v", id, err)
			}
		}
	}
	if !done() {
		t.Fatalf("received %v, want each of %v and v4-3 twice", got, want)
	}
	if attempts["v4-3"] != 2 {
		t.Errorf("v4-3 second delivery attempt %d, want 2", attempts["v4-3"])
	}
	for id, n := range got {
		if n > 1 && id != "v4-3" {
			t.Errorf("%s received %d times after its ack", id, n)
		}
	}
}

// TestProxyFIFOConsumer: a FIFO topic and an orderly group
// (consumeMessageOrderly, so the proxy's settings say fifo and its pops
// carry order=true): the Go v5 SimpleConsumer receives one message group's
// messages, two at a time and acked, in the order they were sent.
func TestProxyFIFOConsumer(t *testing.T) {
	for _, kind := range proxyTargets(t) {
		t.Run(kind, func(t *testing.T) { testProxyFIFOConsumer(t, kind) })
	}
}

func testProxyFIFOConsumer(t *testing.T, kind string) {
	c := startTxBroker(t, kind, "proxy-fifo-"+kind+"-"+proxyImpl()).c
	requirePop(t, c)
	topic, group := uniq("PF"), uniq("FCG")
	createTypedTopic(t, c, topic, "FIFO")
	createOrderlyGroup(t, c, group)
	pp := startProxy(t, c, "")
	p5 := newV5Producer(t, pp, rmq.WithTopics(topic))
	var want []string
	for i := 0; i < 6; i++ {
		id := "fifo-" + strconv.Itoa(i)
		m := &rmq.Message{Topic: topic, Body: []byte(id)}
		m.AddProperty(idProp, id)
		m.SetMessageGroup("order-1")
		if _, err := p5.Send(context.Background(), m); err != nil {
			t.Fatalf("v5 send %s: %v", id, err)
		}
		want = append(want, id)
	}
	cfg := sdkConfig(pp)
	cfg.ConsumerGroup = group
	sc, err := rmq.NewSimpleConsumer(cfg, rmq.WithAwaitDuration(5*time.Second),
		rmq.WithSubscriptionExpressions(map[string]*rmq.FilterExpression{topic: rmq.SUB_ALL}))
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Start(); err != nil {
		t.Fatalf("v5 SimpleConsumer start: %v", err)
	}
	t.Cleanup(func() { _ = sc.GracefulStop() })
	// A message not acked blocks its group: nothing after it is handed out
	// until its invisible time ends, then it comes back first, and no pop
	// retry topic is made for the group (FIFO never revives into one).
	var first []*rmq.MessageView
	for end := time.Now().Add(30 * time.Second); len(first) == 0 && time.Now().Before(end); {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		first, _ = sc.Receive(ctx, 1, 10*time.Second)
		cancel()
	}
	if len(first) != 1 || first[0].GetProperties()[idProp] != "fifo-0" {
		t.Fatalf("first receive: %d messages, want fifo-0", len(first))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	if mvs, err := sc.Receive(ctx, 2, 20*time.Second); err == nil && len(mvs) > 0 {
		t.Fatalf("a blocked FIFO group was overtaken: got %s while fifo-0 is invisible", mvs[0].GetProperties()[idProp])
	}
	cancel()
	var got []string
	deadline := time.Now().Add(60 * time.Second)
	for len(got) < len(want) && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		mvs, err := sc.Receive(ctx, 2, 20*time.Second)
		cancel()
		if err != nil {
			continue
		}
		for _, mv := range mvs {
			got = append(got, mv.GetProperties()[idProp])
			if g := mv.GetMessageGroup(); g == nil || *g != "order-1" {
				t.Errorf("message group %v", g)
			}
			if err := sc.Ack(context.Background(), mv); err != nil {
				t.Fatalf("ack: %v", err)
			}
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("received %v, want %v in order", got, want)
	}
	resp, err := rawInvoke(c.brokerAddr, javaRequest(21, nil, nil), 5*time.Second)
	if err != nil || resp.Code != 0 {
		t.Fatalf("GET_ALL_TOPIC_CONFIG: %v %+v", err, resp)
	}
	for _, retry := range []string{"%RETRY%" + group + "_" + topic, "%RETRY%" + group + "+" + topic} {
		if strings.Contains(string(resp.Body), `"`+retry+`"`) {
			t.Errorf("the FIFO group's messages were revived into %s", retry)
		}
	}
}

// createOrderlyGroup creates a subscription group that consumes orderly.
func createOrderlyGroup(t *testing.T, c *cluster, group string) {
	t.Helper()
	body := `{"groupName":"` + group + `","consumeEnable":true,"consumeFromMinEnable":true,"consumeBroadcastEnable":true,` +
		`"consumeMessageOrderly":true,"retryQueueNums":1,"retryMaxTimes":16,"brokerId":0,"whichBrokerWhenConsumeSlowly":1,` +
		`"notifyConsumerIdsChangedEnable":true}`
	resp, err := rawInvoke(c.brokerAddr, newRequest(200, map[string]string{}, []byte(body)), 5*time.Second)
	if err != nil || resp.Code != 0 {
		t.Fatalf("create orderly group %s: %v %+v", group, err, resp)
	}
}
