package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
)

// failOps returns hostOps() whose open and mmap fail with the given errno
// while *fail is set, for paths containing match; failed counts them.
func failOps(match string, openErr, mmapErr error, fail *atomic.Bool, failed *atomic.Int64) fileOps {
	ops := hostOps()
	open, mmap := ops.open, ops.mmap
	ops.open = func(path string, flag int, perm uint32) (int, error) {
		if openErr != nil && fail.Load() && strings.Contains(path, match) {
			failed.Add(1)
			return -1, openErr
		}
		return open(path, flag, perm)
	}
	ops.mmap = func(fd int, size int64) ([]byte, error) {
		if mmapErr != nil && fail.Load() {
			p, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
			if strings.Contains(p, match) {
				failed.Add(1)
				return nil, mmapErr
			}
		}
		return mmap(fd, size)
	}
	return ops
}

// failAllocOps returns hostOps() whose fallocate fails with ENOSPC while
// *fail is set, for paths containing match.
func failAllocOps(match string, fail *atomic.Bool, failed *atomic.Int64) fileOps {
	ops := hostOps()
	alloc := ops.allocate
	ops.allocate = func(fd int, off, n int64) error {
		if fail.Load() {
			p, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
			if strings.Contains(p, match) {
				failed.Add(1)
				return unix.ENOSPC
			}
		}
		return alloc(fd, off, n)
	}
	return ops
}

func openWithOps(t *testing.T, cfg Config, ops fileOps) *Store {
	t.Helper()
	s, err := openWith(cfg, testutil.Logger(), ops)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// spray puts one message to each of n topics with one queue each.
func spray(t *testing.T, s *Store, prefix string, n int) {
	t.Helper()
	for i := range n {
		if _, err := s.Put(testMsg(fmt.Sprintf("%s%d", prefix, i), 0, i)); err != nil {
			t.Fatal(err)
		}
	}
}

func checkSpray(t *testing.T, s *Store, prefix string, n, per int) {
	t.Helper()
	for i := range n {
		topic := fmt.Sprintf("%s%d", prefix, i)
		recs := readAll(t, s, topic, 0)
		if len(recs) != per {
			t.Fatalf("%s: %d records, want %d", topic, len(recs), per)
		}
		for k, r := range recs {
			if r.QueueOffset != int64(k) || r.Topic != topic {
				t.Fatalf("%s record %d: %+v", topic, k, r)
			}
		}
	}
}

func dispatched(t *testing.T, s *Store) {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
}

// TestManyQueuesBoundedMappings: with more queues than
// maxMappedConsumeQueueFiles, the unmapper keeps the count bounded, reads
// of unmapped files and appends to them work, and everything survives a
// restart.
func TestManyQueuesBoundedMappings(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	cfg.MaxMappedConsumeQueueFiles = 32
	s := openStarted(t, cfg)
	const n = 300
	spray(t, s, "M", n)
	dispatched(t, s)
	testutil.WaitFor(t, 10*time.Second, func() bool { return s.pendBytes.Load() == 0 })
	s.unmapIdle()
	if m := s.cqMapped.Load(); m > 32 {
		t.Fatalf("%d consume queue files mapped, limit 32", m)
	}
	checkSpray(t, s, "M", n, 1) // pread: the creator maps nothing
	spray(t, s, "M", n)         // appends map files up to the limit, then pwrite
	dispatched(t, s)
	if m := s.cqMapped.Load(); m > 32 {
		t.Fatalf("%d consume queue files mapped after appends, limit 32", m)
	}
	checkSpray(t, s, "M", n, 2)
	// The unmapper makes room: a queue written now is mapped. (unmapIdle
	// acts only from 7/8 of the limit, and the store's own may have
	// brought the count below that already, so the test unmaps to 3/4
	// itself.)
	s.unmapTo(24)
	if m := s.cqMapped.Load(); m > 24 {
		t.Fatalf("%d consume queue files mapped after unmapping, want 3/4 of 32", m)
	}
	isMapped := func(cq *consumeQueue) bool {
		cq.wmu.Lock()
		defer cq.wmu.Unlock()
		return cq.q.lastLocked().data != nil
	}
	cold := -1
	for i := range n {
		if !isMapped(s.findCQ(fmt.Sprintf("M%d", i), 0)) {
			cold = i
			break
		}
	}
	if cold < 0 {
		t.Fatal("every queue mapped")
	}
	// With more than half the limit mapped, a queue is mapped once it has
	// kept cqTailMax entries in memory within the limit's number of
	// entries (mayMap), not for a burst of a few.
	topic := fmt.Sprintf("M%d", cold)
	if err := s.writeTails(); err != nil { // as the thorough flush: the sprays' entries go to the files
		t.Fatal(err)
	}
	for i := range cqTailMax + 1 {
		if _, err := s.Put(testMsg(topic, 0, 0)); err != nil {
			t.Fatal(err)
		}
		dispatched(t, s)
		if i < cqTailMax && isMapped(s.findCQ(topic, 0)) {
			t.Fatalf("a cold queue mapped for %d entries past half the limit", i+1)
		}
	}
	if !isMapped(s.findCQ(topic, 0)) {
		t.Fatal("a queue that filled its memory fast with room under the limit is not mapped")
	}
	if recs := readAll(t, s, topic, 0); len(recs) != 2+cqTailMax+1 {
		t.Fatalf("%s: %d records", topic, len(recs))
	}
	// Blocks are allocated ahead of every write position: no hole below it.
	for _, cq := range s.allQueues() {
		cq.q.mu.RLock()
		mf := cq.q.lastLocked()
		cq.q.mu.RUnlock()
		fd, err := unix.Open(mf.path, unix.O_RDONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		hole, err := unix.Seek(fd, 0, unix.SEEK_HOLE)
		unix.Close(fd)
		if err != nil || hole < mf.wrote.Load() {
			t.Fatalf("%s: first hole at %d (%v), write position %d", mf.path, hole, err, mf.wrote.Load())
		}
	}
	shutdown(t, s)
	s = openStarted(t, cfg)
	defer shutdown(t, s)
	if m := s.cqMapped.Load(); m != 0 {
		t.Fatalf("%d files mapped by Open, want none", m)
	}
	for i := range n {
		want := int64(2)
		if i == cold {
			want = 2 + cqTailMax + 1
		}
		if got := s.MaxOffset(fmt.Sprintf("M%d", i), 0); got != want {
			t.Fatalf("M%d: max offset %d after a restart, want %d", i, got, want)
		}
	}
	if recs := readAll(t, s, topic, 0); len(recs) != 2+cqTailMax+1 {
		t.Fatalf("%s after a restart: %d records", topic, len(recs))
	}
}

// TestRoundRobinPastTheLimitIsNotRemapped: sends spread round robin over
// more queues than may be mapped leave the mappings alone once half the
// limit is mapped: the cold queues' entries are kept and written a batch at
// a time, none is mapped for one entry and unmapped before its next.
func TestRoundRobinPastTheLimitIsNotRemapped(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	cfg.MaxMappedConsumeQueueFiles = 32
	var maps, unmaps atomic.Int64
	ops := hostOps()
	mmap, munmap := ops.mmap, ops.munmap
	ops.mmap = func(fd int, size int64) ([]byte, error) {
		if p, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd)); strings.Contains(p, "consumequeue") {
			maps.Add(1)
		}
		return mmap(fd, size)
	}
	ops.munmap = func(path string, b []byte) error {
		if strings.Contains(path, "consumequeue") {
			unmaps.Add(1)
		}
		return munmap(path, b)
	}
	s := openWithOps(t, cfg, ops)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, s)
	// One entry a queue each round, then bursts of 4 (4 producers taking
	// the queues round robin from about the same place).
	const n, sprays, burst = 300, 5, 4
	for range sprays {
		spray(t, s, "R", n)
		dispatched(t, s)
		testutil.WaitFor(t, 10*time.Second, func() bool { return s.pendBytes.Load() == 0 })
	}
	checkSpray(t, s, "R", n, sprays)
	for range sprays {
		for i := range n {
			for range burst {
				if _, err := s.Put(testMsg(fmt.Sprintf("R%d", i), 0, 0)); err != nil {
					t.Fatal(err)
				}
			}
		}
		dispatched(t, s)
	}
	checkSpray(t, s, "R", n, sprays*(1+burst))
	t.Logf("%d sprays and %d of bursts of %d over %d queues: %d consume queue files mapped, %d unmapped",
		sprays, sprays, burst, n, maps.Load(), unmaps.Load())
	if maps.Load() > 32 || unmaps.Load() > 0 {
		t.Fatalf("%d maps and %d unmaps of consume queue files, want at most 32 and none", maps.Load(), unmaps.Load())
	}
}

// TestColdQueueEntriesKept: the entries of queues written round robin
// among more queues than may be mapped wait in memory after their last
// file's write position, are read from there, and reach the file
// cqTailMax at a time (one open for many entries), across rolls; after a
// crash they are rebuilt from the commit log, and Shutdown writes them.
func TestColdQueueEntriesKept(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	cfg.MaxMappedConsumeQueueFiles = 32
	cfg.MappedFileSizeConsumeQueue = 24 * cqEntrySize // rolls within the run
	var writeOpens atomic.Int64
	ops := hostOps()
	open := ops.open
	ops.open = func(path string, flag int, perm uint32) (int, error) {
		if strings.Contains(path, "consumequeue") && flag&unix.O_ACCMODE == unix.O_RDWR && flag&unix.O_CREAT == 0 {
			writeOpens.Add(1)
		}
		return open(path, flag, perm)
	}
	start := func() *Store {
		s := openWithOps(t, cfg, ops)
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := start()
	const n, rounds = 300, 40
	spray(t, s, "K", n)
	dispatched(t, s)
	testutil.WaitFor(t, 10*time.Second, func() bool { return s.pendBytes.Load() == 0 })
	before := writeOpens.Load()
	for range rounds - 1 {
		spray(t, s, "K", n)
		dispatched(t, s)
	}
	opens := writeOpens.Load() - before
	entries := int64(n * (rounds - 1))
	t.Logf("%d entries over %d queues: %d opens for writing, %d bytes of buffers", entries, n, opens, s.tailBytes.Load())
	if s.tailBytes.Load() == 0 {
		t.Fatal("no cold queue keeps entries in memory")
	}
	if opens > entries/8 {
		t.Fatalf("%d opens for writing %d entries, want fewer than one per 8", opens, entries)
	}
	checkSpray(t, s, "K", n, rounds) // from memory, the files and the mappings
	// A flush pass leaves the kept entries in memory: the checkpoint stays
	// at or below the oldest, so that recovery re-dispatches it.
	s.flushConsumeQueuePass(false)
	if logics, kept := s.ckpt.logics.Load(), keptOldest(s); logics > kept {
		t.Fatalf("checkpoint logics %d past the oldest entry kept in memory, stored at %d", logics, kept)
	}
	s.crashClose()
	s = start()
	checkSpray(t, s, "K", n, rounds) // kept entries are lost with the process: re-dispatched
	spray(t, s, "K", n)
	dispatched(t, s)
	shutdown(t, s)
	if s.tailBytes.Load() != 0 {
		t.Fatalf("%d bytes still kept after Shutdown", s.tailBytes.Load())
	}
	s = start()
	defer shutdown(t, s)
	checkSpray(t, s, "K", n, rounds+1) // a clean start trusts the files: Shutdown wrote them
}

// TestColdQueueReadsWhileKept: readers of cold queues, running beside the
// dispatcher that keeps their entries and writes them a batch at a time,
// see each queue's entries in order and without gaps, whichever of memory,
// mapping or file holds them at the moment.
func TestColdQueueReadsWhileKept(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	cfg.MaxMappedConsumeQueueFiles = 32
	cfg.MappedFileSizeConsumeQueue = 24 * cqEntrySize
	s := openStarted(t, cfg)
	defer shutdown(t, s)
	const n, rounds = 100, 50
	spray(t, s, "W", n)
	dispatched(t, s)
	stop := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		defer close(errc)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for i := range n {
				topic := fmt.Sprintf("W%d", i)
				for off := int64(0); ; {
					res := s.GetMessages(nil, topic, 0, off, 32, 1<<20, nil)
					if res.Status != Found {
						break
					}
					for b := res.Body; len(b) > 0; off++ {
						r, rest, err := message.DecodeRecord(b)
						if err != nil || r.QueueOffset != off || r.Topic != topic {
							errc <- fmt.Errorf("%s at %d: offset %d topic %s: %v", topic, off, r.QueueOffset, r.Topic, err)
							return
						}
						b = rest
					}
				}
			}
		}
	}()
	for range rounds {
		spray(t, s, "W", n)
	}
	dispatched(t, s)
	close(stop)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	checkSpray(t, s, "W", n, rounds+1)
}

// TestPendingEntries: entries of a queue whose first file does not exist
// yet are read from memory; the file is made by the thorough flush (here
// Shutdown) with fillers before a first entry past offset 0; a queue with
// more than cqPendMax entries pending gets its file from the dispatcher.
func TestPendingEntries(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	cfg.MappedFileSizeConsumeQueue = 1000 * cqEntrySize
	s, err := Open(cfg, testutil.Logger()) // no creator: files only on demand
	if err != nil {
		t.Fatal(err)
	}
	putN(t, s, "P", 1, 0, 5)
	if err := s.dispatchAvailable(); err != nil {
		t.Fatal(err)
	}
	if s.pendBytes.Load() != 5*cqEntrySize || len(s.findCQ("P", 0).q.files) != 0 {
		t.Fatalf("pending %d bytes", s.pendBytes.Load())
	}
	checkQueues(t, s, "P", 1, 5)
	if got := s.OffsetByTime("P", 0, 0); got != 0 {
		t.Fatalf("offset by time %d", got)
	}
	putN(t, s, "Busy", 1, 0, cqPendMax+10)
	if err := s.dispatchAvailable(); err != nil {
		t.Fatal(err)
	}
	if len(s.findCQ("Busy", 0).q.files) != 1 {
		t.Fatal("a queue past cqPendMax has no file")
	}
	checkQueues(t, s, "Busy", 1, cqPendMax+10)
	shutdown(t, s)
	if _, err := os.Stat(filepath.Join(cfg.StorePathRootDir, "consumequeue", "P", "0", fileName(0))); err != nil {
		t.Fatal(err)
	}
	s = openStarted(t, cfg)
	defer shutdown(t, s)
	checkQueues(t, s, "P", 1, 5)
	checkQueues(t, s, "Busy", 1, cqPendMax+10)
}

// TestDispatchRetriesResourceErrors: open refused with EMFILE or ENOSPC
// while consume queue files are made: dispatch is not stalled as corrupt,
// backs off and completes once the kernel gives again. mmap refused with
// ENOMEM (the map count) does not even hold dispatch back: entries are
// written with pwrite, and the mapping limit is lowered.
func TestDispatchRetriesResourceErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name            string
		openErr, mmapEr error
	}{
		{"ENOMEM", nil, unix.ENOMEM},
		{"EMFILE", unix.EMFILE, nil},
		{"ENOSPC", unix.ENOSPC, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var fail atomic.Bool
			var failed atomic.Int64
			cfg := testConfig(t.TempDir())
			s := openWithOps(t, cfg, failOps("consumequeue", tc.openErr, tc.mmapEr, &fail, &failed))
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			defer shutdown(t, s)
			fail.Store(true)
			const n = 2*cqPendMax + 40 // past cqPendMax: the dispatcher must make the files
			putN(t, s, "R", 2, 0, n)
			if tc.mmapEr != nil {
				dispatched(t, s)
				checkQueues(t, s, "R", 2, n)
				if failed.Load() == 0 || s.cqMapped.Load() != 0 {
					t.Fatalf("mmap refused %d times, %d files mapped", failed.Load(), s.cqMapped.Load())
				}
				if s.cqMapLimit.Load() >= int64(cfg.MaxMappedConsumeQueueFiles) {
					t.Fatal("ENOMEM did not lower the mapping limit")
				}
				return
			}
			// Retried after backoffs (10, 20, 40 ms): several refusals.
			testutil.WaitFor(t, 10*time.Second, func() bool { return failed.Load() >= 6 })
			if s.dispatchStalled.Load() {
				t.Fatal("a resource error stalled dispatch as corrupt data")
			}
			if s.DispatchedPhyOffset() == s.MaxPhyOffset() {
				t.Fatal("dispatch completed although consume queue files could not be made")
			}
			fail.Store(false)
			dispatched(t, s)
			checkQueues(t, s, "R", 2, n)
		})
	}
}

// TestUnreadableQueueFile: a consume queue file that is not mapped and
// cannot be opened (EMFILE) reads as nothing found at the same offset:
// the consumer is not moved past entries it has not seen.
func TestUnreadableQueueFile(t *testing.T) {
	t.Parallel()
	var fail atomic.Bool
	var failed atomic.Int64
	cfg := testConfig(t.TempDir())
	s := openStarted(t, cfg)
	putN(t, s, "U", 1, 0, 10)
	shutdown(t, s)
	s = openWithOps(t, cfg, failOps("consumequeue", unix.EMFILE, nil, &fail, &failed))
	defer shutdown(t, s)
	fail.Store(true)
	res := s.GetMessages(nil, "U", 0, 3, 32, 1<<20, nil)
	if res.Status != OffsetFoundNull || res.NextBeginOffset != 3 {
		t.Fatalf("unreadable file: %v next %d, want OFFSET_FOUND_NULL at 3", res.Status, res.NextBeginOffset)
	}
	fail.Store(false)
	if res := s.GetMessages(nil, "U", 0, 3, 32, 1<<20, nil); res.Status != Found || res.Count != 7 {
		t.Fatalf("readable again: %v %d", res.Status, res.Count)
	}
}

// TestRecoveryResourceErrors: a commit log that cannot be mapped at Open
// is a resource error, never corrupt data; consume queue files that
// cannot be made during recovery's re-dispatch do not stop Open, appends
// continue at the right queue offsets and dispatch completes later.
func TestRecoveryResourceErrors(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	s := openStarted(t, cfg)
	putN(t, s, "X", 1, 0, 5)
	dispatched(t, s)
	s.crashClose()
	// The crash lost the consume queue (as if never written).
	if err := os.RemoveAll(filepath.Join(cfg.StorePathRootDir, "consumequeue", "X")); err != nil {
		t.Fatal(err)
	}

	var fail atomic.Bool
	var failed atomic.Int64
	fail.Store(true)
	_, err := openWith(cfg, testutil.Logger(), failOps("commitlog", nil, unix.ENOMEM, &fail, &failed))
	if !errors.Is(err, ErrResource) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("commit log not mappable: %v, want a resource error", err)
	}

	cfg.MappedFileSizeConsumeQueue = 4 * cqEntrySize // past a file's worth pending: files needed
	s = openWithOps(t, cfg, failOps("consumequeue", unix.ENOSPC, nil, &fail, &failed))
	if s.DispatchedPhyOffset() == s.MaxPhyOffset() {
		t.Fatal("re-dispatch completed although consume queue files could not be made")
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, s)
	r, err := s.Put(testMsg("X", 0, 5))
	if err != nil || r.QueueOffset != 5 {
		t.Fatalf("put after recovery: %+v %v, want queue offset 5", r, err)
	}
	fail.Store(false)
	dispatched(t, s)
	checkQueues(t, s, "X", 1, 6)
}

// TestShutdownLeavesPendingToRecovery: a Shutdown that cannot make every
// missing consume queue file in its time (here: EMFILE throughout) says
// so, keeps the abort file and does not let the checkpoint cover those
// entries, so the next start re-dispatches them.
func TestShutdownLeavesPendingToRecovery(t *testing.T) {
	t.Parallel()
	var fail atomic.Bool
	var failed atomic.Int64
	cfg := testConfig(t.TempDir())
	s := openWithOps(t, cfg, failOps("consumequeue", unix.EMFILE, nil, &fail, &failed))
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	putN(t, s, "Early", 1, 0, 3) // files made, checkpoint written below
	dispatched(t, s)
	testutil.WaitFor(t, 10*time.Second, func() bool { return s.pendBytes.Load() == 0 })
	fail.Store(true)
	first, err := s.Put(testMsg("S0", 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	spray(t, s, "S", 50) // S0 gets a second message
	dispatched(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err = s.Shutdown(ctx)
	if err == nil || !strings.Contains(err.Error(), "entries only in memory") {
		t.Fatalf("shutdown: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cfg.StorePathRootDir, "abort")); err != nil {
		t.Fatalf("abort file: %v", err)
	}
	ck, err := loadCheckpoint(filepath.Join(cfg.StorePathRootDir, "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	if ck.logics.Load() >= first.StoreTimestamp {
		t.Fatalf("checkpoint logics %d covers an entry only in memory (stored %d)", ck.logics.Load(), first.StoreTimestamp)
	}
	s = openStarted(t, cfg)
	defer shutdown(t, s)
	if recs := readAll(t, s, "S0", 0); len(recs) != 2 {
		t.Fatalf("S0: %d records", len(recs))
	}
	for i := 1; i < 50; i++ {
		if got := s.MaxOffset(fmt.Sprintf("S%d", i), 0); got != 1 {
			t.Fatalf("S%d: max offset %d", i, got)
		}
	}
	checkQueues(t, s, "Early", 1, 3)
}

// keptOldest is the store time of the oldest entry a queue holds only in
// memory (MaxInt64 when none).
func keptOldest(s *Store) int64 {
	oldest := int64(math.MaxInt64)
	for _, cq := range s.allQueues() {
		cq.wmu.Lock()
		if len(cq.pend) >= cqEntrySize {
			if ts, ok := s.storeTimeAt(readEntry(cq.pend)); ok {
				oldest = min(oldest, ts)
			}
		}
		cq.wmu.Unlock()
	}
	return oldest
}
