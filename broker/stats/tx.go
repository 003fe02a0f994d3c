package stats

import (
	"strings"
	"sync/atomic"
)

// TxStats counts transactional messages per real topic (Apache's
// TransactionMetrics and the EndTransactionProcessor counters) for the
// metrics endpoint. Counting is one sync.Map read and an atomic add or
// three, off the plain send path (a prepare, an end, a discard); the keys
// are bounded by MaxKeys as Stats' are.
//
// Half is the half messages neither committed, rolled back nor discarded
// since start: Apache persists its count (config/transactionMetrics), this
// one starts at 0 with the process, so an end of a message prepared before a
// restart can take a topic below 0 (the endpoint shows 0 then).
type TxStats struct {
	topics statMap[string, TxFlow]
}

// TxFlow is one real topic's transactional figures.
type TxFlow struct {
	Half, Commits, Rollbacks atomic.Int64
	// Finish is the commit latencies over FinishBuckets: Apache records
	// (now - born) / 1000, seconds, under a unit of ms; so here.
	Finish Histogram
}

// FinishBuckets are rocketmq_finish_message_latency's upper bounds, Apache's
// (seconds: 5 s, 1 min, 10 min, 1 h, 12 h, 24 h).
var FinishBuckets = Bounds{5, 60, 600, 3600, 12 * 3600, 24 * 3600}

func (s *TxStats) flow(topic string) *TxFlow { return s.topics.get(topic, strings.Clone) }

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
	f.Finish.observe(&FinishBuckets, (nowMs-bornMs)/1000)
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
	s.topics.each(fn)
}
