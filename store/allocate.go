package store

import (
	"errors"
	"fmt"
	"sync"
)

// The next commit log file is made ahead of need (Apache's
// AllocateMappedFileService): creating one is an open, a fallocate of
// mappedFileSizeCommitLog (1 GiB by default) and an mmap; a roll did all
// that under the append lock, and every Put of every connection waited for
// it. The allocator goroutine makes the file after the last one as soon as
// the store starts and after every roll; the roll takes it (under the
// append lock, a pointer swap) and adds it to the list.
//
// A roll that finds the file not ready yet (the allocator is behind, or
// failed) waits for the allocator if it is making that file, else makes the
// file itself, as before: never two makers for one name (the file is
// created O_EXCL anyway). The ready file is not in the list, so neither
// readers nor cleanup see it; Shutdown removes it. A crash leaves it on
// disk, as a crash right after a roll leaves an empty file: recovery drops
// files past the end of the data (mappedQueue.truncate).
type allocator struct {
	mu    sync.Mutex
	ready *mappedFile   // made, not yet in the list; guarded by mu
	busy  int64         // start of the file being made, or -1; guarded by mu
	done  chan struct{} // of the make in busy: closed when it ends (made or not); guarded by mu
	taken int64         // start of the last file a roll took; guarded by mu
}

// allocLoop makes the next commit log file whenever signalled.
func (s *Store) allocLoop() {
	for {
		select {
		case <-s.quit:
			return
		case <-s.allocCh:
		}
		s.allocNext()
	}
}

// allocNext makes the file after the last one, unless it is made, being
// made, or already taken.
func (s *Store) allocNext() {
	if s.idx != nil {
		s.idx.makeAhead()
	}
	// Under the list lock: a replica's truncation (confirm.go) unmaps
	// files past its cut.
	s.cl.q.mu.RLock()
	last := s.cl.q.lastLocked()
	unmapped := last != nil && last.data == nil
	// A new store's first file too, where its first Put would make it
	// (a replica whose first record starts elsewhere discards it).
	next := s.cl.maxOffset.Load()
	if last != nil {
		next = last.start + last.size
	}
	s.cl.q.mu.RUnlock()
	if unmapped {
		return
	}
	a := &s.alloc
	a.mu.Lock()
	if (a.ready != nil && a.ready.start == next) || a.busy == next || next <= a.taken {
		a.mu.Unlock()
		return
	}
	stale := a.ready // for an offset no roll will ask for (a truncation)
	a.ready = nil
	done := make(chan struct{})
	a.busy, a.done = next, done
	a.mu.Unlock()
	if stale != nil {
		s.discardAhead(stale)
	}

	// Its pages are not populated here: the file may wait hours for its
	// roll, and its populated pages would count in the broker's RSS all
	// that time (8 MiB, +44% idle). The roll's first append signals the
	// prefaulter (prefault.go), as it did before files were made ahead.
	mf, err := s.cl.q.createFile(next)
	a.mu.Lock()
	if err == nil {
		a.ready = mf
	}
	a.finish(done)
	a.mu.Unlock()
	if err != nil {
		s.sampled.Warn().Err(err).Int64("start", next).Msg("commit log file not made ahead, the roll makes it")
	}
}

// takeAhead returns the commit log file starting at start for a roll
// (caller holds the append lock): the one made ahead, or one made now.
// The caller adds it to the list, then signals allocCh for the one after.
func (s *Store) takeAhead(start int64) (*mappedFile, error) {
	a := &s.alloc
	a.mu.Lock()
	for a.busy == start { // being made: waiting is no slower than making it
		done := a.done
		a.mu.Unlock()
		<-done
		a.mu.Lock()
	}
	mf := a.ready
	a.ready = nil
	var err error
	if mf == nil || mf.start != start {
		done := make(chan struct{})
		a.busy, a.done = start, done
		a.mu.Unlock()
		if mf != nil {
			s.discardAhead(mf)
		}
		mf, err = s.cl.q.createFile(start)
		a.mu.Lock()
		a.finish(done)
	}
	if err == nil {
		a.taken = start
	}
	a.mu.Unlock()
	return mf, err
}

// finish ends the make whose channel is done (caller holds mu): its
// waiters are released, and busy is cleared unless another make (a roll
// for a different offset, which does not wait for this one) took the slot
// meanwhile; that one clears it and closes its own channel.
func (a *allocator) finish(done chan struct{}) {
	if a.done == done {
		a.busy = -1
	}
	close(done)
}

// discardAhead unmaps and removes a file made ahead that no roll took.
func (s *Store) discardAhead(mf *mappedFile) {
	if err := errors.Join(mf.unmap(), s.ops.removeFile(mf.path)); err != nil {
		s.log.Error().Err(err).Str("file", mf.path).Msg("remove commit log file made ahead")
	}
}

// dropAhead removes the files made ahead, if any (Shutdown, after the
// allocator stopped): they hold nothing.
func (s *Store) dropAhead() error {
	if s.idx != nil {
		if err := s.idx.dropAhead(); err != nil {
			return err
		}
	}
	a := &s.alloc
	a.mu.Lock()
	mf := a.ready
	a.ready = nil
	a.mu.Unlock()
	if mf == nil {
		return nil
	}
	if err := errors.Join(mf.unmap(), s.ops.removeFile(mf.path)); err != nil {
		return fmt.Errorf("remove commit log file made ahead: %w", err)
	}
	return nil
}

// aheadMade reports whether the next commit log file is made (on disk,
// waiting for the roll).
func (s *Store) aheadMade() bool {
	s.alloc.mu.Lock()
	defer s.alloc.mu.Unlock()
	return s.alloc.ready != nil
}
