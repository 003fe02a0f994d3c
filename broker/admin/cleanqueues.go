package admin

import (
	"strings"
	"sync/atomic"
)

// lmqPrefix marks Apache's light message queues (MixAll.LMQ_PREFIX), whose
// queues have no topic config and are never cleaned as unused.
const lmqPrefix = "%LMQ%"

// cleanups runs the manual queue cleanups (306, 316) one at a time on one
// goroutine, so that a flood of requests starts one, not one each. A
// request that comes while a pass runs asks for another pass of both
// after it, so that no request is lost (the pass it found may have looked
// at the store before what the request is about).
type cleanups struct {
	running       atomic.Bool
	again         atomic.Bool
	expired, used atomic.Bool // what the next pass does
}

// request asks for a pass (expired queues, unused topics, or both); start
// runs fn on the broker's goroutine group when none runs.
func (c *cleanups) request(expired, unused bool, start func(fn func()) bool, pass func(expired, unused bool)) {
	if expired {
		c.expired.Store(true)
	}
	if unused {
		c.used.Store(true)
	}
	c.again.Store(true)
	if !c.running.CompareAndSwap(false, true) {
		return // the running pass sees again and goes once more
	}
	if !start(func() {
		for {
			c.again.Store(false)
			pass(c.expired.Swap(false), c.used.Swap(false))
			c.running.Store(false)
			if !c.again.Load() || !c.running.CompareAndSwap(false, true) {
				return
			}
		}
	}) {
		c.running.Store(false)
	}
}

// CleanExpiredConsumeQueues is CLEAN_EXPIRED_CONSUMEQUEUE: the consume
// queue files whose entries all point below the commit log's min offset
// are deleted now, off the caller's goroutine. Apache answers SUCCESS at
// once too (it cleans before answering).
func (s *Service) CleanExpiredConsumeQueues() {
	s.cleanups.request(true, false, s.d.Go, s.cleanPass)
}

// CleanUnusedTopics is CLEAN_UNUSED_TOPIC (DefaultMessageStore.cleanUnusedTopic):
// the consume queues of every topic the store holds that is not in the
// topic table, neither a system topic nor a light message queue, are
// deleted, off the caller's goroutine. It returns the topics.
func (s *Service) CleanUnusedTopics() []string {
	unused := s.unusedTopics()
	if len(unused) > 0 {
		s.log.Warn().Int("topics", len(unused)).Strs("first", unused[:min(len(unused), 10)]).
			Msg("unused topics' consume queues to be deleted")
		s.cleanups.request(false, true, s.d.Go, s.cleanPass)
	}
	return unused
}

func (s *Service) unusedTopics() []string {
	var unused []string
	for t := range s.d.Store.Topics() {
		if _, ok := s.d.Topics.Get(t); ok || s.d.Topics.IsSystem(t) || strings.HasPrefix(t, lmqPrefix) {
			continue
		}
		unused = append(unused, t)
	}
	return unused
}

// cleanPass is one pass of the manual cleanups; the unused topics are
// looked up again, as the table may have changed since the request.
func (s *Service) cleanPass(expired, unused bool) {
	if expired {
		if err := s.d.Store.CleanExpiredQueues(); err != nil {
			s.log.Error().Err(err).Msg("clean expired consume queues")
		} else {
			s.log.Info().Msg("expired consume queue files cleaned (manual)")
		}
	}
	if unused {
		for _, t := range s.unusedTopics() {
			if err := s.d.Store.DeleteTopic(t); err != nil {
				s.log.Error().Err(err).Str("topic", t).Msg("delete unused topic's files")
			}
		}
	}
}
