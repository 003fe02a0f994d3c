package pop

// NOTIFICATION and POLLING_INFO (Apache 5.x NotificationProcessor,
// PollingInfoProcessor): "is there a message for the group" without
// popping it, parked like a pop; and how many pops wait on a queue.

import (
	"math/rand/v2"
	"time"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// NotificationRequest is NOTIFICATION's request.
type NotificationRequest struct {
	Group    string
	Topic    string
	QueueID  int32 // -1: any readable queue
	PollTime int64
	BornTime int64
	Order    bool
	Remote   string
	// Gone reports that the requester went away: a parked notification
	// is then dropped, freeing its place (nil: never).
	Gone func() bool
}

// NotificationResult is NOTIFICATION's response header.
type NotificationResult struct {
	HasMsg      bool
	PollingFull bool
}

// checkPeek is the check NOTIFICATION and POLLING_INFO start with (Apache's order, codes and remarks).
func (p *Service) checkPeek(group, topic string, queueID int32, remote string) (*tables.TopicConfig, error) {
	cfg := p.d.Config()
	if cfg.Permission&message.PermRead == 0 {
		return nil, remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission, "the broker[%s] peeking message is forbidden", cfg.BrokerIP1)
	}
	tc, ok := p.d.Topics.Get(topic)
	if !ok {
		return nil, remoting.Refuse(remoting.TopicNotExist, tables.ErrTopicNotExist, "topic[%s] not exist, apply first please! %s", topic, remoting.FAQSuggestTodo)
	}
	if !tc.Readable() {
		return nil, remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission, "the topic[%s] peeking message is forbidden", topic)
	}
	if queueID >= tc.ReadQueueNums {
		return nil, remoting.Refuse(remoting.InvalidParameter, nil, "queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d] consumer:[%s]",
			queueID, topic, tc.ReadQueueNums, remote)
	}
	gc, ok := p.d.Groups.Get(group)
	if !ok {
		return nil, remoting.Refuse(remoting.SubscriptionGroupNotExist, tables.ErrGroupNotExist, "subscription group [%s] does not exist, %s",
			group, remoting.FAQGroupNotExist)
	}
	if !gc.ConsumeEnable {
		return nil, remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission, "subscription group no permission, %s", group)
	}
	return tc, nil
}

// PollingInfo is POLLING_INFO: the pops of group parked on topic/queueID.
func (p *Service) PollingInfo(group, topic string, queueID int32, remote string) (int32, error) {
	if _, err := p.checkPeek(group, topic, queueID, remote); err != nil {
		return 0, err
	}
	return p.pollingNum(topic, group, queueID), nil
}

// Notification answers now (done not called) or parks and answers through
// done; later reports which.
func (p *Service) Notification(r *NotificationRequest, done func(NotificationResult)) (res NotificationResult, later bool, err error) {
	if r.BornTime == 0 {
		r.BornTime = time.Now().UnixMilli()
	}
	tc, err := p.checkPeek(r.Group, r.Topic, r.QueueID, r.Remote)
	if err != nil {
		return res, false, err
	}
	rq := *r
	readQueues := tc.ReadQueueNums
	if p.hasMsg(&rq, readQueues) {
		return NotificationResult{HasMsg: true}, false, nil
	}
	var rerun func(mayPark bool)
	rerun = func(mayPark bool) {
		if p.hasMsg(&rq, readQueues) {
			done(NotificationResult{HasMsg: true})
			return
		}
		if mayPark && p.park(rq.Topic, rq.Group, rq.QueueID, rq.BornTime, rq.PollTime, rq.Gone, rerun) == parked {
			return
		}
		done(NotificationResult{})
	}
	switch p.park(rq.Topic, rq.Group, rq.QueueID, rq.BornTime, rq.PollTime, rq.Gone, rerun) {
	case parked:
		return res, true, nil
	case parkFull:
		return NotificationResult{PollingFull: true}, false, nil
	}
	return res, false, nil
}

// hasMsg: a queue of the topic, or of its pop retry topic, holds a message
// past the group's pop offset (no offset is committed here).
func (p *Service) hasMsg(r *NotificationRequest, readQueues int32) bool {
	st := p.d.Store
	has := func(topic string, q int32, retry bool) bool {
		off, ok := p.d.Offsets.Query(r.Group, topic, q)
		if !ok || off < 0 {
			off = st.MinOffset(topic, q)
			if !retry {
				off = max(0, st.MaxOffset(topic, q)-1)
			}
		}
		return st.MaxOffset(topic, q) > off
	}
	if !r.Order {
		retry := message.PopRetryTopic(r.Topic, r.Group)
		if tc, ok := p.d.Topics.Get(retry); ok {
			for q := int32(0); q < tc.ReadQueueNums; q++ {
				if has(retry, q, true) {
					return true
				}
			}
		}
	}
	if r.QueueID >= 0 {
		return has(r.Topic, r.QueueID, false)
	}
	start := rand.Int32N(max(readQueues, 1))
	for i := int32(0); i < readQueues; i++ {
		if has(r.Topic, (start+i)%readQueues, false) {
			return true
		}
	}
	return false
}
