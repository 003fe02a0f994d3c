package stats

import (
	"strings"
	"sync/atomic"
)

// TimerStats are the timer service's figures for the metrics endpoint
// (Apache's DefaultStoreMetricsManager timer gauges and counters): per real
// topic the messages waiting and those read into the timer and delivered
// since start; the timer queue entries not read yet; the due time of the
// most overdue message waiting. Written only by the timer goroutine (an
// atomic add and, for a topic's first message, a sync.Map store), read at
// scrape; topics bounded by MaxKeys as Stats' (past it a new topic is
// not counted).
type TimerStats struct {
	topics statMap[string, TimerFlow]
	// Behind is the timer queue entries not read into the timer yet
	// (rocketmq_timer_enqueue_lag).
	Behind atomic.Int64
	// HeadDue is the delivery time (ms) of the first message waiting, 0
	// when none waits.
	HeadDue atomic.Int64
	// mirror is the master's messages waiting per topic, as the slave's
	// metadata sync last copied them (GET_TIMER_METRICS); read in place of
	// Timing while no timer run delivers here. Replaced whole, never edited.
	mirror atomic.Pointer[map[string]int64]
}

// TimerFlow is one real topic's timer figures.
type TimerFlow struct {
	Timing, Enqueued, Dequeued atomic.Int64
}

func (s *TimerStats) flow(topic string) *TimerFlow { return s.topics.get(topic, strings.Clone) }

// Enqueued counts a message of topic read into the timer.
func (s *TimerStats) Enqueued(topic string) {
	if f := s.flow(topic); f != nil {
		f.Enqueued.Add(1)
		f.Timing.Add(1)
	}
}

// Left counts a message out of the timer: delivered, or set aside.
func (s *TimerStats) Left(topic string, delivered bool) {
	if f := s.flow(topic); f != nil {
		f.Timing.Add(-1)
		if delivered {
			f.Dequeued.Add(1)
		}
	}
}

// RangeTopics calls fn for each real topic's figures until fn returns false.
func (s *TimerStats) RangeTopics(fn func(topic string, f *TimerFlow) bool) {
	s.topics.each(fn)
}

// Mirror is the master's counts the slave copied last; nil when none.
func (s *TimerStats) Mirror() map[string]int64 {
	if m := s.mirror.Load(); m != nil {
		return *m
	}
	return nil
}

// SetMirror replaces the copy of the master's counts; m is not edited after.
func (s *TimerStats) SetMirror(m map[string]int64) { s.mirror.Store(&m) }
