package stats

import (
	"strings"
	"sync/atomic"
)

// PopStats counts what the pop revive service does, for the metrics
// endpoint: the messages it copied into a retry topic per group, popped
// topic and put status (Apache's rocketmq_pop_revive_retry_messages_total).
// Counted on the revive goroutine, off the request paths; keys bounded by
// MaxKeys.
type PopStats struct {
	retries statMap[PopRetryKey, atomic.Int64]
}

// PopRetryKey keys a revived message: group, the topic popped, and Apache's
// PutMessageStatus name of its copy (PUT_OK, or the failure's).
type PopRetryKey struct{ Group, Topic, Status string }

func (s *PopStats) Retried(group, topic, status string) {
	k := PopRetryKey{group, topic, status}
	if n := s.retries.get(k, func(k PopRetryKey) PopRetryKey {
		return PopRetryKey{strings.Clone(k.Group), strings.Clone(k.Topic), k.Status}
	}); n != nil {
		n.Add(1)
	}
}

// RangeRetries calls fn for each key's count until fn returns false.
func (s *PopStats) RangeRetries(fn func(k PopRetryKey, n int64) bool) {
	s.retries.each(func(k PopRetryKey, n *atomic.Int64) bool { return fn(k, n.Load()) })
}
