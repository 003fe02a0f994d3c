package admin

import (
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/remoting"
)

// QueryConsumerOffset is QUERY_CONSUMER_OFFSET: the group's committed
// offset of the queue. A group that committed none is answered 0 while the
// queue still starts at 0, so a new group reads a young topic from its
// first message whatever its consumeFromWhere (Apache also asks that the
// first message be in memory; rocketgo takes it that it is), unless the
// request says setZeroIfNotFound=false; otherwise the refusal is
// QUERY_NOT_FOUND with Apache's remark.
func (s *Service) QueryConsumerOffset(r tables.QueueOffsetRequest) (int64, error) {
	if off, ok := s.d.Offsets.Query(r.Group, r.Topic, r.QueueID); ok && off >= 0 {
		return off, nil
	}
	switch {
	case r.SetZeroIfNotFound != nil && !*r.SetZeroIfNotFound:
		return 0, remoting.Refuse(remoting.QueryNotFound, tables.ErrOffsetNotFound, "Not found, do not set to zero, maybe this group boot first")
	case s.d.Store.MinOffset(r.Topic, r.QueueID) <= 0:
		return 0, nil
	}
	return 0, remoting.Refuse(remoting.QueryNotFound, tables.ErrOffsetNotFound, "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first")
}

// CommitOffset is UPDATE_CONSUMER_OFFSET: the group (a heartbeat or
// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP creates it) and the topic must
// exist, as in Apache 5.x, and the queue id be in [0, maxTopicQueueNums):
// rocketgo's bound on the entries one topic@group can hold (Apache stores
// whatever id it is sent).
func (s *Service) CommitOffset(r tables.QueueOffsetRequest) error {
	if !s.d.Groups.Contains(r.Group) {
		return remoting.Refuse(remoting.SubscriptionGroupNotExist, tables.ErrGroupNotExist, "Group %s not exist!", r.Group)
	}
	if _, ok := s.d.Topics.Get(r.Topic); !ok {
		return remoting.Refuse(remoting.TopicNotExist, tables.ErrTopicNotExist, "Topic %s not exist!", r.Topic)
	}
	// The group and topic exist, so their names passed the rules when they
	// were created.
	if limit := s.d.Config().MaxTopicQueueNums; r.QueueID < 0 || r.QueueID >= limit {
		return remoting.Refuse(remoting.InvalidParameter, nil, "queueId[%d] is illegal, topic:[%s] maxTopicQueueNums:[%d]",
			r.QueueID, r.Topic, limit)
	}
	if s.d.Offsets.ResetPending(r.Group, r.Topic, r.QueueID) {
		// Apache: SUCCESS, the commit ignored ("Offset has been previously reset").
		s.log.Info().Str("consumerGroup", r.Group).Str("topic", r.Topic).Int32("queueId", r.QueueID).
			Int64("offset", r.Offset).Msg("offset commit ignored: the queue's offset was reset")
		return nil
	}
	s.d.Offsets.Commit(r.Group, r.Topic, r.QueueID, r.Offset)
	return nil
}

// QueueMaxOffset is GET_MAX_OFFSET: the offset past the queue's last entry
// (0 for a queue that does not exist, as Apache's store answers).
func (s *Service) QueueMaxOffset(topic string, queueID int32) int64 {
	return s.d.Store.MaxOffset(topic, queueID)
}

// QueueMinOffset is GET_MIN_OFFSET: the queue's first readable entry (0
// for a queue that does not exist).
func (s *Service) QueueMinOffset(topic string, queueID int32) int64 {
	return s.d.Store.MinOffset(topic, queueID)
}

// SearchOffset is SEARCH_OFFSET_BY_TIMESTAMP: with the lower boundary
// (Apache's default) the first entry of the queue stored at or after ts, with
// the upper one the last stored at or before it (Apache 5.x's boundaryType).
func (s *Service) SearchOffset(topic string, queueID int32, ts int64, upper bool) int64 {
	if upper {
		return s.d.Store.OffsetByTimeUpper(topic, queueID, ts)
	}
	return s.d.Store.OffsetByTime(topic, queueID, ts)
}

// EarliestMsgStoreTime is GET_EARLIEST_MSG_STORETIME: the store time of
// the queue's first readable message, -1 when it has none (Apache answers
// SUCCESS with -1).
func (s *Service) EarliestMsgStoreTime(topic string, queueID int32) int64 {
	ts, err := s.d.Store.EarliestMessageTime(topic, queueID)
	if err != nil {
		return -1
	}
	return ts
}
