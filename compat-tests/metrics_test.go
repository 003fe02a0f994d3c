package compattest

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// TestMetrics: the broker's Prometheus endpoint (metricsExporterType=PROM,
// rocketgo's default) after the official Go client sent 20 messages and a
// push consumer took them (and one with a sharding key): the metric names and labels of Apache 5.3.3's
// exposition (scraped from the reference broker: units appended, labels
// cluster, node_type, node_id, otel_scope_name and metricsLabel's), the
// counts in and out,
// the connections by language, the group's lag back to 0 once it
// committed, the request latency histogram by request code, the store
// gauges.
func TestMetrics(t *testing.T) {
	port, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	c := newClusterConf(t, "metrics", fmt.Sprintf("metricsPromExporterPort=%d\nmetricsLabel=env:compat\n", port))
	checkMetrics(t, c, port)
}

// TestMetricsApache runs TestMetrics' scenario and checks against the Apache
// 5.3.3 reference broker with metricsExporterType=PROM: the names, labels
// and values rocketgo serves are the ones Apache's exposition has. Not in
// make test (a Java broker): ROCKETGO_METRICS_APACHE=1 go test -run TestMetricsApache.
func TestMetricsApache(t *testing.T) {
	if os.Getenv("ROCKETGO_METRICS_APACHE") == "" {
		t.Skip("ROCKETGO_METRICS_APACHE=1 runs it against the Apache reference broker")
	}
	port, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	b := startApacheTx(t, uniq("metrics-apache"), fmt.Sprintf(
		"metricsExporterType=PROM\nmetricsPromExporterHost=127.0.0.1\nmetricsPromExporterPort=%d\nmetricsLabel=env:compat\n", port))
	checkMetrics(t, b.c, port)
}

// checkMetrics runs the scenario on c and checks its exposition on port.
func checkMetrics(t *testing.T, c *cluster, port int) {
	t.Helper()
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	topic, group := uniq("MT"), uniq("MG")
	createTopic(t, c, topic)
	p := newProducer(t, c)
	var ids []string
	for i := 0; i < 20; i++ {
		id := "m-" + strconv.Itoa(i)
		p.mustSend(t, newMsg(topic, id, "TA"))
		ids = append(ids, id)
	}
	// A message with a sharding key (what a FIFO message of the 5.x proxy
	// carries) is labelled fifo, as Apache's getMessageType does.
	fifo := newMsg(topic, "fifo", "TA")
	fifo.WithProperty("__SHARDINGKEY", "k1")
	p.mustSend(t, fifo)
	// A delayed one (level 1, 1 s) counts in twice, as Apache's: into
	// SCHEDULE_TOPIC_XXXX when sent, into the topic when delivered.
	delayed := newMsg(topic, "delay", "TA")
	delayed.WithDelayTimeLevel(1)
	p.mustSend(t, delayed)
	ids = append(ids, "fifo", "delay")
	col := newCollector("metrics")
	startConsumer(t, c, group, topic, "*", col)
	// Beside them: a transaction committed and one rolled back; a message
	// whose consumer fails it with maxReconsumeTimes 0 (to the DLQ at once).
	txTopic, dlqTopic, dlqGroup := uniq("MTX"), uniq("MDT"), uniq("MDG")
	createTopic(t, c, txTopic)
	createTopic(t, c, dlqTopic)
	sendTransactions(t, c, txTopic)
	p.mustSend(t, newMsg(dlqTopic, "dlq", ""))
	startConsumerFn(t, c, dlqGroup, dlqTopic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"},
		func(context.Context, ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			return consumer.ConsumeRetryLater, nil
		}, consumer.WithMaxReconsumeTimes(0))
	waitAll(t, col, ids, 30*time.Second, "messages for the metrics")

	base := map[string]string{"cluster": clusterName, "node_type": "broker", "node_id": c.brokerName, "env": "compat",
		"otel_scope_name": "broker-meter"}
	var s scrape
	ok := waitFor(t, 30*time.Second, func() bool {
		s = scrapeMetrics(t, url)
		// Until the group commits, its lag is 0 already (no consumer
		// offset: Apache counts from the end) but its queueing latency is
		// measured from offset 0: wait for both to be 0.
		gt := map[string]string{"consumer_group": group, "topic": topic}
		lag, found := s.value("rocketmq_consumer_lag_messages", gt)
		queueing, qfound := s.value("rocketmq_consumer_queueing_latency_milliseconds", gt)
		_, producer := s.value("rocketmq_producer_connections", map[string]string{"language": "go"})
		dlq, _ := s.value("rocketmq_send_to_dlq_messages_total", map[string]string{"consumer_group": dlqGroup})
		return found && lag == 0 && qfound && queueing == 0 && producer && dlq == 1
	})
	if !ok {
		t.Fatalf("consumer lag and queueing latency of %s never 0 (or no producer):\n%s", group, s.grep(group))
	}
	want := []struct {
		name   string
		labels map[string]string
		check  func(float64) bool
		what   string
	}{
		{"rocketmq_messages_in_total", map[string]string{"topic": topic, "message_type": "normal", "is_system": "false"}, eq(20), "20"},
		{"rocketmq_throughput_in_total", map[string]string{"topic": topic}, atLeast(20 * 100), "≥ 2000 bytes"},
		{"rocketmq_messages_in_total", map[string]string{"topic": topic, "message_type": "fifo"}, eq(1), "1"},
		{"rocketmq_message_size_count", map[string]string{"topic": topic, "message_type": "normal", "is_system": "false"}, eq(20), "20"},
		{"rocketmq_message_size_bucket", map[string]string{"topic": topic, "message_type": "normal", "le": "1024"}, eq(20), "20 (records of ~200 bytes)"},
		{"rocketmq_message_size_bucket", map[string]string{"topic": topic, "message_type": "normal", "le": "4.194304e+06"}, eq(20), "20"},
		{"rocketmq_message_size_sum", map[string]string{"topic": topic, "message_type": "normal"}, atLeast(20 * 100), "≥ 2000"},
		{"rocketmq_messages_in_total", map[string]string{"topic": "SCHEDULE_TOPIC_XXXX", "message_type": "delay", "is_system": "true"}, eq(1), "1"},
		{"rocketmq_messages_in_total", map[string]string{"topic": topic, "message_type": "delay", "is_system": "false"}, eq(1), "1"},
		{"rocketmq_messages_out_total", map[string]string{"topic": "SCHEDULE_TOPIC_XXXX", "consumer_group": "SCHEDULE_CONSUMER", "is_system": "true"}, eq(1), "1"},
		{"rocketmq_messages_out_total", map[string]string{"topic": topic, "consumer_group": group, "is_system": "false"}, eq(22), "22"},
		{"rocketmq_throughput_out_total", map[string]string{"topic": topic, "consumer_group": group}, atLeast(20 * 100), "≥ 2000 bytes"},
		{"rocketmq_producer_connections", map[string]string{"language": "go", "protocol_type": "remoting"}, atLeast(1), "≥ 1"},
		{"rocketmq_consumer_connections", map[string]string{"consumer_group": group, "language": "go", "consume_mode": "push"}, eq(1), "1"},
		{"rocketmq_rpc_latency_milliseconds_count", map[string]string{"request_code": "send_message", "response_code": "success", "protocol_type": "remoting"}, atLeast(20), "≥ 20"},
		{"rocketmq_rpc_latency_milliseconds_count", map[string]string{"request_code": "heart_beat"}, atLeast(1), "≥ 1"},
		{"rocketmq_consumer_inflight_messages", map[string]string{"consumer_group": group, "topic": topic, "is_retry": "false"}, eq(0), "0"},
		{"rocketmq_consumer_ready_messages", map[string]string{"consumer_group": group, "topic": topic, "is_retry": "false"}, eq(0), "0"},
		{"rocketmq_consumer_lag_latency_milliseconds", map[string]string{"consumer_group": group, "topic": topic}, eq(0), "0 (nothing unconsumed)"},
		{"rocketmq_consumer_queueing_latency_milliseconds", map[string]string{"consumer_group": group, "topic": topic}, eq(0), "0"},
		// Prepared messages count under the half topic (Apache's are renamed
		// before it counts), commits not at all.
		{"rocketmq_messages_in_total", map[string]string{"topic": "RMQ_SYS_TRANS_HALF_TOPIC", "message_type": "transaction", "is_system": "true"}, eq(2), "2"},
		{"rocketmq_half_messages", map[string]string{"topic": txTopic}, eq(0), "0"},
		{"rocketmq_commit_messages_total", map[string]string{"topic": txTopic}, eq(1), "1"},
		{"rocketmq_rollback_messages_total", map[string]string{"topic": txTopic}, eq(1), "1"},
		{"rocketmq_finish_message_latency_milliseconds_count", map[string]string{"topic": txTopic}, eq(1), "1"},
		{"rocketmq_finish_message_latency_milliseconds_bucket", map[string]string{"topic": txTopic, "le": "5"}, eq(1), "1 (seconds, as Apache)"},
		{"rocketmq_send_to_dlq_messages_total", map[string]string{"consumer_group": dlqGroup, "topic": dlqTopic, "is_system": "false"}, eq(1), "1"},
		{"rocketmq_topic_create_execution_time_milliseconds_count", map[string]string{"invocation_status": "success", "is_system": "false"}, eq(3), "3 (the Go admin's creations)"},
		{"rocketmq_topic_number", nil, atLeast(2), "≥ 2"},
		{"rocketmq_consumer_group_number", nil, atLeast(1), "≥ 1"},
		{"rocketmq_broker_permission", nil, eq(6), "6"},
		{"rocketmq_storage_size_bytes", map[string]string{"storage_type": "local", "storage_medium": "disk"}, atLeast(1), "> 0"},
		{"rocketmq_storage_dispatch_behind_bytes", nil, atLeast(0), "present"},
		{"rocketmq_storage_flush_behind_bytes", nil, atLeast(0), "present"},
	}
	for _, w := range want {
		labels := map[string]string{}
		for k, v := range base {
			labels[k] = v
		}
		for k, v := range w.labels {
			labels[k] = v
		}
		v, found := s.sum(w.name, labels)
		if !found || !w.check(v) {
			t.Errorf("%s%v = %v (found %v), want %s", w.name, w.labels, v, found, w.what)
		}
	}
	if t.Failed() {
		t.Logf("scrape:\n%s", s.grep("rocketmq_"))
	}
}

// sendTransactions sends two transactional messages to topic with the
// official Go client: the first committed, the second rolled back.
func sendTransactions(t *testing.T, c *cluster, topic string) {
	t.Helper()
	p, err := rocketmq.NewTransactionProducer(decideTx{}, producer.WithNsResolver(resolver(c)),
		producer.WithGroupName(uniq("MTP")), producer.WithSendMsgTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Shutdown() }()
	for _, act := range []string{"commit", "rollback"} {
		m := primitive.NewMessage(topic, []byte("tx-"+act))
		m.WithProperty("act", act)
		if _, err := p.SendMessageInTransaction(context.Background(), m); err != nil {
			t.Fatalf("transaction %s: %v", act, err)
		}
	}
}

// decideTx commits or rolls back by the message's act property.
type decideTx struct{}

func (decideTx) ExecuteLocalTransaction(m *primitive.Message) primitive.LocalTransactionState {
	if m.GetProperty("act") == "commit" {
		return primitive.CommitMessageState
	}
	return primitive.RollbackMessageState
}

func (decideTx) CheckLocalTransaction(*primitive.MessageExt) primitive.LocalTransactionState {
	return primitive.RollbackMessageState
}

func eq(want float64) func(float64) bool      { return func(v float64) bool { return v == want } }
func atLeast(want float64) func(float64) bool { return func(v float64) bool { return v >= want } }

// scrape is a Prometheus text exposition, one sample per line.
type scrape []sample

type sample struct {
	name   string
	labels map[string]string
	value  float64
	line   string
}

// scrapeMetrics reads url's exposition (label values without escapes, as
// the broker's are).
func scrapeMetrics(t *testing.T, url string) scrape {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %s", url, resp.Status)
	}
	var out scrape
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s := sample{labels: map[string]string{}, line: line}
		rest := line
		if i := strings.IndexByte(line, '{'); i >= 0 {
			j := strings.LastIndexByte(line, '}')
			s.name = line[:i]
			for _, kv := range strings.Split(line[i+1:j], `",`) {
				k, v, _ := strings.Cut(kv, `="`)
				s.labels[k] = strings.TrimSuffix(v, `"`)
			}
			rest = strings.TrimSpace(line[j+1:])
		} else {
			s.name, rest, _ = strings.Cut(line, " ")
		}
		v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
		if err != nil {
			t.Fatalf("scrape line %q: %v", line, err)
		}
		s.value = v
		out = append(out, s)
	}
	return out
}

// sum adds the samples of name whose labels include want.
func (s scrape) sum(name string, want map[string]string) (float64, bool) {
	var total float64
	found := false
next:
	for _, x := range s {
		if x.name != name {
			continue
		}
		for k, v := range want {
			if x.labels[k] != v && !(k == "le" && sameFloat(x.labels[k], v)) {
				continue next
			}
		}
		total += x.value
		found = true
	}
	return total, found
}

// sameFloat: bucket bounds as Go writes them ("1024", "1.048576e+06") and
// as Apache's exporter does ("1024.0").
func sameFloat(a, b string) bool {
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	return err1 == nil && err2 == nil && x == y
}

func (s scrape) value(name string, want map[string]string) (float64, bool) { return s.sum(name, want) }

func (s scrape) grep(sub string) string {
	var b strings.Builder
	for _, x := range s {
		if strings.Contains(x.line, sub) {
			b.WriteString(x.line + "\n")
		}
	}
	return b.String()
}
