package store

import (
	"errors"
	"fmt"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/rocketgo/rocketgo/message"
)

// commitLog is the sequence of commit log files. Appends happen under
// Store.mu; maxOffset publishes the end of complete records.
type commitLog struct {
	q mappedQueue

	maxOffset    atomic.Int64 // end of the last complete record
	flushedWhere atomic.Int64 // msync'ed up to here
	lastStoreTs  atomic.Int64 // store time of the newest record, stored after maxOffset
}

// minOffset is the start of the first file (0 when empty).
func (cl *commitLog) minOffset() int64 {
	cl.q.mu.RLock()
	defer cl.q.mu.RUnlock()
	if len(cl.q.files) == 0 {
		return 0
	}
	return cl.q.files[0].start
}

// read appends the size bytes at phy to dst if they lie inside written
// data of one file. The file is held, not the list locked, while the bytes
// are copied: pages not in memory are read from disk during the copy, and
// a roll (the list's write lock, under the append lock) must not wait for
// that.
func (cl *commitLog) read(dst []byte, phy int64, size int32) ([]byte, bool) {
	mf, pos, ok := cl.hold(phy, size)
	if !ok {
		return dst, false
	}
	dst = append(dst, mf.data[pos:pos+int64(size)]...)
	_ = mf.release() // a last release hands the file to the unmapper, which logs
	return dst, true
}

// hold returns the file holding the size bytes at phy, held (release it),
// and their position in it, if they lie inside its written data.
func (cl *commitLog) hold(phy int64, size int32) (*mappedFile, int64, bool) {
	if size <= 0 || phy < 0 || phy+int64(size) > cl.maxOffset.Load() {
		return nil, 0, false
	}
	cl.q.mu.RLock()
	defer cl.q.mu.RUnlock()
	mf := cl.q.findLocked(phy)
	if mf == nil || mf.data == nil {
		return nil, 0, false
	}
	pos := phy - mf.start
	if pos+int64(size) > mf.wrote.Load() {
		return nil, 0, false
	}
	mf.hold()
	return mf, pos, true
}

// readInt64 reads the big-endian long at phy+off of a record (for store
// timestamps) without copying the record.
func (cl *commitLog) recordStoreTimestamp(phy int64) (int64, bool) {
	var hdr [message.PosBornHost + 20 + 8]byte
	b, ok := cl.read(hdr[:0], phy, message.PosSysFlag+4)
	if !ok {
		return 0, false
	}
	sysFlag := int32(be32(b[message.PosSysFlag:]))
	pos := message.StoreTimestampPos(sysFlag)
	b, ok = cl.read(hdr[:0], phy, int32(pos+8))
	if !ok {
		return 0, false
	}
	return int64(be64(b[pos:])), true
}

func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}
func be64(b []byte) uint64 { return uint64(be32(b))<<32 | uint64(be32(b[4:])) }

// scanResult is what checking one record yields (checkMessageAndReturnSize).
type scanResult int

const (
	scanOK    scanResult = iota // a valid message record
	scanBlank                   // end-of-file BLANK: continue at the next file
	scanEnd                     // no valid record here: end of data
)

// checkRecord validates the record at the start of b.
func checkRecord(b []byte, checkCRC bool) (message.RecordView, scanResult, error) {
	v, _, err := message.DecodeRecordView(b)
	switch {
	case err == nil:
	case errors.Is(err, message.ErrBlank):
		return v, scanBlank, nil
	default:
		return v, scanEnd, err
	}
	if checkCRC && message.BodyCRC(v.Body) != v.BodyCRC {
		return v, scanEnd, fmt.Errorf("body crc %#x, stored %#x: %w", message.BodyCRC(v.Body), v.BodyCRC, message.ErrCorrupt)
	}
	return v, scanOK, nil
}

// scanFrom walks valid records from file index i and returns the end of
// valid data (CommitLog.recoverNormally/Abnormally's processOffset) and why
// it stopped (nil when it ran off the last file). progress, when not nil,
// is called about every 64 MiB with the bytes scanned and the bytes to scan.
//
// strict (a replica's store) also refuses records strictTail rejects.
func (cl *commitLog) scanFrom(i int, checkCRC, strict bool, progress func(done, total int64)) (int64, error) {
	files := cl.q.files
	from := files[i].start
	end := from
	total := files[len(files)-1].start + files[len(files)-1].size - from
	const step = 64 << 20
	next := int64(step)
	ra := newReadAhead(files)
	ra.file = i
	for ; i < len(files); i++ {
		mf := files[i]
		pos := int64(0)
		for pos < mf.size {
			ra.at(i, pos)
			v, res, err := checkRecord(mf.data[pos:], checkCRC)
			if res == scanOK && strict && !strictTail(&v) {
				res, err = scanEnd, fmt.Errorf("torn replica record: %w", message.ErrCorrupt)
			}
			if res == scanEnd {
				return mf.start + pos, err
			}
			if res == scanBlank {
				pos = mf.size
				break
			}
			pos += int64(v.TotalSize)
			if done := mf.start + pos - from; progress != nil && done >= next {
				next = done + step
				progress(done, total)
			}
		}
		end = mf.start + pos
	}
	return end, nil
}

// readAhead asks the kernel to read the commit log ahead of a scan
// (MADV_WILLNEED), readAheadWindow at a time: after a crash the files are
// not in the page cache, and the mapping's own read-ahead, a few hundred
// KiB a fault, reads a cold log at a fraction of the disk's bandwidth.
type readAhead struct {
	files  []*mappedFile
	window int64        // bytes advised ahead of the scan
	advise func([]byte) // MADV_WILLNEED; tests record instead
	file   int          // where the advice ends: files[file], at pos
	pos    int64
}

const readAheadWindow = 256 << 20

func newReadAhead(files []*mappedFile) *readAhead {
	return &readAhead{files: files, window: readAheadWindow, advise: func(b []byte) {
		// Only advice: an error (an odd kernel) leaves the scan as it was.
		_ = unix.Madvise(b, unix.MADV_WILLNEED)
	}}
}

// at advises up to window past the scan at files[i], pos once the scan is
// within half a window of where the advice ended.
func (r *readAhead) at(i int, pos int64) {
	if r.file >= len(r.files) {
		return
	}
	scan := r.files[i].start + pos
	if r.files[r.file].start+r.pos-scan > r.window/2 {
		return
	}
	if r.files[r.file].start+r.pos < scan {
		r.file, r.pos = i, pos
	}
	for left := scan + r.window - (r.files[r.file].start + r.pos); left > 0 && r.file < len(r.files); {
		mf := r.files[r.file]
		n := min(left, mf.size-r.pos)
		if mf.data != nil && n > 0 {
			r.advise(mf.data[r.pos : r.pos+n])
		}
		left -= n
		if r.pos += n; r.pos >= mf.size {
			r.file, r.pos = r.file+1, 0
		}
	}
}
