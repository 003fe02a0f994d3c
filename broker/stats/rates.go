package stats

// Per-key rates for the admin answers that report them (Apache's
// StatsItem.getStatsDataInMinute): GET_TOPIC_STATS_INFO's topicPutTps and
// GET_CONSUME_STATS' consumeTps. Every rateTick the sampler moves each
// flow's mark to its previous mark and marks the count now, so a rate is
// over the last one to two ticks, as Apache's is over up to a minute of
// ten-second samples. A flow not yet marked twice is over its first mark;
// not marked at all, 0. The marks are two pairs of atomics per key, the
// sampler one pass over the (bounded) keys per tick.

import (
	"sync/atomic"
	"time"
)

const rateTick = 30 * time.Second

// marks are the counts of a flow at the last two ticks.
type marks struct {
	msgs, at, prevMsgs, prevAt atomic.Int64
}

func (m *marks) mark(msgs, now int64) {
	m.prevMsgs.Store(m.msgs.Load())
	m.prevAt.Store(m.at.Load())
	m.msgs.Store(msgs)
	m.at.Store(now)
}

// rate is msgs per second since the older mark.
func (m *marks) rate(msgs, now int64) float64 {
	base, at := m.prevMsgs.Load(), m.prevAt.Load()
	if at == 0 {
		base, at = m.msgs.Load(), m.at.Load()
	}
	if at == 0 || now <= at {
		return 0
	}
	return float64(msgs-base) / float64(now-at) * 1000
}

// markRates marks every flow (the sampler, every rateTick).
func (s *Stats) markRates(now int64) {
	s.RangeIn(func(_ TopicType, f *InFlow) bool { f.marks.mark(f.Msgs.Load(), now); return true })
	s.RangeOut(func(_ GroupTopic, f *Flow) bool { f.marks.mark(f.Msgs.Load(), now); return true })
}

// TopicPutTps is the rate of messages stored on topic, all types together.
func (s *Stats) TopicPutTps(topic string) float64 {
	now := time.Now().UnixMilli()
	var tps float64
	for _, typ := range [...]MessageType{MessageNormal, MessageDelay, MessageTransaction, MessageFIFO} {
		if v, ok := s.in.Load(TopicType{topic, typ}); ok {
			f := v.(*InFlow)
			tps += f.marks.rate(f.Msgs.Load(), now)
		}
	}
	return tps
}

// ConsumeTps is the rate of messages group took from topic.
func (s *Stats) ConsumeTps(group, topic string) float64 {
	v, ok := s.out.Load(GroupTopic{group, topic})
	if !ok {
		return 0
	}
	f := v.(*Flow)
	return f.marks.rate(f.Msgs.Load(), time.Now().UnixMilli())
}

func (s *Stats) RunRates(quit <-chan struct{}) {
	t := time.NewTicker(rateTick)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case now := <-t.C:
			s.markRates(now.UnixMilli())
		}
	}
}
