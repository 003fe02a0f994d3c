package broker

// mqadmin's services: runtime information, topic and consume statistics,
// client connections, offset reset, messages by offset. Each is what one
// request code asks, with a typed result the processor encodes.

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// BrokerVersionDesc names remoting.ServerVersion as mqadmin prints it.
const BrokerVersionDesc = "V4_9_8"

// QueueStats is one queue's offsets (Apache's TopicOffset).
type QueueStats struct {
	Queue                tables.MessageQueue
	MinOffset, MaxOffset int64
	LastUpdateTimestamp  int64 // store time of the last message, 0 when empty
}

// TopicStats is GET_TOPIC_STATS_INFO: every queue id the topic has (the
// larger of its queue counts, as Apache), in order; TOPIC_NOT_EXIST with
// Apache's remark for a topic not in the table. The work is bounded by
// maxTopicQueueNums, which every topic a request made keeps.
func (b *Broker) TopicStats(topic string) ([]QueueStats, error) {
	tc, ok := b.Topics.Get(topic)
	if !ok {
		return nil, remoting.Refuse(remoting.TopicNotExist, tables.ErrTopicNotExist, "topic[%s] not exist", topic)
	}
	st, name := b.Store, b.Config().BrokerName
	out := make([]QueueStats, tc.QueueNums())
	for q := range out {
		qs := &out[q]
		qs.Queue = tables.MessageQueue{Topic: topic, BrokerName: name, QueueID: int32(q)}
		qs.MinOffset, qs.MaxOffset = st.MinOffset(topic, int32(q)), st.MaxOffset(topic, int32(q))
		if qs.MaxOffset > 0 {
			qs.LastUpdateTimestamp, _ = st.StoreTimeAt(topic, int32(q), qs.MaxOffset-1)
		}
	}
	return out, nil
}

// ConsumeStatsRequest is GET_CONSUME_STATS.
type ConsumeStatsRequest struct {
	Group string
	// Topics, when not empty, are the topics to report, as listed
	// (topicList); otherwise Topic, or every topic the group committed
	// offsets for, less those an online group does not subscribe to
	// (Apache's getTopicsForCollectingConsumeStats).
	Topics []string
	Topic  string
}

// QueueConsumeStats is one queue's progress of a group (Apache's
// OffsetWrapper; pullOffset is the consumer offset).
type QueueConsumeStats struct {
	Queue          tables.MessageQueue
	BrokerOffset   int64
	ConsumerOffset int64
	LastTimestamp  int64 // store time of the last consumed message, 0 if none
}

// ConsumeStats is GET_CONSUME_STATS: the group's progress on every read
// queue of each topic asked for that exists (a topic listed twice counts
// once: Apache's answer is a map keyed by queue).
func (b *Broker) ConsumeStats(r ConsumeStatsRequest) []QueueConsumeStats {
	st, name := b.Store, b.Config().BrokerName
	var out []QueueConsumeStats
	for _, topic := range b.consumeStatsTopics(r) {
		tc, ok := b.Topics.Get(topic)
		if !ok {
			continue
		}
		for q := int32(0); q < tc.ReadQueueNums; q++ {
			qs := QueueConsumeStats{Queue: tables.MessageQueue{Topic: topic, BrokerName: name, QueueID: q},
				BrokerOffset: max(st.MaxOffset(topic, q), 0)}
			if off, ok := b.Offsets.Query(r.Group, topic, q); ok && off > 0 {
				qs.ConsumerOffset = off
				qs.LastTimestamp, _ = st.StoreTimeAt(topic, q, off-1)
			}
			out = append(out, qs)
		}
	}
	return out
}

func (b *Broker) consumeStatsTopics(r ConsumeStatsRequest) []string {
	if len(r.Topics) > 0 {
		var out []string
		seen := map[string]bool{}
		for _, t := range r.Topics {
			if t != "" && !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
		return out
	}
	var topics []string
	if r.Topic != "" {
		topics = []string{r.Topic}
	} else {
		topics = b.Offsets.TopicsOf(r.Group)
	}
	state, online := b.Clients.ConsumerGroup(r.Group)
	if !online || len(state.Subscriptions) == 0 {
		return topics
	}
	out := topics[:0]
	for _, t := range topics {
		if _, ok := state.Subscriptions[t]; ok {
			out = append(out, t)
		}
	}
	return out
}

// ConsumerConnections is GET_CONSUMER_CONNECTION_LIST: the group's live
// connections and last heartbeat; CONSUMER_NOT_ONLINE with Apache's remark
// when no member is connected.
func (b *Broker) ConsumerConnections(group string) (tables.ConsumerGroupState, error) {
	state, ok := b.Clients.ConsumerGroup(group)
	if !ok {
		return state, remoting.Refuse(remoting.ConsumerNotOnline, nil, "the consumer group[%s] not online", group)
	}
	return state, nil
}

// ProducerConnections is GET_PRODUCER_CONNECTION_LIST: a producer group's
// live connections; SYSTEM_ERROR with Apache's remark when there are none.
func (b *Broker) ProducerConnections(group string) ([]tables.Connection, error) {
	conns := b.Clients.ProducerConnections(group)
	if len(conns) == 0 {
		return nil, remoting.Refuse(remoting.SystemError, nil, "the producer group[%s] not exist", group)
	}
	return conns, nil
}

// TopicConsumers is QUERY_TOPIC_CONSUME_BY_WHO: the groups online and
// subscribed to topic and those with offsets committed for it, sorted.
func (b *Broker) TopicConsumers(topic string) []string {
	set := map[string]struct{}{}
	for _, g := range b.Clients.GroupsSubscribing(topic) {
		set[g] = struct{}{}
	}
	for _, g := range b.Offsets.Groups(topic) {
		set[g] = struct{}{}
	}
	out := make([]string, 0, len(set))
	for g := range set {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// ConsumerTopics is QUERY_TOPICS_BY_CONSUMER's answer.
type ConsumerTopics struct {
	BrokerAddr string
	Topics     []string // never nil
}

// ConsumerTopics is QUERY_TOPICS_BY_CONSUMER: the topics a group committed
// offsets for, sorted, and this broker's address.
func (b *Broker) ConsumerTopics(group string) ConsumerTopics {
	topics := b.Offsets.TopicsOf(group)
	if topics == nil {
		topics = []string{}
	}
	c := b.Config()
	return ConsumerTopics{BrokerAddr: c.BrokerIP1 + ":" + strconv.Itoa(c.ListenPort), Topics: topics}
}

// ResetOffsetRequest is INVOKE_BROKER_TO_RESET_OFFSET.
type ResetOffsetRequest struct {
	Topic, Group string
	Timestamp    int64 // ms; -1: the end of each queue
	// Force moves consumers back and forth; otherwise only back (an offset
	// past the committed one is left where it is).
	Force bool
	// OneQueue (Apache 5.x tools' queueId ≥ 0, resetOffsetByTime -b -q)
	// resets queue QueueID only, on the broker (resetoffset.go); otherwise
	// every queue.
	OneQueue bool
	QueueID  int32
	// Offset, with QueueID, is where to (else the offset at Timestamp).
	Offset    int64
	HasOffset bool
}

// QueueOffset is one queue's new offset.
type QueueOffset struct {
	Queue  tables.MessageQueue
	Offset int64
}

// ResetOffsetResult is the offsets a reset told the consumers
// (ResetOffsetBody).
type ResetOffsetResult struct {
	Offsets []QueueOffset
}

// AppendJSON appends ResetOffsetBody as fastjson writes it:
// {"offsetTable":{<MessageQueue>:offset,...}}.
func (r ResetOffsetResult) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"offsetTable":{`...)
	for i, o := range r.Offsets {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = o.Queue.AppendJSON(dst)
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, o.Offset, 10)
	}
	return append(dst, "}}"...)
}

// ResetOffset is INVOKE_BROKER_TO_RESET_OFFSET: on the broker
// (resetoffset.go) for one queue or with useServerSideResetOffset (Apache
// 5.x's default); otherwise as Apache's Broker2Client.resetOffset: each
// write queue's offset at the timestamp
// (the consumer's own when it is already before it, unless forced), then
// every live member of the group is told (RESET_CONSUMER_CLIENT_OFFSET,
// one-way) and moves there itself. Refusals, in Apache's order and words:
// TOPIC_NOT_EXIST for a topic not in the table, SYSTEM_ERROR when the group
// committed nothing for a queue, CONSUMER_NOT_ONLINE when no member is
// connected.
func (b *Broker) ResetOffset(r ResetOffsetRequest) (ResetOffsetResult, error) {
	if r.OneQueue || b.Config().UseServerSideResetOffset {
		return b.resetOnBroker(r)
	}
	if b.Config().IsSlave() {
		return ResetOffsetResult{}, remoting.Refuse(remoting.SystemError, ErrSlave, "Can not reset offset in slave broker")
	}
	tc, ok := b.Topics.Get(r.Topic)
	if !ok {
		return ResetOffsetResult{}, remoting.Refuse(remoting.TopicNotExist, tables.ErrTopicNotExist,
			"[reset-offset] reset offset failed, no topic in this broker. topic=%s", r.Topic)
	}
	st, name := b.Store, b.Config().BrokerName
	res := ResetOffsetResult{Offsets: make([]QueueOffset, 0, tc.WriteQueueNums)}
	for q := int32(0); q < tc.WriteQueueNums; q++ {
		consumerOff, ok := b.Offsets.Query(r.Group, r.Topic, q)
		if !ok {
			return ResetOffsetResult{}, remoting.Refuse(remoting.SystemError, nil, "THe consumer group <%s> not exist", r.Group)
		}
		var off int64
		if r.Timestamp == -1 {
			off = st.MaxOffset(r.Topic, q)
		} else {
			off = st.OffsetByTime(r.Topic, q, r.Timestamp)
		}
		off = max(off, 0)
		if !r.Force && off >= consumerOff {
			off = consumerOff
		}
		res.Offsets = append(res.Offsets, QueueOffset{Queue: tables.MessageQueue{Topic: r.Topic, BrokerName: name, QueueID: q}, Offset: off})
	}
	conns := b.Clients.ConsumerConns(r.Group)
	if len(conns) == 0 {
		return ResetOffsetResult{}, remoting.Refuse(remoting.ConsumerNotOnline, nil,
			"Consumer not online, so can not reset offset, Group: %s Topic: %s Timestamp: %d", r.Group, r.Topic, r.Timestamp)
	}
	body := res.AppendJSON(make([]byte, 0, 64+64*len(res.Offsets)))
	for _, c := range conns {
		notice := remoting.NewRequest(remoting.ResetConsumerClientOffset, map[string]string{
			"topic": r.Topic, "group": r.Group, "timestamp": strconv.FormatInt(r.Timestamp, 10),
			"isForce": strconv.FormatBool(r.Force),
		}, body)
		if err := c.Send(notice); err != nil {
			b.log.Warn().Err(err).Str("consumerGroup", r.Group).Str("remote", c.Remote).Msg("reset offset notice")
		}
	}
	b.log.Info().Str("topic", r.Topic).Str("consumerGroup", r.Group).Int64("timestamp", r.Timestamp).
		Bool("isForce", r.Force).Int("consumers", len(conns)).Msg("consumer offsets reset")
	return res, nil
}

// ViewMessage is VIEW_MESSAGE_BY_ID: a copy of the stored record at a
// commit-log offset (taken from an offset message id); SYSTEM_ERROR with
// Apache's remark when there is none.
func (b *Broker) ViewMessage(offset int64) ([]byte, error) {
	rec, err := b.Store.MessageAt(offset)
	if err != nil {
		return nil, remoting.Refuse(remoting.SystemError, err, "can not find message by the offset, %d", offset)
	}
	return rec, nil
}

// RuntimeInfo is GET_BROKER_RUNTIME_INFO: Apache's KVTable of counters,
// with the keys mqadmin's brokerStatus and clusterList read; the put and get
// figures are runtimestats.go's. What rocketgo does not measure (thread
// pools, transient store) is reported as an idle Apache broker reports it.
func (b *Broker) RuntimeInfo() map[string]string {
	st := b.Store
	rs := b.stats.report(b.IsSlave())
	earliest := int64(-1)
	for t, qs := range st.Topics() {
		for _, q := range qs {
			if ts, err := st.EarliestMessageTime(t, q); err == nil && (earliest < 0 || ts < earliest) {
				earliest = ts
			}
		}
	}
	pullQueued, pullCapacity := b.Pulls.Queue()
	_, cqRatio, _ := st.DiskUsedRatios()
	info := map[string]string{
		"brokerActive":                    strconv.FormatBool(!b.IsSlave()), // Apache: the special services run (a master)
		"brokerVersionDesc":               BrokerVersionDesc,
		"brokerVersion":                   strconv.Itoa(int(remoting.ServerVersion)),
		"msgPutTotalYesterdayMorning":     strconv.FormatInt(rs.putYesterdayMorning, 10),
		"msgPutTotalTodayMorning":         strconv.FormatInt(rs.putTodayMorning, 10),
		"msgPutTotalTodayNow":             strconv.FormatInt(rs.putNow, 10),
		"msgGetTotalYesterdayMorning":     strconv.FormatInt(rs.getYesterdayMorning, 10),
		"msgGetTotalTodayMorning":         strconv.FormatInt(rs.getTodayMorning, 10),
		"msgGetTotalTodayNow":             strconv.FormatInt(rs.getNow, 10),
		"dispatchBehindBytes":             strconv.FormatInt(st.MaxPhyOffset()-st.DispatchedPhyOffset(), 10),
		"pageCacheLockTimeMills":          "0",
		"earliestMessageTimeStamp":        strconv.FormatInt(earliest, 10),
		"startAcceptSendRequestTimeStamp": "0",
		"timerReadBehind":                 "0",
		"timerOffsetBehind":               "0",
		"timerCongestNum":                 "0",
		"timerEnqueueTps":                 "0.0",
		"timerDequeueTps":                 "0.0",
		// Apache's remainTransientStoreBufferNumbs without a transient
		// store pool (rocketgo has none): Integer.MAX_VALUE.
		"remainTransientStoreBufferNumbs":          "2147483647",
		"remainHowManyDataToFlush":                 "0 B",
		"commitLogDiskRatio":                       strconv.FormatFloat(st.CommitLogDiskRatio(), 'f', -1, 64),
		"commitLogDiskRatio_" + st.CommitLogDir():  strconv.FormatFloat(st.CommitLogDiskRatio(), 'f', -1, 64),
		"consumeQueueDiskRatio":                    strconv.FormatFloat(cqRatio, 'f', -1, 64),
		"commitLogMaxOffset":                       strconv.FormatInt(st.MaxPhyOffset(), 10),
		"commitLogMinOffset":                       strconv.FormatInt(st.MinPhyOffset(), 10),
		"bootTimestamp":                            strconv.FormatInt(b.stats.started.UnixMilli(), 10),
		"runtime":                                  runtimeText(time.Since(b.stats.started)),
		"putTps":                                   rs.putTps,
		"getFoundTps":                              rs.getFoundTps,
		"getMissTps":                               rs.getMissTps,
		"getTransferredTps":                        rs.getTransferredTps,
		"getTransferedTps":                         rs.getTransferredTps, // 4.9 tools' spelling
		"getTotalTps":                              rs.getTotalTps,
		"sendThreadPoolQueueSize":                  "0",
		"sendThreadPoolQueueCapacity":              "10000",
		"pullThreadPoolQueueSize":                  strconv.Itoa(pullQueued),
		"pullThreadPoolQueueCapacity":              strconv.Itoa(pullCapacity),
		"litePullThreadPoolQueueSize":              "0",
		"queryThreadPoolQueueSize":                 "0",
		"sendThreadPoolQueueHeadWaitTimeMills":     "0",
		"pullThreadPoolQueueHeadWaitTimeMills":     "0",
		"queryThreadPoolQueueHeadWaitTimeMills":    "0",
		"litePullThreadPoolQueueHeadWaitTimeMills": "0",
		"EndTransactionQueueSize":                  "0",
		// Pools rocketgo does not have, as an idle Apache broker with
		// Apache's default capacities reports them (the dashboard's broker
		// status lists every key).
		"litePullThreadPoolQueueCapacity":       "100000",
		"queryThreadPoolQueueCapacity":          "20000",
		"ackThreadPoolQueueSize":                "0",
		"ackThreadPoolQueueCapacity":            "100000",
		"ackThreadPoolQueueHeadWaitTimeMills":   "0",
		"EndTransactionThreadPoolQueueCapacity": "100000",
	}
	if !b.IsSlave() {
		_, inBytes, _, _ := b.Stats.Totals()
		b.stats.store.report(info, rs.putNow, inBytes)
	} else {
		b.stats.store.report(info, 0, 0)
	}
	if total, free, err := st.RootCapacity(); err == nil {
		info["commitLogDirCapacity"] = fmt.Sprintf("Total : %s, Free : %s.", humanBytes(total), humanBytes(free))
	}
	return info
}

// humanBytes is Apache's MixAll.humanReadableByteCount(bytes, false):
// "512 B", "1.5 KiB", "20.0 GiB".
func humanBytes(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	exp := int(math.Log(float64(n)) / math.Log(1024))
	return fmt.Sprintf("%.1f %ciB", float64(n)/math.Pow(1024, float64(exp)), "KMGTPE"[exp-1])
}

// runtimeText is Apache's "[ 0 days, 0 hours, 1 minutes, 5 seconds ]".
func runtimeText(d time.Duration) string {
	s := int64(d.Seconds())
	return fmt.Sprintf("[ %d days, %d hours, %d minutes, %d seconds ]", s/86400, s%86400/3600, s%3600/60, s%60)
}

// QueueTimeSpan is one queue of QUERY_CONSUME_TIME_SPAN (Apache's
// QueueTimeSpan): the store times of its first and last messages, of the
// group's last consumed one, and how long the next one has waited.
type QueueTimeSpan struct {
	Queue                              tables.MessageQueue
	MinTime, MaxTime, ConsumeTime, Lag int64 // ms; -1 where Apache finds no message
}

// ConsumeTimeSpan is QUERY_CONSUME_TIME_SPAN (AdminBrokerProcessor.
// queryConsumeTimeSpan): one span per write queue of the topic, bounded by
// maxTopicQueueNums; TOPIC_NOT_EXIST with Apache's remark.
func (b *Broker) ConsumeTimeSpan(topic, group string) ([]QueueTimeSpan, error) {
	tc, ok := b.Topics.Get(topic)
	if !ok {
		return nil, remoting.Refuse(remoting.TopicNotExist, tables.ErrTopicNotExist, "topic[%s] not exist", topic)
	}
	st, name, now := b.Store, b.Config().BrokerName, time.Now().UnixMilli()
	timeAt := func(q int32, off int64) int64 {
		if t, ok := st.StoreTimeAt(topic, q, off); ok {
			return t
		}
		return -1
	}
	out := make([]QueueTimeSpan, tc.WriteQueueNums)
	for i := range out {
		q := int32(i)
		s := &out[i]
		s.Queue = tables.MessageQueue{Topic: topic, BrokerName: name, QueueID: q}
		s.MinTime = b.EarliestMsgStoreTime(topic, q)
		maxOff := st.MaxOffset(topic, q)
		s.MaxTime = timeAt(q, maxOff-1)
		consumed, ok := b.Offsets.Query(group, topic, q)
		if !ok {
			consumed = -1 // Apache's queryOffset
		}
		s.ConsumeTime = s.MinTime
		if consumed > 0 {
			s.ConsumeTime = timeAt(q, consumed-1)
		}
		if consumed < maxOff {
			// Apache's arithmetic, kept: without an offset (or an empty
			// queue) the next message's time is -1 and the lag now+1.
			s.Lag = now - timeAt(q, consumed)
		}
	}
	return out, nil
}

// MaxQueryCQEntries bounds the entries of one QUERY_CONSUME_QUEUE answer
// (Apache's has no bound but the end of the consume queue file).
const MaxQueryCQEntries = 10_000

// ConsumeQueueView is QUERY_CONSUME_QUEUE's consume queue part.
type ConsumeQueueView struct {
	Min, Max int64
	Entries  []store.QueueEntry // nil: index is not in the queue
}

// QueryConsumeQueue is QUERY_CONSUME_QUEUE (AdminBrokerProcessor.
// queryConsumeQueue): the queue's bounds and up to count entries from
// index; SYSTEM_ERROR with Apache's remark for a queue that does not exist.
func (b *Broker) QueryConsumeQueue(topic string, queueID int32, index int64, count int) (ConsumeQueueView, error) {
	st := b.Store
	if !st.HasQueue(topic, queueID) {
		return ConsumeQueueView{}, remoting.Refuse(remoting.SystemError, tables.ErrTopicNotExist, "%d@%s is not exist!", queueID, topic)
	}
	v := ConsumeQueueView{Min: st.MinOffset(topic, queueID), Max: st.MaxOffset(topic, queueID)}
	if index < v.Min || index >= v.Max {
		return v, nil
	}
	count = min(max(count, 0), MaxQueryCQEntries)
	v.Entries = []store.QueueEntry{}
	for from := index; len(v.Entries) < count; {
		es := st.ReadQueue(topic, queueID, from, count-len(v.Entries))
		if len(es) == 0 {
			break
		}
		v.Entries = append(v.Entries, es...)
		from = es[len(es)-1].QueueOffset + 1
	}
	return v, nil
}

// SystemTopics are the names of the broker's system topics.
func (b *Broker) SystemTopics() []string { return b.Topics.SystemTopics() }

// StatsData is one of Apache's BrokerStatsManager items (name, key) by day,
// hour and minute; false when it does not exist.
func (b *Broker) StatsData(name, key string) (stats.StatsData, bool) {
	return b.Stats.StatsData(name, key)
}

// TopicPutTps is the rate of messages stored on topic, all types together.
func (b *Broker) TopicPutTps(topic string) float64 { return b.Stats.TopicPutTps(topic) }

// ConsumeTps is the rate of messages group took from topic.
func (b *Broker) ConsumeTps(group, topic string) float64 { return b.Stats.ConsumeTps(group, topic) }

// DeleteExpiredCommitLog deletes expired commit-log files now rather than
// at the next scheduled time.
func (b *Broker) DeleteExpiredCommitLog() { b.Store.DeleteExpiredManually() }
