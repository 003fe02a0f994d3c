package tables

import (
	"strings"
	"unique"

	"github.com/rocketgo/rocketgo/store"
)

// Offsets of light message queues (%LMQ%…, queue 0; a lite topic's are
// %LMQ%$<parent>$<lite>). A broker may hold 100,000 lite topics, each
// consumed by a group or a few: a key "lmq@group" with its own queue map,
// as the other topics have, would cost some 300 bytes each. They are kept
// by LMQ instead, the first group inline, and are written into the file's
// offsetTable under their usual keys, queue 0, so the file is Apache's.
//
// Invariant: an LMQ's name passed store.SafeName (exactly Apache's lite
// form when it holds '$'); every entry has a group, and more holds the
// groups after the first.
type lmqEntry struct {
	group string
	off   int64
	more  map[string]int64
}

// isLMQQueue reports whether a topic's queue is kept in Offsets.lmq.
func isLMQQueue(topic string, queueID int32) bool {
	return queueID == 0 && strings.HasPrefix(topic, "%LMQ%")
}

// validLMQTopic is the name rule of an LMQ's offsets loaded from a file.
func validLMQTopic(topic string) bool { return store.IsLMQ(topic) && store.SafeName(topic) }

func (o *Offsets) lmqGetLocked(topic, group string) (int64, bool) {
	e, ok := o.lmq[topic]
	if !ok {
		return 0, false
	}
	if e.group == group {
		return e.off, true
	}
	off, ok := e.more[group]
	return off, ok
}

// groupName is group as the other entries made since the last garbage
// collection hold it (unique.Make keeps one copy until then, no handle
// being kept): a group of 100,000 lite topics holds its name a few times,
// not once per entry.
func groupName(group string) string { return unique.Make(group).Value() }

// lmqSetLocked stores an offset; names are cloned when first kept (the
// callers' may point into a request).
func (o *Offsets) lmqSetLocked(topic, group string, off int64) {
	e, ok := o.lmq[topic]
	switch {
	case !ok:
		o.lmq[strings.Clone(topic)] = lmqEntry{group: groupName(group), off: off}
		return
	case e.group == group:
		e.off = off
	default:
		if e.more == nil {
			e.more = make(map[string]int64, 1)
		}
		if _, known := e.more[group]; known {
			e.more[group] = off
		} else {
			e.more[groupName(group)] = off
		}
	}
	o.lmq[topic] = e
}

// lmqDeleteGroupLocked drops group's offset of one LMQ entry and returns
// what is left (ok false: nothing).
func lmqDeleteGroup(e lmqEntry, group string) (lmqEntry, bool) {
	if e.group != group {
		delete(e.more, group)
		return e, true
	}
	for g, off := range e.more { // the next group moves inline
		delete(e.more, g)
		if len(e.more) == 0 {
			e.more = nil
		}
		return lmqEntry{group: g, off: off, more: e.more}, true
	}
	return lmqEntry{}, false
}

// lmqEachLocked calls fn with every LMQ offset.
func (o *Offsets) lmqEachLocked(fn func(topic, group string, off int64)) {
	for t, e := range o.lmq {
		fn(t, e.group, e.off)
		for g, off := range e.more {
			fn(t, g, off)
		}
	}
}

// EachLMQGroup calls fn with every group's offset of lmq (queue 0). It
// holds the read lock for this one LMQ only, so that a pass over many
// (the metrics' lite lag) never keeps a commit waiting long; fn must not
// call o.
func (o *Offsets) EachLMQGroup(lmq string, fn func(group string, off int64)) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	e, ok := o.lmq[lmq]
	if !ok {
		return
	}
	fn(e.group, e.off)
	for g, off := range e.more {
		fn(g, off)
	}
}

// lmqCountLocked is the number of (LMQ, group) offsets.
func (o *Offsets) lmqCountLocked() int {
	n := 0
	for _, e := range o.lmq {
		n += 1 + len(e.more)
	}
	return n
}

// putLoadedLocked takes one key of a loaded or merged table: an LMQ's
// queue 0 into lmq, the rest into table.
func (o *Offsets) putLoadedLocked(key string, q map[int32]int64) {
	topic, group, _ := cutOffsetKey(key)
	if off, ok := q[0]; ok && isLMQQueue(topic, 0) {
		o.lmqSetLocked(topic, group, off)
		if len(q) == 1 {
			return
		}
		delete(q, 0)
	}
	o.table[key] = q
}
