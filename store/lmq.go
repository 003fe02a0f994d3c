package store

// Light message queues (LMQ): Apache's multi-dispatch, which lite topics
// (RIP-83) are built on. An LMQ is a queue named %LMQ%… (a lite topic's is
// %LMQ%$<parent>$<lite>) with one queue, id 0, and no records of its own:
// a message sent to an ordinary topic is also indexed in every LMQ its
// properties name.
//
//	INNER_MULTI_DISPATCH      = name1,name2,…   set by the sender (the broker's lite send)
//	INNER_MULTI_QUEUE_OFFSET  = off1,off2,…     set by the append, one per name
//
// The append (enableLmq and enableMultiDispatch both on; Apache's CommitLog
// doAppend, LmqDispatch) gives the message, under the append lock, the next
// offset of each LMQ named and writes INNER_MULTI_QUEUE_OFFSET into the
// record before sizing it: the record's bytes never change after, so a
// slave, recovery and Apache read the offsets from the record itself. A
// name that is not an LMQ's, or cannot name a directory, gets an empty
// offset and no entry (Apache gives it an empty one too, then fails to
// parse it). A name given twice gets the same offset once.
//
// The dispatcher writes each LMQ's entry (consumequeue/<lmq>/0/, the same
// 20-byte entries as any queue) at the recorded offset, after the parent
// queue's, and wakes the LMQ's long pollers like any touched queue. The
// next offsets live in Store.queueOffsets beside the topics' ones and are
// re-derived from the LMQ queues on Open, like theirs.
//
// Batches never multi-dispatch: Apache's batch append has no LMQ step.

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"github.com/rocketgo/rocketgo/message"
)

const (
	// lmqPrefix starts every LMQ name (MixAll.LMQ_PREFIX).
	lmqPrefix = "%LMQ%"
	// lmqLitePrefix starts a lite topic's LMQ (LiteUtil.LITE_TOPIC_PREFIX).
	lmqLitePrefix = "%LMQ%$"
	// lmqOffsetRoom bounds the bytes one name adds to
	// INNER_MULTI_QUEUE_OFFSET: 19 digits and a comma.
	lmqOffsetRoom = 20
	// lmqDedupMap: past this many names a message's duplicates are found
	// with a map, not by comparing each name with the earlier ones.
	lmqDedupMap = 32
)

// isLMQ reports whether name is an LMQ's (MixAll.isLmq).
func isLMQ(name string) bool { return strings.HasPrefix(name, lmqPrefix) }

// IsLMQ reports whether topic names a light message queue (%LMQ%…).
func IsLMQ(topic string) bool { return isLMQ(topic) }

// TopicAllowsLMQ reports whether messages of topic may be multi-dispatched
// (MixAll.topicAllowsLMQ).
func TopicAllowsLMQ(topic string) bool { return topicAllowsLMQ(topic) }

// topicAllowsLMQ reports whether messages of topic may be multi-dispatched
// (MixAll.topicAllowsLMQ): not retry, DLQ, rmq_sys_ or schedule topics. The
// dispatcher applies it too: a DLQ copy of a lite message carries the
// original's INNER_MULTI_QUEUE_OFFSET, which must not be indexed again.
func topicAllowsLMQ[S ~string | ~[]byte](topic S) bool {
	t := string(topic) // no copy: compared, not kept
	return !strings.HasPrefix(t, "%RETRY%") && !strings.HasPrefix(t, "%DLQ%") &&
		!strings.HasPrefix(t, "rmq_sys_") && t != ScheduleTopic
}

// multiDispatch reports whether appends assign LMQ offsets and the
// dispatcher writes LMQ entries: both flags, as a lite topic needs.
// Apache assigns offsets with enableLmq alone, entries that nothing then
// writes (the LMQ's offsets would run ahead of its queue).
func (s *Store) multiDispatch() bool { return s.cfg.EnableLmq && s.cfg.EnableMultiDispatch }

// lmqRoom is the most bytes the append adds to m's properties
// (INNER_MULTI_QUEUE_OFFSET), checked against the properties limit before
// the append lock.
func (s *Store) lmqRoom(m *PutMessage) int {
	if !s.multiDispatch() || !hasQueueOffset(m.SysFlag) ||
		!strings.Contains(m.Properties, message.PropInnerMultiDispatch) {
		return 0
	}
	v := message.Property(m.Properties, message.PropInnerMultiDispatch)
	if v == "" || !topicAllowsLMQ(m.Topic) {
		return 0
	}
	return len(message.PropInnerMultiQueueOffset) + 2 + lmqOffsetRoom*(strings.Count(v, ",")+1)
}

// lmqAssignLocked returns props with INNER_MULTI_QUEUE_OFFSET set to the
// offsets the message takes in the LMQs its INNER_MULTI_DISPATCH names, and
// leaves those queues in s.lmqKeys for lmqBumpLocked. Called only when
// lmqRoom was not 0.
func (s *Store) lmqAssignLocked(props string) string {
	names := message.Property(props, message.PropInnerMultiDispatch)
	out := make([]byte, 0, len(props)+len(message.PropInnerMultiQueueOffset)+2+lmqOffsetRoom*(strings.Count(names, ",")+1))
	if strings.Contains(props, message.PropInnerMultiQueueOffset) { // a client's own: replaced
		props = message.DeleteProperties(props, message.PropInnerMultiQueueOffset)
	}
	out = append(out, props...)
	if len(out) > 0 && out[len(out)-1] != message.PropertySeparator {
		out = append(out, message.PropertySeparator)
	}
	out = append(out, message.PropInnerMultiQueueOffset...)
	out = append(out, message.NameValueSeparator)
	keys := s.lmqKeys[:0]
	var seen map[string]int64 // past lmqDedupMap names
	for i := 0; ; i++ {
		name, rest, more := strings.Cut(names, ",")
		names = rest
		if i > 0 {
			out = append(out, ',')
		}
		if isLMQ(name) && SafeName(name) {
			off, dup := int64(0), false
			if seen != nil {
				off, dup = seen[name]
			} else {
				for _, k := range keys {
					if k.topic == name {
						off, dup = s.queueOffsets[k], true
						break
					}
				}
			}
			if !dup {
				key := queueKey{name, 0}
				var known bool
				if off, known = s.queueOffsets[key]; !known {
					key.topic, off = s.lmqFirstSightLocked(name)
					s.queueOffsets[key] = off
				}
				keys = append(keys, key)
				if seen == nil && len(keys) > lmqDedupMap {
					seen = make(map[string]int64, 2*lmqDedupMap)
					for _, k := range keys {
						seen[k.topic] = s.queueOffsets[k]
					}
				} else if seen != nil {
					seen[key.topic] = off
				}
			}
			out = strconv.AppendInt(out, off, 10)
		}
		if !more {
			break
		}
	}
	out = append(out, message.PropertySeparator)
	s.lmqKeys = keys
	return string(out)
}

// lmqFirstSightLocked returns the name to keep in the offset table and the
// LMQ's next offset: its queue's max offset. The queue is made here if it
// does not exist, as Apache's offset callback does (it counts in LmqNum
// from the first message naming it), and its name is the one kept: the
// caller's may point into a connection's buffer.
func (s *Store) lmqFirstSightLocked(name string) (string, int64) {
	if cq := s.findOrCreateCQ([]byte(name), 0); cq != nil {
		return cq.topic, cq.maxLogical.Load()
	}
	return strings.Clone(name), 0 // not a directory name: never happens, SafeName was checked
}

// lmqBumpLocked advances the offsets lmqAssignLocked handed out, after the
// append succeeded.
func (s *Store) lmqBumpLocked() {
	for _, k := range s.lmqKeys {
		s.queueOffsets[k]++
	}
	clear(s.lmqKeys) // the names may be long: don't pin them
	s.lmqKeys = s.lmqKeys[:0]
}

var (
	propMultiOffsetKey = []byte(message.PropInnerMultiQueueOffset)
	lmqPrefixBytes     = []byte(lmqPrefix)
)

// eachLMQEntry calls fn with each LMQ a record names and the offset the
// append gave it, until fn returns false. Pairs without a valid offset or
// name are skipped; ordinary records cost one substring search.
func eachLMQEntry(v *message.RecordView, fn func(name []byte, off int64) bool) {
	if !bytes.Contains(v.Properties, propMultiOffsetKey) || !topicAllowsLMQ(v.Topic) {
		return
	}
	names := message.PropertyBytes(v.Properties, message.PropInnerMultiDispatch)
	offs := message.PropertyBytes(v.Properties, message.PropInnerMultiQueueOffset)
	for len(names) > 0 && len(offs) > 0 {
		name, off := names, offs
		if i := bytes.IndexByte(names, ','); i >= 0 {
			name, names = names[:i], names[i+1:]
		} else {
			names = nil
		}
		if i := bytes.IndexByte(offs, ','); i >= 0 {
			off, offs = offs[:i], offs[i+1:]
		} else {
			offs = nil
		}
		qoff, ok := parseOffset(off)
		if !ok || !bytes.HasPrefix(name, lmqPrefixBytes) || !safeName(name) {
			continue // a name the append gave no offset, or not its own
		}
		if !fn(name, qoff) {
			return
		}
	}
}

// dispatchLMQ writes the LMQ entries of a record the parent queue's entry
// was just written for.
func (s *Store) dispatchLMQ(v *message.RecordView, e cqEntry) error {
	var err error
	eachLMQEntry(v, func(name []byte, off int64) bool {
		cq := s.findOrCreateCQ(name, 0)
		if cq == nil {
			return true
		}
		var wrote bool
		if wrote, err = cq.put(e, off, v.StoreTimestamp); err != nil {
			return false
		}
		if !wrote {
			return true
		}
		s.entries++
		if cq.touched.Load() != s.round {
			cq.touched.Store(s.round)
			s.touched = append(s.touched, cq)
		}
		return true
	})
	return err
}

// scanLMQOffsets raises the offset table past the LMQ offsets a record not
// yet dispatched carries (scanQueueOffsets).
func (s *Store) scanLMQOffsets(v *message.RecordView) {
	eachLMQEntry(v, func(name []byte, off int64) bool {
		key := queueKey{string(name), 0}
		if cur, ok := s.queueOffsets[key]; !ok || cur < off+1 {
			s.queueOffsets[key] = off + 1
		}
		return true
	})
}

// parseOffset parses a non-negative decimal queue offset without
// allocating.
func parseOffset(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// LmqNum is the number of LMQs with a consume queue (Apache's
// ConsumeQueueStore.getLmqNum): made by the dispatcher at an LMQ's first
// entry or found by Open, less those deleted.
func (s *Store) LmqNum() int64 { return s.lmqNum.Load() }

// LmqExists reports whether the LMQ has a consume queue
// (ConsumeQueueStore.isLmqExist).
func (s *Store) LmqExists(name string) bool { return isLMQ(name) && s.findCQ(name, 0) != nil }

// ForEachLMQ calls fn with each LMQ's name and max offset, in no order,
// until fn returns false. It copies the list of queues first (into a
// recycled slice, nothing per LMQ) and calls fn without a store lock held,
// so fn may call the store (MaxOffset, DeleteTopic, …); an LMQ made
// meanwhile may be missed, one deleted meanwhile may still be seen.
func (s *Store) ForEachLMQ(fn func(name string, maxOffset int64) bool) {
	var qs []*consumeQueue
	if s.lmqListMu.TryLock() {
		qs = s.lmqList[:0]
		defer func() {
			clear(qs) // keeps no deleted queue alive
			s.lmqList = qs[:0]
			s.lmqListMu.Unlock()
		}()
	}
	s.cqMu.RLock()
	qs = slices.Grow(qs, len(s.lmqs))
	for _, cq := range s.lmqs {
		qs = append(qs, cq)
	}
	s.cqMu.RUnlock()
	for _, cq := range qs {
		if !fn(cq.topic, cq.maxLogical.Load()) {
			return
		}
	}
}
