package admin

import (
	"strings"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// CloneGroupOffset is CLONE_GROUP_OFFSET (mqadmin cloneGroupOffset): the
// source group's committed offsets of topic (of every topic it committed
// when topic is blank) become the destination group's. As Apache's
// AdminBrokerProcessor.cloneGroupOffset, a topic not in the table is
// skipped, and so is one an online source group does not subscribe to
// unless offline is set. rocketgo refuses a destination group name that
// breaks the group rule (the offset file keys by it).
func (s *Service) CloneGroupOffset(src, dst, topic string, offline bool) error {
	if err := message.ValidGroupName(dst); err != nil {
		return err
	}
	topics := []string{topic}
	if message.IsBlank(topic) {
		topics = s.d.Offsets.TopicsOf(src)
	}
	var subs map[string]*tables.Subscription
	if st, ok := s.d.Clients.ConsumerGroup(src); ok {
		subs = st.Subscriptions
	}
	for _, t := range topics {
		if _, ok := s.d.Topics.Get(t); !ok {
			s.log.Warn().Str("topic", t).Msg("[cloneGroupOffset] topic config not exist")
			continue
		}
		if !offline && len(subs) > 0 && subs[t] == nil {
			s.log.Warn().Str("topic", t).Str("consumerGroup", src).
				Msg("[cloneGroupOffset] topic does not exist in consumer group's subscription")
			continue
		}
		s.d.Offsets.Clone(src, dst, t)
	}
	return nil
}

// CorrectionOffsets is QUERY_CORRECTION_OFFSET: per queue of topic, the
// lowest offset any group committed (at or past the queue's min offset),
// groups in filterGroups (comma separated) left out; a queue where
// compareGroup is behind that offset gets math.MaxInt64, as Apache's
// ConsumerOffsetManager.queryMinOffsetInAllGroup. Apache also deletes the
// left-out groups' offsets while reading them (its iterator removes from
// the offset table); rocketgo only leaves them out. A queue compareGroup
// committed that no group counted is SYSTEM_ERROR, where Apache's lookup
// of it throws.
func (s *Service) CorrectionOffsets(topic, compareGroup, filterGroups string) (map[int32]int64, error) {
	skip := map[string]bool{}
	if !message.IsBlank(filterGroups) {
		for _, g := range strings.Split(filterGroups, ",") {
			skip[g] = true
		}
	}
	out := make(map[int32]int64)
	for _, g := range s.d.Offsets.Groups(topic) {
		if skip[g] {
			continue
		}
		for q, off := range s.d.Offsets.Table(g, topic) {
			if off < s.d.Store.MinOffset(topic, q) {
				continue
			}
			if cur, ok := out[q]; !ok || off < cur {
				out[q] = off
			}
		}
	}
	for q, off := range s.d.Offsets.Table(compareGroup, topic) {
		cur, ok := out[q]
		if !ok {
			return nil, remoting.Refuse(remoting.SystemError, nil, "java.lang.NullPointerException")
		}
		if cur > off {
			out[q] = 1<<63 - 1
		}
	}
	return out, nil
}
