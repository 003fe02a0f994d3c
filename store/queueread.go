package store

import "fmt"

// QueueEntry is one consume queue entry as the broker's schedulers (delay
// levels, timer) read it: where the record is and the tags slot, which for
// SCHEDULE_TOPIC_XXXX holds the delivery time.
type QueueEntry struct {
	QueueOffset int64
	PhyOffset   int64
	Size        int32
	TagsCode    int64
}

// ReadQueue returns up to max entries of topic/queueID starting at queue
// offset from (fewer at the end of a consume queue file or of the queue).
// Filler entries are skipped. An unknown queue returns nothing.
func (s *Store) ReadQueue(topic string, queueID int32, from int64, max int) []QueueEntry {
	cq := s.findCQ(topic, queueID)
	if cq == nil || max <= 0 {
		return nil
	}
	if m := cq.minLogical.Load(); from < m {
		from = m
	}
	buf := make([]byte, min(max, 256)*cqEntrySize)
	n, _ := cq.read(buf, from) // unreadable now: nothing, the scheduler asks again
	out := make([]QueueEntry, 0, n)
	for i := 0; i < n; i++ {
		e := readEntry(buf[i*cqEntrySize:])
		if e.filler() {
			continue
		}
		out = append(out, QueueEntry{QueueOffset: from + int64(i), PhyOffset: e.phy, Size: e.size, TagsCode: e.tagsCode})
	}
	return out
}

// RecordAt returns a copy of the record of a consume queue entry.
func (s *Store) RecordAt(phyOffset int64, size int32) ([]byte, error) {
	b, ok := s.cl.read(make([]byte, 0, size), phyOffset, size)
	if !ok {
		return nil, fmt.Errorf("record at %d size %d: %w", phyOffset, size, ErrNotFound)
	}
	return b, nil
}

// DelayLevels returns the delay of each level in ms (index 0 = level 1),
// as parsed from messageDelayLevel.
func (s *Store) DelayLevels() []int64 { return append([]int64(nil), s.delayLevels...) }

// HasQueue reports whether the consume queue of topic/queueID exists.
func (s *Store) HasQueue(topic string, queueID int32) bool { return s.findCQ(topic, queueID) != nil }
