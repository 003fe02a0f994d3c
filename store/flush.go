package store

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// flushCommitLogLoop is FlushRealTimeService plus GroupCommitService: it
// flushes every flushIntervalCommitLog, and at once when a waiter needs
// the commit log flushed (Wait signals flushCh); the offset flushed goes
// to the waiter (wait.go), which answers every waiter it covers.
func (s *Store) flushCommitLogLoop() {
	interval := time.Duration(s.cfg.FlushIntervalCommitLog) * time.Millisecond
	tick := time.NewTicker(interval)
	defer tick.Stop()
	// While waiters are pending, poll for their deadlines.
	poll := time.NewTicker(10 * time.Millisecond)
	defer poll.Stop()
	lastThorough := time.Now()
	for {
		select {
		case <-s.quit:
			return
		case <-tick.C:
			least := s.cfg.FlushCommitLogLeastPages
			if time.Since(lastThorough) >= time.Duration(s.cfg.FlushCommitLogThoroughInterval)*time.Millisecond {
				least = 0
				lastThorough = time.Now()
			}
			s.flushCommitLogLogged(least)
		case <-s.flushCh:
			s.flushCommitLogLogged(0)
		case <-poll.C:
			if s.waits.pending() == 0 {
				continue
			}
			if s.waits.pendingFor(Flushed) {
				s.flushCommitLogLogged(0)
			}
		}
		s.answerWaits()
	}
}

// answerWaits hands the offset flushed to the waiter, which answers every
// waiter it covers, and times out the others that are due.
func (s *Store) answerWaits() {
	s.waits.advance(Flushed, s.cl.flushedWhere.Load())
	s.waits.expire()
}

// flushCommitLogLogged flushes; the first failure is logged and fails
// every waiter for a flush, now and later (a failed fsync is sticky).
func (s *Store) flushCommitLogLogged(leastPages int) {
	if err := s.flushCommitLog(leastPages); err != nil {
		if s.flushFailed.CompareAndSwap(false, true) {
			s.log.Error().Err(err).Msg("commit log flush failed")
			s.waits.advance(Flushed, s.cl.flushedWhere.Load()) // what was flushed before is
			s.waits.fail(Flushed, err, true)
		}
	}
}

// flushCommitLog msyncs the commit log and advances the checkpoint's
// physic timestamp when everything sampled was flushed.
func (s *Store) flushCommitLog(leastPages int) error {
	s.cutMu.RLock()
	defer s.cutMu.RUnlock()
	ts := s.cl.lastStoreTs.Load() // before maxOffset: its record ends at or before target
	target := s.cl.maxOffset.Load()
	where, err := s.cl.q.flush(leastPages)
	if where > s.cl.flushedWhere.Load() {
		s.cl.flushedWhere.Store(where)
	}
	if err != nil {
		return fmt.Errorf("flush commit log: %w", err)
	}
	if where >= target && ts > 0 {
		s.ckpt.physic.Store(ts)
	}
	return nil
}

// flushConsumeQueueLoop is FlushConsumeQueueService: flush queues every
// interval, everything every thorough interval, and the checkpoint after
// each pass that moved it. Its logics time is the oldest entry not yet on
// disk (dirtySince), so that recovery re-dispatches every entry a crash or
// a power loss took, and no more than the last few seconds of commit log
// while the passes keep the queues flushed. (Apache writes the newest
// dispatched record's time every second, on disk or not.)
func (s *Store) flushConsumeQueueLoop() {
	tick := time.NewTicker(time.Duration(s.cfg.FlushIntervalConsumeQueue) * time.Millisecond)
	defer tick.Stop()
	lastThorough := time.Now()
	for {
		select {
		case <-s.quit:
			return
		case <-tick.C:
		}
		thorough := time.Since(lastThorough) >= time.Duration(s.cfg.FlushConsumeQueueThoroughInterval)*time.Millisecond
		if thorough {
			lastThorough = time.Now()
		}
		s.flushConsumeQueuePass(thorough)
	}
}

// flushConsumeQueuePass is one pass of flushConsumeQueueLoop: the queues
// with flushConsumeQueueLeastPages dirty pages, or (thorough) every queue
// after the entries only in memory are written; then the checkpoint, if it
// moved.
func (s *Store) flushConsumeQueuePass(thorough bool) {
	least := s.cfg.FlushConsumeQueueLeastPages
	if thorough {
		least = 0
	}
	logicsTs := s.lastDispatchTs.Load() // sampled before the flush
	if thorough {
		// Entries only in memory hold the checkpoint back (dirtySince):
		// their files first.
		if left, err := s.drainPending(time.Time{}, s.quit, 1); left > 0 {
			s.log.Error().Err(err).Int("queues", left).Msg("consume queue files missing, checkpoint not advanced")
			return
		}
		if err := s.writeTails(); err != nil {
			s.log.Error().Err(err).Msg("consume queue entries not written, checkpoint not advanced")
			return
		}
	}
	logics, err := s.flushConsumeQueues(least, logicsTs)
	if err != nil {
		s.log.Error().Err(err).Msg("consume queue flush failed")
		return
	}
	writeCkpt := thorough
	if logics > s.ckpt.logics.Load() {
		s.ckpt.logics.Store(logics)
		writeCkpt = true
	}
	if s.idx != nil {
		// Full index files are flushed at once (and recorded in the
		// checkpoint); the current one with the thorough flush.
		ts, err := s.idx.flush(thorough)
		if err != nil {
			s.log.Error().Err(err).Msg("index flush failed")
		} else if ts > 0 {
			s.ckpt.index.Store(ts)
			writeCkpt = true
		}
	}
	if writeCkpt {
		if err := s.ckpt.flush(); err != nil {
			s.log.Error().Err(err).Msg("checkpoint flush failed")
		}
	}
}

// syncFSFiles: with more dirty consume queue files than this, one syncfs
// replaces a sync per file (each is a journal commit, ~3 ms here: 60 s for
// 20,000 queues with an entry each).
const syncFSFiles = 64

// flushConsumeQueues syncs every consume queue file with leastPages dirty
// pages (or full; 0: any), and returns the time (ms) the checkpoint's
// logics time may take: dispatched, the newest record dispatched before
// the pass began, or the oldest entry still not on disk (dirtySince) if
// earlier.
func (s *Store) flushConsumeQueues(leastPages int, dispatched int64) (int64, error) {
	var (
		todo  []dirtyFile
		whole []*consumeQueue // every dirty file of theirs is in todo, if any
	)
	queues := s.allQueues()
	for _, cq := range queues {
		some, all := false, true
		cq.q.mu.RLock()
		for _, mf := range cq.q.files {
			w := mf.wrote.Load()
			if w <= mf.flushed.Load() {
				continue
			}
			if leastPages == 0 || w >= mf.size || mf.dirtyPages() >= int64(leastPages) {
				todo = append(todo, dirtyFile{cq, mf, w})
				some = true
			} else {
				all = false
			}
		}
		cq.q.mu.RUnlock()
		// A queue with nothing to flush may still be marked dirty: a
		// replica's truncation drops unflushed entries without a flush.
		if all && (some || cq.q.dirtySince.Load() != 0) {
			whole = append(whole, cq)
		}
	}
	if err := s.syncConsumeQueueFiles(todo); err != nil {
		return 0, err
	}
	// A queue flushed to where each of its files was written when the pass
	// looked is on disk up to there; what it got since came after
	// dispatched was sampled.
	since := storeSecond(dispatched)
	for _, cq := range whole {
		cq.wmu.Lock()
		if len(cq.pend) == 0 {
			d := uint32(0)
			cq.q.mu.RLock()
			for _, mf := range cq.q.files {
				if mf.wrote.Load() > mf.flushed.Load() {
					d = since
				}
			}
			cq.q.mu.RUnlock()
			cq.q.dirtySince.Store(d)
		}
		cq.wmu.Unlock()
	}
	logics := dispatched
	for _, cq := range queues {
		if d := cq.q.dirtySince.Load(); d != 0 {
			logics = min(logics, int64(d)*1000)
		}
	}
	return logics, nil
}

// dirtyFile is a consume queue file to flush up to wrote.
type dirtyFile struct {
	cq    *consumeQueue
	mf    *mappedFile
	wrote int64
}

// syncConsumeQueueFiles syncs the files and marks each flushed up to wrote.
func (s *Store) syncConsumeQueueFiles(todo []dirtyFile) error {
	if len(todo) > syncFSFiles {
		if err := s.ops.syncFS(s.cqRoot); err != nil {
			return fmt.Errorf("flush consumequeues: %w", err)
		}
		for _, d := range todo {
			d.mf.flushedTo(d.wrote)
		}
		return nil
	}
	for _, d := range todo {
		// Through a descriptor, not the mapping, and without the queue's
		// locks: a roll of the queue (its list's write lock) never waits
		// for the sync, nor do the readers queued behind the roll, and the
		// unmapper may drop the mapping meanwhile (the dirty pages stay in
		// the page cache, which fdatasync writes). A file deleted meanwhile
		// (cleanup, DeleteTopic) needs no flush.
		if err := d.mf.ops.syncFile(d.mf.path); err != nil {
			if errors.Is(err, os.ErrNotExist) && !d.cq.listed(d.mf) {
				continue
			}
			return fmt.Errorf("flush consumequeue %s-%d: %w", d.cq.topic, d.cq.queueID, err)
		}
		d.mf.flushedTo(d.wrote)
	}
	return nil
}
