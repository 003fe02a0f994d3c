package broker

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	jsoniter "github.com/json-iterator/go"

	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
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

// TimerTiming is the messages waiting in the timer per real topic: this
// broker's own while its timer delivers (or when it never copied a
// master's), else what its master had at the last sync, as an Apache
// slave's TimerMetrics holds its master's timingCount.
func (b *Broker) TimerTiming() map[string]int64 {
	if m := b.Timer.mirror.Load(); m != nil && !b.timer.running.Load() {
		return *m
	}
	counts := map[string]int64{}
	b.Timer.RangeTopics(func(topic string, f *TimerFlow) bool {
		counts[topic] = f.Timing.Load()
		return true
	})
	return counts
}

// timerMetricsBody is GET_TIMER_METRICS' body, Apache's
// TimerMetricsSerializeWrapper: per real topic the messages waiting in the
// timer ("timingCount"), with a data version.
type timerMetricsBody struct {
	TimingCount map[string]timerMetric `json:"timingCount"`
	DataVersion remoting.DataVersion   `json:"dataVersion"`
}

type timerMetric struct {
	Count     int64 `json:"count"`
	TimeStamp int64 `json:"timeStamp"`
}

// TimerMetrics answers GET_TIMER_METRICS, with a data version of the
// answer's time. rocketgo keeps no per-topic update time; timeStamp is the
// answer's too.
func (b *Broker) TimerMetrics() []byte {
	now := time.Now().UnixMilli()
	counts := map[string]timerMetric{}
	for topic, n := range b.TimerTiming() {
		counts[topic] = timerMetric{Count: n, TimeStamp: now}
	}
	out, _ := jsoniter.Marshal(timerMetricsBody{counts, remoting.DataVersion{Timestamp: now}}) // strings and ints: cannot fail
	return out
}

// takeTimerMetrics is the slave's half (Apache's syncTimerMetrics): the
// master's counts replace the copy. What a hostile or broken master sends is
// bounded: topics that are not valid names, negative counts and topics past
// maxStatKeys are left out.
func (b *Broker) takeTimerMetrics(body []byte) error {
	var m timerMetricsBody
	if err := jsoniter.Unmarshal(config.QuoteBareKeys(body), &m); err != nil {
		return fmt.Errorf("timer metrics: %w", err)
	}
	counts := make(map[string]int64, min(len(m.TimingCount), maxStatKeys))
	skipped := 0
	for topic, v := range m.TimingCount {
		if message.ValidTopicName(topic) != nil || v.Count < 0 || len(counts) >= maxStatKeys {
			skipped++
			continue
		}
		counts[topic] = v.Count
	}
	if skipped > 0 {
		b.sampled.Warn().Int("skipped", skipped).Msg("GET_TIMER_METRICS: topics left out")
	}
	b.Timer.mirror.Store(&counts)
	return nil
}
