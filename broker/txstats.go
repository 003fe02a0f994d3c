package broker

import (
	"strings"
	"sync"
	"sync/atomic"
)

// TxStats counts transactional messages per real topic (Apache's
// TransactionMetrics and the EndTransactionProcessor counters) for the
// metrics endpoint. Counting is one sync.Map read and an atomic add or
// three, off the plain send path (a prepare, an end, a discard); the keys
// are bounded by maxStatKeys as Stats' are.
//
// Half is the half messages neither committed, rolled back nor discarded
// since start: Apache persists its count (config/transactionMetrics), this
// one starts at 0 with the process, so an end of a message prepared before a
// restart can take a topic below 0 (the endpoint shows 0 then).
type TxStats struct {
	topics  sync.Map // topic -> *TxFlow
	nTopics atomic.Int64
}

// TxFlow is one real topic's transactional figures.
type TxFlow struct {
	Half, Commits, Rollbacks atomic.Int64
	// finish latency: Apache records (now - born) / 1000, seconds, under a
	// unit of ms; so here, in its buckets.
	finish    [len(FinishBuckets) + 1]atomic.Int64
	finishSum atomic.Int64
}

// FinishBuckets are rocketmq_finish_message_latency's upper bounds, Apache's
// (seconds: 5 s, 1 min, 10 min, 1 h, 12 h, 24 h).
var FinishBuckets = [...]int64{5, 60, 600, 3600, 12 * 3600, 24 * 3600}

// Finish returns the commit latency histogram: the cumulative count at each
// of FinishBuckets, the count and the sum.
func (f *TxFlow) Finish() (cumulative [len(FinishBuckets)]uint64, count uint64, sum int64) {
	var n uint64
	for i := range FinishBuckets {
		n += uint64(f.finish[i].Load())
		cumulative[i] = n
	}
	return cumulative, n + uint64(f.finish[len(FinishBuckets)].Load()), f.finishSum.Load()
}

func (s *TxStats) flow(topic string) *TxFlow {
	if f, ok := s.topics.Load(topic); ok {
		return f.(*TxFlow)
	}
	if s.nTopics.Load() >= maxStatKeys {
		return nil
	}
	f, loaded := s.topics.LoadOrStore(strings.Clone(topic), &TxFlow{})
	if !loaded {
		s.nTopics.Add(1)
	}
	return f.(*TxFlow)
}

// Prepared counts a half message stored for topic.
func (s *TxStats) Prepared(topic string) {
	if f := s.flow(topic); f != nil {
		f.Half.Add(1)
	}
}

// Committed counts a commit of a message of topic born at bornMs.
func (s *TxStats) Committed(topic string, bornMs, nowMs int64) {
	f := s.flow(topic)
	if f == nil {
		return
	}
	f.Half.Add(-1)
	f.Commits.Add(1)
	secs := (nowMs - bornMs) / 1000
	i := 0
	for i < len(FinishBuckets) && secs > FinishBuckets[i] {
		i++
	}
	f.finish[i].Add(1)
	f.finishSum.Add(secs)
}

// RolledBack counts a rollback of a message of topic.
func (s *TxStats) RolledBack(topic string) {
	if f := s.flow(topic); f != nil {
		f.Half.Add(-1)
		f.Rollbacks.Add(1)
	}
}

// Discarded counts a half message of topic given up by the check.
func (s *TxStats) Discarded(topic string) {
	if f := s.flow(topic); f != nil {
		f.Half.Add(-1)
	}
}

// RangeTopics calls fn for each real topic's figures until fn returns false.
func (s *TxStats) RangeTopics(fn func(topic string, f *TxFlow) bool) {
	s.topics.Range(func(k, v any) bool { return fn(k.(string), v.(*TxFlow)) })
}
