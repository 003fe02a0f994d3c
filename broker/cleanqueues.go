package broker

import "strings"

// lmqPrefix marks Apache's light message queues (MixAll.LMQ_PREFIX), whose
// queues have no topic config and are never cleaned as unused.
const lmqPrefix = "%LMQ%"

// CleanExpiredConsumeQueues is CLEAN_EXPIRED_CONSUMEQUEUE: the consume
// queue files whose entries all point below the commit log's min offset
// are deleted now, off the caller's goroutine. Apache answers SUCCESS at
// once too (it cleans before answering).
func (b *Broker) CleanExpiredConsumeQueues() {
	if !b.cleaning.CompareAndSwap(false, true) {
		return // one is running: it cleans what this request asked for
	}
	b.Go(func() {
		defer b.cleaning.Store(false)
		if err := b.Store.CleanExpiredQueues(); err != nil {
			b.log.Error().Err(err).Msg("clean expired consume queues")
			return
		}
		b.log.Info().Msg("expired consume queue files cleaned (manual)")
	})
}

// CleanUnusedTopics is CLEAN_UNUSED_TOPIC (DefaultMessageStore.cleanUnusedTopic):
// the consume queues of every topic the store holds that is not in the
// topic table, neither a system topic nor a light message queue, are
// deleted, off the caller's goroutine. It returns the topics.
func (b *Broker) CleanUnusedTopics() []string {
	var unused []string
	for t := range b.Store.Topics() {
		if _, ok := b.Topics.Get(t); ok || b.Topics.IsSystem(t) || strings.HasPrefix(t, lmqPrefix) {
			continue
		}
		unused = append(unused, t)
	}
	if len(unused) == 0 {
		return nil
	}
	if !b.cleaning.CompareAndSwap(false, true) {
		return unused // one is running: the next request finds what is left
	}
	b.log.Warn().Int("topics", len(unused)).Strs("first", unused[:min(len(unused), 10)]).
		Msg("unused topics' consume queues to be deleted")
	b.Go(func() {
		defer b.cleaning.Store(false)
		for _, t := range unused {
			if err := b.Store.DeleteTopic(t); err != nil {
				b.log.Error().Err(err).Str("topic", t).Msg("delete unused topic's files")
			}
		}
	})
	return unused
}
