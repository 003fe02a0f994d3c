package role

// The timer's figures a slave copies: GET_TIMER_METRICS answered from the
// timer's counts, and a slave's copy of its master's (Apache's
// syncTimerMetrics), which it reports while no timer delivers here.

import (
	"fmt"
	"time"

	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// TimerTiming is the messages waiting in the timer per real topic: this
// broker's own while its timer delivers (or when it never copied a
// master's), else what its master had at the last sync, as an Apache
// slave's TimerMetrics holds its master's timingCount.
func (s *Service) TimerTiming() map[string]int64 {
	if m := s.d.TimerCounts.Mirror(); m != nil && !s.d.Timers.Running() {
		return m
	}
	counts := map[string]int64{}
	s.d.TimerCounts.RangeTopics(func(topic string, f *stats.TimerFlow) bool {
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
// answer's time (rocketgo keeps no per-topic update time; timeStamp is the
// answer's too); SYSTEM_ERROR with Apache's remark when the timer is off.
func (s *Service) TimerMetrics() ([]byte, error) {
	if !s.d.Config().TimerWheelEnable {
		return nil, remoting.Refuse(remoting.SystemError, nil, "The timer message store is null")
	}
	now := time.Now().UnixMilli()
	counts := map[string]timerMetric{}
	for topic, n := range s.TimerTiming() {
		counts[topic] = timerMetric{Count: n, TimeStamp: now}
	}
	return json.Marshal(timerMetricsBody{counts, remoting.DataVersion{Timestamp: now}})
}

// takeTimerMetrics is the slave's half (Apache's syncTimerMetrics): the
// master's counts replace the copy. What a hostile or broken master sends is
// bounded: topics that are not valid names, negative counts and topics past
// stats.MaxKeys are left out.
func (s *Service) takeTimerMetrics(body []byte) error {
	var m timerMetricsBody
	if err := json.Unmarshal(config.QuoteBareKeys(body), &m); err != nil {
		return fmt.Errorf("timer metrics: %w", err)
	}
	counts := make(map[string]int64, min(len(m.TimingCount), stats.MaxKeys))
	skipped := 0
	for topic, v := range m.TimingCount {
		if message.ValidTopicName(topic) != nil || v.Count < 0 || len(counts) >= stats.MaxKeys {
			skipped++
			continue
		}
		counts[topic] = v.Count
	}
	if skipped > 0 {
		s.sampled.Warn().Int("skipped", skipped).Msg("GET_TIMER_METRICS: topics left out")
	}
	s.d.TimerCounts.SetMirror(counts)
	return nil
}
