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
//
// A broker may have 100,000 queues (one per topic is a legitimate
// deployment), so nothing about a queue may cost in proportion to the
// number of queues on the dispatch path, and mappings are bounded
// (queuefiles.go):
//   - A new queue's entries wait in memory (pend, read from there) until
//     the creator goroutine has made its first file: mkdir and create cost
//     0.3–1 ms each on ext4 here, which the dispatcher, and every topic
//     behind it in the commit log, used to wait for.
//   - Blocks are allocated ahead of the writer with pwrite of zeros
//     (allocateLocked), so a store into the mapping never faults for
//     space (SIGBUS on a full disk) and never finds a page missing from the
//     page cache: the first store into a fresh sparse 6 MB file used to
//     read ahead and zero the whole file (1.4 ms and 6 MB of page cache per
//     queue; at 70,000 queues, 420 GB of page cache churn).
//   - Files are mapped on demand by the writer and unmapped when idle once
//     more than maxMappedConsumeQueueFiles are mapped; readers copy from a
//     mapping or pread an unmapped file, and never map.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

const cqEntrySize = 20

const (
	// cqPendMax is the number of entries a queue keeps in memory before its
	// first file exists; beyond it the dispatcher creates the file itself.
	cqPendMax = 256
	// cqPendBudget bounds the pending entries of all queues, in bytes.
	cqPendBudget = 16 << 20
	// cqAllocStep is the most blocks allocateLocked allocates at once.
	cqAllocStep = 1 << 20
	// cqTailMax is the number of a cold queue's newest entries kept in
	// memory (keepLocked) before they are written with one pwrite.
	cqTailMax = 16
	// cqTailBudget bounds the buffers of kept entries of all queues, in
	// bytes (cqTailMax entries a queue: 100,000 cold queues).
	cqTailBudget = 32 << 20
)

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

var fillerEntry = cqEntry{size: math.MaxInt32}

// consumeQueue is one topic/queue's index. Only the dispatcher (or Open)
// writes entries; readers take q.mu for reading and copy entries out.
//
// Locks: cmu (making the first file: the creator, a dispatcher whose
// pending entries are full, the flusher, destroy) → wmu (the writer, and
// whatever must not run beside it: install, unmapping, cleanup, destroy)
// → q.mu (the file list, every file's mapping, pend). Mappings and pend
// change only with wmu and q.mu held; the writer reads them under wmu,
// readers under q.mu's read lock.
type consumeQueue struct {
	topic   string
	queueID int32
	closed  bool // set under wmu and q.mu by destroy
	queued  bool // in Store.createList; guarded by Store.createMu
	s       *Store
	q       mappedQueue
	// first is the path of the queue's file at offset 0; topic and q.dir
	// are slices of it. One allocation for the three: 100,000 idle LMQs
	// each have a queue (lmq.go).
	first string

	cmu sync.Mutex
	wmu sync.Mutex

	// pend holds entries that are only in memory. Before the first file
	// exists: the entries dispatched so far, from queue offset pendFrom
	// (Store.pendBytes). Once the queue has files: a cold queue's newest
	// entries, after its last file's write position, in a buffer of
	// cqTailMax (keepLocked, Store.tailBytes), pendFrom then being
	// Store.entries when the first of them came. One pair of fields for
	// both: 100,000 idle LMQs.
	pend     []byte
	pendFrom int64

	maxPhy     int64        // offset+size of the last entry; writer only
	minLogical atomic.Int64 // first readable entry index
	maxLogical atomic.Int64 // one past the last entry index

	// touched is the dispatcher round that last wrote to the queue: the
	// dispatcher's once-per-round mark and the unmapper's idleness.
	touched atomic.Uint64
}

// newConsumeQueue makes the queue of dir, which cqDir built from topic and
// queueID.
func newConsumeQueue(dir, topic string, queueID int32, s *Store) *consumeQueue {
	first := mustStorePath(dir, fileName(0))
	if strings.HasPrefix(first, dir) {
		dir = first[:len(dir)]
		// dir is <root>/<topic>/<queueId>
		if at := len(dir) - len(strconv.Itoa(int(queueID))) - 1 - len(topic); at >= 0 && dir[at:at+len(topic)] == topic {
			topic = dir[at : at+len(topic)]
		}
	}
	return &consumeQueue{
		topic:   topic,
		queueID: queueID,
		s:       s,
		first:   first,
		q: mappedQueue{dir: dir, fileSize: s.cqFileSize, ops: &s.ops,
			lazy: true, mapped: &s.cqMapped},
	}
}

// shareFirstPath makes the loaded file at offset 0, if any, use the path
// string the queue holds (newConsumeQueue). Caller holds q.mu or runs
// before Start.
func (cq *consumeQueue) shareFirstPath() {
	if len(cq.q.files) > 0 && cq.q.files[0].path == cq.first {
		cq.q.files[0].path = cq.first
	}
}

// scanFile calls fn with the entries of mf in [from, to) in order until it
// returns false, and returns the position of the entry it stopped at (to
// when it never did). The file is read from its mapping or, not mapped,
// with pread. Caller holds q.mu or runs before Start.
func (cq *consumeQueue) scanFile(mf *mappedFile, from, to int64, fn func(pos int64, e cqEntry) bool) (int64, error) {
	if mf.data != nil {
		for pos := from; pos+cqEntrySize <= to; pos += cqEntrySize {
			if !fn(pos, readEntry(mf.data[pos:])) {
				return pos, nil
			}
		}
		return to, nil
	}
	// Reads grow from a page to 64 KiB of whole entries: most scans stop
	// within the first page (a queue's end), and Open scans every queue.
	const maxChunk = 3276 * cqEntrySize
	buf := make([]byte, 0, 204*cqEntrySize)
	for pos := from; pos+cqEntrySize <= to; {
		n := min(int64(cap(buf)), (to-pos)/cqEntrySize*cqEntrySize)
		b := buf[:n]
		if err := mf.ops.preadFull(mf.path, b, pos); err != nil {
			return pos, err
		}
		for i := int64(0); i < n; i += cqEntrySize {
			if !fn(pos+i, readEntry(b[i:])) {
				return pos + i, nil
			}
		}
		pos += n
		if cap(buf) < maxChunk {
			buf = make([]byte, 0, min(2*cap(buf), maxChunk))
		}
	}
	return to, nil
}

// entryInFile reads the entry at pos of mf. Caller holds q.mu or wmu.
func (cq *consumeQueue) entryInFile(mf *mappedFile, pos int64) (cqEntry, error) {
	var b [cqEntrySize]byte
	if mf.data != nil {
		return readEntry(mf.data[pos:]), nil
	}
	if err := mf.ops.preadFull(mf.path, b[:], pos); err != nil {
		return cqEntry{}, err
	}
	return readEntry(b[:]), nil
}

// recover scans from the third-from-last file and sets the write position
// after the last entry with offset >= 0 and size > 0 (ConsumeQueue.recover).
// After a normal exit what follows is zeros (nothing was torn) and is left
// alone, as Apache does: zeroing and syncing the tail of 100,000 queues
// took 80 s of start-up. After a crash it is zeroed (truncZero: Open syncs
// the consume queue file system once).
func (cq *consumeQueue) recover(lastExitOK bool) error {
	files := cq.q.files
	if len(files) == 0 {
		return nil
	}
	i := max(len(files)-3, 0)
	end := files[i].start
	for ; i < len(files); i++ {
		mf := files[i]
		pos, err := cq.scanFile(mf, 0, mf.size, func(_ int64, e cqEntry) bool {
			if e.phy < 0 || e.size <= 0 {
				return false
			}
			if !e.filler() {
				cq.maxPhy = e.phy + int64(e.size)
			}
			return true
		})
		if err != nil {
			return fmt.Errorf("recover consumequeue %s: %w", cq.q.dir, err)
		}
		end = mf.start + pos
		if pos < mf.size {
			break
		}
	}
	mode := truncZero
	if lastExitOK {
		mode = truncPosOnly
	}
	if err := cq.q.truncate(end, mode); err != nil {
		return fmt.Errorf("recover consumequeue %s: %w", cq.q.dir, err)
	}
	cq.maxLogical.Store(end / cqEntrySize)
	cq.minLogical.Store(cq.q.files[0].start / cqEntrySize)
	return nil
}

// truncateDirty drops entries pointing at or beyond phyEnd
// (ConsumeQueue.truncateDirtyLogicFiles) and reports whether it cut
// (zeroed, not synced: truncZero). Before Start only.
func (cq *consumeQueue) truncateDirty(phyEnd int64) (bool, error) {
	if cq.maxPhy <= phyEnd {
		return false, nil
	}
	files := cq.q.files
	if len(files) > 0 {
		if err := cq.writeTailLocked(files[len(files)-1]); err != nil { // the cut is looked for in the files
			return false, fmt.Errorf("truncate consumequeue %s: %w", cq.q.dir, err)
		}
	}
	cut := int64(-1)
	for i := len(files) - 1; i >= 0; i-- {
		mf := files[i]
		pos, err := cq.scanFile(mf, 0, mf.wrote.Load(), func(_ int64, e cqEntry) bool {
			return e.filler() || e.phy < phyEnd
		})
		if err != nil {
			return false, fmt.Errorf("truncate consumequeue %s: %w", cq.q.dir, err)
		}
		cut = mf.start + pos
		if pos > 0 {
			break
		}
	}
	if cut < 0 {
		return false, nil
	}
	if err := cq.q.truncate(cut, truncZero); err != nil {
		return false, fmt.Errorf("truncate consumequeue %s: %w", cq.q.dir, err)
	}
	cq.maxLogical.Store(cut / cqEntrySize)
	cq.maxPhy = 0
	if n := cut / cqEntrySize; n > cq.minLogical.Load() {
		if mf := cq.q.findLocked((n - 1) * cqEntrySize); mf != nil {
			e, err := cq.entryInFile(mf, (n-1)*cqEntrySize-mf.start)
			if err != nil {
				return false, fmt.Errorf("truncate consumequeue %s: %w", cq.q.dir, err)
			}
			cq.maxPhy = e.phy + int64(e.size)
		}
	}
	if cq.minLogical.Load() > cq.maxLogical.Load() {
		cq.minLogical.Store(cq.maxLogical.Load())
	}
	return true, nil
}

// forEntriesLocked calls fn with the entries of indexes [from, to) in
// order, from the files or the pending entries, until it returns false.
// Caller holds q.mu or wmu (the list, the mappings and pend change only
// under both), or runs before Start.
func (cq *consumeQueue) forEntriesLocked(from, to int64, fn func(idx int64, e cqEntry) bool) error {
	if len(cq.q.files) == 0 {
		for idx := max(from, cq.pendFrom); idx < to; idx++ {
			pos := (idx - cq.pendFrom) * cqEntrySize
			if pos+cqEntrySize > int64(len(cq.pend)) || !fn(idx, readEntry(cq.pend[pos:])) {
				return nil
			}
		}
		return nil
	}
	for idx := from; idx < to; {
		mf := cq.q.findLocked(idx * cqEntrySize)
		if mf == nil {
			return nil
		}
		stop := false
		end := min(mf.wrote.Load(), to*cqEntrySize-mf.start)
		pos, err := cq.scanFile(mf, idx*cqEntrySize-mf.start, end, func(pos int64, e cqEntry) bool {
			stop = !fn((mf.start+pos)/cqEntrySize, e)
			return !stop
		})
		if err != nil || stop || pos < mf.size {
			return err
		}
		idx = (mf.start + mf.size) / cqEntrySize
	}
	return nil
}

// correctMinOffsetLocked sets the min offset to the first entry whose
// record is still in the commit log (phy >= clMin), skipping fillers.
// Caller holds wmu (not q.mu: entries may be read with pread, which
// readers must not wait for behind a writer), or runs before Start.
func (cq *consumeQueue) correctMinOffsetLocked(clMin int64) error {
	maxL := cq.maxLogical.Load()
	from := cq.minLogical.Load()
	if len(cq.q.files) > 0 {
		from = max(from, cq.q.files[0].start/cqEntrySize) // files deleted by cleanup
	}
	found := maxL
	err := cq.forEntriesLocked(from, maxL, func(idx int64, e cqEntry) bool {
		if !e.filler() && e.phy >= clMin {
			found = idx
			return false
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("correct min offset of consumequeue %s: %w", cq.q.dir, err)
	}
	cq.minLogical.Store(found)
	return nil
}

// put appends the entry for a record with the given queue offset and store
// time (ms); it is idempotent for records already indexed. It returns
// whether it wrote.
func (cq *consumeQueue) put(e cqEntry, queueOffset, storeTs int64) (bool, error) {
	if e.phy+int64(e.size) <= cq.maxPhy {
		return false, nil // built repeatedly
	}
	for {
		cq.wmu.Lock()
		wrote, create, err := cq.putLocked(e, queueOffset)
		if wrote && cq.q.dirtySince.Load() == 0 {
			cq.q.dirtySince.Store(storeSecond(storeTs))
		}
		cq.wmu.Unlock()
		if !create {
			cq.s.noteResourceErr(err)
			return wrote, err
		}
		// Too much is pending: make the first file here and now.
		if err := cq.createFirst(queueOffset); err != nil {
			cq.s.noteResourceErr(err)
			return false, err
		}
	}
}

// storeSecond is a store time (ms) in whole seconds, rounded down (the
// checkpoint may only be earlier), and never 0, which dirtySince keeps for
// "nothing unflushed".
func storeSecond(ms int64) uint32 {
	return uint32(min(max(ms/1000, 1), math.MaxUint32))
}

// putLocked is put under wmu. create asks the caller to make the first
// file (createFirst, which takes cmu, so not under wmu) and call again.
func (cq *consumeQueue) putLocked(e cqEntry, queueOffset int64) (wrote, create bool, err error) {
	if cq.closed {
		return false, false, nil
	}
	expect := queueOffset * cqEntrySize
	cq.q.mu.RLock()
	mf := cq.q.lastLocked()
	cq.q.mu.RUnlock()
	if mf == nil {
		return cq.pendLocked(e, queueOffset)
	}
	cur := mf.start + mf.wrote.Load() + int64(len(cq.pend))
	if expect < cur {
		return false, false, nil // built repeatedly
	}
	if expect != cur {
		cq.s.log.Warn().Str("topic", cq.topic).Int32("queueId", cq.queueID).
			Int64("expectLogicOffset", expect).Int64("currentLogicOffset", cur).
			Msg("consumequeue order maybe wrong")
	}
	if mf.wrote.Load()+int64(len(cq.pend)) >= mf.size {
		// A roll: a new file of a busy queue, once per fileSize/20 entries.
		if err := cq.writeTailLocked(mf); err != nil {
			return false, false, fmt.Errorf("put consumequeue %s: %w", cq.q.dir, err)
		}
		if mf, err = cq.q.newFile(mf.start + mf.size); err != nil {
			return false, false, fmt.Errorf("put consumequeue %s: %w", cq.q.dir, err)
		}
	}
	if err := cq.writeLocked(mf, e); err != nil {
		return false, false, fmt.Errorf("put consumequeue %s: %w", cq.q.dir, err)
	}
	cq.maxPhy = e.phy + int64(e.size)
	cq.maxLogical.Store((mf.start + mf.wrote.Load() + int64(len(cq.pend))) / cqEntrySize)
	return true, false, nil
}

// writeLocked appends e after mf's last entry: through the mapping
// (mapped now if it is not and mayMap says so), after allocating blocks
// ahead if needed, and publishes the new write position; or, not mapped (a
// cold queue's entry, or any once as many files are mapped as allowed),
// kept in memory for now (keepLocked).
func (cq *consumeQueue) writeLocked(mf *mappedFile, e cqEntry) error {
	if mf.data == nil && cq.mayMap() {
		if err := cq.mapLocked(mf); err != nil && !errors.Is(err, ErrResource) {
			return err
		} // ENOMEM (the kernel's map count) lowered the limit: kept, then pwrite
	}
	if mf.data == nil {
		return cq.keepLocked(mf, e)
	}
	if err := cq.writeTailLocked(mf); err != nil {
		return err
	}
	pos := mf.wrote.Load()
	if err := cq.allocateLocked(mf, pos+cqEntrySize); err != nil {
		return err
	}
	putEntry(mf.data[pos:], e)
	mf.wrote.Store(pos + cqEntrySize)
	return nil
}

// keepLocked keeps e, an entry of a queue whose last file mf is not
// mapped, in memory after the file's write position (pend), where
// readers find it. The kept entries go to the file with one pwrite
// (writeTailLocked) when cqTailMax are kept, before the queue writes
// through a mapping, rolls or is cleaned up, and at the thorough flush and
// Shutdown, which the checkpoint waits for: an entry only in memory is
// re-dispatched from the commit log after a crash. A queue written round
// robin among more queues than may be mapped (tens of thousands of topics)
// would otherwise pay open, pwrite and close for every entry: a fifth of
// the broker's CPU at 80,000 queues. Its buffer stays until the thorough flush;
// while all queues' buffers take cqTailBudget bytes, a queue without one
// writes its entry at once. Caller holds wmu.
func (cq *consumeQueue) keepLocked(mf *mappedFile, e cqEntry) error {
	const size = cqTailMax * cqEntrySize
	if len(cq.pend) == size {
		if err := cq.writeTailLocked(mf); err != nil {
			return err
		}
	}
	if cq.pend == nil && cq.s.tailBytes.Load()+size > cqTailBudget {
		var b [cqEntrySize]byte
		putEntry(b[:], e)
		pos := mf.wrote.Load()
		if err := cq.writeFileLocked(mf, pos, b[:]); err != nil {
			return err
		}
		mf.wrote.Store(pos + cqEntrySize)
		return nil
	}
	cq.q.mu.Lock()
	if cq.pend == nil {
		cq.pend = make([]byte, 0, size)
		cq.s.tailBytes.Add(size)
	}
	if len(cq.pend) == 0 {
		cq.pendFrom = int64(cq.s.entries) // mayMap's measure of how fast the queue fills
	}
	cq.pend = cq.pend[:len(cq.pend)+cqEntrySize]
	putEntry(cq.pend[len(cq.pend)-cqEntrySize:], e)
	cq.q.mu.Unlock()
	return nil
}

// writeTailLocked writes the entries keepLocked kept after mf's write
// position, mf being the queue's last file, and publishes them as the
// file's (the position and the emptied memory change together under the
// list's lock: a reader finds each entry in one place or the other).
// Caller holds wmu.
func (cq *consumeQueue) writeTailLocked(mf *mappedFile) error {
	n := len(cq.pend)
	if n == 0 {
		return nil
	}
	pos := mf.wrote.Load()
	if err := cq.writeFileLocked(mf, pos, cq.pend); err != nil {
		return err
	}
	cq.q.mu.Lock()
	mf.wrote.Store(pos + int64(n))
	cq.pend = cq.pend[:0]
	cq.q.mu.Unlock()
	return nil
}

// mayMap reports whether the writer maps the queue's unmapped file for an
// entry: while fewer than half the allowed files are mapped, always; then
// only for a queue that kept cqTailMax entries in memory (keepLocked)
// within as many entries, of every queue, as files may be mapped. Queues
// that fill their memory that fast fit in the limit together; the others,
// written round robin among more queues than may be mapped (a burst of a
// few entries, one per producer, then none until the round comes back),
// would each be mapped for a burst and unmapped by the unmapper (least
// recently written first) before the next, and munmap costs a third of the
// broker's CPU at 80,000 queues. Their entries are kept and written a batch
// at a time, and read from memory or with pread. Dispatcher only.
func (cq *consumeQueue) mayMap() bool {
	mapped, limit := cq.s.cqMapped.Load(), cq.s.cqMapLimit.Load()
	switch {
	case mapped >= limit:
		return false
	case mapped < limit/2:
		return true
	}
	return len(cq.pend) >= cqTailMax*cqEntrySize && cq.s.entries-uint64(cq.pendFrom) <= uint64(limit)
}

// pendLocked keeps an entry of a queue without files in memory and asks
// the creator for the file, or asks the caller to create it when this
// queue or all queues have too much pending.
func (cq *consumeQueue) pendLocked(e cqEntry, queueOffset int64) (wrote, create bool, err error) {
	n := int64(len(cq.pend) / cqEntrySize)
	if n > 0 {
		end := cq.pendFrom + n
		if queueOffset < end {
			return false, false, nil // built repeatedly
		}
		if queueOffset != end {
			cq.s.log.Warn().Str("topic", cq.topic).Int32("queueId", cq.queueID).
				Int64("expectLogicOffset", queueOffset*cqEntrySize).Int64("currentLogicOffset", end*cqEntrySize).
				Msg("consumequeue order maybe wrong")
		}
	}
	from := queueOffset
	if n > 0 {
		from = cq.pendFrom
	}
	// The first file must take every pending entry (install writes no
	// other file), and pending memory is bounded.
	room := (cq.q.fileSize - from*cqEntrySize%cq.q.fileSize) / cqEntrySize
	if n+1 > min(cqPendMax, room) || cq.s.pendBytes.Load()+cqEntrySize > cqPendBudget {
		return false, true, nil
	}
	var b [cqEntrySize]byte
	putEntry(b[:], e)
	cq.q.mu.Lock()
	if n == 0 {
		cq.pendFrom = queueOffset
		cq.minLogical.Store(queueOffset)
	}
	cq.pend = append(cq.pend, b[:]...)
	cq.q.mu.Unlock()
	cq.s.pendBytes.Add(cqEntrySize)
	cq.maxPhy = e.phy + int64(e.size)
	cq.maxLogical.Store(cq.pendFrom + n + 1)
	if n == 0 {
		cq.s.queueCreate(cq)
	}
	return true, false, nil
}

// read copies entries starting at index from into buf (a multiple of 20
// bytes), staying inside one file. It returns the number of entries; an
// error (an unmapped file that cannot be read now) only with none. A file
// that is not mapped is read with pread after the list's lock is released
// (a roll of the queue must not wait for a disk read, nor every reader
// queued behind the roll), and the entries count only if the file is
// still the queue's afterwards.
func (cq *consumeQueue) read(buf []byte, from int64) (int, error) {
	cq.q.mu.RLock()
	n, mf, pos := cq.readLocked(buf, from)
	cq.q.mu.RUnlock()
	if mf == nil {
		return n, nil
	}
	b := buf[:n*cqEntrySize]
	if err := mf.ops.preadFull(mf.path, b, pos); err != nil {
		if !cq.listed(mf) {
			return 0, nil // deleted meanwhile: nothing there
		}
		return 0, fmt.Errorf("read consumequeue %s: %w", cq.q.dir, err)
	}
	if !cq.listed(mf) {
		return 0, nil
	}
	return n, nil
}

// readLocked is read under q.mu: it copies from the entries in memory or
// a mapping, or returns the unmapped file and position to pread n entries
// from. Caller holds q.mu.
func (cq *consumeQueue) readLocked(buf []byte, from int64) (int, *mappedFile, int64) {
	if cq.closed {
		return 0, nil, 0
	}
	maxL := cq.maxLogical.Load()
	if len(cq.q.files) == 0 {
		if from < cq.pendFrom || from >= maxL {
			return 0, nil, 0
		}
		pos := (from - cq.pendFrom) * cqEntrySize
		end := min(int64(len(cq.pend)), (maxL-cq.pendFrom)*cqEntrySize)
		if pos >= end {
			return 0, nil, 0
		}
		return copy(buf[:len(buf)/cqEntrySize*cqEntrySize], cq.pend[pos:end]) / cqEntrySize, nil, 0
	}
	off := from * cqEntrySize
	mf := cq.q.findLocked(off)
	if mf == nil {
		return 0, nil, 0
	}
	pos := off - mf.start
	w := mf.wrote.Load()
	if pos >= w && len(cq.pend) > 0 && mf == cq.q.lastLocked() {
		// A cold queue's newest entries, kept in memory (keepLocked).
		at, end := pos-w, min(int64(len(cq.pend)), maxL*cqEntrySize-mf.start-w)
		if at >= end {
			return 0, nil, 0
		}
		return copy(buf[:len(buf)/cqEntrySize*cqEntrySize], cq.pend[at:end]) / cqEntrySize, nil, 0
	}
	end := min(w, maxL*cqEntrySize-mf.start)
	if pos >= end {
		return 0, nil, 0
	}
	b := buf[:min(int64(len(buf)/cqEntrySize*cqEntrySize), end-pos)]
	if mf.data != nil {
		return copy(b, mf.data[pos:]) / cqEntrySize, nil, 0
	}
	return len(b) / cqEntrySize, mf, pos
}

// entry returns the entry at index idx.
func (cq *consumeQueue) entry(idx int64) (cqEntry, bool) {
	var b [cqEntrySize]byte
	if n, _ := cq.read(b[:], idx); n != 1 { // unreadable now reads as absent
		return cqEntry{}, false
	}
	return readEntry(b[:]), true
}

// listed reports whether mf is still one of the queue's files.
func (cq *consumeQueue) listed(mf *mappedFile) bool {
	cq.q.mu.RLock()
	defer cq.q.mu.RUnlock()
	return !cq.closed && slices.Contains(cq.q.files, mf)
}

// rollNextFile is the first index of the file after the one holding idx.
func (cq *consumeQueue) rollNextFile(idx int64) int64 {
	per := cq.q.fileSize / cqEntrySize
	return idx + per - idx%per
}

// deleteBelow deletes files (never the last) whose last entry points below
// the commit log's min offset (deleteExpiredFileByOffset), then corrects
// the min offset. It returns the number of files deleted. Caller holds wmu.
func (cq *consumeQueue) deleteBelow(clMin int64) (int, error) {
	var gone []*mappedFile
	var errs []error
	// The min offset is looked for in the files: the entries kept in
	// memory go there first.
	if n := len(cq.q.files); n > 0 {
		if err := cq.writeTailLocked(cq.q.files[n-1]); err != nil {
			return 0, err
		}
	}
	// The list and the mappings change only under wmu, which the caller
	// holds: the entry is read without the list's lock (maybe with pread),
	// which is taken only to take the file out.
	for len(cq.q.files) > 1 {
		mf := cq.q.files[0]
		last, err := cq.entryInFile(mf, mf.size-cqEntrySize)
		if err != nil {
			errs = append(errs, err)
			break
		}
		if last.phy >= clMin && !last.filler() {
			break
		}
		cq.q.mu.Lock()
		cq.q.files[0] = nil
		cq.q.files = cq.q.files[1:]
		unmap, err := cq.q.retireLocked(mf)
		cq.q.mu.Unlock()
		if unmap { // after the list's lock: readers never wait for munmap
			err = errors.Join(err, mf.unmap())
		}
		gone = append(gone, mf)
		if err != nil {
			errs = append(errs, err)
			break
		}
	}
	for _, mf := range gone {
		if err := mf.ops.removeFile(mf.path); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, cq.correctMinOffsetLocked(clMin))
	return len(gone), errors.Join(errs...)
}

// destroy unmaps and deletes the queue's files and directory. The queue
// is closed and its files taken out under the list's lock; munmap and
// unlink come after it (under cmu and wmu, which no reader takes).
func (cq *consumeQueue) destroy() error {
	cq.cmu.Lock()
	defer cq.cmu.Unlock()
	cq.wmu.Lock()
	defer cq.wmu.Unlock()
	cq.q.mu.Lock()
	cq.closed = true
	pend, counter := len(cq.pend), &cq.s.pendBytes
	if len(cq.q.files) > 0 { // a cold queue's buffer
		pend, counter = cap(cq.pend), &cq.s.tailBytes
	}
	cq.pend = nil
	cq.q.mu.Unlock()
	counter.Add(-int64(pend))
	err := cq.q.close()
	if rmErr := cq.s.ops.removeAll(cq.q.dir); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
		err = errors.Join(err, fmt.Errorf("remove %s: %w", cq.q.dir, rmErr))
	}
	return err
}
