package store

import (
	"errors"
	"fmt"
)

// What the AutoSwitch HA (ha/autoswitch, controller mode) needs of a
// running store, beyond replica.go:
//
//   - The confirm offset (Apache's CommitLog.confirmOffset): the commit log
//     bytes every member of the SyncStateSet holds. With the gate on, the
//     dispatcher builds consume queue entries only up to it (Apache's
//     ReputMessageService.getReputEndOffset when readUnCommitted is off),
//     so consumers never see a message a failover could take back.
//   - TruncateReplica: a slave cuts a divergent tail (Apache's
//     DefaultMessageStore.truncateFiles after the handshake's consistent
//     point): commit log, consume queues and the queue offset table, with
//     the dispatcher paused; sends waiting on the cut records are answered
//     ErrTruncated (wait.go's cut).
//   - LeaveReplica: a slave promoted to master cuts a record its last frame
//     left incomplete (Apache's truncateInvalidMsg) and accepts Puts again.
//
// Index entries past a truncation are left: a query skips an entry whose
// record is gone (query.go), as Apache's index keeps them too.

// ErrNotReplica refuses TruncateReplica on a store that takes Puts.
var ErrNotReplica = errors.New("store is not a replica")

// SetConfirmGate turns dispatching up to the confirm offset on or off;
// off dispatches everything appended (a broker outside controller mode).
func (s *Store) SetConfirmGate(on bool) {
	s.confirmGate.Store(on)
	s.signal(s.dispatchCh)
}

// SetConfirmOffset sets the confirm offset and wakes the dispatcher.
// It may go back (a new master's set): what was dispatched stays.
func (s *Store) SetConfirmOffset(offset int64) {
	s.ckpt.confirm.Store(offset) // kept over a restart (checkpoint.go)
	if s.confirm.Swap(offset) != offset {
		s.signal(s.dispatchCh)
	}
}

// ConfirmOffset is the last confirm offset set (0 before any).
func (s *Store) ConfirmOffset() int64 { return s.confirm.Load() }

// dispatchEnd is where the dispatcher stops: the commit log end, or the
// confirm offset below it while the gate is on.
func (s *Store) dispatchEnd() int64 {
	end := s.cl.maxOffset.Load()
	if s.confirmGate.Load() {
		end = min(end, s.confirm.Load())
	}
	return end
}

// TruncateReplica drops the commit log from offset on (a record boundary
// the caller knows: an epoch start or the local end), the consume queue
// entries pointing there and lowers the queue offsets and the dispatch
// cursor. Nothing to do at or beyond the end. Refused on a store that is
// not a replica, below the first file, or while a reader holds a file that
// would be cut (the caller retries: Apache's slave retries the handshake).
//
// Sends still waiting on records beyond offset (written while this store
// was master) are answered ErrTruncated, and the flushed and replicated
// marks come down to offset: the records written there next are others.
func (s *Store) TruncateReplica(offset int64) error {
	if offset >= s.cl.maxOffset.Load() {
		return nil
	}
	cut, err := s.truncateReplica(offset)
	if cut {
		s.waits.cut(offset, ErrTruncated) // outside the store's locks: it answers sends
	}
	return err
}

func (s *Store) truncateReplica(offset int64) (bool, error) {
	s.dispatchMu.Lock()
	defer s.dispatchMu.Unlock()
	s.cutMu.Lock()
	defer s.cutMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.replica {
		return false, fmt.Errorf("truncate at %d: %w", offset, ErrNotReplica)
	}
	return true, s.truncateLocked(offset)
}

// truncateLocked cuts at offset. Caller holds dispatchMu, cutMu and mu.
func (s *Store) truncateLocked(offset int64) error {
	if s.stopped {
		return ErrClosed
	}
	maxOff := s.cl.maxOffset.Load()
	if offset >= maxOff {
		return nil
	}
	if minOff := s.cl.minOffset(); offset < minOff {
		return fmt.Errorf("truncate at %d: below the first commit log file at %d: %w", offset, minOff, ErrReplicaOffset)
	}
	// The commit log first: a held file refuses the whole cut before
	// anything changed.
	if err := s.cl.q.truncate(offset, truncSync); err != nil {
		return fmt.Errorf("truncate commit log at %d: %w", offset, err)
	}
	s.cl.maxOffset.Store(offset)
	if s.cl.flushedWhere.Load() > offset {
		s.cl.flushedWhere.Store(offset)
	}
	s.cqMu.Lock()
	var errs []error
	s.eachCQLocked(func(cq *consumeQueue) {
		cq.wmu.Lock()
		if _, err := cq.truncateDirty(offset); err != nil {
			errs = append(errs, err)
		}
		s.queueOffsets[queueKey{cq.topic, cq.queueID}] = cq.maxLogical.Load()
		cq.wmu.Unlock()
	})
	s.cqMu.Unlock()
	if s.reput.Load() > offset {
		s.reput.Store(offset)
	}
	s.splitAt.Store(-1)
	if s.confirm.Load() > offset {
		s.confirm.Store(offset)
	}
	s.log.Warn().Int64("offset", offset).Int64("previousMaxOffset", maxOff).Msg("replica commit log truncated")
	return errors.Join(errs...)
}

// LeaveReplica makes a replica take Puts again (a slave becoming master):
// everything appended is dispatched (the gate is lifted for it; the caller
// sets it again), a record the last frame split is cut, and the commit
// log end is returned. No-op on a store that is not a replica.
func (s *Store) LeaveReplica() (int64, error) {
	end, cut, err := s.leaveReplica()
	if cut {
		s.waits.cut(end, ErrTruncated) // as TruncateReplica
	}
	return end, err
}

func (s *Store) leaveReplica() (end int64, cut bool, err error) {
	s.dispatchMu.Lock()
	defer s.dispatchMu.Unlock()
	// Dispatched without the append lock, as the dispatcher does (the
	// caller stopped replicating: nothing is appended meanwhile).
	s.confirmGate.Store(false)
	if err := s.dispatchAvailable(); err != nil {
		return 0, false, fmt.Errorf("leave replica: %w", err)
	}
	s.cutMu.Lock()
	defer s.cutMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.replica {
		return s.cl.maxOffset.Load(), false, nil
	}
	if split := s.splitAt.Load(); split >= 0 && split < s.cl.maxOffset.Load() {
		cut = true
		if err := s.truncateLocked(split); err != nil {
			return split, cut, fmt.Errorf("leave replica: %w", err)
		}
	}
	// A replica's appends leave the queue offset table alone (records
	// carry their queue offsets): Puts continue from the consume queues.
	s.cqMu.RLock()
	s.eachCQLocked(func(cq *consumeQueue) {
		s.queueOffsets[queueKey{cq.topic, cq.queueID}] = cq.maxLogical.Load()
	})
	s.cqMu.RUnlock()
	s.replica = false
	s.replicaDispatch.Store(false)
	return s.cl.maxOffset.Load(), cut, nil
}

// ConfirmGated reports whether dispatch stops at the confirm offset.
func (s *Store) ConfirmGated() bool { return s.confirmGate.Load() }
