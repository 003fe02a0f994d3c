package store

import (
	"math"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Pull answers written straight from the mapped commit log
// (GetMessageViews). The answer's slices point into the mapping, so every
// file they touch is held (mappedFile refs) from the lookup until the
// network layer is done with the slices and calls GetResult.Release:
//
//   - a file cleanup deletes meanwhile leaves the list and is unlinked, but
//     stays mapped until the last release;
//   - a release costs one atomic add per file pinned (usually one), and
//     the pins, their slice list and the release func are pooled, so a
//     pull allocates nothing in the steady state;
//   - Store.Shutdown unmaps held files too (the release of an answer queued
//     on a stopped network engine never comes), so the network servers and
//     every goroutine that may still write an answer stop first.
//
// Pages not in memory. The answer is written (or a filter reads a record)
// on a network event loop; a page of the commit log that is not in the
// page cache faults there and blocks every connection of the loop on the
// disk. A reader that must not wait asks for ResidentPages: each record is
// checked before anything reads it, with mincore over the pages it covers
// (one call per 256 pages, remembered for the records after it), except the
// records in the store's hot tail (memory.go): Apache's estimate of what
// the page cache holds, and at least what was written moments ago. The
// read stops before the first record not in memory; the caller hands the
// pull to a goroutine that may wait, which reads it with PopulatePages:
// the pages are faulted in by madvise(MADV_POPULATE_READ),
// a system call, so the Go scheduler gives the thread's P to other
// goroutines while the disk works (a fault in a plain load would keep it:
// two such faults stop a two-core process).

// maxViewSlices caps the slices of one answer, well below the 1024 a
// single writev takes (remoting adds the header and copies bodies in 1024
// pieces or more). Records of one queue are mostly adjacent in the commit
// log, so a capped answer is rare: it needs 256 runs of other queues'
// records between its own.
const maxViewSlices = 256

// Residency is what GetMessageViews does about commit log pages that are
// not in memory.
type Residency uint8

const (
	// AnyPages reads records wherever they are: a page not in memory
	// faults in the reading goroutine (and in the writer of the answer).
	AnyPages Residency = iota
	// ResidentPages stops before the first record whose pages are not all
	// in memory: the answer is the records before it (Found), or, if it is
	// the first, nothing (PagesNotResident). For event loops.
	ResidentPages
	// PopulatePages faults each record's pages in with a system call
	// before anything reads them. For goroutines that may wait on the disk.
	PopulatePages
)

// residencyWindow is the most one mincore call looks at: 256 pages (1 MiB,
// what a catch-up of four queues of 1 KiB messages reads in about 32 pulls;
// the call's cost grows far slower than the pages it covers).
const residencyWindow = 256 * pageSize

// pins is one GetMessageViews answer: its slices and the files they pin.
type pins struct {
	s     *Store
	vec   [][]byte
	files []*mappedFile // each held once
	pages Residency
	// checkBelow: a record ending at or before it is checked (pages not
	// AnyPages, and older than the hot tail when the answer began: the
	// tail only moves on). The test is inline in gather.add, so an
	// unchecked record costs no call.
	checkBelow int64

	// [inLo, inHi) of inFile is known to be in memory (checked or
	// populated for an earlier record of this answer).
	inFile     *mappedFile
	inLo, inHi int64
	inCore     [residencyWindow / pageSize]byte // mincore's vector
	touched    byte                             // sum of what populate read, so the loads are kept

	// cur is the file of the last record looked up (held): the next record
	// is most likely in it too, and then needs no list lock.
	cur *mappedFile
	// last, lastStart, lastEnd locate vec's last slice, to extend it when
	// the next kept record follows it directly.
	last               *mappedFile
	lastStart, lastEnd int64

	release func() // p.Release, bound once so an answer allocates no closure
}

// pinsPool's New is set in init: it refers to Release, which puts back.
var pinsPool sync.Pool

func init() {
	pinsPool.New = func() any {
		p := &pins{vec: make([][]byte, 0, 8), files: make([]*mappedFile, 0, 2)}
		p.release = p.Release
		return p
	}
}

// view returns the size bytes at phy (the record of a consume queue entry)
// as a read-only slice of its file, holding the file until Release, or
// false if they are not inside written data of one file.
func (p *pins) view(cl *commitLog, phy int64, size int32) ([]byte, *mappedFile, int64, bool) {
	if size <= 0 || phy < 0 || phy+int64(size) > cl.maxOffset.Load() {
		return nil, nil, 0, false
	}
	end := phy + int64(size)
	// A held file stays mapped and its written bytes never change, so the
	// file of the previous record is read without the list lock.
	if mf := p.cur; mf != nil && phy >= mf.start && end <= mf.start+mf.wrote.Load() {
		pos := phy - mf.start
		return mf.data[pos : pos+int64(size) : pos+int64(size)], mf, pos, true
	}
	cl.q.mu.RLock()
	mf := cl.q.findLocked(phy)
	if mf == nil || mf.data == nil || end > mf.start+mf.wrote.Load() {
		cl.q.mu.RUnlock()
		return nil, nil, 0, false
	}
	if !p.holds(mf) {
		mf.hold()
		p.files = append(p.files, mf)
	}
	pos := phy - mf.start
	b := mf.data[pos : pos+int64(size) : pos+int64(size)]
	cl.q.mu.RUnlock()
	p.cur = mf
	return b, mf, pos, true
}

// setPages sets what the answer does about pages not in memory.
func (p *pins) setPages(cl *commitLog, pages Residency) {
	p.pages, p.checkBelow = pages, math.MinInt64
	if pages != AnyPages {
		p.checkBelow = cl.maxOffset.Load() - p.s.hotTail
	}
}

// resident reports whether the record at [pos, pos+size) of mf (held) can
// be read without waiting for the disk; with PopulatePages it makes it so.
// Only records below checkBelow come here (gather.add).
func (p *pins) resident(mf *mappedFile, pos, size int64) bool {
	end := pos + size
	from := pos &^ (pageSize - 1)
	if mf == p.inFile && from >= p.inLo && from <= p.inHi {
		if end <= p.inHi {
			return true
		}
		from = p.inHi // the record goes on past what is known
	} else {
		if lo, hi, ok := mf.residentHint(); ok && from >= lo && end <= hi {
			p.inFile, p.inLo, p.inHi = mf, lo, hi
			return true
		}
		p.inFile, p.inLo, p.inHi = mf, from, from
	}
	defer func() { mf.setResidentHint(p.inLo, p.inHi) }()
	mapped := int64(len(mf.data))
	if p.pages == PopulatePages {
		to := min((end+pageSize-1)&^(pageSize-1), mapped)
		p.populate(mf.data[from:to])
		p.inHi = to
		return true
	}
	for from < end {
		to := min(from+residencyWindow, mapped)
		n := int((to - from + pageSize - 1) / pageSize)
		if err := mincore(mf.data[from:to], p.inCore[:n]); err != nil {
			// Not expected on Linux; answer as before the check existed.
			p.s.sampled.Warn().Err(err).Msg("mincore failed; pull answer read without a residency check")
			return true
		}
		k := 0
		for k < n && p.inCore[k]&1 != 0 {
			k++
		}
		p.inHi = min(from+int64(k)*pageSize, to)
		if k < n {
			return end <= p.inHi
		}
		from = to
	}
	return true
}

// mincore is mincore(2) (x/sys/unix has no Linux wrapper): vec gets a byte
// per page of b (which starts on a page), bit 0 set if the page is in memory.
func mincore(b, vec []byte) error {
	if len(b) == 0 {
		return nil
	}
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)),
		uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		return errno
	}
	return nil
}

// populate faults b's pages in (b starts on a page) with
// MADV_POPULATE_READ; without it (Linux before 5.14, EINVAL) it reads a
// byte of each page, which faults with the thread's P held.
func (p *pins) populate(b []byte) {
	if len(b) == 0 || unix.Madvise(b, unix.MADV_POPULATE_READ) == nil {
		return
	}
	for i := 0; i < len(b); i += pageSize {
		p.touched += b[i]
	}
}

func (p *pins) holds(mf *mappedFile) bool {
	for _, f := range p.files {
		if f == mf {
			return true
		}
	}
	return false
}

// keep adds the n bytes at pos of mf (held) to the answer, extending the
// last slice when they follow it in the same file.
func (p *pins) keep(mf *mappedFile, pos, n int64) {
	if k := len(p.vec); k > 0 && mf == p.last && pos == p.lastEnd {
		p.lastEnd = pos + n
		p.vec[k-1] = mf.data[p.lastStart:p.lastEnd:p.lastEnd]
		return
	}
	p.vec = append(p.vec, mf.data[pos:pos+n:pos+n])
	p.last, p.lastStart, p.lastEnd = mf, pos, pos+n
}

// Release drops the answer's holds and recycles it. An unmap error (only
// possible for a file cleanup deleted meanwhile) is logged here: the
// releaser is the network layer, which has nobody to hand it to.
func (p *pins) Release() {
	for i, mf := range p.files {
		if err := mf.release(); err != nil {
			p.s.log.Error().Err(err).Str("file", mf.path).Msg("release commit log file")
		}
		p.files[i] = nil
	}
	p.files = p.files[:0]
	clear(p.vec) // no slice of a mapping that may go away waits in the pool
	p.vec = p.vec[:0]
	p.s, p.cur, p.last, p.inFile, p.pages = nil, nil, nil, nil, AnyPages
	pinsPool.Put(p)
}

// HeldCommitLogFiles is the number of commit log files that answers not
// yet released hold, deleted ones included: 0 whenever no pull answer is
// in flight, so a count that stays up is a leaked release.
func (s *Store) HeldCommitLogFiles() int {
	q := &s.cl.q
	q.mu.RLock()
	defer q.mu.RUnlock()
	n := 0
	for _, mf := range q.files {
		if mf.held() {
			n++
		}
	}
	for _, mf := range q.retired {
		if !mf.unmapped.Load() {
			n++
		}
	}
	return n
}
