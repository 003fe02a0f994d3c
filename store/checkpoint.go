package store

// checkpoint file (StoreCheckpoint), 4096 bytes, big-endian longs:
//
//	off  field
//	  0  physicMsgTimestamp  store time of the newest flushed commit log data
//	  8  logicsMsgTimestamp  consume queue entries of records stored up to this time are on disk
//	 16  indexMsgTimestamp   end time of the last full index file
//	 24  masterFlushedOffset (5.x, preserved)
//	 32  confirmPhyOffset    (5.x: the AutoSwitch confirm offset, confirm.go)
//
// Bytes we do not use are read and written back unchanged.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

const checkpointSize = 4096

type checkpoint struct {
	path   string
	physic atomic.Int64
	logics atomic.Int64
	index  atomic.Int64
	// confirm is written back as read unless SetConfirmOffset changed it.
	confirm atomic.Int64

	// mu serialises flushes (the flush goroutine and Close) across their
	// write and fsync; readers use the atomics and never take it.
	mu  sync.Mutex
	buf [checkpointSize]byte
}

func loadCheckpoint(path string) (*checkpoint, error) {
	c := &checkpoint{path: path}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load checkpoint: %w", err)
	}
	copy(c.buf[:], b)
	c.physic.Store(int64(binary.BigEndian.Uint64(c.buf[0:])))
	c.logics.Store(int64(binary.BigEndian.Uint64(c.buf[8:])))
	c.index.Store(int64(binary.BigEndian.Uint64(c.buf[16:])))
	c.confirm.Store(int64(binary.BigEndian.Uint64(c.buf[32:])))
	return c, nil
}

// minTimestamp is StoreCheckpoint.getMinTimestamp.
func (c *checkpoint) minTimestamp() int64 {
	m := min(c.physic.Load(), c.logics.Load()) - 3000
	return max(m, 0)
}

// flush writes the current values and syncs their block (fdatasync: the
// file's size never changes, so no journal commit for its times; the
// consume queue flusher may write it every second).
func (c *checkpoint) flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	binary.BigEndian.PutUint64(c.buf[0:], uint64(c.physic.Load()))
	binary.BigEndian.PutUint64(c.buf[8:], uint64(c.logics.Load()))
	binary.BigEndian.PutUint64(c.buf[16:], uint64(c.index.Load()))
	binary.BigEndian.PutUint64(c.buf[32:], uint64(c.confirm.Load()))
	f, err := os.OpenFile(c.path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	if _, err := f.WriteAt(c.buf[:], 0); err != nil {
		f.Close()
		return fmt.Errorf("write checkpoint: %w", err)
	}
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		f.Close()
		return fmt.Errorf("sync checkpoint: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close checkpoint: %w", err)
	}
	return nil
}
