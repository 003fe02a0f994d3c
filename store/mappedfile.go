package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

const pageSize = 4096

// mappedFile is one fixed-size file mapped read-write and shared. Bytes
// below wrote are immutable; the single writer (commit log: holder of the
// append lock, through the mapping or writeAt; consume queue: the
// dispatcher, through the mapping) writes at wrote and then publishes the
// new position.
//
// Consume queue files are mapped lazily (mappedQueue.lazy): data is nil
// while a file is not mapped (the unmapper drops idle mappings so that
// their number stays bounded, consumequeue.go). Their mapping changes only
// under the queue's write lock and the list's lock; readers copy from it
// under the list's read lock or pread the file when it is not mapped.
//
// Reference count (Apache's ReferenceResource): refs is 1 for the
// mappedQueue list the file is in, plus 1 per hold. A hold lets a slice of
// data outlive the list's lock (a pull answer written from the mapping).
// hold is taken only under the list's lock while the file is in the list,
// so refs never climbs back from 0; removing the file from the list drops
// the list's reference (retireLocked), and whoever drops the last
// reference unmaps: the remover after releasing the list's lock, a holder
// by handing the file to reap (munmap of a large resident mapping takes
// milliseconds, and holders run on network event loops). Shutdown unmaps
// regardless (mappedQueue.close), which is why it must come after
// everything that could still read a held slice has stopped. unmapped
// makes munmap happen once either way.
type mappedFile struct {
	path  string
	start int64 // file name: offset of byte 0 in the queue's stream
	size  int64
	ops   *fileOps
	data  []byte       // written only at open and by the one unmap (lazy files: see above)
	fd    atomic.Int32 // writeAt's descriptor, opened by its first call; -1 when closed

	// mapped counts the mapped files of its kind (lazy files only, else nil).
	mapped *atomic.Int64
	// allocated: [0, allocated) has its blocks (lazy files; the writer's).
	allocated int64

	wrote     atomic.Int64 // write position inside the file
	flushed   atomic.Int64 // msync'ed up to here
	populated atomic.Int64 // pages faulted in ahead of wrote up to here (prefault.go)

	// resident and residentAt: the last range of the file a reader found
	// in memory (residency.go), shared by every reader.
	resident   atomic.Uint64
	residentAt atomic.Int64

	refs     atomic.Int32
	unmapped atomic.Bool
	// reap, when set, unmaps the file off the releasing goroutine once its
	// last hold went (commit log files: Store.reapLater).
	reap func(*mappedFile)
}

// fileName is UtilAll.offset2FileName.
func fileName(start int64) string { return fmt.Sprintf("%020d", start) }

// openMappedFile maps path, creating it with the full size when create is
// set. An existing file must be exactly size bytes. A new file gets all its
// blocks at once (fallocate), so no store into its mapping can fault for
// lack of space: a full disk is an error here. A lazy file (consume queue)
// is only sized: its writer allocates blocks ahead of itself
// (consumeQueue.allocateLocked), and a loaded one is not mapped until used.
func openMappedFile(ops *fileOps, path string, start, size int64, create, lazy bool) (*mappedFile, error) {
	mf := &mappedFile{path: path, start: start, size: size, ops: ops}
	mf.fd.Store(-1)
	mf.refs.Store(1) // the list's
	if !create {
		fi, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("stat mapped file: %w", err)
		}
		if fi.Size() != size {
			return nil, fmt.Errorf("mapped file %s has %d bytes, want %d: %w", path, fi.Size(), size, ErrBadFileSize)
		}
		// Loaded files count as full until recovery sets the positions.
		mf.wrote.Store(size)
		mf.flushed.Store(size)
		if lazy {
			return mf, nil
		}
		data, err := ops.mapFile(path, size)
		if err != nil {
			return nil, err
		}
		mf.data = data
		return mf, nil
	}
	fd, err := ops.openFile(path, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL)
	if err != nil {
		return nil, err
	}
	if lazy {
		err = unix.Ftruncate(fd, size) // mapped by its writer, if at all
	} else {
		err = ops.allocateRange(fd, path, 0, size)
		if err == nil {
			if mf.data, err = ops.mmap(fd, size); err != nil {
				err = fmt.Errorf("mmap %s: %w", path, err)
			}
		}
	}
	unix.Close(fd) // the mapping outlives the descriptor; nothing written through it
	if err != nil {
		_ = ops.remove(path) // best effort: a short file would fail the next load
		return nil, resourceErr(fmt.Errorf("create mapped file %s: %w", path, err))
	}
	return mf, nil
}

// flush msyncs [flushed, wrote) and advances flushed. A lazy file the
// unmapper dropped is synced through a descriptor instead (its dirty
// pages stayed in the page cache).
func (mf *mappedFile) flush() error {
	wrote := mf.wrote.Load()
	flushed := mf.flushed.Load()
	if wrote <= flushed {
		return nil
	}
	if mf.data == nil {
		if err := mf.ops.syncFile(mf.path); err != nil {
			return err
		}
		mf.flushedTo(wrote)
		return nil
	}
	from := flushed &^ (pageSize - 1)
	if err := mf.ops.msync(mf.path, mf.data[from:wrote]); err != nil {
		return fmt.Errorf("msync %s: %w", mf.path, err)
	}
	mf.flushedTo(wrote)
	return nil
}

// flushedTo raises flushed to pos (two flushers may finish out of order).
func (mf *mappedFile) flushedTo(pos int64) {
	for f := mf.flushed.Load(); f < pos && !mf.flushed.CompareAndSwap(f, pos); f = mf.flushed.Load() {
	}
}

// dirtyPages is the number of 4 KiB pages written but not flushed.
func (mf *mappedFile) dirtyPages() int64 {
	return mf.wrote.Load()/pageSize - mf.flushed.Load()/pageSize
}

// hold takes a reference. Call it only under the list's lock with the file
// still in the list (so the list's reference keeps it mapped meanwhile).
func (mf *mappedFile) hold() { mf.refs.Add(1) }

// held reports whether anything but the list holds the file.
func (mf *mappedFile) held() bool { return mf.refs.Load() > 1 }

// release drops a hold; dropping the last reference unmaps, through reap
// when the file has one (then off this goroutine, and errors are logged
// there).
func (mf *mappedFile) release() error {
	last, err := mf.unref()
	switch {
	case !last:
		return err
	case mf.reap != nil:
		mf.reap(mf)
		return nil
	}
	return mf.unmap()
}

// unref drops a reference and reports whether it was the last: then the
// caller unmaps.
func (mf *mappedFile) unref() (bool, error) {
	switch n := mf.refs.Add(-1); {
	case n > 0:
		return false, nil
	case n < 0:
		return false, fmt.Errorf("BUG: mapped file %s released %d more times than held", mf.path, -n)
	}
	return true, nil
}

// unmap unmaps the file now, whatever its references (the last release,
// or shutdown); the first call wins.
func (mf *mappedFile) unmap() error {
	if !mf.unmapped.CompareAndSwap(false, true) {
		return nil
	}
	var err error
	if mf.data != nil {
		err = mf.ops.munmap(mf.path, mf.data)
		if mf.mapped != nil {
			mf.mapped.Add(-1)
		}
	}
	err = errors.Join(err, mf.closeFD())
	mf.data = nil
	if err != nil {
		return fmt.Errorf("unmap %s: %w", mf.path, err)
	}
	return nil
}

// writeAt writes b at pos with pwrite, into the same page cache pages the
// mapping shows (readers see the bytes once pwrite returns). Only the
// file's single writer calls it; the descriptor stays open until closeFD.
func (mf *mappedFile) writeAt(b []byte, pos int64) error {
	fd := int(mf.fd.Load())
	if fd < 0 {
		var err error
		if fd, err = mf.ops.openFile(mf.path, unix.O_RDWR); err != nil {
			return err
		}
		mf.fd.Store(int32(fd))
	}
	for len(b) > 0 {
		n, err := unix.Pwrite(fd, b, pos)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return resourceErr(fmt.Errorf("write %s at %d: %w", mf.path, pos, err))
		case n == 0:
			return fmt.Errorf("write %s at %d: %w", mf.path, pos, io.ErrShortWrite)
		}
		b, pos = b[n:], pos+int64(n)
	}
	return nil
}

// closeFD closes writeAt's descriptor, if open: when the file is full (the
// commit log rolled) or unmapped.
func (mf *mappedFile) closeFD() error {
	if fd := mf.fd.Swap(-1); fd >= 0 {
		return unix.Close(int(fd))
	}
	return nil
}

// truncMode is how truncate treats the bytes after the new end.
type truncMode int

const (
	truncSync    truncMode = iota // zeroed and synced (commit log)
	truncZero                     // zeroed; the caller syncs (consume queues at recovery: syncfs once)
	truncPosOnly                  // left as they are: known zero (a consume queue after a normal exit)
)

// truncateAt sets the positions to pos and, unless truncPosOnly, zeroes
// everything after it (punching a hole where possible), so stale bytes
// never look like data. Through the file, not the mapping: no store into
// pages that may have no blocks (the hole), and lazy files need not be
// mapped.
func (mf *mappedFile) truncateAt(pos int64, mode truncMode) error {
	mf.wrote.Store(pos)
	mf.flushed.Store(pos)
	mf.allocated = min(mf.allocated, pos)
	if mode == truncPosOnly {
		return nil
	}
	fd, err := mf.ops.openFile(mf.path, unix.O_RDWR)
	if err != nil {
		return fmt.Errorf("truncate %s at %d: %w", mf.path, pos, err)
	}
	defer unix.Close(fd) // closed after fdatasync, which reports write errors
	hole := min((pos+pageSize-1)&^(pageSize-1), mf.size)
	err = writeZeros(fd, pos, hole-pos)
	if err == nil && hole < mf.size {
		if unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, hole, mf.size-hole) != nil {
			err = writeZeros(fd, hole, mf.size-hole)
		}
	}
	if err == nil && mode == truncSync {
		err = unix.Fdatasync(fd)
	}
	if err != nil {
		return resourceErr(fmt.Errorf("truncate %s at %d: %w", mf.path, pos, err))
	}
	return nil
}

// mappedQueue is the ordered list of files of a commit log or one consume
// queue. mu guards the slices (and unmapping); file contents follow the
// mappedFile rules.
type mappedQueue struct {
	dir      string
	fileSize int64
	ops      *fileOps
	// lazy: consume queue files, mapped on demand and counted in mapped.
	lazy bool
	// dirtySince (consume queues) is the store time, in seconds, of the
	// oldest entry not known to be on disk (written and not flushed, or
	// kept in memory), 0 when there is none: the checkpoint's logics time
	// never passes it (Store.flushConsumeQueues). Set by the writer under
	// the queue's wmu, cleared by the flusher under it.
	dirtySince atomic.Uint32
	mapped     *atomic.Int64
	// reap is given to every file of the queue (mappedFile.reap).
	reap func(*mappedFile)

	mu    sync.RWMutex
	files []*mappedFile
	// retired are files taken out of files while held: their last release
	// unmaps them, or close does at shutdown. Unmapped ones are pruned at
	// the next retirement, so the slice stays as short as the holds are.
	retired []*mappedFile
}

// load maps every file of dir in name order. A zero-length last file (a
// crash during creation) is removed, as 5.x does.
func (q *mappedQueue) load() error {
	ents, err := os.ReadDir(q.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load %s: %w", q.dir, err)
	}
	type named struct {
		name  string
		start int64
	}
	var names []named
	for _, e := range ents {
		if e.IsDir() || len(e.Name()) != 20 {
			continue
		}
		start, err := strconv.ParseInt(e.Name(), 10, 64)
		if err != nil {
			continue
		}
		names = append(names, named{e.Name(), start})
	}
	sort.Slice(names, func(i, j int) bool { return names[i].start < names[j].start })
	for i, n := range names {
		path := mustStorePath(q.dir, n.name)
		if i == len(names)-1 {
			if fi, err := os.Stat(path); err == nil && fi.Size() == 0 {
				if err := q.ops.remove(path); err != nil {
					return fmt.Errorf("remove empty last file %s: %w", path, err)
				}
				continue
			}
		}
		if i > 0 && n.start != names[i-1].start+q.fileSize {
			return fmt.Errorf("load %s: file %s does not follow %s: %w", q.dir, n.name, names[i-1].name, ErrCorrupt)
		}
		mf, err := openMappedFile(q.ops, path, n.start, q.fileSize, false, q.lazy)
		if err != nil {
			return fmt.Errorf("load %s: %w", q.dir, err)
		}
		mf.mapped, mf.reap = q.mapped, q.reap
		q.files = append(q.files, mf)
	}
	return nil
}

// lastLocked returns the last file or nil.
func (q *mappedQueue) lastLocked() *mappedFile {
	if len(q.files) == 0 {
		return nil
	}
	return q.files[len(q.files)-1]
}

// findLocked returns the file holding offset, or nil.
func (q *mappedQueue) findLocked(offset int64) *mappedFile {
	if len(q.files) == 0 || offset < q.files[0].start {
		return nil
	}
	i := (offset - q.files[0].start) / q.fileSize
	if i >= int64(len(q.files)) {
		return nil
	}
	return q.files[i]
}

// newFile creates and appends the file starting at start.
func (q *mappedQueue) newFile(start int64) (*mappedFile, error) {
	mf, err := q.createFile(start)
	if err != nil {
		return nil, err
	}
	q.mu.Lock()
	q.files = append(q.files, mf)
	q.mu.Unlock()
	return mf, nil
}

// createFile creates the file starting at start (mapped unless the queue
// is lazy), without adding it to the list.
func (q *mappedQueue) createFile(start int64) (*mappedFile, error) {
	return q.createFileAt(start, mustStorePath(q.dir, fileName(start)))
}

// createFileAt is createFile with the file's path, storePath(q.dir,
// fileName(start)), made by the caller.
func (q *mappedQueue) createFileAt(start int64, path string) (*mappedFile, error) {
	if err := os.MkdirAll(q.dir, 0o755); err != nil {
		return nil, resourceErr(fmt.Errorf("create dir %s: %w", q.dir, err))
	}
	mf, err := openMappedFile(q.ops, path, start, q.fileSize, true, q.lazy)
	if err != nil {
		return nil, err
	}
	mf.mapped, mf.reap = q.mapped, q.reap
	return mf, nil
}

// retireLocked drops the list's reference to mf, which the caller (holding
// mu for writing) has just taken out of files, and reports whether it was
// the last: then the caller unmaps mf after releasing mu (no munmap under a
// lock readers take). A held file is unmapped by its last release (or
// close).
func (q *mappedQueue) retireLocked(mf *mappedFile) (bool, error) {
	q.retired = slices.DeleteFunc(q.retired, func(r *mappedFile) bool { return r.unmapped.Load() })
	last, err := mf.unref()
	if !last {
		q.retired = append(q.retired, mf)
	}
	return last, err
}

// truncate drops everything at or after offset: later files are unmapped
// and deleted, the file holding offset is cut there (truncateAt). Not for
// use while readers run (recovery, before Start: the I/O under mu blocks
// nobody); a held file is refused rather than zeroed under its holder.
func (q *mappedQueue) truncate(offset int64, mode truncMode) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, mf := range q.files {
		if mf.start+mf.size > offset && mf.held() {
			return fmt.Errorf("BUG: truncate %s at %d: %s is held", q.dir, offset, mf.path)
		}
	}
	keep := q.files[:0]
	var errs []error
	for _, mf := range q.files {
		switch {
		case mf.start+mf.size <= offset:
			keep = append(keep, mf)
		case mf.start < offset || (mf.start == offset && len(keep) == 0):
			errs = append(errs, mf.truncateAt(offset-mf.start, mode))
			keep = append(keep, mf)
		default:
			last, err := q.retireLocked(mf)
			if last {
				err = errors.Join(err, mf.unmap())
			}
			errs = append(errs, err, q.ops.remove(mf.path))
		}
	}
	clear(q.files[len(keep):])
	q.files = keep
	return errors.Join(errs...)
}

// flush msyncs files in order while each has at least leastPages dirty
// pages (or is full); leastPages 0 flushes everything. It returns the
// offset flushed up to in the queue's stream. The list is snapshotted, so
// appends that roll to a new file never wait for an msync (the commit log:
// cleanup unmaps only fully flushed files, which this skips).
func (q *mappedQueue) flush(leastPages int) (int64, error) {
	q.mu.RLock()
	files := append([]*mappedFile(nil), q.files...)
	q.mu.RUnlock()
	var where int64
	for _, mf := range files {
		// Cleanup unmaps only fully flushed files, so a snapshotted file
		// whose data may be gone is skipped here before data is touched.
		where = mf.start + mf.flushed.Load()
		if mf.flushed.Load() >= mf.wrote.Load() {
			continue
		}
		if leastPages > 0 && mf.wrote.Load() < mf.size && mf.dirtyPages() < int64(leastPages) {
			break
		}
		if err := mf.flush(); err != nil {
			return where, err
		}
		where = mf.start + mf.flushed.Load()
	}
	return where, nil
}

// close unmaps every file, retired ones still held included: at shutdown
// the holders' releases may never come (an asynchronous write queued on a
// stopped engine never calls back), so close does not wait for them and
// must run only after everything that reads held slices has stopped. A
// release arriving later finds the file unmapped and does nothing.
func (q *mappedQueue) close() error {
	var errs []error
	for _, mf := range q.detach() {
		errs = append(errs, mf.unmap())
	}
	return errors.Join(errs...)
}

// detach empties the list and returns its files, retired ones included,
// for the caller to unmap after mu is released.
func (q *mappedQueue) detach() []*mappedFile {
	q.mu.Lock()
	defer q.mu.Unlock()
	all := append(q.files, q.retired...)
	q.files, q.retired = nil, nil
	return all
}
