package store

import (
	"fmt"

	"golang.org/x/sys/unix"
)

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

// CommitLogDir is the commit log's directory as configured
// (storePathCommitLog, else <root>/commitlog): Apache names the runtime key
// commitLogDiskRatio_<dir> after it.
func (s *Store) CommitLogDir() string { return s.cfg.commitLogDir() }

// CommitLogCapacity is the size and the free bytes of the file system
// holding the commit log, as Java's File.getTotalSpace / getFreeSpace read
// them: the partition the store's disk-full decision watches (Apache's
// commitLogDirCapacity reads the root's, which differs when
// storePathCommitLog is on another file system).
func (s *Store) CommitLogCapacity() (total, free int64, err error) {
	var st unix.Statfs_t
	dir := s.cfg.commitLogDir()
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return int64(st.Blocks) * st.Frsize, int64(st.Bfree) * st.Frsize, nil
}
