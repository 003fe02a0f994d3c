package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/message"
)

// indexService is Apache's IndexService: the list of index files under
// <root>/index, built by the dispatcher, queried by QueryMessage.
//
// mu guards files and the mapped bytes of every file: the dispatcher
// writes entries under the write lock, queries read under the read lock.
// No file is made, msynced, unmapped or unlinked under mu: a new file is
// made with mu released (only the dispatcher adds files), flush and
// cleanup take a file out of (or look at) the list under mu and do the
// I/O after, serialised by maint.
type indexService struct {
	dir     string
	slots   int32
	entries int32
	log     zerolog.Logger
	ops     *fileOps

	// maint serialises flush with deleteBelow, so a file is never
	// unmapped while it is being msynced outside mu.
	maint sync.Mutex

	// making serialises the making of files: the allocator making one
	// ahead (makeAhead) and the dispatcher making one when none is ready.
	// ahead, under making, is a file made before it was needed, not yet
	// in the list (no entries, no header; a crash may leave it, and load
	// drops it).
	making sync.Mutex
	ahead  *indexFile

	mu    sync.RWMutex
	files []*indexFile
	// broken is set when a file cannot be created for a reason other than
	// a resource shortage; indexing stops (Apache marks the store's index
	// error flag) and queries keep working.
	broken bool
	// retryAt: after a resource shortage (a full disk), records are not
	// indexed until then; skipped counts them.
	retryAt time.Time
	skipped int64
	retry   time.Duration // indexRetry; tests shorten it

	// full reports the store's disk-full flag: while it is set the index
	// takes no new blocks, so that what room is left goes to the consume
	// queues of records already acknowledged.
	full func() bool
}

func newIndexService(root string, slots, entries int, log zerolog.Logger, ops *fileOps, full func() bool) *indexService {
	return &indexService{dir: mustStorePath(root, dirIndex), slots: int32(slots), entries: int32(entries), log: log, ops: ops,
		retry: indexRetry, full: full}
}

// load maps every index file in name order (IndexService.load). After an
// abnormal exit, files that end past the checkpoint's index timestamp are
// not known to be on disk:
//   - on the same boot (sameBoot, abort.go) they are as the process left
//     them in the page cache and are kept: the last one's torn put, if
//     any, is undone, and the re-dispatch adds what they miss (build skips
//     records below the last file's end offset);
//   - otherwise they are deleted, as Apache does, and load returns the
//     smallest begin offset of the deleted files (-1 if none) so recovery
//     can rebuild them.
func (x *indexService) load(lastExitOK, sameBoot bool, ckptIndexTs int64) (int64, error) {
	ents, err := os.ReadDir(x.dir)
	if errors.Is(err, os.ErrNotExist) {
		return -1, nil
	}
	if err != nil {
		return -1, fmt.Errorf("load index: %w", err)
	}
	size := indexFileSize(int(x.slots), int(x.entries))
	rebuildFrom := int64(-1)
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		path, err := storePath(x.dir, e.Name())
		if err != nil {
			x.log.Warn().Str("file", e.Name()).Msg("foreign entry under index ignored")
			continue
		}
		mf, err := openMappedFile(x.ops, path, 0, size, false, false)
		if errors.Is(err, ErrBadFileSize) {
			// Written with another maxHashSlotNum/maxIndexNum: keep it for
			// the operator, do not read it.
			x.log.Warn().Err(err).Str("file", path).Msg("index file skipped")
			continue
		}
		if err != nil {
			return -1, fmt.Errorf("load index: %w", err)
		}
		f := &indexFile{mf: mf, name: e.Name(), slots: x.slots, entries: x.entries, flushed: true}
		// The file may be sparse (Apache's never fallocates, ours are
		// in steps), and on a full tmpfs even reading a hole faults. The
		// header is read with pread first: a written header is a page
		// with blocks, read through the mapping from then on.
		var hdr [indexHeaderSize]byte
		if err := x.ops.preadFull(path, hdr[:], 0); err != nil {
			return -1, fmt.Errorf("load index: %w", err)
		}
		if int32(binary.BigEndian.Uint32(hdr[36:])) <= 0 { // indexCount: made ahead, never written (initHeader counts from 1)
			x.log.Info().Str("file", path).Msg("unused index file made ahead removed")
			if err := destroyMapped(mf); err != nil {
				return -1, fmt.Errorf("load index: %w", err)
			}
			continue
		}
		if !lastExitOK && f.endTimestamp() > ckptIndexTs && sameBoot {
			f.flushed = false // the flusher msyncs it, then the checkpoint covers it
		} else if !lastExitOK && f.endTimestamp() > ckptIndexTs {
			begin := f.beginPhyOffset()
			if rebuildFrom < 0 || begin < rebuildFrom {
				rebuildFrom = begin
			}
			x.log.Warn().Str("file", path).Int64("beginPhyOffset", begin).Msg("index file newer than checkpoint deleted, rebuilding")
			if err := destroyMapped(mf); err != nil {
				return -1, fmt.Errorf("load index: %w", err)
			}
			continue
		}
		if err := f.allocate(f.entryPos(f.indexCount())); err != nil {
			x.log.Warn().Err(err).Str("file", path).Msg("index file not queried until its blocks can be given")
		}
		x.files = append(x.files, f)
	}
	if n := len(x.files); n > 0 && !lastExitOK && sameBoot {
		f := x.files[n-1]
		next := make([]byte, indexEntrySize)
		if err := x.ops.preadFull(f.mf.path, next, f.entryPos(min(f.indexCount(), f.entries-1))); err != nil {
			return -1, fmt.Errorf("load index: %w", err)
		}
		f.repairTornPut(next)
	}
	// The file written next gets the blocks of its next entries from its
	// first reserve, before the first store.
	return rebuildFrom, nil
}

func destroyMapped(mf *mappedFile) error {
	return errors.Join(mf.unmap(), mf.ops.removeFile(mf.path))
}

// lastWritableLocked returns the file to write to, making one when there
// is none or the last is full (getAndCreateLastIndexFile). Caller holds
// mu for writing, which is released while a new file is made (fallocate
// of its header, slots and a first step, and mmap), so that queries go on. Only
// the dispatcher calls it, so nothing else adds a file meanwhile, and
// cleanup never removes the last one.
func (x *indexService) lastWritableLocked() (*indexFile, error) {
	var prevName string
	var endPhy, endTs int64
	if n := len(x.files); n > 0 {
		last := x.files[n-1]
		if !last.full() {
			return last, nil
		}
		prevName, endPhy, endTs = last.name, last.endPhyOffset(), last.endTimestamp()
	}
	x.mu.Unlock()
	x.making.Lock()
	f := x.ahead
	x.ahead = nil
	var err error
	if f == nil || f.name <= prevName { // none, or made before a file the dispatcher made
		if f != nil {
			if derr := destroyMapped(f.mf); derr != nil {
				x.log.Warn().Err(derr).Msg("remove index file made ahead")
			}
		}
		f, err = x.create(prevName)
	}
	x.making.Unlock()
	x.mu.Lock()
	if err != nil {
		return nil, err
	}
	f.initHeader(endPhy, endTs)
	x.files = append(x.files, f)
	x.log.Info().Str("file", f.mf.path).Msg("index file created")
	return f, nil
}

// makeAhead makes the next index file before the dispatcher needs it
// (the allocator calls it): making one is a fallocate of its header, its
// slots and a first step of entries (24 MB by default) and an mmap, which
// would hold up dispatch, so every consumer. Only when the last file is
// missing or nearly full, and the disk is not: an unused file costs those
// blocks.
func (x *indexService) makeAhead() {
	x.mu.RLock()
	need, prevName := true, ""
	if n := len(x.files); n > 0 {
		last := x.files[n-1]
		need = last.indexCount() >= x.entries-x.entries/16
		prevName = last.name
	}
	x.mu.RUnlock()
	if !need || x.full() {
		return
	}
	x.making.Lock()
	defer x.making.Unlock()
	if x.ahead != nil {
		return
	}
	f, err := x.create(prevName)
	if err != nil {
		x.log.Warn().Err(err).Msg("index file not made ahead, the dispatcher makes it")
		return
	}
	x.ahead = f
}

// create makes an index file named after now and after prevName (if
// any); initHeader starts its header where the previous file ended. The
// file is sparse: its header, its slots (written anywhere) and a first
// step of entries get their blocks, the rest comes in steps ahead of the
// writer (reserve).
func (x *indexService) create(prevName string) (*indexFile, error) {
	if x.full() {
		return nil, fmt.Errorf("create index file: %w", ErrDiskFull)
	}
	if err := os.MkdirAll(x.dir, 0o755); err != nil {
		return nil, resourceErr(fmt.Errorf("create index dir: %w", err))
	}
	now := time.Now()
	name := indexFileName(now)
	for prevName != "" && name <= prevName { // same millisecond (or clock moved back)
		now = now.Add(time.Millisecond)
		name = indexFileName(now)
	}
	size := indexFileSize(int(x.slots), int(x.entries))
	mf, err := openMappedFile(x.ops, mustStorePath(x.dir, name), 0, size, true, true)
	if err != nil {
		return nil, fmt.Errorf("create index file: %w", err)
	}
	f := &indexFile{mf: mf, name: name, slots: x.slots, entries: x.entries}
	err = f.allocate(f.entryPos(1) + indexAllocStep)
	if err == nil {
		if mf.data, err = x.ops.mapFile(mf.path, size); err != nil {
			err = fmt.Errorf("map index file: %w", err)
		}
		f.backed.Store(true) // no entry yet
	}
	if err != nil {
		_ = x.ops.removeFile(mf.path) // best effort: load drops an empty file
		return nil, fmt.Errorf("create index file: %w", err)
	}
	return f, nil
}

// reserve gives the last file the blocks of its next n entries and a step
// beyond, before they are stored through the mapping. Only the dispatcher
// calls it, no lock held across the fallocate: the last file is never
// removed and only the dispatcher writes it.
func (x *indexService) reserve(n int32) error {
	x.mu.RLock()
	var f *indexFile
	if k := len(x.files); k > 0 && !x.files[k-1].full() {
		f = x.files[k-1]
	}
	x.mu.RUnlock()
	if f == nil {
		return nil // a new file comes with its first step
	}
	end := f.entryPos(min(f.indexCount()+n, f.entries))
	if end <= f.allocated {
		return nil
	}
	if x.full() {
		return fmt.Errorf("index file %s: %w", f.mf.path, ErrDiskFull)
	}
	return f.allocate(end + indexAllocStep)
}

// indexFileName is UtilAll.timeMillisToHumanString: local time yyyyMMddHHmmssSSS.
func indexFileName(t time.Time) string {
	return t.Format("20060102150405") + fmt.Sprintf("%03d", t.Nanosecond()/1e6)
}

// build indexes one dispatched record (IndexService.buildIndex): its
// UNIQ_KEY and each space-separated KEYS token, as "topic#key". ROLLBACK
// records are skipped; PREPARED records are indexed.
func (x *indexService) build(v *message.RecordView) error {
	if message.TransactionType(v.SysFlag) == message.TransactionRollbk {
		return nil
	}
	uniq := message.PropertyBytes(v.Properties, message.PropUniqClientMessageID)
	keys := message.PropertyBytes(v.Properties, message.PropKeys)
	if len(uniq) == 0 && len(keys) == 0 {
		return nil
	}
	now := time.Now()
	x.mu.Lock()
	if x.broken || now.Before(x.retryAt) {
		if !x.broken {
			x.skipped++
		}
		x.mu.Unlock()
		return nil
	}
	x.mu.Unlock()
	// The entries of the record (its unique key and at most one per
	// second byte of KEYS) get their blocks first, with no lock held.
	err := x.reserve(int32(min(2+len(keys)/2, int(x.entries))))
	x.mu.Lock()
	defer x.mu.Unlock()
	if err == nil {
		err = x.buildLocked(v, uniq, keys)
	}
	switch {
	case err == nil:
		if !x.retryAt.IsZero() {
			x.log.Info().Int64("recordsNotIndexed", x.skipped).Msg("indexing resumed")
			x.retryAt, x.skipped = time.Time{}, 0
		}
		return nil
	case isResource(err):
		// Out of disk or descriptors: the consume queues go on without the
		// index (Apache's index failure never holds them back); indexing
		// is tried again after indexRetry, and what is dispatched
		// meanwhile cannot be found by key.
		if x.retryAt.IsZero() {
			x.log.Warn().Err(err).Int64("offset", v.PhysicalOffset).Dur("retryIn", x.retry).
				Msg("index paused: records are dispatched but not indexed until it can be written again")
		}
		x.retryAt = now.Add(x.retry)
		x.skipped++
		return nil
	}
	x.broken = true
	return err
}

// indexRetry is how long indexing pauses after a resource error.
const indexRetry = 5 * time.Second

func (x *indexService) buildLocked(v *message.RecordView, uniq, keys []byte) error {
	f, err := x.lastWritableLocked()
	if err != nil {
		return err
	}
	end := f.endPhyOffset()
	if v.PhysicalOffset < end {
		return nil // indexed already (re-dispatch after recovery)
	}
	// Only a re-dispatch meets the last indexed record again: its keys
	// already in the file are not added twice.
	again := v.PhysicalOffset == end && f.indexCount() > 1
	if len(uniq) > 0 {
		if h := indexKeyHash(v.Topic, uniq); !again || !f.holds(h, end) {
			if err := x.putLocked(&f, h, v); err != nil {
				return err
			}
		}
	}
	for len(keys) > 0 {
		k := keys
		if i := bytes.IndexByte(keys, ' '); i >= 0 {
			k, keys = keys[:i], keys[i+1:]
		} else {
			keys = nil
		}
		if len(k) == 0 {
			continue
		}
		h := indexKeyHash(v.Topic, k)
		if again && f.holds(h, end) {
			continue
		}
		if err := x.putLocked(&f, h, v); err != nil {
			return err
		}
	}
	return nil
}

func (x *indexService) putLocked(f **indexFile, hash int32, v *message.RecordView) error {
	for !(*f).putKey(hash, v.PhysicalOffset, v.StoreTimestamp) {
		nf, err := x.lastWritableLocked()
		if err != nil {
			return err
		}
		*f = nf
	}
	return nil
}

// query returns the physical offsets (sorted, without duplicates) of
// records indexed under topic#key stored within [begin, end], newest files
// first, at most maxNum (IndexService.queryOffset), and the last file's end
// timestamp and offset.
func (x *indexService) query(topic, key string, maxNum int, begin, end int64) (offs []int64, lastTs, lastPhy int64) {
	hash := indexKeyHash([]byte(topic), []byte(key))
	x.mu.RLock()
	defer x.mu.RUnlock()
	for i := len(x.files) - 1; i >= 0; i-- {
		f := x.files[i]
		if i == len(x.files)-1 {
			lastTs, lastPhy = f.endTimestamp(), f.endPhyOffset()
		}
		if f.backed.Load() && f.timeMatched(begin, end) {
			offs = f.selectPhyOffsets(offs, hash, maxNum, begin, end)
		}
		if f.beginTimestamp() < begin || len(offs) >= maxNum {
			break
		}
	}
	slices.Sort(offs)
	return slices.Compact(offs), lastTs, lastPhy
}

// flush msyncs full files not flushed yet and, with all, the current one
// too. It returns the end timestamp of the newest full file it flushed (0
// if none), for the checkpoint's index timestamp (IndexService.flush).
func (x *indexService) flush(all bool) (int64, error) {
	x.maint.Lock()
	defer x.maint.Unlock()
	x.mu.RLock()
	var todo, unbacked []*indexFile
	for i, f := range x.files {
		if (f.full() && !f.flushed) || (all && i == len(x.files)-1) {
			todo = append(todo, f)
		}
		if !f.backed.Load() && (f.full() || i < len(x.files)-1) {
			unbacked = append(unbacked, f) // the dispatcher backs the one it writes
		}
	}
	x.mu.RUnlock()
	x.back(unbacked)
	var fullTs int64
	for _, f := range todo {
		// Outside mu (the dispatcher keeps indexing): maint keeps
		// deleteBelow away, close runs after the goroutines stopped.
		if err := f.flush(); err != nil {
			return fullTs, err
		}
		x.mu.Lock()
		if f.full() {
			f.flushed = true
			fullTs = max(fullTs, f.endTimestamp())
		}
		x.mu.Unlock()
	}
	return fullTs, nil
}

// back retries giving loaded files that no longer take entries the
// blocks of what they hold, so that queries read them again. Caller holds
// maint (deleteBelow unmaps files under it); the dispatcher never touches
// these files.
func (x *indexService) back(files []*indexFile) {
	for _, f := range files {
		if x.full() {
			return
		}
		if err := f.allocate(f.entryPos(f.indexCount())); err == nil {
			x.log.Info().Str("file", f.mf.path).Msg("index file queried again: its blocks are given")
		}
	}
}

// deleteBelow removes index files (never the last) whose end offset is
// below the commit log's min offset (IndexService.deleteExpiredFile).
// The files leave the list under mu and are unmapped and unlinked after
// it: queries read only under mu, and flush is kept away by maint.
func (x *indexService) deleteBelow(minPhy int64) (int, error) {
	x.maint.Lock()
	defer x.maint.Unlock()
	var gone []*indexFile
	x.mu.Lock()
	for len(x.files) > 1 && x.files[0].endPhyOffset() < minPhy && x.files[0].flushed {
		gone = append(gone, x.files[0])
		x.files[0] = nil
		x.files = x.files[1:]
	}
	x.mu.Unlock()
	var errs []error
	for _, f := range gone {
		end := f.endPhyOffset()
		errs = append(errs, destroyMapped(f.mf))
		x.log.Info().Str("file", f.mf.path).Int64("endPhyOffset", end).Msg("index file deleted")
	}
	return len(gone), errors.Join(errs...)
}

// dropAhead removes the file made ahead, if any (Shutdown).
func (x *indexService) dropAhead() error {
	x.making.Lock()
	defer x.making.Unlock()
	if x.ahead == nil {
		return nil
	}
	err := destroyMapped(x.ahead.mf)
	x.ahead = nil
	if err != nil {
		return fmt.Errorf("remove index file made ahead: %w", err)
	}
	return nil
}

// close unmaps every file, the one made ahead too (a crash leaves it on
// disk: load drops it).
func (x *indexService) close() error {
	x.mu.Lock()
	files := x.files
	x.files = nil
	x.mu.Unlock()
	var errs []error
	x.making.Lock()
	if x.ahead != nil {
		errs = append(errs, x.ahead.mf.unmap())
		x.ahead = nil
	}
	x.making.Unlock()
	for _, f := range files {
		errs = append(errs, f.mf.unmap())
	}
	return errors.Join(errs...)
}
