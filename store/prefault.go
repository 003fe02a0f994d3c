package store

import (
	"errors"

	"golang.org/x/sys/unix"
)

// The first store to each page of a fresh commit log file faults: the
// kernel allocates and zeroes the page and, on ext4, opens a journal handle
// in page_mkwrite. With the large folios of recent kernels the fault also
// reads ahead, zeroing up to the device's read-ahead size (8 MiB here) of
// folios at once. That must not happen inside Put, on a network event
// loop, under the append lock.
//
// The prefaulter keeps the prefaultAhead bytes after the write position of
// the last commit log file faulted in writable with MADV_POPULATE_WRITE,
// which maps the pages without reading or writing their contents, so it is
// safe next to concurrent appends. It zeroes pages at about the rate a
// 2-core machine receives 4 KiB messages, and competes with the event
// loops for the cores, so it falls behind under load. Then a Put that
// would land beyond the populated pages populates them itself before it
// takes the append lock (assistPrefault): the loops pay for first touches
// in parallel, and the append under the lock is a copy. An append still
// beyond them (a race with a roll, or no MADV_POPULATE_WRITE) is written
// with pwrite, which fills just the pages written without a fault or
// read-ahead, never stored through the unpopulated mapping. Before this,
// such appends faulted and held the append lock for 20 ms or more, some
// 15 times a second with 4 KiB messages, stalling every connection at once.
//
// The prefaulter only touches the last commit log file, which nothing
// unmaps while the store runs (cleanup removes older files, Shutdown stops
// this goroutine first); assistPrefault holds the file it populates.
const prefaultAhead = 8 << 20

func (s *Store) prefaultLoop() {
	for {
		select {
		case <-s.quit:
			return
		case <-s.prefaultCh:
		}
		if err := s.prefault(); err != nil {
			s.log.Info().Err(err).Msg("commit log prefault disabled, appends use pwrite")
			return
		}
	}
}

func (s *Store) prefault() error {
	s.cutMu.RLock()
	defer s.cutMu.RUnlock()
	s.cl.q.mu.RLock()
	mf := s.cl.q.lastLocked()
	s.cl.q.mu.RUnlock()
	if mf == nil || mf.data == nil {
		return nil
	}
	w := mf.wrote.Load()
	return s.populate(mf, max(mf.populated.Load(), w), w+prefaultAhead)
}

// assistPrefault is called by Put before it takes the append lock. When
// the next size bytes would land beyond the populated pages (the
// prefaulter is behind), the appending goroutine populates them, and
// assistAhead more, itself: the event loops then pay for first touches in
// parallel, outside the lock, and the append under the lock is a copy.
func (s *Store) assistPrefault(size int64) {
	if s.noPopulate.Load() {
		return
	}
	s.cl.q.mu.RLock()
	mf := s.cl.q.lastLocked()
	if mf == nil || mf.data == nil {
		s.cl.q.mu.RUnlock()
		return
	}
	w, p := mf.wrote.Load(), mf.populated.Load()
	if w+size <= p || w+size > mf.size {
		s.cl.q.mu.RUnlock()
		return // populated, or the append goes to the next file
	}
	mf.hold() // cleanup never takes the last file, but a roll may make it old
	s.cl.q.mu.RUnlock()
	_ = s.populate(mf, max(p, w), w+size+assistAhead) // failure: pwrite under the lock
	if err := mf.release(); err != nil {
		s.log.Error().Err(err).Msg("commit log prefault")
	}
}

const assistAhead = 1 << 20

// populate faults in [from, to) of mf writable and raises mf.populated to
// to. Concurrent callers may populate overlapping ranges; populated only
// grows, to the end of a range its caller populated whole. EINVAL (kernels
// before 5.14 lack MADV_POPULATE_WRITE) disables prefaulting for good.
func (s *Store) populate(mf *mappedFile, from, to int64) error {
	from &^= pageSize - 1
	to = min(to, mf.size)
	if to <= from {
		return nil
	}
	for at := from; at < to; at += populateChunk {
		end := min(at+populateChunk, to)
		if err := unix.Madvise(mf.data[at:end], unix.MADV_POPULATE_WRITE); err != nil {
			if errors.Is(err, unix.EINVAL) {
				s.noPopulate.Store(true)
				return err
			}
			// ENOMEM/EFAULT and the like: appends fall back to pwrite.
			return nil
		}
		// Everything below at was populated (by this call) or below
		// populated or wrote when it began: end may be published.
		for p := mf.populated.Load(); p < end && !mf.populated.CompareAndSwap(p, end); p = mf.populated.Load() {
		}
	}
	return nil
}

// populateChunk bounds one MADV_POPULATE_WRITE. The call holds the
// process's mmap lock for reading while it zeroes its pages (about 1.5 ms
// per MiB here); an mmap or munmap meanwhile (a consume queue or index file
// made, an idle one dropped) queues for the lock for writing, and from then
// on every page fault of every thread queues behind it. With 8 MiB in one
// call that stalled the event loops and the dispatcher together for 12 to
// 26 ms, about once a second at 10 MiB/s (runtime traces).
const populateChunk = 256 << 10

// appendDstLocked returns where to encode size bytes at pos of mf: the
// mapping if its pages are populated, else s.stage for writeLocked.
func (s *Store) appendDstLocked(mf *mappedFile, pos, size int64) []byte {
	if pos+size <= mf.populated.Load() {
		return mf.data[pos:pos:mf.size]
	}
	return s.stage[:0]
}

// writeLocked writes b, encoded at pos into what appendDstLocked returned,
// unless it is already in the mapping.
func (s *Store) writeLocked(mf *mappedFile, pos int64, b []byte) error {
	if len(b) > 0 && len(mf.data) > 0 && &b[0] == &mf.data[pos] {
		return nil
	}
	s.stage = b[:0] // keep the grown buffer
	return mf.writeAt(b, pos)
}
