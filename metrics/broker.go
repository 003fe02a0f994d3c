package metrics

import (
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
)

// collector reads a broker's counters and tables at each scrape: nothing
// of it runs on the request path.
type collector struct {
	b     Source
	log   zerolog.Logger
	descs map[string]family
	// liteOut are messages and throughput out of lite pops' flows, with
	// Apache's extra is_retry label. Not described: a registry takes one
	// label set per described name, and Gather does not mind a second.
	liteOut   [2]*prometheus.Desc
	lagWarned atomic.Int64 // unix ns of the last truncated-scrape warning
}

type family struct {
	desc *prometheus.Desc
	kind prometheus.ValueType
}

// storageLabels are DefaultStoreMetricsManager's: storage_type, storage_medium.
var storageLabels = []string{"storage_type", "storage_medium"}

// histograms are the families served as histograms (_bucket, _count, _sum).
var histograms = []string{"rocketmq_rpc_latency_milliseconds", "rocketmq_message_size",
	"rocketmq_finish_message_latency_milliseconds", "rocketmq_topic_create_execution_time_milliseconds",
	"rocketmq_consumer_group_create_execution_time_milliseconds"}

// lagLabels are the consumer gauges' (buildLagAttributes).
var lagLabels = []string{"consumer_group", "topic", "is_retry", "is_system"}

// metric families: name -> help, variable labels, kind. Names are as
// Apache's Prometheus exposition writes them: OpenTelemetry's exporter
// appends the unit (rocketmq_storage_size becomes rocketmq_storage_size_bytes).
var families = []struct {
	name, help string
	labels     []string
	kind       prometheus.ValueType
}{
	{"rocketmq_messages_in_total", "Total number of incoming messages", []string{"topic", "message_type", "is_system"}, prometheus.CounterValue},
	{"rocketmq_throughput_in_total", "Total traffic of incoming messages", []string{"topic", "message_type", "is_system"}, prometheus.CounterValue},
	{"rocketmq_message_size", "Incoming messages size", []string{"topic", "message_type", "is_system"}, prometheus.UntypedValue}, // a histogram
	{"rocketmq_messages_out_total", "Total number of outgoing messages", []string{"topic", "consumer_group", "is_system"}, prometheus.CounterValue},
	{"rocketmq_throughput_out_total", "Total traffic of outgoing messages", []string{"topic", "consumer_group", "is_system"}, prometheus.CounterValue},
	{"rocketmq_producer_connections", "Producer connections", []string{"language", "version", "protocol_type"}, prometheus.GaugeValue},
	{"rocketmq_consumer_connections", "Consumer connections", []string{"consumer_group", "language", "version", "consume_mode", "protocol_type", "is_system"}, prometheus.GaugeValue},
	{"rocketmq_consumer_lag_messages", "Consumer lag messages", lagLabels, prometheus.GaugeValue},
	{"rocketmq_consumer_lag_latency_milliseconds", "Consumer lag time", lagLabels, prometheus.GaugeValue},
	{"rocketmq_consumer_inflight_messages", "Consumer inflight messages", lagLabels, prometheus.GaugeValue},
	{"rocketmq_consumer_queueing_latency_milliseconds", "Consumer queueing time", lagLabels, prometheus.GaugeValue},
	{"rocketmq_consumer_ready_messages", "Consumer ready messages", lagLabels, prometheus.GaugeValue},
	{"rocketmq_half_messages", "Half messages of all topics", []string{"topic"}, prometheus.GaugeValue},
	{"rocketmq_commit_messages_total", "Total number of commit messages", []string{"topic"}, prometheus.CounterValue},
	{"rocketmq_rollback_messages_total", "Total number of rollback messages", []string{"topic"}, prometheus.CounterValue},
	{"rocketmq_finish_message_latency_milliseconds", "Transaction finish latency", []string{"topic"}, prometheus.UntypedValue}, // a histogram
	{"rocketmq_send_to_dlq_messages_total", "Consumer send to DLQ messages", []string{"consumer_group", "topic", "is_system"}, prometheus.CounterValue},
	{"rocketmq_timer_enqueue_lag", "Timer enqueue messages lag", storageLabels, prometheus.GaugeValue},
	{"rocketmq_timer_dequeue_latency_milliseconds", "Timer dequeue latency", storageLabels, prometheus.GaugeValue},
	{"rocketmq_timing_messages", "Current message number in timing", append([]string{"topic"}, storageLabels...), prometheus.GaugeValue},
	{"rocketmq_timer_enqueue_total", "Total number of timer enqueue", append([]string{"topic"}, storageLabels...), prometheus.CounterValue},
	{"rocketmq_timer_dequeue_total", "Total number of timer dequeue", append([]string{"topic"}, storageLabels...), prometheus.CounterValue},
	{"rocketmq_pop_revive_retry_messages_total", "Total number of put message to pop retry topic", []string{"consumer_group", "topic", "put_status"}, prometheus.CounterValue},
	{"rocketmq_topic_number", "Active topic number", nil, prometheus.GaugeValue},
	{"rocketmq_consumer_group_number", "Active subscription group number", nil, prometheus.GaugeValue},
	{"rocketmq_broker_permission", "Broker permission", nil, prometheus.GaugeValue},
	{"rocketmq_storage_size_bytes", "Broker storage size", storageLabels, prometheus.GaugeValue},
	{"rocketmq_storage_flush_behind_bytes", "Broker flush behind bytes", storageLabels, prometheus.GaugeValue},
	{"rocketmq_storage_dispatch_behind_bytes", "Broker dispatch behind bytes", storageLabels, prometheus.GaugeValue},
	{"rocketmq_storage_message_reserve_time_milliseconds", "Broker message reserve time", storageLabels, prometheus.GaugeValue},
}

func newCollector(b Source, constLabels prometheus.Labels, log zerolog.Logger) *collector {
	c := &collector{b: b, log: log, descs: make(map[string]family, len(families))}
	for _, f := range families {
		c.descs[f.name] = family{prometheus.NewDesc(f.name, f.help, f.labels, constLabels), f.kind}
	}
	for i, name := range []string{"rocketmq_messages_out_total", "rocketmq_throughput_out_total"} {
		c.liteOut[i] = prometheus.NewDesc(name, helpOf(name), []string{"topic", "consumer_group", "is_system", "is_retry"}, constLabels)
	}
	return c
}

// helpOf is a family's help text.
func helpOf(name string) string {
	for _, f := range families {
		if f.name == name {
			return f.help
		}
	}
	return ""
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range c.descs {
		ch <- f.desc
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	emit := func(name string, v float64, labels ...string) {
		f := c.descs[name]
		ch <- prometheus.MustNewConstMetric(f.desc, f.kind, v, labels...)
	}
	b := c.b
	size := c.descs["rocketmq_message_size"].desc
	b.Stats.RangeIn(func(k stats.TopicType, f *stats.InFlow) bool {
		if isRetryOrDLQ(k.Topic) { // Apache counts neither (SendMessageProcessor)
			return true
		}
		sys := strconv.FormatBool(message.IsSystemTopicName(k.Topic))
		emit("rocketmq_messages_in_total", float64(f.Msgs.Load()), k.Topic, k.Type.String(), sys)
		emit("rocketmq_throughput_in_total", float64(f.Bytes.Load()), k.Topic, k.Type.String(), sys)
		cum, n, sum := f.Sizes.Read()
		ch <- constHistogram(size, stats.SizeBuckets[:], cum[:], n, sum, k.Topic, k.Type.String(), sys)
		return true
	})
	b.Stats.RangeOut(func(k stats.GroupTopic, f *stats.Flow) bool {
		sys := strconv.FormatBool(isSystem(k.Topic, k.Group))
		if f.Lite() { // PopLiteMessageProcessor.recordPopLiteMetrics
			ch <- prometheus.MustNewConstMetric(c.liteOut[0], prometheus.CounterValue, float64(f.Msgs.Load()), k.Topic, k.Group, sys, "false")
			ch <- prometheus.MustNewConstMetric(c.liteOut[1], prometheus.CounterValue, float64(f.Bytes.Load()), k.Topic, k.Group, sys, "false")
			return true
		}
		emit("rocketmq_messages_out_total", float64(f.Msgs.Load()), k.Topic, k.Group, sys)
		emit("rocketmq_throughput_out_total", float64(f.Bytes.Load()), k.Topic, k.Group, sys)
		return true
	})
	c.transactions(ch, emit)
	b.Stats.RangeDLQ(func(k stats.GroupTopic, n int64) bool {
		emit("rocketmq_send_to_dlq_messages_total", float64(n), k.Group, k.Topic, strconv.FormatBool(isSystem(k.Topic, k.Group)))
		return true
	})
	b.Revive.RangeRetries(func(k stats.PopRetryKey, n int64) bool {
		emit("rocketmq_pop_revive_retry_messages_total", float64(n), k.Group, k.Topic, k.Status)
		return true
	})
	c.connections(emit)
	lite := c.liteRows()
	c.consumerGauges(emit, lite)
	emitLite(lite, emit)
	emit("rocketmq_topic_number", float64(b.Topics.Len()))
	emit("rocketmq_consumer_group_number", float64(b.Groups.Len()))
	emit("rocketmq_broker_permission", float64(b.Permission()))
	var fs unix.Statfs_t
	if unix.Statfs(b.StoreRoot, &fs) == nil { // Apache: the store's disk, total minus free
		emit("rocketmq_storage_size_bytes", float64((fs.Blocks-fs.Bfree)*uint64(fs.Bsize)), "local", "disk")
	}
	end := b.Store.MaxPhyOffset()
	emit("rocketmq_storage_flush_behind_bytes", float64(max(end-b.Store.FlushedPhyOffset(), 0)), "local", "disk")
	emit("rocketmq_storage_dispatch_behind_bytes", float64(max(end-b.Store.DispatchedPhyOffset(), 0)), "local", "disk")
	if ts, ok := b.Store.EarliestStoreTime(); ok && ts > 0 { // Apache: none while the store is empty
		emit("rocketmq_storage_message_reserve_time_milliseconds", float64(time.Now().UnixMilli()-ts), "local", "disk")
	}
	if b.TimerWheel { // Apache registers the timer metrics only then
		c.timer(emit)
	}
}

// transactions are Apache's transaction metrics (initTransactionMetrics):
// the half messages per real topic and, once there are any, its commits,
// rollbacks and commit latencies (seconds, as Apache records them).
func (c *collector) transactions(ch chan<- prometheus.Metric, emit func(string, float64, ...string)) {
	finish := c.descs["rocketmq_finish_message_latency_milliseconds"].desc
	c.b.Tx.RangeTopics(func(topic string, f *stats.TxFlow) bool {
		emit("rocketmq_half_messages", float64(max(f.Half.Load(), 0)), topic)
		if n := f.Commits.Load(); n > 0 {
			emit("rocketmq_commit_messages_total", float64(n), topic)
			cum, count, sum := f.Finish.Read()
			ch <- constHistogram(finish, stats.FinishBuckets[:], cum[:], count, sum, topic)
		}
		if n := f.Rollbacks.Load(); n > 0 {
			emit("rocketmq_rollback_messages_total", float64(n), topic)
		}
		return true
	})
}

// timer is DefaultStoreMetricsManager's timer gauges and counters (not
// rocketmq_timer_dequeue_lag, rocketmq_timer_enqueue_latency,
// rocketmq_timer_message_snapshot nor rocketmq_delay_message_latency).
// The dequeue latency is how long the first message waiting is overdue.
func (c *collector) timer(emit func(string, float64, ...string)) {
	t := c.b.Timer
	emit("rocketmq_timer_enqueue_lag", float64(t.Behind.Load()), "local", "disk")
	var late int64
	if due := t.HeadDue.Load(); due > 0 {
		late = max(time.Now().UnixMilli()-due, 0)
	}
	emit("rocketmq_timer_dequeue_latency_milliseconds", float64(late), "local", "disk")
	for topic, n := range c.b.TimerTiming() { // a slave's: its master's at the last sync
		emit("rocketmq_timing_messages", float64(max(n, 0)), topic, "local", "disk")
	}
	t.RangeTopics(func(topic string, f *stats.TimerFlow) bool {
		emit("rocketmq_timer_enqueue_total", float64(f.Enqueued.Load()), topic, "local", "disk")
		emit("rocketmq_timer_dequeue_total", float64(f.Dequeued.Load()), topic, "local", "disk")
		return true
	})
}

// connections counts the producer and consumer connections by kind, as
// Apache's initConnectionMetrics.
func (c *collector) connections(emit func(string, float64, ...string)) {
	type consumerKey struct {
		group, mode string
		kind        tables.ClientKind
	}
	producers := map[tables.ClientKind]int{}
	c.b.Clients.EachProducer(func(_ string, k tables.ClientKind) { producers[k]++ })
	for k, n := range producers {
		emit("rocketmq_producer_connections", float64(n), strings.ToLower(k.Language.String()), versionName(k.Version), "remoting")
	}
	consumers := map[consumerKey]int{}
	c.b.Clients.EachConsumer(func(group, consumeType string, k tables.ClientKind) {
		consumers[consumerKey{group, consumeMode(consumeType), k}]++
	})
	for k, n := range consumers {
		emit("rocketmq_consumer_connections", float64(n), k.group, strings.ToLower(k.kind.Language.String()),
			versionName(k.kind.Version), k.mode, "remoting", strconv.FormatBool(isSystem("", k.group)))
	}
}

// constHistogram is a histogram sample from cumulative counts at bounds.
func constHistogram(d *prometheus.Desc, bounds []int64, cum []uint64, count uint64, sum int64, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(bounds))
	for i, le := range bounds {
		buckets[float64(le)] = cum[i]
	}
	return prometheus.MustNewConstHistogram(d, count, float64(sum), buckets, labels...)
}

// isRetryOrDLQ is BrokerMetricsManager.isRetryOrDlqTopic.
func isRetryOrDLQ(topic string) bool {
	return message.IsRetryTopic(topic) || strings.HasPrefix(topic, message.DLQGroupPrefix)
}

// consumeMode is Apache's ConsumeType.getTypeCN in lower case.
func consumeMode(consumeType string) string {
	switch consumeType {
	case "CONSUME_ACTIVELY":
		return "pull"
	case "CONSUME_POP":
		return "pop"
	}
	return "push"
}

// isSystem is BrokerMetricsManager.isSystem: a system topic or a system
// consumer group (MixAll.isSysConsumerGroup: the CID_RMQ_SYS_ prefix).
func isSystem(topic, group string) bool {
	return (topic != "" && message.IsSystemTopicName(topic)) || strings.HasPrefix(group, "CID_RMQ_SYS_")
}
