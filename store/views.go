package store

import "sync"

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

// maxViewSlices caps the slices of one answer, well below the 1024 a
// single writev takes (remoting adds the header and copies bodies in 1024
// pieces or more). Records of one queue are mostly adjacent in the commit
// log, so a capped answer is rare: it needs 256 runs of other queues'
// records between its own.
const maxViewSlices = 256

// pins is one GetMessageViews answer: its slices and the files they pin.
type pins struct {
	s     *Store
	vec   [][]byte
	files []*mappedFile // each held once

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
	p.s, p.cur, p.last = nil, nil, nil
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
