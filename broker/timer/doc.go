// Package timer delivers staged messages when they are due: the delay
// levels of SCHEDULE_TOPIC_XXXX (Delays) and the timer messages of
// rmq_sys_wheel_timer (Timers), with their progress files and the copies a
// slave takes of its master's progress.
//
// Owns: the delivery loops, delayOffset.json and timerProgress.json, the
// retry of transient failures and the setting aside of permanent ones
// (deliver.go). Never: decides which messages are staged (the broker's send
// path does), stores anything except through the Reput it is handed, or
// reads the broker's tables.
//
// Invariants: a staged message keeps REAL_TOPIC / REAL_QID; delivery stores
// a new record in that queue and only then advances the level offset or
// drops the heap entry, so a crash repeats, never loses, a delivery. Entries
// of one delay-level queue are due in queue order: the delay loop reads
// only each queue's head.
package timer

import "github.com/rocketgo/rocketgo/store"

// Store is what delivery reads of the store: the staging queues and the
// records their entries point at.
type Store interface {
	MinOffset(topic string, queueID int32) int64
	MaxOffset(topic string, queueID int32) int64
	ReadQueue(topic string, queueID int32, from int64, max int) []store.QueueEntry
	RecordAt(phyOffset int64, size int32) ([]byte, error)
	DispatchedPhyOffset() int64
}

// Reput stores a copy of a staged record in its REAL_TOPIC and REAL_QID
// with the properties add (key, value, ...) set, under the broker's rules
// for that topic; it returns the topic and the bytes stored. Its error
// decides retry or set-aside (transientDelivery).
type Reput func(rec []byte, add ...string) (topic string, wrote int32, err error)
