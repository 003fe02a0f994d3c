package store

import (
	"time"

	"golang.org/x/sys/unix"
)

// The trimmer keeps the broker's resident set to what it is using now.
// Every page of a mapped store file that was written or read stays mapped
// into the process until it is unmapped, so VmRSS grows with every byte
// ever appended or pulled (gigabytes after a minute of load) although
// those pages are the kernel's page cache, not the broker's memory. The
// kernel counts mapped file pages against the process: they feed its OOM
// score and cost a page table entry each.
//
// MADV_DONTNEED on a shared file mapping removes the page table entries
// only; the pages, dirty or not, stay in the page cache, a later access
// maps them again with a minor fault, and msync still writes them (it
// syncs the file range, mapped or not). So a trim never loses or changes
// data and may race with readers and the writer.
//
// Kept mapped: the last trimKeepCommitLog bytes of the commit log (where
// appends, dispatch and tail pulls work), the last trimKeepQueue bytes of
// each consume queue, and the current index file's header and hash slots
// plus its last trimKeepQueue bytes of entries (slots are written at
// random). The last trimRecentFiles commit log files (where appends and
// most reads are) are trimmed every trimInterval, so a read of them faults
// in at most what it reads in one interval; the rest of the store, which
// only old catch-up reads map, every trimSweepEvery intervals.
const (
	trimInterval      = 50 * time.Millisecond
	trimKeepCommitLog = 32 << 20
	trimKeepQueue     = 256 << 10
	trimRecentFiles   = 4
	trimSweepEvery    = 20
)

func (s *Store) trimLoop() {
	tick := time.NewTicker(trimInterval)
	defer tick.Stop()
	for n := 1; ; n++ {
		select {
		case <-s.quit:
			return
		case <-tick.C:
		}
		sweep := n%trimSweepEvery == 0
		s.trimCommitLog(trimKeepCommitLog, sweep)
		if sweep {
			s.trimConsumeQueues(trimKeepQueue)
			if s.idx != nil {
				s.idx.trim(trimKeepQueue)
			}
		}
	}
}

// trimCommitLog trims the commit log below its last keep bytes: the last
// trimRecentFiles files, or all with sweep. Files are held, not locked,
// while trimmed: unmapping a resident gigabyte takes milliseconds that the
// append path must not wait for on a roll.
func (s *Store) trimCommitLog(keep int64, sweep bool) {
	keepFrom := s.cl.maxOffset.Load() - keep
	if keepFrom <= 0 {
		return
	}
	var held [trimRecentFiles]*mappedFile
	files := held[:0]
	s.cl.q.mu.RLock()
	from := 0
	if !sweep {
		from = max(0, len(s.cl.q.files)-trimRecentFiles)
	}
	for _, mf := range s.cl.q.files[from:] {
		if mf.start >= keepFrom {
			break
		}
		mf.hold()
		files = append(files, mf)
	}
	s.cl.q.mu.RUnlock()
	for _, mf := range files {
		trimRange(mf, 0, keepFrom-mf.start)
		if err := mf.release(); err != nil {
			s.log.Error().Err(err).Msg("trim commit log")
		}
	}
}

// trimConsumeQueues trims each queue's mapped files below its last keep
// written bytes, and above the page being written. Queue files are small: they are trimmed under the queue's
// read lock, which keeps destroy and the unmapper from unmapping them. The
// queues are listed first, so that Store.cqMu (which the dispatcher takes
// to add a queue) is not held across thousands of madvise calls.
func (s *Store) trimConsumeQueues(keep int64) {
	for _, cq := range s.allQueues() {
		cq.q.mu.RLock()
		if n := len(cq.q.files); n > 0 && !cq.closed {
			last := cq.q.files[n-1]
			for _, mf := range cq.q.files[:n-1] {
				trimRange(mf, 0, mf.size)
			}
			w := last.wrote.Load()
			trimRange(last, 0, w-keep)
			// Pages past the one being written hold the zeros allocated
			// ahead, mapped by a read's fault-around.
			trimRange(last, w+1, last.size)
		}
		cq.q.mu.RUnlock()
	}
}

// trim trims the index files but the last wholly, and the last one's
// entries below its last keep bytes.
func (x *indexService) trim(keep int64) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := len(x.files)
	if n == 0 {
		return
	}
	for _, f := range x.files[:n-1] {
		trimRange(f.mf, 0, f.mf.size)
	}
	last := x.files[n-1]
	trimRange(last.mf, last.entryPos(0), last.entryPos(last.indexCount())-keep)
}

// trimRange drops the mapping of the whole pages in [from, to) of mf.
func trimRange(mf *mappedFile, from, to int64) {
	from = (from + pageSize - 1) &^ (pageSize - 1)
	to = min(to, mf.size) &^ (pageSize - 1)
	if to <= from || mf.unmapped.Load() || mf.data == nil {
		return
	}
	// Errors (EINVAL on an odd kernel, EAGAIN) only leave pages mapped.
	_ = unix.Madvise(mf.data[from:to], unix.MADV_DONTNEED)
}
