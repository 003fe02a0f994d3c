package broker

// Orderly consumption locks (Apache RebalanceLockManager): a queue of a
// consumer group is locked by one client id at a time; a lock lives
// lockMaxLiveTime (60 s) after its last LOCK_BATCH_MQ and is renewed by the
// next one (clients re-lock every 20 s). rocketgo also drops a client's locks
// when the connection it locked on closes, so a successor need not wait 60 s.

import (
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/message"
)

// LockMaxLive is Apache's rocketmq.broker.rebalance.lockMaxLiveTime default.
const LockMaxLive = 60 * time.Second

// MessageQueue is Apache's MessageQueue as LOCK/UNLOCK_BATCH_MQ bodies carry it.
type MessageQueue struct {
	Topic      string `json:"topic"`
	BrokerName string `json:"brokerName"`
	QueueID    int32  `json:"queueId"`
}

type lockEntry struct {
	clientID string
	connID   uint64
	last     time.Time
}

// Locks is the table of orderly queue locks.
type Locks struct {
	maxLive time.Duration

	mu    sync.Mutex
	table map[string]map[MessageQueue]*lockEntry // group → queue → owner
}

func newLocks(maxLive time.Duration) *Locks {
	return &Locks{maxLive: maxLive, table: make(map[string]map[MessageQueue]*lockEntry)}
}

// TryLock locks (or renews) each queue for clientID unless another client
// holds an unexpired lock on it, and returns the queues clientID now holds.
func (l *Locks) TryLock(group, clientID string, connID uint64, mqs []MessageQueue, now time.Time) []MessageQueue {
	l.mu.Lock()
	defer l.mu.Unlock()
	g := l.table[group]
	if g == nil {
		g = make(map[MessageQueue]*lockEntry)
		l.table[group] = g
	}
	out := make([]MessageQueue, 0, len(mqs))
	for _, mq := range mqs {
		e := g[mq]
		switch {
		case e == nil:
			g[mq] = &lockEntry{clientID: clientID, connID: connID, last: now}
		case e.clientID == clientID || now.Sub(e.last) > l.maxLive:
			e.clientID, e.connID, e.last = clientID, connID, now
		default:
			continue
		}
		out = append(out, mq)
	}
	return out
}

// Unlock releases the queues clientID holds.
func (l *Locks) Unlock(group, clientID string, mqs []MessageQueue) {
	l.mu.Lock()
	defer l.mu.Unlock()
	g := l.table[group]
	for _, mq := range mqs {
		if e := g[mq]; e != nil && e.clientID == clientID {
			delete(g, mq)
		}
	}
	if len(g) == 0 {
		delete(l.table, group)
	}
}

// ConnClosed releases every lock taken on the connection.
func (l *Locks) ConnClosed(connID uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for name, g := range l.table {
		for mq, e := range g {
			if e.connID == connID {
				delete(g, mq)
			}
		}
		if len(g) == 0 {
			delete(l.table, name)
		}
	}
}

// Held reports whether group holds any unexpired lock (Apache
// isLockAllExpired negated).
func (l *Locks) Held(group string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.table[group] {
		if now.Sub(e.last) <= l.maxLive {
			return true
		}
	}
	return false
}

// lockedGroup reports whether group holds unexpired orderly queue locks.
func (b *Broker) lockedGroup(group string) bool { return b.Locks.Held(group, time.Now()) }

// LockBatchRequest is LOCK_BATCH_MQ's and UNLOCK_BATCH_MQ's body
// (LockBatchRequestBody / UnlockBatchRequestBody) and the connection it
// came on.
type LockBatchRequest struct {
	Group    string
	ClientID string
	// ConnID is the connection whose close releases the locks (LockBatch).
	ConnID uint64
	Queues []MessageQueue
	Now    time.Time
}

// LockBatch is LOCK_BATCH_MQ: TryLock of the queues whose names and ids
// could exist, returning the queues the client holds after the call (never
// nil: the answer lists them). A group or topic that breaks the name rules,
// or a queue id outside [0, maxTopicQueueNums), is never locked (Apache
// locks whatever it is sent): the table holds no entry a client could not
// hold a real queue by. onlyThisBroker and lockInStrictMode (a lock agreed
// by the replicas) do not arise: rocketgo has no replicas yet.
func (b *Broker) LockBatch(r LockBatchRequest) []MessageQueue {
	if message.ValidGroupName(r.Group) != nil {
		return []MessageQueue{}
	}
	ok := r.Queues[:0:0]
	for _, mq := range r.Queues {
		if b.lockable(mq) {
			ok = append(ok, mq)
		}
	}
	return b.Locks.TryLock(r.Group, r.ClientID, r.ConnID, ok, r.Now)
}

// UnlockBatch is UNLOCK_BATCH_MQ: releases the queues the client holds; a
// queue another client holds stays locked (Apache's unlockBatch).
func (b *Broker) UnlockBatch(r LockBatchRequest) { b.Locks.Unlock(r.Group, r.ClientID, r.Queues) }

func (b *Broker) lockable(mq MessageQueue) bool {
	return mq.QueueID >= 0 && mq.QueueID < b.Config().MaxTopicQueueNums && message.ValidTopicName(mq.Topic) == nil
}
