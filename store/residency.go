package store

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// The residency hint: what one pull found in memory, for the next ones.
//
// A pull on an event loop checks with mincore that the records it answers
// with are in memory (views.go). Consumers catching up read the same
// stretch of the commit log one after another (the queues of a topic are
// interleaved in it), so the range one check found resident is kept on the
// file and the pulls after it, of any queue and any loop, skip the system
// call while the hint is younger than residentHintTTL.
//
// A hint is only a hint: the kernel may evict pages the moment after any
// check. Trusting a stale one costs what a pull cost before the check
// existed (the loop faults the pages in itself), never a wrong answer.

// residentHintTTL bounds how long a range found in memory is trusted.
const residentHintTTL = 500 * time.Millisecond

// residentHint returns the range [lo, hi) of the file last found in
// memory, if it was found within residentHintTTL.
func (mf *mappedFile) residentHint() (lo, hi int64, ok bool) {
	at := mf.residentAt.Load()
	if at == 0 || time.Now().UnixNano()-at > int64(residentHintTTL) {
		return 0, 0, false
	}
	r := mf.resident.Load()
	return int64(r>>32) * pageSize, int64(uint32(r)) * pageSize, true
}

// setResidentHint records [lo, hi) (page aligned, in the file) as found in
// memory now. A fresh hint it overlaps or touches is widened instead, and
// keeps its age: consumers of the queues a stretch of the log interleaves
// read it a few pages apart, and each would otherwise replace the others'
// range with its own. Lo and hi share one word, so a reader sees a range
// one writer stored, whichever won.
func (mf *mappedFile) setResidentHint(lo, hi int64) {
	lo, hi = lo/pageSize, hi/pageSize
	if hi <= lo {
		return
	}
	now := time.Now().UnixNano()
	if at := mf.residentAt.Load(); at != 0 && now-at <= int64(residentHintTTL) {
		r := mf.resident.Load()
		if olo, ohi := int64(r>>32), int64(uint32(r)); lo <= ohi && olo <= hi {
			mf.resident.Store(uint64(min(lo, olo))<<32 | uint64(max(hi, ohi)))
			return
		}
	}
	mf.resident.Store(uint64(lo)<<32 | uint64(hi))
	mf.residentAt.Store(now)
}

// PageOut writes [from, to) of the commit log (page-aligned inward) back
// and asks the kernel to reclaim its pages (MADV_PAGEOUT), as memory
// pressure would: the records there are then read from the disk. It
// reports whether every page left memory (the kernel may keep some: a
// kernel before 5.4, a file system that cannot drop them, pages another
// mapping uses). For tests of the readers that must not wait for the
// disk, here and in the broker; nothing in the broker's serving calls it.
// The files are held, not the list's lock, across the system calls.
func (s *Store) PageOut(from, to int64) (bool, error) {
	q := &s.cl.q
	var files []*mappedFile
	q.mu.RLock()
	for _, mf := range q.files {
		if mf.data != nil && mf.start < to && from < mf.start+mf.size {
			mf.hold()
			files = append(files, mf)
		}
	}
	q.mu.RUnlock()
	defer func() {
		for _, mf := range files {
			_ = mf.release()
		}
	}()
	out := true
	var vec []byte
	for _, mf := range files {
		lo := (max(from, mf.start) - mf.start + pageSize - 1) &^ (pageSize - 1)
		hi := (min(to, mf.start+mf.size) - mf.start) &^ (pageSize - 1)
		if lo >= hi {
			continue
		}
		b := mf.data[lo:hi]
		mf.residentAt.Store(0) // what readers found in memory is gone
		if err := unix.Msync(b, unix.MS_SYNC); err != nil {
			return false, fmt.Errorf("page out %s: %w", mf.path, err)
		}
		if err := unix.Madvise(b, unix.MADV_PAGEOUT); err != nil {
			return false, fmt.Errorf("page out %s: %w", mf.path, err)
		}
		vec = append(vec[:0], make([]byte, (len(b)+pageSize-1)/pageSize)...)
		if err := mincore(b, vec); err != nil {
			return false, fmt.Errorf("page out %s: %w", mf.path, err)
		}
		for _, v := range vec {
			out = out && v&1 == 0
		}
	}
	return out, nil
}
