package compattest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// Apache 5.5's lite metrics keys, all on (all off by default).
const liteMetricsConf = "liteLagCountMetricsEnable=true\nliteLagLatencyCollectEnable=true\nliteLagLatencyMetricsEnable=true\n"

// TestMetricsLite: a lite group's rows on the broker's endpoint, as Apache
// 5.5's LiteConsumerLagCalculator and PopLiteMessageProcessor make them,
// after the official Go client sent lite messages and a lite consumer
// popped and partly acked them over the wire (LITE_SUBSCRIPTION_CTL,
// POP_LITE_MESSAGE, ACK_MESSAGE with liteTopic): lag and ready per group
// and parent topic, summed over its lite topics; the lag latency from the
// pop that left messages behind, gone once a pop catches the lite topic
// up; messages out with is_retry="false"; the lite request codes by
// Apache's names. A lite group that never popped has no row.
func TestMetricsLite(t *testing.T) {
	port, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	c := newClusterConf(t, "metrics-lite", fmt.Sprintf("metricsPromExporterPort=%d\n", port)+liteBrokerConf+liteMetricsConf)
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	topic, group, idle := uniq("MLP"), uniq("MLG"), uniq("MLI")
	createTypedTopic(t, c, topic, "LITE")
	createLiteGroup(t, c, group, topic, "")
	createLiteGroup(t, c, idle, topic, "")
	p := newProducer(t, c)
	counts := map[string]int{"a": 5, "b": 3, "c": 2}
	for _, lite := range []string{"a", "b", "c"} {
		for i := 0; i < counts[lite]; i++ {
			m := primitive.NewMessage(topic, []byte(lite+strconv.Itoa(i)))
			m.WithProperty("__LITE_TOPIC", lite)
			p.mustSend(t, m)
		}
	}
	lmq := func(lite string) string { return "%LMQ%$" + topic + "$" + lite }
	for lite, n := range counts {
		if !waitFor(t, 10*time.Second, func() bool {
			resp, err := rawInvoke(c.brokerAddr, newRequest(30, map[string]string{"topic": lmq(lite), "queueId": "0"}, nil), 5*time.Second)
			return err == nil && resp.Code == 0 && resp.ExtFields["offset"] == strconv.Itoa(n)
		}) {
			t.Fatalf("lite topic %s: %d messages not dispatched", lite, n)
		}
	}
	l := liteWire{t: t, c: c, topic: topic, group: group}
	l.ctl("metrics-lite-1", "a")
	first := l.pop("metrics-lite-1", 2) // a0, a1: a full batch, a2 left behind
	l.ctl("metrics-lite-1", "b")
	second := l.pop("metrics-lite-1", 32) // b0..b2 (a is in flight)
	if len(first) != 2 || first[0].lite != "a" || len(second) != 3 || second[0].lite != "b" {
		t.Fatalf("pops %+v then %+v", first, second)
	}
	for _, m := range []liteWireMsg{first[0], first[1], second[0]} {
		l.ack(m)
	}
	l.group = idle
	l.ctl("metrics-lite-2", "c") // subscribed, never popped: no offset, no row
	l.group = group

	// a: 5 - 2 acked, b: 3 - 1: lag 5; the latency from a2, the first
	// message the full batch left behind.
	var info struct {
		EarliestUnconsumedTimestamp int64 `json:"earliestUnconsumedTimestamp"`
	}
	resp, err := rawInvoke(c.brokerAddr, newRequest(200078, map[string]string{"group": group, "liteTopic": "a", "topK": "20"}, nil), 5*time.Second)
	if err != nil || resp.Code != 0 || json.Unmarshal(resp.Body, &info) != nil || info.EarliestUnconsumedTimestamp <= 0 {
		t.Fatalf("GET_LITE_GROUP_INFO: %v %+v %s", err, resp, resp.Body)
	}
	row := map[string]string{"consumer_group": group, "topic": topic, "is_retry": "false", "is_system": "false"}
	before := time.Now().UnixMilli()
	s := scrapeMetrics(t, url)
	after := time.Now().UnixMilli()
	for _, name := range []string{"rocketmq_consumer_lag_messages", "rocketmq_consumer_ready_messages"} {
		if v, ok := s.value(name, row); !ok || v != 5 {
			t.Errorf("%s = %v (%v), want 5:\n%s", name, v, ok, s.grep(group))
		}
	}
	a2 := info.EarliestUnconsumedTimestamp
	if v, ok := s.value("rocketmq_consumer_lag_latency_milliseconds", row); !ok || v < float64(before-a2) || v > float64(after-a2) {
		t.Errorf("lag latency %v (%v), want now - %d:\n%s", v, ok, a2, s.grep(group))
	}
	for _, name := range []string{"rocketmq_consumer_inflight_messages", "rocketmq_consumer_queueing_latency_milliseconds"} {
		if _, ok := s.value(name, row); ok { // Apache's lite calculator has neither
			t.Errorf("%s has a lite row:\n%s", name, s.grep(group))
		}
	}
	if g := s.grep(idle); g != "" {
		t.Errorf("a lite group without offsets has rows:\n%s", g)
	}
	out := map[string]string{"consumer_group": group, "topic": topic, "is_system": "false", "is_retry": "false"}
	if v, ok := s.value("rocketmq_messages_out_total", out); !ok || v != 5 {
		t.Errorf("messages out %v (%v), want 5:\n%s", v, ok, s.grep("messages_out"))
	}
	if v, ok := s.value("rocketmq_throughput_out_total", out); !ok || v <= 0 {
		t.Errorf("throughput out %v (%v)", v, ok)
	}
	for code, n := range map[string]int{"lite_subscription_ctl": 3, "pop_lite_message": l.pops, "ack_message": 3} {
		if v, _ := s.value("rocketmq_rpc_latency_milliseconds_count", map[string]string{"request_code": code}); v != float64(n) {
			t.Errorf("requests %s: %v, want %d", code, v, n)
		}
	}

	// The next pop reads a2..a4 and stops short of its 32: a caught up, its
	// latency row goes; nothing acked, so the lag stays.
	if third := l.pop("metrics-lite-1", 32); len(third) != 3 || third[0].lite != "a" {
		t.Fatalf("third pop %+v", third)
	}
	s = scrapeMetrics(t, url)
	if v, ok := s.value("rocketmq_consumer_lag_messages", row); !ok || v != 5 {
		t.Errorf("lag after the third pop %v (%v), want 5", v, ok)
	}
	if _, ok := s.value("rocketmq_consumer_lag_latency_milliseconds", row); ok {
		t.Errorf("a lag latency row after the lite topic caught up:\n%s", s.grep(group))
	}
	if v, _ := s.value("rocketmq_messages_out_total", out); v != 8 {
		t.Errorf("messages out %v, want 8", v)
	}
}

// liteWire is a lite consumer speaking Remoting to the broker as the proxy
// does for a client.
type liteWire struct {
	t            *testing.T
	c            *cluster
	topic, group string
	pops         int // POP_LITE_MESSAGE requests sent
}

type liteWireMsg struct {
	lite, handle string
	offset       int64
}

func (l *liteWire) ctl(client, lite string) {
	l.t.Helper()
	body := `{"subscriptionSet":[{"action":"PARTIAL_ADD","clientId":"` + client + `","group":"` + l.group +
		`","topic":"` + l.topic + `","liteTopicSet":["` + lite + `"],"version":1}]}`
	resp, err := rawInvoke(l.c.brokerAddr, newRequest(200071, map[string]string{}, []byte(body)), 5*time.Second)
	if err != nil || resp.Code != 0 {
		l.t.Fatalf("LITE_SUBSCRIPTION_CTL %s: %v %+v", lite, err, resp)
	}
}

// pop pops up to max for client, waiting for its events up to 5 s a time.
func (l *liteWire) pop(client string, max int) []liteWireMsg {
	l.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		l.pops++
		resp, err := rawInvoke(l.c.brokerAddr, newRequest(200070, map[string]string{"clientId": client,
			"consumerGroup": l.group, "topic": l.topic, "maxMsgNum": strconv.Itoa(max), "invisibleTime": "60000",
			"pollTime": "5000", "bornTime": strconv.FormatInt(time.Now().UnixMilli(), 10),
			"attemptId": uniq("attempt")}, nil), 10*time.Second)
		if err != nil {
			l.t.Fatalf("POP_LITE_MESSAGE: %v", err)
		}
		if resp.Code != 0 {
			continue // nothing yet (POLLING_TIMEOUT)
		}
		var out []liteWireMsg
		for _, m := range primitive.DecodeMessage(resp.Body) {
			off, _ := strconv.ParseInt(m.GetProperty("INNER_MULTI_QUEUE_OFFSET"), 10, 64)
			out = append(out, liteWireMsg{lite: m.GetProperty("__LITE_TOPIC"), offset: off,
				handle: fmt.Sprintf("0 %s %s 999 0 %s 0 %d", resp.ExtFields["popTime"], resp.ExtFields["invisibleTime"],
					l.c.brokerName, off)})
		}
		return out
	}
	l.t.Fatalf("POP_LITE_MESSAGE for %s: nothing in 15 s", client)
	return nil
}

func (l *liteWire) ack(m liteWireMsg) {
	l.t.Helper()
	resp, err := rawInvoke(l.c.brokerAddr, newRequest(200051, map[string]string{"consumerGroup": l.group, "topic": l.topic,
		"queueId": "0", "extraInfo": m.handle, "offset": strconv.FormatInt(m.offset, 10), "liteTopic": m.lite}, nil), 5*time.Second)
	if err != nil || resp.Code != 0 {
		l.t.Fatalf("ACK_MESSAGE %+v: %v %+v", m, err, resp)
	}
}
