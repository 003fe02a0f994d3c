package store

// ConsumeQueue entry (ConsumeQueue.CQ_STORE_UNIT_SIZE = 20), big-endian:
//
//	off  size  field
//	  0     8  commit log physical offset of the record
//	  8     4  record size (TOTALSIZE)
//	 12     8  tags code (Java hash of TAGS, or delivery time for
//	           SCHEDULE_TOPIC_XXXX)
//
// Entry k lives in file floor(k*20/fileSize) at (k*20)%fileSize; files are
// named by their first byte's offset in the queue's stream. A queue whose
// first file starts past entry 0 has filler entries (0, MaxInt32, 0) before
// its first real entry.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"
)

const cqEntrySize = 20

type cqEntry struct {
	phy      int64
	size     int32
	tagsCode int64
}

func putEntry(b []byte, e cqEntry) {
	binary.BigEndian.PutUint64(b[0:], uint64(e.phy))
	binary.BigEndian.PutUint32(b[8:], uint32(e.size))
	binary.BigEndian.PutUint64(b[12:], uint64(e.tagsCode))
}

func readEntry(b []byte) cqEntry {
	return cqEntry{
		phy:      int64(binary.BigEndian.Uint64(b[0:])),
		size:     int32(binary.BigEndian.Uint32(b[8:])),
		tagsCode: int64(binary.BigEndian.Uint64(b[12:])),
	}
}

func (e cqEntry) filler() bool { return e.size == math.MaxInt32 }

// consumeQueue is one topic/queue's index. Only the dispatcher (or Open)
// writes entries; readers take q.mu for reading and copy entries out.
type consumeQueue struct {
	topic   string
	queueID int32
	log     zerolog.Logger
	q       mappedQueue

	// wmu serialises the writer (put) with destroy, so an entry is never
	// written into a file being unmapped.
	wmu sync.Mutex

	maxPhy     int64        // offset+size of the last entry; writer only
	minLogical atomic.Int64 // first readable entry index
	maxLogical atomic.Int64 // one past the last entry index
	closed     bool         // set under wmu and q.mu by destroy

	touched uint64 // dispatcher round that last touched it; dispatcher only
}

// newConsumeQueue makes the queue of dir, which cqDir built from topic and
// queueID.
func newConsumeQueue(dir, topic string, queueID int32, fileSize int64, log zerolog.Logger) *consumeQueue {
	return &consumeQueue{
		topic:   topic,
		queueID: queueID,
		log:     log,
		q:       mappedQueue{dir: dir, fileSize: fileSize},
	}
}

// recover scans from the third-from-last file and sets the write position
// after the last entry with offset >= 0 and size > 0 (ConsumeQueue.recover).
func (cq *consumeQueue) recover() error {
	files := cq.q.files
	if len(files) == 0 {
		return nil
	}
	i := max(len(files)-3, 0)
	end := files[i].start
	for ; i < len(files); i++ {
		mf := files[i]
		pos := int64(0)
		for ; pos+cqEntrySize <= mf.size; pos += cqEntrySize {
			e := readEntry(mf.data[pos:])
			if e.phy < 0 || e.size <= 0 {
				break
			}
			if !e.filler() {
				cq.maxPhy = e.phy + int64(e.size)
			}
		}
		end = mf.start + pos
		if pos < mf.size {
			break
		}
	}
	if err := cq.q.truncate(end); err != nil {
		return fmt.Errorf("recover consumequeue %s: %w", cq.q.dir, err)
	}
	cq.maxLogical.Store(end / cqEntrySize)
	cq.minLogical.Store(cq.q.files[0].start / cqEntrySize)
	return nil
}

// truncateDirty drops entries pointing at or beyond phyEnd
// (ConsumeQueue.truncateDirtyLogicFiles).
func (cq *consumeQueue) truncateDirty(phyEnd int64) error {
	if cq.maxPhy <= phyEnd {
		return nil
	}
	files := cq.q.files
	cut := int64(-1)
	for i := len(files) - 1; i >= 0; i-- {
		mf := files[i]
		wrote := mf.wrote.Load()
		pos := int64(0)
		for ; pos+cqEntrySize <= wrote; pos += cqEntrySize {
			if e := readEntry(mf.data[pos:]); !e.filler() && e.phy >= phyEnd {
				break
			}
		}
		cut = mf.start + pos
		if pos > 0 {
			break
		}
	}
	if cut < 0 {
		return nil
	}
	if err := cq.q.truncate(cut); err != nil {
		return fmt.Errorf("truncate consumequeue %s: %w", cq.q.dir, err)
	}
	cq.maxLogical.Store(cut / cqEntrySize)
	cq.maxPhy = 0
	if n := cut / cqEntrySize; n > cq.minLogical.Load() {
		if mf := cq.q.findLocked((n - 1) * cqEntrySize); mf != nil {
			e := readEntry(mf.data[(n-1)*cqEntrySize-mf.start:])
			cq.maxPhy = e.phy + int64(e.size)
		}
	}
	if cq.minLogical.Load() > cq.maxLogical.Load() {
		cq.minLogical.Store(cq.maxLogical.Load())
	}
	return nil
}

// correctMinOffset sets the min offset to the first entry whose record is
// still in the commit log (phy >= clMin), skipping fillers.
func (cq *consumeQueue) correctMinOffset(clMin int64) {
	cq.q.mu.RLock()
	defer cq.q.mu.RUnlock()
	maxL := cq.maxLogical.Load()
	from := cq.minLogical.Load()
	if len(cq.q.files) > 0 {
		from = max(from, cq.q.files[0].start/cqEntrySize) // files deleted by cleanup
	}
	for idx := from; idx < maxL; idx++ {
		mf := cq.q.findLocked(idx * cqEntrySize)
		if mf == nil {
			break
		}
		e := readEntry(mf.data[idx*cqEntrySize-mf.start:])
		if !e.filler() && e.phy >= clMin {
			cq.minLogical.Store(idx)
			return
		}
	}
	cq.minLogical.Store(maxL)
}

// put appends the entry for a record with the given queue offset; it is
// idempotent for records already indexed. It returns whether it wrote.
func (cq *consumeQueue) put(e cqEntry, queueOffset int64) (bool, error) {
	if e.phy+int64(e.size) <= cq.maxPhy {
		return false, nil // built repeatedly
	}
	expect := queueOffset * cqEntrySize
	cq.wmu.Lock()
	defer cq.wmu.Unlock()
	if cq.closed {
		return false, nil
	}
	cq.q.mu.RLock()
	mf := cq.q.lastLocked()
	cq.q.mu.RUnlock()
	if mf == nil {
		// First file of the queue: fill the slots before the entry.
		start := expect - expect%cq.q.fileSize
		var err error
		if mf, err = cq.q.newFile(start); err != nil {
			return false, fmt.Errorf("put consumequeue %s: %w", cq.q.dir, err)
		}
		for pos := int64(0); pos < expect-start; pos += cqEntrySize {
			putEntry(mf.data[pos:], cqEntry{size: math.MaxInt32})
		}
		mf.wrote.Store(expect - start)
		cq.minLogical.Store(queueOffset)
		cq.maxLogical.Store(queueOffset)
	}
	cur := mf.start + mf.wrote.Load()
	if expect < cur {
		return false, nil // built repeatedly
	}
	if expect != cur {
		cq.log.Warn().Str("topic", cq.topic).Int32("queueId", cq.queueID).
			Int64("expectLogicOffset", expect).Int64("currentLogicOffset", cur).
			Msg("consumequeue order maybe wrong")
	}
	if mf.wrote.Load() >= mf.size {
		var err error
		if mf, err = cq.q.newFile(mf.start + mf.size); err != nil {
			return false, fmt.Errorf("put consumequeue %s: %w", cq.q.dir, err)
		}
	}
	pos := mf.wrote.Load()
	putEntry(mf.data[pos:], e)
	mf.wrote.Store(pos + cqEntrySize)
	cq.maxPhy = e.phy + int64(e.size)
	cq.maxLogical.Store((mf.start + pos + cqEntrySize) / cqEntrySize)
	return true, nil
}

// read copies entries starting at index from into buf (a multiple of 20
// bytes), staying inside one file. It returns the number of entries.
func (cq *consumeQueue) read(buf []byte, from int64) int {
	cq.q.mu.RLock()
	defer cq.q.mu.RUnlock()
	if cq.closed {
		return 0
	}
	off := from * cqEntrySize
	mf := cq.q.findLocked(off)
	if mf == nil {
		return 0
	}
	pos := off - mf.start
	end := min(mf.wrote.Load(), cq.maxLogical.Load()*cqEntrySize-mf.start)
	if pos >= end {
		return 0
	}
	n := copy(buf[:len(buf)/cqEntrySize*cqEntrySize], mf.data[pos:end])
	return n / cqEntrySize
}

// entry returns the entry at index idx.
func (cq *consumeQueue) entry(idx int64) (cqEntry, bool) {
	var b [cqEntrySize]byte
	if cq.read(b[:], idx) != 1 {
		return cqEntry{}, false
	}
	return readEntry(b[:]), true
}

// rollNextFile is the first index of the file after the one holding idx.
func (cq *consumeQueue) rollNextFile(idx int64) int64 {
	per := cq.q.fileSize / cqEntrySize
	return idx + per - idx%per
}

// deleteBelow deletes files (never the last) whose last entry points below
// the commit log's min offset (deleteExpiredFileByOffset), then corrects
// the min offset. It returns the number of files deleted.
func (cq *consumeQueue) deleteBelow(clMin int64) (int, error) {
	var gone []*mappedFile
	var errs []error
	cq.q.mu.Lock()
	for len(cq.q.files) > 1 {
		mf := cq.q.files[0]
		last := readEntry(mf.data[mf.size-cqEntrySize:])
		if last.phy >= clMin && !last.filler() {
			break
		}
		cq.q.files[0] = nil
		cq.q.files = cq.q.files[1:]
		gone = append(gone, mf)
		if err := cq.q.retireLocked(mf); err != nil {
			errs = append(errs, err)
			break
		}
	}
	cq.q.mu.Unlock()
	for _, mf := range gone {
		if err := os.Remove(mf.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	cq.correctMinOffset(clMin)
	return len(gone), errors.Join(errs...)
}

// destroy unmaps and deletes the queue's files and directory.
func (cq *consumeQueue) destroy() error {
	cq.wmu.Lock()
	defer cq.wmu.Unlock()
	cq.q.mu.Lock()
	cq.closed = true
	cq.q.mu.Unlock()
	err := cq.q.close()
	if rmErr := os.RemoveAll(cq.q.dir); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
		err = errors.Join(err, fmt.Errorf("remove %s: %w", cq.q.dir, rmErr))
	}
	return err
}
