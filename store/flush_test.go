package store

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

// TestFlushLeastPages: with ASYNC_FLUSH a commit log flush waits for
// flushCommitLogLeastPages dirty pages, except every
// flushCommitLogThoroughInterval, when everything is flushed.
func TestFlushLeastPages(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	cfg.FlushIntervalCommitLog = 5
	cfg.FlushCommitLogLeastPages = 4
	cfg.FlushCommitLogThoroughInterval = 300
	s := openStarted(t, cfg)
	t0 := time.Now()
	putN(t, s, "F", 1, 0, 1) // far less than a page
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.cl.flushedWhere.Load() >= s.MaxPhyOffset() })
	if d := time.Since(t0); d < 250*time.Millisecond {
		t.Fatalf("one small message flushed after %v, before the thorough interval", d)
	}
	shutdown(t, s)

	cfg = testConfig(t.TempDir())
	cfg.FlushIntervalCommitLog = 5
	cfg.FlushCommitLogLeastPages = 4
	cfg.FlushCommitLogThoroughInterval = 600000
	s = openStarted(t, cfg)
	defer shutdown(t, s)
	m := testMsg("F", 0, 0)
	m.Body = make([]byte, 5*pageSize)
	if _, err := s.Put(m); err != nil {
		t.Fatal(err)
	}
	// Five dirty pages: flushed by an ordinary interval.
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.cl.flushedWhere.Load() >= s.MaxPhyOffset() })
	if s.ckpt.physic.Load() == 0 {
		t.Fatal("checkpoint physic timestamp not advanced by a complete flush")
	}
}

// The checkpoint's logics time follows each consume queue flush pass, not
// only the thorough one: it reaches the newest dispatched record once every
// queue is on disk, and stays at or below the oldest entry a pass left
// unflushed (fewer dirty pages than flushConsumeQueueLeastPages) until a
// pass flushes it. Written to the checkpoint file each time it moves.
func TestCheckpointFollowsConsumeQueueFlushes(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	cfg.FlushIntervalConsumeQueue = 3_600_000 // passes run by the test
	cfg.FlushConsumeQueueThoroughInterval = 3_600_000
	cfg.FlushConsumeQueueLeastPages = 2
	cfg.MappedFileSizeConsumeQueue = 4096 * cqEntrySize
	s := openStarted(t, cfg)
	defer shutdown(t, s)
	onDisk := func() int64 {
		t.Helper()
		ck, err := loadCheckpoint(filepath.Join(cfg.StorePathRootDir, "checkpoint"))
		if err != nil {
			t.Fatal(err)
		}
		return ck.logics.Load()
	}
	caughtUp := func() {
		t.Helper()
		testutil.WaitFor(t, 5*time.Second, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
	}
	busy := func(from int) int64 { // 3 pages of entries
		res := putN(t, s, "Busy", 1, from, 3*pageSize/cqEntrySize)
		return res[len(res)-1].StoreTimestamp
	}

	last := busy(0)
	caughtUp()
	s.flushConsumeQueuePass(false)
	if got := s.ckpt.logics.Load(); got != last || onDisk() != last {
		t.Fatalf("every queue flushed: logics %d (file %d), want the last record's %d", got, onDisk(), last)
	}

	quiet := putN(t, s, "Quiet", 1, 0, 1)[0].StoreTimestamp
	time.Sleep(1100 * time.Millisecond) // the busy records a second later
	last = busy(10_000)
	caughtUp()
	s.flushConsumeQueuePass(false)
	if got := s.ckpt.logics.Load(); got > quiet || got < quiet-1000 || onDisk() != got {
		t.Fatalf("one entry left unflushed at %d: logics %d (file %d), want its second", quiet, got, onDisk())
	}

	s.flushConsumeQueuePass(true)
	if got := s.ckpt.logics.Load(); got != last || onDisk() != last {
		t.Fatalf("after the thorough pass: logics %d (file %d), want %d", got, onDisk(), last)
	}
	if d := s.findCQ("Quiet", 0).q.dirtySince.Load(); d != 0 {
		t.Fatalf("a flushed queue is dirty since %d", d)
	}
}

// A replica's truncation drops a queue's unflushed entries without a
// flush: the next pass finds the queue clean and stops it holding the
// checkpoint back.
func TestCheckpointAfterReplicaTruncation(t *testing.T) {
	t.Parallel()
	m := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, m)
	cfg := replicaConfig(t.TempDir())
	cfg.FlushIntervalConsumeQueue = 3_600_000 // passes run by the test
	cfg.FlushConsumeQueueThoroughInterval = 3_600_000
	r := openStarted(t, cfg)
	defer shutdown(t, r)

	putN(t, m, "Kept", 1, 0, 10)
	end := copyReplica(t, m, r, 0, 32<<10)
	testutil.WaitFor(t, 5*time.Second, func() bool { return r.DispatchedPhyOffset() == end })
	r.flushConsumeQueuePass(false)
	cut := putN(t, m, "Cut", 1, 0, 10)[0].PhysicalOffset
	end = copyReplica(t, m, r, end, 32<<10)
	testutil.WaitFor(t, 5*time.Second, func() bool { return r.DispatchedPhyOffset() == end })
	if r.findCQ("Cut", 0).q.dirtySince.Load() == 0 {
		t.Fatal("the dispatched entries left their queue clean")
	}
	if err := r.TruncateReplica(cut); err != nil {
		t.Fatal(err)
	}
	r.flushConsumeQueuePass(false)
	if d := r.findCQ("Cut", 0).q.dirtySince.Load(); d != 0 {
		t.Fatalf("a truncated queue with nothing to flush is dirty since %d", d)
	}
}

// A pass that flushes cold queues' files while they keep newer entries
// only in memory leaves the checkpoint at or below the oldest of them: a
// crash loses those entries, and recovery must re-dispatch them.
func TestCheckpointBelowKeptEntries(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	cfg.FlushIntervalConsumeQueue = 3_600_000 // passes run by the test
	cfg.FlushConsumeQueueThoroughInterval = 3_600_000
	cfg.FlushConsumeQueueLeastPages = 0 // every dirty file, each pass
	cfg.MaxMappedConsumeQueueFiles = 32
	cfg.MappedFileSizeConsumeQueue = 64 * cqEntrySize
	s := openStarted(t, cfg)
	defer shutdown(t, s)
	const n = 300 // queues written round robin: more than may be mapped
	for range cqTailMax + 5 {
		spray(t, s, "K", n)
		dispatched(t, s)
	}
	dirtyKept := 0
	for _, cq := range s.allQueues() {
		cq.wmu.Lock()
		cq.q.mu.RLock()
		if mf := cq.q.lastLocked(); mf != nil && len(cq.pend) > 0 && mf.wrote.Load() > mf.flushed.Load() {
			dirtyKept++
		}
		cq.q.mu.RUnlock()
		cq.wmu.Unlock()
	}
	kept := keptOldest(s)
	if dirtyKept == 0 {
		t.Fatal("setup: no queue with a dirty file and entries kept in memory")
	}
	time.Sleep(1100 * time.Millisecond) // a later second: dirtySince counts whole ones
	spray(t, s, "Later", 1)
	dispatched(t, s)
	s.flushConsumeQueuePass(false)
	if logics := s.ckpt.logics.Load(); logics > kept {
		t.Fatalf("checkpoint logics %d past the oldest entry kept in memory, stored at %d (%d queues)", logics, kept, dirtyKept)
	}
}
