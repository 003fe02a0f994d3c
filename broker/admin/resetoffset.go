package admin

import (
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// resetOnBroker is Apache 5.x's server-side reset
// (AdminBrokerProcessor.resetOffsetInner): with OneQueue (what mqadmin 5.x's
// resetOffsetByTime -b -q sends after committing the offset itself) queue
// QueueID becomes r.Offset (in [min, max+1]) or the offset at r.Timestamp;
// otherwise every read queue becomes the offset at r.Timestamp (the queue's
// end when negative; Force plays no part). The offsets are committed at
// once; the group's next pull of each queue is answered PULL_OFFSET_MOVED to
// it, and the group's own commits for the queue are ignored until then.
// The group need not be online. Refusals in Apache's order and words:
// SYSTEM_ERROR on a slave, TOPIC_NOT_EXIST, SUBSCRIPTION_GROUP_NOT_EXIST,
// SYSTEM_ERROR for an offset out of range or a topic without read queues.
// The answer lists the queues in Apache's HashMap order.
func (s *Service) resetOnBroker(r ResetOffsetRequest) (ResetOffsetResult, error) {
	if s.d.Config().IsSlave {
		return ResetOffsetResult{}, remoting.Refuse(remoting.SystemError, errSlave, "Can not reset offset in slave broker")
	}
	tc, ok := s.d.Topics.Get(r.Topic)
	if !ok {
		return ResetOffsetResult{}, remoting.Refuse(remoting.TopicNotExist, tables.ErrTopicNotExist, "Topic %s does not exist", r.Topic)
	}
	if !s.d.Groups.Contains(r.Group) {
		return ResetOffsetResult{}, remoting.Refuse(remoting.SubscriptionGroupNotExist, tables.ErrGroupNotExist, "Group %s does not exist", r.Group)
	}
	st, name := s.d.Store, s.d.Config().BrokerName
	at := func(q int32) int64 {
		if r.Timestamp < 0 {
			return st.MaxOffset(r.Topic, q)
		}
		return st.OffsetByTime(r.Topic, q, r.Timestamp)
	}
	var res ResetOffsetResult
	if r.OneQueue {
		// rocketgo's bound on the entries a topic@group holds, as CommitOffset's.
		if limit := s.d.Config().MaxTopicQueueNums; r.QueueID >= limit {
			return ResetOffsetResult{}, remoting.Refuse(remoting.InvalidParameter, nil, "queueId[%d] is illegal, topic:[%s] maxTopicQueueNums:[%d]",
				r.QueueID, r.Topic, limit)
		}
		off := r.Offset
		if r.HasOffset && off != -1 {
			lo, hi := st.MinOffset(r.Topic, r.QueueID), st.MaxOffset(r.Topic, r.QueueID)
			if lo >= 0 && off < lo || off > hi+1 {
				return ResetOffsetResult{}, remoting.Refuse(remoting.SystemError, nil, "Target offset %d not in consume queue range [%d-%d]", off, lo, hi)
			}
		} else {
			off = at(r.QueueID)
		}
		res.Offsets = []QueueOffset{{Queue: tables.MessageQueue{Topic: r.Topic, BrokerName: name, QueueID: r.QueueID}, Offset: off}}
	} else {
		for q := int32(0); q < tc.ReadQueueNums; q++ {
			res.Offsets = append(res.Offsets, QueueOffset{Queue: tables.MessageQueue{Topic: r.Topic, BrokerName: name, QueueID: q}, Offset: at(q)})
		}
		if len(res.Offsets) == 0 {
			return ResetOffsetResult{}, remoting.Refuse(remoting.SystemError, nil, "No queues to reset.")
		}
	}
	for _, o := range res.Offsets {
		// Apache's assignResetOffset ignores a negative offset but still
		// answers it.
		if o.Offset >= 0 {
			s.d.Offsets.AssignReset(r.Group, r.Topic, o.Queue.QueueID, o.Offset)
		}
	}
	message.HashMapOrder(res.Offsets, 16, func(o QueueOffset) int32 { return o.Queue.JavaHash() })
	s.log.Info().Str("topic", r.Topic).Str("consumerGroup", r.Group).Int64("timestamp", r.Timestamp).
		Int("queues", len(res.Offsets)).Msg("consumer offsets reset on the broker")
	return res, nil
}
