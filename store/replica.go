package store

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rocketgo/rocketgo/message"
)

// Replication support (Apache's getCommitLogData and appendToCommitLog,
// spec/ha.md §1): a master hands out commit log bytes as they lie on disk,
// a slave appends them at the same offsets. The bytes are a raw range, not
// records: a frame may end inside a record, and a file's BLANK record and
// the unused bytes after it travel too, so both logs have the same files
// with the same bytes.
//
// Master side: ReadReplica returns a read-only view into the mapped file
// holding an offset, from there to the end of that file's written part
// (never into the next file), capped; the file is held until the view's
// Release. NotifyAppended has the HA writer's own channel signalled once
// the commit log grows past an offset; a Put pays one atomic load for it
// while nobody sleeps, and nothing is allocated per wake.
//
// Slave side (Config.Replica): AppendReplica writes bytes at the commit
// log end (or, into an empty store, at a file boundary: the first file of
// a slave that starts at its master's last file is not 00000000000000000000).
// MaxPhyOffset is then the end of the bytes received, possibly inside a
// record; the dispatcher builds consume queue and index entries only from
// complete records and waits at a split one for the rest; recovery after a
// crash truncates the partial tail (and is strict about the last record:
// bytes never received read as zeros, see strictTail).

// CommitLogSpan is a read-only view of commit log bytes for a replica.
// Bytes stays valid until Release, which must be called exactly once
// (a zero span needs none).
type CommitLogSpan struct {
	Offset int64  // commit log offset of Bytes[0]
	Bytes  []byte // read-only
	mf     *mappedFile
	s      *Store
}

// Release drops the view's hold on its file.
func (sp *CommitLogSpan) Release() {
	if sp.mf == nil {
		return
	}
	if err := sp.mf.release(); err != nil {
		sp.s.log.Error().Err(err).Msg("release replica span")
	}
	sp.mf, sp.Bytes = nil, nil
}

// ReadReplica returns up to limit bytes of the commit log from offset to
// the end of the readable part of the file holding it: its write position,
// or the whole file (BLANK record and unused tail included) once the log
// has moved on to the next. ok is false when there is nothing to send at
// offset: it is the end of the log, or outside it (below the first file,
// beyond the end). Allocation-free.
func (s *Store) ReadReplica(offset int64, limit int) (sp CommitLogSpan, ok bool) {
	if offset < 0 || limit <= 0 || offset >= s.cl.maxOffset.Load() {
		return sp, false
	}
	cl := &s.cl
	cl.q.mu.RLock()
	mf := cl.q.findLocked(offset)
	if mf == nil || mf.data == nil {
		cl.q.mu.RUnlock()
		return sp, false
	}
	pos, end := offset-mf.start, mf.wrote.Load()
	if pos >= end {
		cl.q.mu.RUnlock()
		return sp, false
	}
	mf.hold()
	cl.q.mu.RUnlock()
	end = min(end, pos+int64(limit))
	return CommitLogSpan{Offset: offset, Bytes: mf.data[pos:end:end], mf: mf, s: s}, true
}

// NotifyAppended arranges for a value to be sent on ch (the caller's,
// with a buffer of one: the send never blocks) at the next append, and
// reports false; or, when the commit log already ends beyond offset,
// arranges nothing and reports true. A registration lasts until the next
// append; registering the same channel again before it is one
// registration. A wake may be stale (an append the caller has read
// already): the caller looks again.
func (s *Store) NotifyAppended(offset int64, ch chan struct{}) bool {
	if s.cl.maxOffset.Load() > offset {
		return true
	}
	s.appended.register(ch)
	// An append that published before the registration may not have seen
	// it: look again after registering.
	return s.cl.maxOffset.Load() > offset
}

// appendNotifier wakes the goroutines sleeping until an append. An append
// costs one atomic load while nobody sleeps.
type appendNotifier struct {
	waiting atomic.Bool
	mu      sync.Mutex
	chans   []chan struct{} // guarded by mu: one per sleeper (HA writers)
}

func (n *appendNotifier) register(ch chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !slices.Contains(n.chans, ch) {
		n.chans = append(n.chans, ch)
	}
	n.waiting.Store(true)
}

func (n *appendNotifier) notify() {
	if !n.waiting.Load() {
		return
	}
	n.mu.Lock()
	for _, ch := range n.chans {
		select {
		case ch <- struct{}{}:
		default: // a wake is pending already
		}
	}
	clear(n.chans)
	n.chans = n.chans[:0]
	n.waiting.Store(false)
	n.mu.Unlock()
}

// BecomeReplica makes an open store a replica (the broker sets
// Config.Replica before Open for a slave; ha calls this as the last guard).
// One way: a replica's commit log may end inside a record, and only
// recovery (a restart without Config.Replica) truncates that tail before
// anything may be appended after it.
func (s *Store) BecomeReplica() {
	s.mu.Lock()
	s.replica = true
	s.mu.Unlock()
	s.replicaDispatch.Store(true)
}

// AppendReplica appends b, bytes of the master's commit log starting at
// its offset, to the commit log: offset must be the end of the local
// commit log, or, for an empty store, a file boundary (the first file is
// made there). b must not cross a file end (a master never sends such a
// range). It wakes the dispatcher and, with SYNC_FLUSH, the flusher.
func (s *Store) AppendReplica(offset int64, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	s.assistPrefault(int64(len(b)))
	s.mu.Lock()
	err := s.appendReplicaLocked(offset, b)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	s.signal(s.dispatchCh)
	if s.cfg.FlushDiskType == SyncFlush {
		s.signal(s.flushCh) // a SYNC_FLUSH slave keeps its disk close behind
	}
	s.appended.notify()
	return nil
}

func (s *Store) appendReplicaLocked(offset int64, b []byte) error {
	if s.stopped {
		return ErrClosed
	}
	if s.werr != nil {
		return s.werr
	}
	size := s.cl.q.fileSize
	mf := s.cl.q.lastLocked()
	var pos int64
	switch {
	case mf == nil:
		if offset < 0 || offset%size != 0 {
			return fmt.Errorf("append replica at %d into an empty store: not a file boundary: %w", offset, ErrReplicaOffset)
		}
	case offset != mf.start+mf.wrote.Load():
		return fmt.Errorf("append replica at %d, commit log ends at %d: %w", offset, mf.start+mf.wrote.Load(), ErrReplicaOffset)
	case mf.wrote.Load() < mf.size:
		pos = mf.wrote.Load()
	default:
		mf = nil // full: the bytes start the next file
	}
	if mf == nil {
		if err := s.rollReplicaLocked(offset); err != nil {
			return err
		}
		mf = s.cl.q.lastLocked()
	}
	if pos+int64(len(b)) > mf.size {
		return fmt.Errorf("append replica at %d: %d bytes cross the end of file %s: %w", offset, len(b), mf.path, ErrReplicaOffset)
	}
	dst := append(s.appendDstLocked(mf, pos, int64(len(b))), b...)
	if err := s.writeLocked(mf, pos, dst); err != nil {
		return fmt.Errorf("append replica at %d: %w", offset, err)
	}
	s.publishLocked(mf, pos+int64(len(b)), s.cl.lastStoreTs.Load())
	s.wroteLocked(int64(len(b)))
	return nil
}

// rollReplicaLocked adds the file starting at start (the previous one is
// full, or the store is empty).
func (s *Store) rollReplicaLocked(start int64) error {
	if last := s.cl.q.lastLocked(); last != nil {
		if err := last.closeFD(); err != nil { // never written again
			s.log.Warn().Err(err).Str("file", last.path).Msg("close full commit log file")
		}
	}
	s.signal(s.spaceCh)
	nf, err := s.takeAhead(start)
	if err != nil {
		return fmt.Errorf("append replica: roll commit log at %d: %w", start, err)
	}
	s.cl.q.mu.Lock()
	s.cl.q.files = append(s.cl.q.files, nf)
	s.cl.q.mu.Unlock()
	s.signal(s.allocCh)
	return nil
}

// partialRecord reports whether the record at the start of b (the bytes
// received so far of a file, from a record's start; fileLeft bytes remain
// in the file from there) is incomplete: its header claims more bytes than
// b holds but no more than the file has. A claim beyond the file's end is
// not a record: the caller stalls on it as on any undecodable data.
func partialRecord(b []byte, fileLeft int64) bool {
	if len(b) < 8 {
		return true
	}
	total := int64(be32(b))
	magic := int32(be32(b[4:]))
	if magic != message.MagicV1 && magic != message.MagicV2 {
		return false
	}
	return total > int64(len(b)) && total <= fileLeft
}

// strictTail is the replica's recovery check of a record that decoded
// (strictly with CRC, when configured): bytes a crashed slave never
// received read as zeros, and a record whose body arrived complete but
// whose topic or properties did not still has a matching body CRC. A
// topic that cannot name a queue, or properties holding a NUL (Apache's
// separators are 1 and 2), mark such a torn record.
func strictTail(v *message.RecordView) bool {
	if !SafeName(string(v.Topic)) {
		return false
	}
	for _, c := range v.Properties {
		if c == 0 {
			return false
		}
	}
	return true
}

// CommitLogFileSize is mappedFileSizeCommitLog (the HA master's "start of
// the last file" rule for a slave that reports 0).
func (s *Store) CommitLogFileSize() int64 { return s.cl.q.fileSize }
