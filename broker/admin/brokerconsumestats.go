package admin

import (
	"sort"

	"github.com/rocketgo/rocketgo/message"
)

// GroupConsumeStats is one group's consume stats, topic by topic.
type GroupConsumeStats struct {
	Group  string
	Topics [][]QueueConsumeStats // one per topic, its queues in order
}

// BrokerConsumeStats is GET_BROKER_CONSUME_STATS (mqadmin
// brokerConsumeStats, AdminBrokerProcessor.fetchAllConsumeStatsInBroker):
// for every subscription group, its consume stats on each topic it
// committed offsets for (as GET_CONSUME_STATS answers them), order topics
// only when orderOnly. The groups come in the order Apache's group table
// (a ConcurrentHashMap created for 1024, so 2048 buckets) iterates them.
func (s *Service) BrokerConsumeStats(orderOnly bool) []GroupConsumeStats {
	groups := make([]string, 0, 64)
	for g := range s.d.Groups.Snapshot().Groups {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	message.HashMapOrder(groups, 2048, message.JavaHash)
	out := make([]GroupConsumeStats, 0, len(groups))
	for _, g := range groups {
		gs := GroupConsumeStats{Group: g}
		topics := s.consumeStatsTopics(ConsumeStatsRequest{Group: g})
		sort.Strings(topics)
		message.HashMapOrder(topics, 16, message.JavaHash) // whichTopicByConsumer's HashSet
		for _, t := range topics {
			tc, ok := s.d.Topics.Get(t)
			if !ok || orderOnly && !tc.Order {
				continue
			}
			gs.Topics = append(gs.Topics, s.ConsumeStats(ConsumeStatsRequest{Group: g, Topic: t}))
		}
		out = append(out, gs)
	}
	return out
}
