package store

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Consume queue files, many of them (see consumequeue.go for why):
//
//   - creation: a new queue's first file is made by the creator goroutine
//     (createLoop) while its entries wait in memory; the dispatcher makes
//     it itself only when too much is pending. The thorough consume queue
//     flush and Shutdown make every file still missing, so the checkpoint
//     never covers an entry that is only in memory.
//   - mapping: only the dispatcher maps, the file it writes to, and only
//     while fewer than maxMappedConsumeQueueFiles are mapped; past that an
//     entry is written with pwrite. So the limit holds at every moment (the
//     kernel's vm.max_map_count is shared with the Go runtime, which dies
//     when it cannot map its heap). The unmapper (unmapLoop) keeps room
//     for busy queues: from seven eighths of the limit it drops the files
//     behind each queue's last one, then the least recently written
//     queues' files, down to three quarters. Dirty pages of a dropped
//     mapping stay in the page cache; the flusher syncs such a file through
//     a descriptor, or with one syncfs when many files are dirty. An mmap
//     refused with ENOMEM (vm.max_map_count reached below the limit) lowers
//     the limit to 90% of what is mapped.
//   - blocks: allocateLocked writes zeros ahead of the writer.

// queueCreate asks the creator for cq's first file.
func (s *Store) queueCreate(cq *consumeQueue) {
	s.createMu.Lock()
	if !cq.queued {
		cq.queued = true
		s.createList = append(s.createList, cq)
	}
	s.createMu.Unlock()
	s.signal(s.createCh)
}

// createLoop makes the first files the dispatcher asked for, backing off
// while the system refuses (the entries stay readable in memory).
func (s *Store) createLoop() {
	var retry <-chan time.Time
	var backoff time.Duration
	for {
		if retry == nil {
			select {
			case <-s.quit:
				return
			case <-s.createCh:
			}
		} else {
			select {
			case <-s.quit:
				return
			case <-retry:
			}
		}
		err := s.createQueued()
		s.noteResourceErr(err)
		if err == nil {
			backoff, retry = 0, nil
			continue
		}
		backoff = min(max(2*backoff, 10*time.Millisecond), time.Second)
		s.sampled.Warn().Err(err).Dur("retryIn", backoff).Msg("consume queue file creation failed, retrying")
		retry = time.After(backoff)
	}
}

// createQueued makes the first file of every queue on the list, in order,
// until the store shuts down; a queue that fails goes back on the list.
func (s *Store) createQueued() error {
	for {
		select {
		case <-s.quit:
			return nil
		default:
		}
		s.createMu.Lock()
		if len(s.createList) == 0 {
			s.createMu.Unlock()
			return nil
		}
		cq := s.createList[0]
		s.createList[0] = nil
		s.createList = s.createList[1:]
		cq.queued = false
		s.createMu.Unlock()
		if err := cq.createFirst(-1); err != nil {
			s.queueCreate(cq)
			return err
		}
	}
}

// createFirst makes the queue's first file and installs it with the
// pending entries. The file system work runs under cmu only, which
// neither readers nor the dispatcher wait for (unless the dispatcher
// called this: then queueOffset is the entry it could not keep pending;
// -1 makes the file only for pending entries).
func (cq *consumeQueue) createFirst(queueOffset int64) error {
	cq.cmu.Lock()
	defer cq.cmu.Unlock()
	cq.wmu.Lock()
	first := queueOffset
	if len(cq.pend) > 0 {
		first = cq.pendFrom
	}
	done := cq.closed || len(cq.q.files) > 0 || first < 0
	cq.wmu.Unlock()
	if done {
		return nil
	}
	skip := first * cqEntrySize % cq.q.fileSize // fillers before the first entry
	start := first*cqEntrySize - skip
	path := cq.first
	if start != 0 {
		path = mustStorePath(cq.q.dir, fileName(start))
	}
	mf, err := cq.q.createFileAt(start, path)
	if err != nil {
		return fmt.Errorf("create consumequeue %s: %w", cq.q.dir, err)
	}
	cq.wmu.Lock()
	defer cq.wmu.Unlock()
	// destroy takes cmu, and files are added only under cmu (here) or by a
	// writer of a queue that has some: neither happened meanwhile. Only
	// closeFiles (Shutdown, crash tests) may have closed the queue.
	if cq.closed {
		return errors.Join(mf.unmap(), mf.ops.remove(mf.path))
	}
	// Fillers and pending entries go in with pwrite: the file is not
	// mapped (the dispatcher maps it if it writes more).
	b := make([]byte, 0, skip+int64(len(cq.pend)))
	for range skip / cqEntrySize {
		b = b[:len(b)+cqEntrySize]
		putEntry(b[len(b)-cqEntrySize:], fillerEntry)
	}
	b = append(b, cq.pend...)
	if err := cq.writeFileLocked(mf, 0, b); err != nil {
		err = errors.Join(err, mf.unmap(), mf.ops.remove(mf.path))
		return fmt.Errorf("create consumequeue %s: %w", cq.q.dir, err)
	}
	mf.wrote.Store(int64(len(b)))
	cq.q.mu.Lock()
	cq.q.files = append(cq.q.files, mf)
	pend := len(cq.pend)
	cq.pend = nil
	cq.q.mu.Unlock()
	cq.s.pendBytes.Add(-int64(pend))
	return nil
}

// writeFileLocked writes b at pos of mf (not mapped) with pwrite; that
// allocates its blocks too. Caller holds wmu.
func (cq *consumeQueue) writeFileLocked(mf *mappedFile, pos int64, b []byte) error {
	fd, err := mf.ops.openFile(mf.path, unix.O_RDWR)
	if err != nil {
		return err
	}
	err = pwriteFull(fd, b, pos)
	unix.Close(fd) // the flusher syncs the file (flushed stays behind wrote)
	if err != nil {
		return resourceErr(fmt.Errorf("write %s at %d: %w", mf.path, pos, err))
	}
	mf.allocated = max(mf.allocated, pos+int64(len(b)))
	return nil
}

// drainPending makes the first file of every queue whose entries are only
// in memory, with workers goroutines, until done, until (if not zero) or
// stop closes. It returns how many such queues are left and the errors.
func (s *Store) drainPending(until time.Time, stop <-chan struct{}, workers int) (int, error) {
	var todo []*consumeQueue
	for _, cq := range s.allQueues() {
		if cq.hasPending() {
			todo = append(todo, cq)
		}
	}
	var (
		next atomic.Int64
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for range min(workers, len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := next.Add(1) - 1
				if i >= int64(len(todo)) || (!until.IsZero() && time.Now().After(until)) {
					return
				}
				if err := todo[i].createFirst(-1); err != nil {
					mu.Lock()
					if len(errs) < 3 {
						errs = append(errs, err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	left := 0
	for _, cq := range todo {
		if cq.hasPending() {
			left++
		}
	}
	return left, errors.Join(errs...)
}

// hasPending reports whether entries wait for the queue's first file.
func (cq *consumeQueue) hasPending() bool {
	cq.q.mu.RLock()
	defer cq.q.mu.RUnlock()
	return len(cq.q.files) == 0 && len(cq.pend) > 0
}

// writeTails writes the entries every cold queue keeps in memory
// (keepLocked) to its last file and lets go of their buffers: at the
// thorough flush, before the checkpoint comes to cover them, and at
// Shutdown.
func (s *Store) writeTails() error {
	var errs []error
	for _, cq := range s.allQueues() {
		cq.wmu.Lock()
		if n := len(cq.q.files); n > 0 && !cq.closed {
			if err := cq.writeTailLocked(cq.q.files[n-1]); err != nil {
				errs = append(errs, fmt.Errorf("write consumequeue %s: %w", cq.q.dir, err))
			} else if cq.pend != nil {
				cq.q.mu.Lock()
				buf := cap(cq.pend)
				cq.pend = nil
				cq.q.mu.Unlock()
				s.tailBytes.Add(-int64(buf))
			}
		}
		cq.wmu.Unlock()
		if len(errs) == 3 {
			break
		}
	}
	return errors.Join(errs...)
}

// allocateLocked gives [0, end) of mf its blocks by writing zeros from the
// write position (what lies beyond it is zeros already) up to a page
// boundary past end, the step doubling with the file up to cqAllocStep.
// Written with pwrite, the pages are in the page cache when the writer
// stores into them: no fault reads ahead, and a full disk is ENOSPC here,
// not a SIGBUS there. Caller holds wmu.
func (cq *consumeQueue) allocateLocked(mf *mappedFile, end int64) error {
	if end <= mf.allocated {
		return nil
	}
	from := max(mf.allocated, mf.wrote.Load())
	step := min(max(mf.allocated, pageSize), cqAllocStep)
	to := min(mf.size, (max(end, from+step)+pageSize-1)&^(pageSize-1))
	fd, err := mf.ops.openFile(mf.path, unix.O_RDWR)
	if err != nil {
		return err
	}
	err = writeZeros(fd, from, to-from)
	unix.Close(fd) // zeros are no data to lose: the entries' flush syncs them
	if err != nil {
		return resourceErr(fmt.Errorf("allocate %s [%d, %d): %w", mf.path, from, to, err))
	}
	mf.allocated = to
	return nil
}

// mapLocked maps a file for its writer (the dispatcher; wmu held).
func (cq *consumeQueue) mapLocked(mf *mappedFile) error {
	data, err := mf.ops.mapFile(mf.path, mf.size)
	if err != nil {
		cq.s.noteResourceErr(err)
		return err
	}
	cq.q.mu.Lock()
	mf.data = data
	cq.q.mu.Unlock()
	if n := mf.mapped.Add(1); n >= cq.s.cqMapLimit.Load()*7/8 {
		cq.s.signal(cq.s.unmapCh)
	}
	return nil
}

// noteResourceErr reacts to an error of making or mapping a consume queue
// file: a refused mapping lowers the limit.
func (s *Store) noteResourceErr(err error) {
	if err != nil && errors.Is(err, unix.ENOMEM) {
		s.mapLimitHit()
	}
}

// mapLimitHit lowers the limit after the kernel refused a mapping.
func (s *Store) mapLimitHit() {
	n := max(s.cqMapped.Load()*9/10, 64)
	if old := s.cqMapLimit.Load(); n < old && s.cqMapLimit.CompareAndSwap(old, n) {
		s.log.Warn().Int64("maxMappedConsumeQueueFiles", n).Int64("was", old).
			Msg("mmap refused (vm.max_map_count?), fewer consume queue files stay mapped")
	}
	s.signal(s.unmapCh)
}

// unmapLoop keeps the number of mapped consume queue files bounded, and
// unmaps the deleted commit log files pull answers held (reapLater).
func (s *Store) unmapLoop() {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-tick.C:
		case <-s.unmapCh:
		}
		s.reap()
		s.unmapIdle()
	}
}

// unmapIdle unmaps consume queue files down to three quarters of the
// limit once seven eighths are mapped: first every queue's files but the
// last, then the least recently written queues' last files.
func (s *Store) unmapIdle() {
	limit := s.cqMapLimit.Load()
	if s.cqMapped.Load() < limit*7/8 {
		return
	}
	s.unmapTo(limit * 3 / 4)
}

// unmapTo unmaps the least recently touched consume-queue files until at
// most target are mapped (last files of queues last).
func (s *Store) unmapTo(target int64) {
	type cand struct {
		cq      *consumeQueue
		touched uint64
	}
	var cands []cand
	s.cqMu.RLock()
	s.eachCQLocked(func(cq *consumeQueue) {
		cands = append(cands, cand{cq, cq.touched.Load()})
	})
	s.cqMu.RUnlock()
	sort.Slice(cands, func(i, j int) bool { return cands[i].touched < cands[j].touched })
	t0, before := time.Now(), s.cqMapped.Load()
	for _, keepLast := range []bool{true, false} {
		for _, c := range cands {
			if s.cqMapped.Load() <= target {
				break
			}
			if err := c.cq.unmapFiles(keepLast); err != nil {
				s.sampled.Error().Err(err).Msg("consume queue unmap failed")
			}
		}
	}
	s.log.Debug().Int64("mappedBefore", before).Int64("mapped", s.cqMapped.Load()).
		Dur("took", time.Since(t0)).Msg("idle consume queue files unmapped")
}

// unmapFiles unmaps the queue's mapped files (but the last, with
// keepLast). munmap runs after the locks are released; readers find the
// mapping gone under q.mu and read the file instead.
func (cq *consumeQueue) unmapFiles(keepLast bool) error {
	cq.wmu.Lock()
	cq.q.mu.RLock()
	files := cq.q.files
	if keepLast && len(files) > 0 {
		files = files[:len(files)-1]
	}
	var mapped []*mappedFile
	for _, mf := range files {
		if mf.data != nil {
			mapped = append(mapped, mf)
		}
	}
	cq.q.mu.RUnlock()
	drop := make([][]byte, 0, len(mapped))
	cq.q.mu.Lock()
	for _, mf := range mapped {
		drop = append(drop, mf.data)
		mf.data = nil
	}
	cq.q.mu.Unlock()
	cq.wmu.Unlock()
	var errs []error
	for i, b := range drop {
		errs = append(errs, cq.s.ops.munmap(mapped[i].path, b))
		cq.s.cqMapped.Add(-1)
	}
	return errors.Join(errs...)
}
