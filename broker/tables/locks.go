package tables

// Orderly consumption locks (Apache RebalanceLockManager): a queue of a
// consumer group is locked by one client id at a time; a lock lives
// lockMaxLiveTime (60 s) after its last LOCK_BATCH_MQ and is renewed by the
// next one (clients re-lock every 20 s). rocketgo also drops a client's locks
// when the connection it locked on closes, so a successor need not wait 60 s.

import (
	"strconv"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
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

func NewLocks(maxLive time.Duration) *Locks {
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

// AppendJSON appends the queue the way fastjson writes a MessageQueue, also
// as a map key: {"brokerName":"b","queueId":0,"topic":"t"}. The Java
// clients and the Go client's reset-offset parser read this form.
func (mq MessageQueue) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"brokerName":`...)
	dst = remoting.AppendJSONString(dst, mq.BrokerName)
	dst = append(dst, `,"queueId":`...)
	dst = strconv.AppendInt(dst, int64(mq.QueueID), 10)
	dst = append(dst, `,"topic":`...)
	dst = remoting.AppendJSONString(dst, mq.Topic)
	return append(dst, '}')
}

// JavaHash is MessageQueue.hashCode: 31-based over brokerName, queueId, topic.
func (mq MessageQueue) JavaHash() int32 {
	h := int32(1)
	h = 31*h + message.JavaHash(mq.BrokerName)
	h = 31*h + mq.QueueID
	return 31*h + message.JavaHash(mq.Topic)
}
