package tables

import (
	"github.com/rocketgo/rocketgo/remoting"
)

// Read-only views over the broker's tables for the metrics endpoint: each
// holds its table's read lock for one pass and calls back without
// allocating per entry. Callbacks must not block or call into the table.

// ClientKind is one connection's client language and version.
type ClientKind struct {
	Language remoting.LanguageCode
	Version  int32
}

// EachProducer calls fn once per producer connection of every group.
func (cs *Clients) EachProducer(fn func(group string, k ClientKind)) {
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	for group, chans := range cs.producers {
		for _, ch := range chans {
			fn(group, ClientKind{ch.language, ch.version})
		}
	}
}

// EachConsumer calls fn once per consumer connection of every group, with
// the group's consume type (CONSUME_ACTIVELY for pull, CONSUME_PASSIVELY for
// push).
func (cs *Clients) EachConsumer(fn func(group, consumeType string, k ClientKind)) {
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	for group, g := range cs.consumers {
		for _, ch := range g.channels {
			fn(group, g.info.ConsumeType, ClientKind{ch.language, ch.version})
		}
	}
}

// Len is the number of topics in the table, system topics included.
func (t *Topics) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.table)
}

// Len is the number of subscription groups in the table.
func (g *Groups) Len() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.table)
}

// EachSubscribedTopic calls fn once per topic each online consumer group
// subscribes, with the group's consume type (CONSUME_POP for pop groups).
func (cs *Clients) EachSubscribedTopic(fn func(group, consumeType, topic string)) {
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	for group, g := range cs.consumers {
		for topic := range g.subs {
			fn(group, g.info.ConsumeType, topic)
		}
	}
}
