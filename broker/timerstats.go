package broker

import (
	"strings"
	"sync/atomic"
	"time"

	jsoniter "github.com/json-iterator/go"
)

// TimerStats are the timer service's figures for the metrics endpoint
// (Apache's DefaultStoreMetricsManager timer gauges and counters): per real
// topic the messages waiting and those read into the timer and delivered
// since start; the timer queue entries not read yet; the due time of the
// most overdue message waiting. Written only by the timer goroutine (an
// atomic add and, for a topic's first message, a sync.Map store), read at
// scrape; topics bounded by maxStatKeys as Stats' (past it a new topic is
// not counted).
type TimerStats struct {
	topics statMap[string, TimerFlow]
	// Behind is the timer queue entries not read into the timer yet
	// (rocketmq_timer_enqueue_lag).
	Behind atomic.Int64
	// HeadDue is the delivery time (ms) of the first message waiting, 0
	// when none waits.
	HeadDue atomic.Int64
}

// TimerFlow is one real topic's timer figures.
type TimerFlow struct {
	Timing, Enqueued, Dequeued atomic.Int64
}

func (s *TimerStats) flow(topic string) *TimerFlow { return s.topics.get(topic, strings.Clone) }

func (s *TimerStats) enqueued(topic string) {
	if f := s.flow(topic); f != nil {
		f.Enqueued.Add(1)
		f.Timing.Add(1)
	}
}

// left counts a message out of the timer: delivered, or set aside.
func (s *TimerStats) left(topic string, delivered bool) {
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

// TimerMetrics is GET_TIMER_METRICS' body, Apache's
// TimerMetricsSerializeWrapper: per real topic the messages waiting in the
// timer ("timingCount"), with a data version of the answer's time. rocketgo
// keeps no per-topic update time; timeStamp is the answer's too.
func (b *Broker) TimerMetrics() []byte {
	type metric struct {
		Count     int64 `json:"count"`
		TimeStamp int64 `json:"timeStamp"`
	}
	now := time.Now().UnixMilli()
	counts := map[string]metric{}
	b.Timer.RangeTopics(func(topic string, f *TimerFlow) bool {
		counts[topic] = metric{Count: f.Timing.Load(), TimeStamp: now}
		return true
	})
	out, _ := jsoniter.Marshal(struct { // strings and ints: cannot fail
		TimingCount map[string]metric `json:"timingCount"`
		DataVersion DataVersion       `json:"dataVersion"`
	}{counts, DataVersion{Timestamp: now}})
	return out
}
