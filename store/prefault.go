package store

import (
	"errors"

	"golang.org/x/sys/unix"
)

// The first write to each page of a fresh commit log file faults: the kernel
// allocates the page and, on ext4, opens a journal handle in page_mkwrite.
// That happens inside Put, on a network event loop, under the append lock.
// The prefaulter keeps the prefaultAhead bytes after the write position of
// the last commit log file faulted in writable with MADV_POPULATE_WRITE,
// which maps the pages without reading or writing their contents, so it is
// safe next to concurrent appends.
//
// It only touches the last commit log file, which nothing unmaps while the
// store runs (cleanup removes older files, Shutdown stops this goroutine
// first).
const prefaultAhead = 8 << 20

func (s *Store) prefaultLoop() {
	for {
		select {
		case <-s.quit:
			return
		case <-s.prefaultCh:
		}
		if err := s.prefault(); err != nil {
			// Kernels before 5.14 lack MADV_POPULATE_WRITE: appends fault as before.
			s.log.Info().Err(err).Msg("commit log prefault disabled")
			return
		}
	}
}

func (s *Store) prefault() error {
	s.cl.q.mu.RLock()
	mf := s.cl.q.lastLocked()
	s.cl.q.mu.RUnlock()
	if mf == nil || mf.data == nil {
		return nil
	}
	from := max(mf.populated.Load(), mf.wrote.Load()) &^ (pageSize - 1)
	to := min(mf.wrote.Load()+prefaultAhead, mf.size)
	if to <= from {
		return nil
	}
	if err := unix.Madvise(mf.data[from:to], unix.MADV_POPULATE_WRITE); err != nil {
		if errors.Is(err, unix.EINVAL) {
			return err
		}
		// ENOMEM/EFAULT and the like: leave it to the page faults.
		return nil
	}
	mf.populated.Store(to)
	return nil
}
