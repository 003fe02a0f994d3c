package clients

// Orderly consumption locks (Apache RebalanceLockManager): a queue of a
// consumer group is locked by one client id at a time; a lock lives
// lockMaxLiveTime (60 s) after its last LOCK_BATCH_MQ and is renewed by the
// next one (clients re-lock every 20 s). rocketgo also drops a client's locks
// when the connection it locked on closes, so a successor need not wait 60 s.

import (
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
)

// LockBatch is LOCK_BATCH_MQ: TryLock of the queues whose names and ids
// could exist, returning the queues the client holds after the call (never
// nil: the answer lists them). A group or topic that breaks the name rules,
// or a queue id outside [0, maxTopicQueueNums), is never locked (Apache
// locks whatever it is sent): the table holds no entry a client could not
// hold a real queue by. onlyThisBroker and lockInStrictMode (a lock agreed
// by the replicas) do not arise: rocketgo has no replicas yet.
func (s *Service) LockBatch(r tables.LockBatchRequest) []tables.MessageQueue {
	if message.ValidGroupName(r.Group) != nil {
		return []tables.MessageQueue{}
	}
	ok := r.Queues[:0:0]
	for _, mq := range r.Queues {
		if s.lockable(mq) {
			ok = append(ok, mq)
		}
	}
	return s.d.Locks.TryLock(r.Group, r.ClientID, r.ConnID, ok, r.Now)
}

// UnlockBatch is UNLOCK_BATCH_MQ: releases the queues the client holds; a
// queue another client holds stays locked (Apache's unlockBatch).
func (s *Service) UnlockBatch(r tables.LockBatchRequest) {
	s.d.Locks.Unlock(r.Group, r.ClientID, r.Queues)
}

func (s *Service) lockable(mq tables.MessageQueue) bool {
	return mq.QueueID >= 0 && mq.QueueID < s.d.MaxTopicQueueNums() && message.ValidTopicName(mq.Topic) == nil
}
