package admin

// mqadmin's services: topic and consume statistics, client connections,
// offset reset, messages by offset. Each is what one request code asks,
// with a typed result the processor encodes.

import (
	"sort"
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

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
func (s *Service) TopicStats(topic string) ([]QueueStats, error) {
	tc, ok := s.d.Topics.Get(topic)
	if !ok {
		return nil, remoting.Refuse(remoting.TopicNotExist, tables.ErrTopicNotExist, "topic[%s] not exist", topic)
	}
	st, name := s.d.Store, s.d.Config().BrokerName
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
func (s *Service) ConsumeStats(r ConsumeStatsRequest) []QueueConsumeStats {
	st, name := s.d.Store, s.d.Config().BrokerName
	var out []QueueConsumeStats
	for _, topic := range s.consumeStatsTopics(r) {
		tc, ok := s.d.Topics.Get(topic)
		if !ok {
			continue
		}
		for q := int32(0); q < tc.ReadQueueNums; q++ {
			qs := QueueConsumeStats{Queue: tables.MessageQueue{Topic: topic, BrokerName: name, QueueID: q},
				BrokerOffset: max(st.MaxOffset(topic, q), 0)}
			if off, ok := s.d.Offsets.Query(r.Group, topic, q); ok && off > 0 {
				qs.ConsumerOffset = off
				qs.LastTimestamp, _ = st.StoreTimeAt(topic, q, off-1)
			}
			out = append(out, qs)
		}
	}
	return out
}

func (s *Service) consumeStatsTopics(r ConsumeStatsRequest) []string {
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
		topics = s.d.Offsets.TopicsOf(r.Group)
	}
	state, online := s.d.Clients.ConsumerGroup(r.Group)
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
func (s *Service) ConsumerConnections(group string) (tables.ConsumerGroupState, error) {
	state, ok := s.d.Clients.ConsumerGroup(group)
	if !ok {
		return state, remoting.Refuse(remoting.ConsumerNotOnline, nil, "the consumer group[%s] not online", group)
	}
	return state, nil
}

// ProducerConnections is GET_PRODUCER_CONNECTION_LIST: a producer group's
// live connections; SYSTEM_ERROR with Apache's remark when there are none.
func (s *Service) ProducerConnections(group string) ([]tables.Connection, error) {
	conns := s.d.Clients.ProducerConnections(group)
	if len(conns) == 0 {
		return nil, remoting.Refuse(remoting.SystemError, nil, "the producer group[%s] not exist", group)
	}
	return conns, nil
}

// TopicConsumers is QUERY_TOPIC_CONSUME_BY_WHO: the groups online and
// subscribed to topic and those with offsets committed for it, sorted.
func (s *Service) TopicConsumers(topic string) []string {
	set := map[string]struct{}{}
	for _, g := range s.d.Clients.GroupsSubscribing(topic) {
		set[g] = struct{}{}
	}
	for _, g := range s.d.Offsets.Groups(topic) {
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
func (s *Service) ConsumerTopics(group string) ConsumerTopics {
	topics := s.d.Offsets.TopicsOf(group)
	if topics == nil {
		topics = []string{}
	}
	return ConsumerTopics{BrokerAddr: s.d.Config().BrokerAddr, Topics: topics}
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
func (s *Service) ResetOffset(r ResetOffsetRequest) (ResetOffsetResult, error) {
	if r.OneQueue || s.d.Config().UseServerSideResetOffset {
		return s.resetOnBroker(r)
	}
	if s.d.Config().IsSlave {
		return ResetOffsetResult{}, remoting.Refuse(remoting.SystemError, errSlave, "Can not reset offset in slave broker")
	}
	tc, ok := s.d.Topics.Get(r.Topic)
	if !ok {
		return ResetOffsetResult{}, remoting.Refuse(remoting.TopicNotExist, tables.ErrTopicNotExist,
			"[reset-offset] reset offset failed, no topic in this broker. topic=%s", r.Topic)
	}
	st, name := s.d.Store, s.d.Config().BrokerName
	res := ResetOffsetResult{Offsets: make([]QueueOffset, 0, tc.WriteQueueNums)}
	for q := int32(0); q < tc.WriteQueueNums; q++ {
		consumerOff, ok := s.d.Offsets.Query(r.Group, r.Topic, q)
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
	conns := s.d.Clients.ConsumerConns(r.Group)
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
			s.log.Warn().Err(err).Str("consumerGroup", r.Group).Str("remote", c.Remote).Msg("reset offset notice")
		}
	}
	s.log.Info().Str("topic", r.Topic).Str("consumerGroup", r.Group).Int64("timestamp", r.Timestamp).
		Bool("isForce", r.Force).Int("consumers", len(conns)).Msg("consumer offsets reset")
	return res, nil
}

// ViewMessage is VIEW_MESSAGE_BY_ID: a copy of the stored record at a
// commit-log offset (taken from an offset message id); SYSTEM_ERROR with
// Apache's remark when there is none.
func (s *Service) ViewMessage(offset int64) ([]byte, error) {
	rec, err := s.d.Store.MessageAt(offset)
	if err != nil {
		return nil, remoting.Refuse(remoting.SystemError, err, "can not find message by the offset, %d", offset)
	}
	return rec, nil
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
func (s *Service) ConsumeTimeSpan(topic, group string) ([]QueueTimeSpan, error) {
	tc, ok := s.d.Topics.Get(topic)
	if !ok {
		return nil, remoting.Refuse(remoting.TopicNotExist, tables.ErrTopicNotExist, "topic[%s] not exist", topic)
	}
	st, name, now := s.d.Store, s.d.Config().BrokerName, time.Now().UnixMilli()
	timeAt := func(q int32, off int64) int64 {
		if t, ok := st.StoreTimeAt(topic, q, off); ok {
			return t
		}
		return -1
	}
	out := make([]QueueTimeSpan, tc.WriteQueueNums)
	for i := range out {
		q := int32(i)
		sp := &out[i]
		sp.Queue = tables.MessageQueue{Topic: topic, BrokerName: name, QueueID: q}
		sp.MinTime = s.EarliestMsgStoreTime(topic, q)
		maxOff := st.MaxOffset(topic, q)
		sp.MaxTime = timeAt(q, maxOff-1)
		consumed, ok := s.d.Offsets.Query(group, topic, q)
		if !ok {
			consumed = -1 // Apache's queryOffset
		}
		sp.ConsumeTime = sp.MinTime
		if consumed > 0 {
			sp.ConsumeTime = timeAt(q, consumed-1)
		}
		if consumed < maxOff {
			// Apache's arithmetic, kept: without an offset (or an empty
			// queue) the next message's time is -1 and the lag now+1.
			sp.Lag = now - timeAt(q, consumed)
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
func (s *Service) QueryConsumeQueue(topic string, queueID int32, index int64, count int) (ConsumeQueueView, error) {
	st := s.d.Store
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
func (s *Service) SystemTopics() []string { return s.d.Topics.SystemTopics() }

// StatsData is VIEW_BROKER_STATS_DATA: one of Apache's BrokerStatsManager
// items (name, key) by day, hour and minute; SYSTEM_ERROR with Apache's
// remark when it does not exist.
func (s *Service) StatsData(name, key string) (stats.StatsData, error) {
	d, ok := s.d.Counts.StatsData(name, key)
	if !ok {
		return d, remoting.Refuse(remoting.SystemError, nil, "The stats <%s> <%s> not exist", name, key)
	}
	return d, nil
}

// TopicPutTps is the rate of messages stored on topic, all types together.
func (s *Service) TopicPutTps(topic string) float64 { return s.d.Counts.TopicPutTps(topic) }

// ConsumeTps is the rate of messages group took from topic.
func (s *Service) ConsumeTps(group, topic string) float64 { return s.d.Counts.ConsumeTps(group, topic) }

// DeleteExpiredCommitLog deletes expired commit-log files now rather than
// at the next scheduled time.
func (s *Service) DeleteExpiredCommitLog() { s.d.Store.DeleteExpiredManually() }
