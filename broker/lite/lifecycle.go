package lite

// The lite topics' TTL (Apache 5.5 AbstractLiteLifecycleManager): once the
// broker has run minLiteTTl, every liteTtlCheckInterval each lite topic's
// LMQ whose last message is older than its parent's lite.topic.expiration
// (minutes; ≤ 0: never) is deleted with its offsets, order info and
// subscriptions. Unconsumed messages do not keep a lite topic. An LMQ
// seen empty more than emptyScans scans in a row goes too.

import "github.com/rocketgo/rocketgo/message"

const emptyScans = 5

// cleanExpired runs one TTL pass over the store's LMQs.
func (s *Service) cleanExpired(now int64, quit <-chan struct{}) {
	minTTL := s.d.Config().MinLiteTTl
	var expired []string
	seen := map[string]struct{}{}
	s.d.Store.ForEachLMQ(func(name string, maxOffset int64) bool {
		select {
		case <-quit:
			return false
		default:
		}
		parent, _, ok := message.ParseLiteQueue(name)
		if !ok {
			return true
		}
		if maxOffset <= 0 {
			s.mu.Lock()
			s.empty[name]++
			n := s.empty[name]
			s.mu.Unlock()
			seen[name] = struct{}{}
			if n > emptyScans {
				expired = append(expired, name)
			}
			return true
		}
		t, ok := s.d.Store.StoreTimeAt(name, 0, maxOffset-1)
		if !ok {
			return true
		}
		inactive := now - t
		if inactive < minTTL {
			return true
		}
		tc, ok := s.d.Topics.Get(parent)
		if !ok {
			return true
		}
		ttl := tc.LiteExpiration()
		if ttl <= 0 {
			return true
		}
		if inactive > ttl*60_000 {
			expired = append(expired, name)
		}
		return true
	})
	s.mu.Lock()
	for q := range s.empty {
		if _, ok := seen[q]; !ok {
			delete(s.empty, q) // filled since, or gone
		}
	}
	s.mu.Unlock()
	for _, q := range expired {
		s.DeleteLMQ(q)
	}
	if len(expired) > 0 {
		s.log.Info().Int("count", len(expired)).Msg("expired lite topics deleted")
	}
}

// DeleteLMQ deletes a lite topic: its offsets of every group, the groups'
// batches in flight, its subscriptions (unnotified) and its queue.
func (s *Service) DeleteLMQ(lmq string) {
	s.d.Offsets.DeleteTopic(lmq)
	if s.d.Orders != nil {
		s.d.Orders.ForgetLite("", lmq)
	}
	s.CleanLMQ(lmq)
	if err := s.d.Store.DeleteTopic(lmq); err != nil {
		s.log.Warn().Err(err).Str("topic", lmq).Msg("lite topic queue not deleted")
	}
}

// CleanByParent deletes every lite topic of parent (the parent topic was
// deleted), without the TTL check.
func (s *Service) CleanByParent(parent string) {
	var qs []string
	s.d.Store.ForEachLMQ(func(name string, _ int64) bool {
		if message.LiteQueueOf(name, parent) {
			qs = append(qs, name)
		}
		return true
	})
	for _, q := range qs {
		s.DeleteLMQ(q)
	}
}
