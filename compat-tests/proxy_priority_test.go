package compattest

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
)

// Priority messages (Apache 5.4, RIP-80) on a PRIORITY topic of 8 queues:
// the official Go Remoting producer sends each message with Apache's
// _SYS_MSG_PRIORITY_ property, as the 5.4 Java client's setPriority does;
// the broker stores it in the queue of its priority (the last queue for a
// higher one) whatever queue the producer picked, and the Go v5
// SimpleConsumer, through the proxy, receives the highest priority first.
// Apache 5.3.3 has no priority messages: rocketgo only.
func TestProxyPriority(t *testing.T) {
	c := newCluster(t, "proxy-priority-"+proxyImpl())
	requirePop(t, c)
	topic, group := uniq("PRI"), uniq("PCG")
	createTypedTopic(t, c, topic, "PRIORITY")
	p := newProducer(t, c)
	priorities := []int{0, 1, 2, 9}
	wantQueue := map[int]int{0: 0, 1: 1, 2: 2, 9: 7}
	for _, prio := range priorities {
		for i := range 2 {
			m := newMsg(topic, "p"+strconv.Itoa(prio)+"-"+strconv.Itoa(i), "")
			m.WithProperty("_SYS_MSG_PRIORITY_", strconv.Itoa(prio))
			r := p.mustSend(t, m)
			if r.MessageQueue == nil || r.MessageQueue.QueueId != wantQueue[prio] {
				t.Errorf("priority %d stored in queue %v, want %d", prio, r.MessageQueue, wantQueue[prio])
			}
		}
	}
	// A priority on a delay message is dropped and does not route it.
	dm := newMsg(topic, "delayed", "")
	dm.WithProperty("_SYS_MSG_PRIORITY_", "5")
	dm.WithDelayTimeLevel(1)
	p.mustSend(t, dm)

	pp := startProxy(t, c, "")
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
	var got []string
	for end := time.Now().Add(60 * time.Second); len(got) < 2*len(priorities)+1 && time.Now().Before(end); {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		mvs, err := sc.Receive(ctx, 1, 30*time.Second)
		cancel()
		if err != nil {
			continue
		}
		for _, mv := range mvs {
			got = append(got, mv.GetProperties()[idProp])
			if err := sc.Ack(context.Background(), mv); err != nil {
				t.Errorf("ack: %v", err)
			}
			if prio, ok := mv.GetProperties()["_SYS_MSG_PRIORITY_"]; ok && mv.GetProperties()[idProp] == "delayed" {
				t.Errorf("the delay message kept its priority %q", prio)
			}
		}
	}
	// The delay message comes a second after it was sent, so after or
	// among the others; the priority messages in priority order.
	var prios []string
	for _, id := range got {
		if id != "delayed" {
			prios = append(prios, id)
		}
	}
	want := []string{"p9-0", "p9-1", "p2-0", "p2-1", "p1-0", "p1-1", "p0-0", "p0-1"}
	if len(got) != len(want)+1 || !slices.Equal(prios, want) {
		t.Fatalf("received %v, want %v (and the delay message)", got, want)
	}
}
