package broker

import (
	"github.com/rocketgo/rocketgo/remoting"
)

// resetQueueOffset is Apache 5.x's server-side reset of one queue
// (AdminBrokerProcessor.resetOffsetInner with a queue id, what mqadmin
// 5.x's resetOffsetByTime -b -q sends after committing the offset itself):
// the queue's offset becomes r.Offset (in [min, max+1]) or the offset at
// r.Timestamp (the queue's end when negative), committed at once; the
// group's next pull of the queue is answered OFFSET_MOVED to it, and the
// group's own commits for the queue are ignored until then. Refusals in
// Apache's order and words: SYSTEM_ERROR on a slave, TOPIC_NOT_EXIST,
// SUBSCRIPTION_GROUP_NOT_EXIST, SYSTEM_ERROR for an offset out of range.
func (b *Broker) resetQueueOffset(r ResetOffsetRequest) (ResetOffsetResult, error) {
	if b.Config().IsSlave() {
		return ResetOffsetResult{}, refuse(remoting.SystemError, ErrSlave, "Can not reset offset in slave broker")
	}
	if _, ok := b.Topics.Get(r.Topic); !ok {
		return ResetOffsetResult{}, refuse(remoting.TopicNotExist, ErrTopicNotExist, "Topic %s does not exist", r.Topic)
	}
	if !b.Groups.Contains(r.Group) {
		return ResetOffsetResult{}, refuse(remoting.SubscriptionGroupNotExist, ErrGroupNotExist, "Group %s does not exist", r.Group)
	}
	// rocketgo's bound on the entries a topic@group holds, as CommitOffset's.
	if limit := b.Config().MaxTopicQueueNums; r.QueueID >= limit {
		return ResetOffsetResult{}, refuse(remoting.InvalidParameter, nil, "queueId[%d] is illegal, topic:[%s] maxTopicQueueNums:[%d]",
			r.QueueID, r.Topic, limit)
	}
	st := b.Store
	off := r.Offset
	if r.HasOffset && off != -1 {
		lo, hi := st.MinOffset(r.Topic, r.QueueID), st.MaxOffset(r.Topic, r.QueueID)
		if lo >= 0 && off < lo || off > hi+1 {
			return ResetOffsetResult{}, refuse(remoting.SystemError, nil, "Target offset %d not in consume queue range [%d-%d]", off, lo, hi)
		}
	} else if r.Timestamp < 0 {
		off = st.MaxOffset(r.Topic, r.QueueID)
	} else {
		off = st.OffsetByTime(r.Topic, r.QueueID, r.Timestamp)
	}
	// Apache's assignResetOffset ignores a negative offset but still
	// answers it.
	if off >= 0 {
		b.Offsets.AssignReset(r.Group, r.Topic, r.QueueID, off)
	}
	b.log.Info().Str("topic", r.Topic).Str("consumerGroup", r.Group).Int32("queueId", r.QueueID).
		Int64("offset", off).Msg("queue offset reset")
	return ResetOffsetResult{Offsets: []QueueOffset{{
		Queue: MessageQueue{Topic: r.Topic, BrokerName: b.Config().BrokerName, QueueID: r.QueueID}, Offset: off,
	}}}, nil
}
