package store

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

// The tests here slow a system call on purpose (it blocks until the test
// lets it go) and show that appends, pulls and dispatch go on while it is
// held: no lock they wait for is held across it. They assert on what
// completes while the call is still held, never on durations; the
// failsafe in within only turns a hang into a failure.

// gate blocks the calls it is armed for until opened.
type gate struct {
	mu      sync.Mutex
	match   func(op, path string) bool // nil: nothing blocks
	release chan struct{}
	held    atomic.Int32
	entered chan string
}

// arm makes the calls match selects block, from now on.
func (g *gate) arm(match func(op, path string) bool) {
	g.mu.Lock()
	g.match, g.release = match, make(chan struct{})
	g.mu.Unlock()
}

// open lets every blocked call go and blocks no more.
func (g *gate) open() {
	g.mu.Lock()
	if g.match != nil {
		g.match = nil
		close(g.release)
	}
	g.mu.Unlock()
}

func (g *gate) pass(op, path string) {
	g.mu.Lock()
	match, release := g.match, g.release
	g.mu.Unlock()
	if match == nil || !match(op, path) {
		return
	}
	g.held.Add(1)
	defer g.held.Add(-1)
	select {
	case g.entered <- op + " " + path:
	default:
	}
	<-release
}

// waitHeld waits until a call blocks at the gate and returns it.
func (g *gate) waitHeld(t *testing.T) string {
	t.Helper()
	select {
	case c := <-g.entered:
		return c
	case <-time.After(30 * time.Second):
		t.Fatal("no call reached the gate")
		return ""
	}
}

// gatedOps are the real system calls, each passing g first.
func gatedOps(g *gate) fileOps {
	ops := hostOps()
	ops.open = func(path string, flag int, perm uint32) (int, error) {
		if flag&unix.O_CREAT != 0 {
			g.pass("create", path)
		}
		return sysOps.open(path, flag, perm)
	}
	ops.msync = func(path string, b []byte) error { g.pass("msync", path); return sysOps.msync(path, b) }
	ops.munmap = func(path string, b []byte) error { g.pass("munmap", path); return sysOps.munmap(path, b) }
	ops.fdatasync = func(path string, fd int) error { g.pass("fdatasync", path); return sysOps.fdatasync(path, fd) }
	ops.syncfs = func(path string, fd int) error { g.pass("syncfs", path); return sysOps.syncfs(path, fd) }
	ops.remove = func(path string) error { g.pass("unlink", path); return sysOps.remove(path) }
	ops.removeAll = func(path string) error { g.pass("removeAll", path); return sysOps.removeAll(path) }
	return ops
}

// within runs fn and fails the test if it does not return while the gate
// still holds its call (the failsafe only turns a hang into a failure).
func within(t *testing.T, g *gate, what string, fn func()) {
	t.Helper()
	noHang(t, g, what, fn)
	if g.held.Load() == 0 {
		t.Fatalf("%s: the slowed call was let go before it finished; nothing shown", what)
	}
}

// noHang runs fn and fails the test if it does not return (a wait for a
// call the gate holds).
func noHang(t *testing.T, g *gate, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		g.open()
		<-done
		t.Fatalf("%s waited for a slowed system call", what)
	}
}

func openGated(t *testing.T, cfg Config) (*Store, *gate) {
	g := &gate{entered: make(chan string, 64)}
	s := openWithOps(t, cfg, gatedOps(g))
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(t, s) })
	t.Cleanup(g.open) // before Shutdown (cleanups run last first)
	return s, g
}

// putReadBack puts n messages to topic queue 0, rolling commit log and
// consume queue files, and waits until they are dispatched and pulled.
func putReadBack(t *testing.T, s *Store, topic string, from, n int) {
	t.Helper()
	putN(t, s, topic, 1, from, n)
	testutil.WaitFor(t, 30*time.Second, func() bool { return s.MaxOffset(topic, 0) == int64(from+n) })
	for off := int64(from); off < int64(from+n); {
		res := s.GetMessages(nil, topic, 0, off, 32, 1<<30, nil)
		if res.Status != Found || res.NextBeginOffset <= off {
			t.Fatalf("pull %s at %d: %v next %d", topic, off, res.Status, res.NextBeginOffset)
		}
		off = res.NextBeginOffset
	}
}

// A consume queue flush stuck in fdatasync (or msync) holds no queue lock:
// the queue rolls to new files, the dispatcher goes on, pulls answer.
func TestSlowConsumeQueueSyncBlocksNothing(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.MappedFileSizeConsumeQueue = 20 * cqEntrySize
	cfg.FlushConsumeQueueLeastPages = 0 // every tick syncs what is dirty
	s, g := openGated(t, cfg)
	putReadBack(t, s, "T", 0, 30) // two consume queue files
	g.arm(func(op, path string) bool {
		return (op == "fdatasync" || op == "msync" || op == "syncfs") && strings.HasPrefix(path, s.cqRoot)
	})
	putN(t, s, "T", 1, 30, 1) // dirty again
	t.Logf("held: %s", g.waitHeld(t))
	within(t, g, "put, roll and pull of the queue being synced", func() {
		putReadBack(t, s, "T", 31, 60) // three rolls of the queue
	})
}

// A commit log msync held: appends that roll the commit log complete.
func TestSlowCommitLogMsyncBlocksNothing(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.FlushCommitLogLeastPages = 0 // every tick flushes what there is
	s, g := openGated(t, cfg)
	putReadBack(t, s, "T", 0, 10)
	g.arm(func(op, path string) bool { return op == "msync" && strings.HasPrefix(path, s.cfg.commitLogDir()) })
	putN(t, s, "T", 1, 10, 1)
	t.Logf("held: %s", g.waitHeld(t))
	within(t, g, "appends across commit log rolls", func() {
		putReadBack(t, s, "T", 11, 2000) // ~200 KiB: rolls of 64 KiB files
	})
}

// Cleanup stuck in munmap or unlink of a commit log file, or of consume
// queue files: appends, rolls, dispatch and pulls go on.
func TestSlowCleanupBlocksNothing(t *testing.T) {
	for _, op := range []string{"munmap", "unlink"} {
		t.Run(op, func(t *testing.T) {
			cfg := cleanupConfig(t.TempDir())
			s, g := openGated(t, cfg)
			putReadBack(t, s, "T", 0, 600) // several 16 KiB commit log files
			testutil.WaitFor(t, 30*time.Second, func() bool { return s.cl.flushedWhere.Load() >= s.MaxPhyOffset() })
			g.arm(func(o, path string) bool { return o == op && !strings.Contains(path, "index") })
			cleaned := make(chan error, 1)
			go func() {
				_, err := s.deleteOldestCommitLog(time.Now(), 0, true)
				if err == nil {
					err = s.cleanLogics()
				}
				cleaned <- err
			}()
			t.Logf("held: %s", g.waitHeld(t))
			within(t, g, "appends, rolls and pulls during cleanup", func() {
				putReadBack(t, s, "T", 600, 400)
				putReadBack(t, s, "U", 0, 200)
			})
			g.open()
			if err := <-cleaned; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// DeleteTopic stuck in munmap or RemoveAll of the topic's files: other
// topics are written, dispatched (new queues made) and pulled meanwhile.
func TestSlowDeleteTopicBlocksNothing(t *testing.T) {
	for _, op := range []string{"munmap", "removeAll"} {
		t.Run(op, func(t *testing.T) {
			cfg := testConfig(t.TempDir())
			cfg.MappedFileSizeConsumeQueue = 20 * cqEntrySize
			s, g := openGated(t, cfg)
			putReadBack(t, s, "Gone", 0, 50)
			putReadBack(t, s, "Stays", 0, 10)
			g.arm(func(o, path string) bool { return o == op && strings.Contains(path, "Gone") })
			deleted := make(chan error, 1)
			go func() { deleted <- s.DeleteTopic("Gone") }()
			t.Logf("held: %s", g.waitHeld(t))
			within(t, g, "other topics during DeleteTopic", func() {
				putReadBack(t, s, "Stays", 10, 50)
				putReadBack(t, s, "New", 0, 50) // a queue made by the dispatcher
			})
			g.open()
			if err := <-deleted; err != nil {
				t.Fatal(err)
			}
			if s.MaxOffset("Gone", 0) != 0 {
				t.Fatal("deleted topic still has entries")
			}
		})
	}
}

// An index file being made (fallocate of maxIndexNum entries) holds no
// lock a query or an append waits for.
func TestSlowIndexFileCreationBlocksNothing(t *testing.T) {
	cfg := cleanupConfig(t.TempDir()) // 40 entries an index file
	s, g := openGated(t, cfg)
	putReadBack(t, s, "T", 0, 10)
	g.arm(func(op, path string) bool { return op == "create" && strings.Contains(path, "index") })
	putN(t, s, "T", 1, 10, 60) // fills the index file: the dispatcher makes the next one
	t.Logf("held: %s", g.waitHeld(t))
	within(t, g, "appends and queries while an index file is made", func() {
		putN(t, s, "T", 1, 70, 200)
		_ = s.QueryMessage(nil, "T", "k1", 32, 0, time.Now().UnixMilli()+1000) // reads under the index lock
	})
}

// The roll of the commit log takes the file made ahead: with every commit
// log file creation blocked, appends go on across a roll.
func TestRollTakesFileMadeAhead(t *testing.T) {
	cfg := testConfig(t.TempDir())
	s, g := openGated(t, cfg)
	putN(t, s, "T", 1, 0, 10) // the first file, made by the first Put
	fileSize := cfg.MappedFileSizeCommitLog
	testutil.WaitFor(t, 30*time.Second, func() bool {
		s.alloc.mu.Lock()
		defer s.alloc.mu.Unlock()
		return s.alloc.ready != nil && s.alloc.ready.start == fileSize
	})
	g.arm(func(op, path string) bool { return op == "create" && strings.HasPrefix(path, s.cfg.commitLogDir()) })
	n := 10
	noHang(t, g, "a roll with file creation blocked", func() {
		for s.MaxPhyOffset() < fileSize { // past the roll to the file made ahead
			if _, err := s.Put(testMsg("T", 0, n)); err != nil {
				t.Error(err)
				return
			}
			n++
		}
	})
	// The allocator now makes the file after it, and is held.
	t.Logf("held: %s", g.waitHeld(t))
	within(t, g, "appends in the file made ahead", func() {
		putReadBack(t, s, "T", n, 100)
	})
}

// A crash leaves the file made ahead on disk; recovery drops it with
// nothing lost, and appends roll into a new one.
func TestCrashWithFileMadeAhead(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir)
	s := openStarted(t, cfg)
	want := putN(t, s, "T", 2, 0, 500)
	testutil.WaitFor(t, 30*time.Second, func() bool {
		s.alloc.mu.Lock()
		defer s.alloc.mu.Unlock()
		return s.alloc.ready != nil && s.DispatchedPhyOffset() == s.MaxPhyOffset() &&
			s.cl.flushedWhere.Load() >= s.MaxPhyOffset()
	})
	maxPhy := s.MaxPhyOffset()
	s.crashClose()

	s = openStarted(t, cfg)
	defer shutdown(t, s)
	if got := s.MaxPhyOffset(); got != maxPhy {
		t.Fatalf("max phy offset %d after recovery, want %d", got, maxPhy)
	}
	more := putN(t, s, "T", 2, 500, 700) // rolls again
	if more[0].PhysicalOffset != want[len(want)-1].PhysicalOffset+int64(want[len(want)-1].WroteBytes) {
		t.Fatalf("first append after recovery at %d", more[0].PhysicalOffset)
	}
	testutil.WaitFor(t, 30*time.Second, func() bool { return s.MaxOffset("T", 0)+s.MaxOffset("T", 1) == 1200 })
	for q := int32(0); q < 2; q++ {
		if recs := readAll(t, s, "T", q); len(recs) != 600 {
			t.Fatalf("queue %d: %d records", q, len(recs))
		}
	}
}

// Shutdown removes the file made ahead: it holds nothing.
func TestShutdownRemovesFileMadeAhead(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir)
	s := openStarted(t, cfg)
	putN(t, s, "T", 1, 0, 10)
	testutil.WaitFor(t, 30*time.Second, func() bool {
		s.alloc.mu.Lock()
		defer s.alloc.mu.Unlock()
		return s.alloc.ready != nil
	})
	shutdown(t, s)
	if n := countFiles(t, cfg.commitLogDir()); n != 1 {
		t.Fatalf("%d commit log files after shutdown, want 1", n)
	}
}
