package store

import "time"

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
