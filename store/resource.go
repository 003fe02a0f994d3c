package store

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Resource errors. The kernel refusing a mapping (ENOMEM: the process is
// at vm.max_map_count), a descriptor (EMFILE, ENFILE) or space (ENOSPC,
// EDQUOT) says nothing about the data: it is never taken for corrupt data
// and never ends the process. Appends answer it (ErrDiskFull for space),
// the dispatcher backs off and retries the record (dispatch.go), readers
// report nothing read, recovery names it as such.

// resourceErr marks err with ErrDiskFull (ENOSPC, EDQUOT) or ErrResource
// (ENOMEM, EMFILE, ENFILE); other errors come back as they are.
func resourceErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrResource), errors.Is(err, ErrDiskFull):
		return err
	case errors.Is(err, unix.ENOSPC), errors.Is(err, unix.EDQUOT):
		return fmt.Errorf("%w (%w)", err, ErrDiskFull)
	case errors.Is(err, unix.ENOMEM), errors.Is(err, unix.EMFILE), errors.Is(err, unix.ENFILE):
		return fmt.Errorf("%w (%w)", err, ErrResource)
	}
	return err
}

// isResource reports whether err is a resource error (space included).
func isResource(err error) bool {
	return errors.Is(err, ErrResource) || errors.Is(err, ErrDiskFull)
}

// fileOps are the system calls of the store that can run out of a
// resource or take long. The store keeps its own copy (Store.ops), which
// tests replace to inject ENOMEM, EMFILE or ENOSPC, or to make a call
// slower than any lock a network event loop may wait on could be held
// (io_test.go: no such lock is held across them).
type fileOps struct {
	open     func(path string, flag int, perm uint32) (int, error) // with O_CREAT: file creation
	mmap     func(fd int, size int64) ([]byte, error)
	allocate func(fd int, off, n int64) error // fallocate, mode 0
	// diskSpace is the used ratio of path's partition and its size (space.go).
	diskSpace func(path string) (float64, int64, error)

	msync     func(path string, b []byte) error // MS_SYNC
	munmap    func(path string, b []byte) error
	fdatasync func(path string, fd int) error
	syncfs    func(path string, fd int) error
	remove    func(path string) error // unlink
	removeAll func(path string) error // a consume queue directory
}

// sysOps are the real system calls.
var sysOps = fileOps{
	open: func(path string, flag int, perm uint32) (int, error) {
		return unix.Open(path, flag|unix.O_CLOEXEC, perm)
	},
	mmap: func(fd int, size int64) ([]byte, error) {
		return unix.Mmap(fd, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	},
	allocate:  func(fd int, off, n int64) error { return unix.Fallocate(fd, 0, off, n) },
	diskSpace: diskSpace,
	msync:     func(_ string, b []byte) error { return unix.Msync(b, unix.MS_SYNC) },
	munmap:    func(_ string, b []byte) error { return unix.Munmap(b) },
	fdatasync: func(_ string, fd int) error { return unix.Fdatasync(fd) },
	syncfs:    func(_ string, fd int) error { return unix.Syncfs(fd) },
	remove:    os.Remove,
	removeAll: os.RemoveAll,
}

// removeFile unlinks path; one already gone is no error.
func (o *fileOps) removeFile(path string) error {
	if err := o.remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// openFile opens path (read-write unless flag says otherwise).
func (o *fileOps) openFile(path string, flag int) (int, error) {
	fd, err := o.open(path, flag, 0o644)
	if err != nil {
		return -1, resourceErr(fmt.Errorf("open %s: %w", path, err))
	}
	return fd, nil
}

// mapFile maps size bytes of path read-write and shared; the descriptor
// is closed again (the mapping keeps the file).
func (o *fileOps) mapFile(path string, size int64) ([]byte, error) {
	fd, err := o.openFile(path, unix.O_RDWR)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd) // read-only use of fd: nothing to report
	data, err := o.mmap(fd, size)
	if err != nil {
		return nil, resourceErr(fmt.Errorf("mmap %s: %w", path, err))
	}
	return data, nil
}

// zeros is what writeZeros writes.
var zeros [64 << 10]byte

// allocateRange gives [off, off+n) of fd its blocks, so that a later store
// through a mapping of it cannot fault for lack of space (SIGBUS): the
// shortage is an error here instead. Bytes already there are kept: without
// fallocate (EOPNOTSUPP) the range is read and written back as it is,
// which the caller must not write to meanwhile.
func (o *fileOps) allocateRange(fd int, path string, off, n int64) error {
	err := o.allocate(fd, off, n)
	if errors.Is(err, unix.EOPNOTSUPP) {
		err = rewriteRange(fd, off, n)
	}
	if err != nil {
		return resourceErr(fmt.Errorf("allocate %s [%d, %d): %w", path, off, off+n, err))
	}
	return nil
}

// rewriteRange writes [off, off+n) of fd back as it reads (holes read as
// zeros), so that every block of it is allocated and nothing changes.
func rewriteRange(fd int, off, n int64) error {
	buf := make([]byte, min(n, 1<<20))
	for n > 0 {
		b := buf[:min(n, int64(len(buf)))]
		k, err := unix.Pread(fd, b, off)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return err
		case k == 0: // past the end of the file: zeros extend it
			clear(b)
			k = len(b)
		}
		if err := pwriteFull(fd, b[:k], off); err != nil {
			return err
		}
		off, n = off+int64(k), n-int64(k)
	}
	return nil
}

// pwriteFull writes b at off.
func pwriteFull(fd int, b []byte, off int64) error {
	for len(b) > 0 {
		k, err := unix.Pwrite(fd, b, off)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return err
		case k == 0:
			return io.ErrShortWrite
		}
		b, off = b[k:], off+int64(k)
	}
	return nil
}

// writeZeros writes n zero bytes at off.
func writeZeros(fd int, off, n int64) error {
	for n > 0 {
		k, err := unix.Pwrite(fd, zeros[:min(n, int64(len(zeros)))], off)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return err
		case k == 0:
			return io.ErrShortWrite
		}
		off, n = off+int64(k), n-int64(k)
	}
	return nil
}

// syncFile fdatasyncs path.
func (o *fileOps) syncFile(path string) error { return o.syncWith(path, "fdatasync", o.fdatasync) }

// syncFS syncs the file system holding path (syncfs: one call for any
// number of dirty files; since Linux 5.8 it reports write-back errors).
func (o *fileOps) syncFS(path string) error { return o.syncWith(path, "syncfs", o.syncfs) }

func (o *fileOps) syncWith(path, what string, sync func(path string, fd int) error) error {
	fd, err := o.openFile(path, unix.O_RDONLY)
	if err != nil {
		return err
	}
	err = sync(path, fd)
	unix.Close(fd) // the sync result is err
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, path, err)
	}
	return nil
}

// preadFull reads len(b) bytes at off of path.
func (o *fileOps) preadFull(path string, b []byte, off int64) error {
	fd, err := o.openFile(path, unix.O_RDONLY)
	if err != nil {
		return err
	}
	defer unix.Close(fd) // read-only: nothing to report
	for len(b) > 0 {
		n, err := unix.Pread(fd, b, off)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return resourceErr(fmt.Errorf("read %s at %d: %w", path, off, err))
		case n == 0:
			return fmt.Errorf("read %s at %d: %w", path, off, io.ErrUnexpectedEOF)
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}
