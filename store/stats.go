package store

// StoreTimeAt returns the store timestamp of the message at a queue offset;
// false if the queue, the entry or its record is gone.
func (s *Store) StoreTimeAt(topic string, queueID int32, offset int64) (int64, bool) {
	cq := s.findCQ(topic, queueID)
	if cq == nil || offset < cq.minLogical.Load() || offset >= cq.maxLogical.Load() {
		return 0, false
	}
	e, ok := cq.entry(offset)
	if !ok {
		return 0, false
	}
	return s.storeTimeAt(e)
}

// CommitLogDiskRatio is the used fraction (0..1) of the file system holding
// the commit log, as Apache's commitLogDiskRatio; -1 if it cannot be read.
func (s *Store) CommitLogDiskRatio() float64 {
	cl, _, _ := s.DiskUsedRatios()
	return cl
}

// EarliestStoreTime is the store time of the commit log's first message
// (Apache's getEarliestMessageTime); false when the log holds none.
func (s *Store) EarliestStoreTime() (int64, bool) {
	minOff := s.cl.minOffset()
	if s.MaxPhyOffset() <= minOff {
		return 0, false
	}
	return s.cl.recordStoreTimestamp(minOff)
}
