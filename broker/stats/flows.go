package stats

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rocketgo/rocketgo/message"
)

// Stats counts what the broker takes in (per topic) and hands out (per
// consumer group and topic): messages and bytes since start, Apache's
// BrokerStatsManager figures (TOPIC_PUT_NUMS / _SIZE, GROUP_GET_NUMS /
// _SIZE). The metrics endpoint reads them at each scrape.
//
// Invariants: counting is one sync.Map read and four atomic adds (the key's
// and the totals') per answer of a pull or pop, six per send (with the size
// histogram's bucket and sum); a key allocates once, on its first use, and
// the keys are bounded (MaxKeys each way: a group name comes from the
// client): past the bound a new key's flow is counted only in the totals.
type Stats struct {
	in, out       sync.Map // TopicType -> *InFlow, GroupTopic -> *Flow
	inKeys        atomic.Int64
	outKeys       atomic.Int64
	totIn, totOut Flow
	userIn        atomic.Int64                      // messages in to topics that are not system topics
	dlq           statMap[GroupTopic, atomic.Int64] // messages moved to a DLQ
	items         statItems                         // VIEW_BROKER_STATS_DATA's windows (items.go)
}

// Flow is messages and bytes through one key.
type Flow struct {
	Msgs, Bytes atomic.Int64
	Calls       atomic.Int64 // sends or pulls counted (StatsItem's times)
	marks       marks        // for the rates (rates.go)
	lite        atomic.Bool  // counted by lite pops (OutLite)
}

// Lite reports whether lite pops counted this flow (OutLite).
func (f *Flow) Lite() bool { return f.lite.Load() }

// InFlow is a topic's flow in, with the histogram of the sends' sizes:
// Apache's rocketmq_message_size, one observation per send of its record
// bytes per message, over SizeBuckets.
type InFlow struct {
	Flow
	Sizes Histogram
}

// SizeBuckets are rocketmq_message_size's upper bounds (bytes), Apache's:
// 1 KiB, 4 KiB, 512 KiB, 1 MiB, 2 MiB, 4 MiB.
var SizeBuckets = Bounds{1 << 10, 4 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20}

// GroupTopic keys what a consumer group took from a topic.
type GroupTopic struct{ Group, Topic string }

// TopicType keys what was stored on a topic by kind of message.
type TopicType struct {
	Topic string
	Type  MessageType
}

// MessageType is the kind of a message stored, as Apache's metrics label
// it (TopicMessageType.getMetricsValue).
type MessageType uint8

const (
	MessageNormal MessageType = iota
	MessageDelay
	MessageTransaction
	MessageFIFO
)

func (t MessageType) String() string {
	switch t {
	case MessageDelay:
		return "delay"
	case MessageTransaction:
		return "transaction"
	case MessageFIFO:
		return "fifo"
	}
	return "normal"
}

// MaxKeys bounds the keys of each table.
const MaxKeys = 100_000

// In counts msgs of type stored on topic by one send, bytes in all as
// stored (records).
func (s *Stats) In(topic string, typ MessageType, msgs, bytes int64) {
	s.totIn.add(msgs, bytes)
	if !message.IsSystemTopicName(topic) {
		s.userIn.Add(msgs)
	}
	k := TopicType{topic, typ}
	v, ok := s.in.Load(k)
	if !ok {
		if s.inKeys.Load() >= MaxKeys {
			return
		}
		var loaded bool
		v, loaded = s.in.LoadOrStore(TopicType{strings.Clone(topic), typ}, &InFlow{})
		if !loaded {
			s.inKeys.Add(1)
		}
	}
	f := v.(*InFlow)
	f.add(msgs, bytes)
	if msgs > 0 {
		f.Sizes.observe(&SizeBuckets, bytes/msgs)
	}
}

// Out counts msgs (bytes in all, as stored: records) handed to group from
// topic.
func (s *Stats) Out(group, topic string, msgs, bytes int64) { s.out1(group, topic, msgs, bytes) }

// OutLite counts a lite pop's messages (topic: the parent) as Out does and
// marks the flow a lite one: Apache's lite pops label their messages out
// is_retry="false", which the other pops' and the pulls' rows do not have.
func (s *Stats) OutLite(group, topic string, msgs, bytes int64) {
	if f := s.out1(group, topic, msgs, bytes); f != nil && !f.lite.Load() {
		f.lite.Store(true)
	}
}

// out1 counts one answer and returns its key's flow, nil past the bound.
func (s *Stats) out1(group, topic string, msgs, bytes int64) *Flow {
	s.totOut.add(msgs, bytes)
	k := GroupTopic{group, topic}
	if f, ok := s.out.Load(k); ok {
		f.(*Flow).add(msgs, bytes)
		return f.(*Flow)
	}
	if s.outKeys.Load() >= MaxKeys {
		return nil
	}
	f, loaded := s.out.LoadOrStore(GroupTopic{strings.Clone(group), strings.Clone(topic)}, &Flow{})
	if !loaded {
		s.outKeys.Add(1)
	}
	f.(*Flow).add(msgs, bytes)
	return f.(*Flow)
}

// Totals are the messages and bytes in and out since start, every key
// included.
func (s *Stats) Totals() (inMsgs, inBytes, outMsgs, outBytes int64) {
	return s.totIn.Msgs.Load(), s.totIn.Bytes.Load(), s.totOut.Msgs.Load(), s.totOut.Bytes.Load()
}

// UserPuts is the messages in since start to topics that are not system
// topics (Apache's BROKER_PUT_NUMS_WITHOUT_SYSTEM_TOPIC, which its runtime
// info's msgPutTotal figures read).
func (s *Stats) UserPuts() int64 { return s.userIn.Load() }

// RangeIn calls fn for each topic and type's flow until fn returns false.
func (s *Stats) RangeIn(fn func(k TopicType, f *InFlow) bool) {
	s.in.Range(func(k, v any) bool { return fn(k.(TopicType), v.(*InFlow)) })
}

// RangeOut calls fn for each group and topic's flow until fn returns false.
func (s *Stats) RangeOut(fn func(k GroupTopic, f *Flow) bool) {
	s.out.Range(func(k, v any) bool { return fn(k.(GroupTopic), v.(*Flow)) })
}

func (f *Flow) add(msgs, bytes int64) {
	f.Msgs.Add(msgs)
	f.Bytes.Add(bytes)
	f.Calls.Add(1)
}

// ToDLQ counts a message of topic moved to group's DLQ (Apache's
// sendToDlqMessages).
func (s *Stats) ToDLQ(group, topic string) {
	if n := s.dlq.get(GroupTopic{group, topic}, cloneGroupTopic); n != nil {
		n.Add(1)
	}
}

func cloneGroupTopic(k GroupTopic) GroupTopic {
	return GroupTopic{strings.Clone(k.Group), strings.Clone(k.Topic)}
}

// RangeDLQ calls fn for each group and topic's DLQ count until fn returns false.
func (s *Stats) RangeDLQ(fn func(k GroupTopic, n int64) bool) {
	s.dlq.each(func(k GroupTopic, n *atomic.Int64) bool { return fn(k, n.Load()) })
}
