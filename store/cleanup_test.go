package store

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

func cleanupConfig(dir string) Config {
	cfg := testConfig(dir)
	cfg.MappedFileSizeCommitLog = 16 * 1024
	cfg.MappedFileSizeConsumeQueue = 20 * cqEntrySize
	cfg.MaxHashSlotNum, cfg.MaxIndexNum = 16, 40
	cfg.CleanResourceInterval = 600000 // tests call cleanOnce
	cfg.DeleteCommitLogFilesInterval = 0
	cfg.FlushCommitLogLeastPages = 0
	return cfg
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// commitLogFiles counts the commit log files on disk up to the last one
// in the list: not the one made ahead (allocate.go), which holds nothing.
func commitLogFiles(t *testing.T, s *Store) int {
	t.Helper()
	s.cl.q.mu.RLock()
	last := s.cl.q.lastLocked().start
	s.cl.q.mu.RUnlock()
	ents, err := os.ReadDir(s.cfg.commitLogDir())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if start, err := strconv.ParseInt(e.Name(), 10, 64); err == nil && start <= last {
			n++
		}
	}
	return n
}

func fillForCleanup(t *testing.T, s *Store, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := s.Put(keyedMsg("C", i)); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 5*time.Second, func() bool {
		return s.DispatchedPhyOffset() == s.MaxPhyOffset() && s.cl.flushedWhere.Load() >= s.MaxPhyOffset()
	})
	// Cleanup deletes only index files whose final flush is done (the
	// consume queue flush goroutine's work, on its own tick).
	testutil.WaitFor(t, 5*time.Second, func() bool {
		if s.idx == nil {
			return true
		}
		s.idx.mu.RLock()
		defer s.idx.mu.RUnlock()
		for _, f := range s.idx.files[:max(len(s.idx.files)-1, 0)] {
			if !f.flushed {
				return false
			}
		}
		return true
	})
}

// churnCleanup appends and cleans 20 times over, for tests that read
// concurrently.
func churnCleanup(t *testing.T, s *Store) {
	t.Helper()
	for range 20 {
		fillForCleanup(t, s, 50)
		if _, err := s.cleanOnce(); err != nil {
			t.Error(err)
		}
	}
}

// clockedStore starts a cleanup store whose clock is fakeNow (ns) and whose
// disk is 10% used.
func clockedStore(t *testing.T) (s *Store, fakeNow *atomic.Int64) {
	t.Helper()
	s, err := Open(cleanupConfig(t.TempDir()), testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	fakeNow = new(atomic.Int64)
	fakeNow.Store(time.Now().UnixNano())
	s.now = func() time.Time { return time.Unix(0, fakeNow.Load()) }
	s.ops.diskSpace = func(string) (float64, int64, error) { return 0.10, 1 << 30, nil }
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(t, s) })
	return s, fakeNow
}

func TestCleanupExpiredFiles(t *testing.T) {
	s, fakeNow := clockedStore(t)
	const n = 600 // ~100 bytes each: 4+ commit log files, 15 CQ files per queue
	fillForCleanup(t, s, n)
	files := commitLogFiles(t, s)
	if files < 4 {
		t.Fatalf("%d commit log files", files)
	}

	// Not expired, or not the hour: nothing happens.
	s.cfg.DeleteWhen = "99"
	fakeNow.Add(int64(73 * time.Hour))
	if d, err := s.cleanOnce(); d != 0 || err != nil {
		t.Fatalf("deleted %d (%v) outside deleteWhen", d, err)
	}
	s.cfg.DeleteWhen = "1;" + time.Unix(0, fakeNow.Load()).Format("15")
	fakeNow.Add(-int64(72 * time.Hour)) // 1 h old: not expired
	if d, err := s.cleanOnce(); d != 0 || err != nil {
		t.Fatalf("deleted %d (%v) unexpired files", d, err)
	}
	fakeNow.Add(int64(72 * time.Hour))
	s.cfg.DeleteWhen = "1;" + time.Unix(0, fakeNow.Load()).Format("15")
	d, err := s.cleanOnce()
	if err != nil || d != files-1 {
		t.Fatalf("deleted %d of %d (%v)", d, files, err)
	}
	if commitLogFiles(t, s) != 1 {
		t.Fatal("the last commit log file must stay")
	}
	clMin := s.MinPhyOffset()
	if clMin == 0 {
		t.Fatal("min phy offset did not move")
	}
	for q := int32(0); q < 2; q++ {
		minOff := s.MinOffset("C", q)
		if minOff == 0 {
			t.Fatalf("queue %d min offset did not move", q)
		}
		if res := s.GetMessages(nil, "C", q, 0, 1, 1<<20, nil); res.Status != OffsetTooSmall || res.NextBeginOffset != minOff {
			t.Fatalf("queue %d read at 0: %v next %d (min %d)", q, res.Status, res.NextBeginOffset, minOff)
		}
		if res := s.GetMessages(nil, "C", q, minOff, 32, 1<<20, nil); res.Status != Found {
			t.Fatalf("queue %d read at min %d: %v", q, minOff, res.Status)
		}
		cqFiles := countFiles(t, filepath.Join(s.cfg.StorePathRootDir, "consumequeue", "C", string(rune('0'+q))))
		if cqFiles >= int(n/2/20) {
			t.Fatalf("queue %d still has %d files", q, cqFiles)
		}
	}
	if got := countFiles(t, filepath.Join(s.cfg.StorePathRootDir, "index")); got >= n*3/39 {
		t.Fatalf("%d index files left", got)
	}
	// Writes and index continue.
	putN(t, s, "C", 2, n, 10)
}

func TestCleanupDiskFull(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(cleanupConfig(dir), testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	var usage atomic.Value
	usage.Store(0.50)
	s.ops.diskSpace = func(string) (float64, int64, error) { return usage.Load().(float64), 1 << 30, nil }
	s.cfg.DeleteWhen = "99"
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, s)
	fillForCleanup(t, s, 400)
	files := commitLogFiles(t, s)

	// 87%: above the force-clean ratio, files go whatever their age, writes still accepted.
	usage.Store(0.87)
	s.cfg.DeleteFileBatchMax = 1
	if d, err := s.cleanOnce(); d != 1 || err != nil {
		t.Fatalf("forced: deleted %d (%v)", d, err)
	}
	putN(t, s, "C", 2, 400, 1)

	// 95%: writes refused with ErrDiskFull, reads served.
	usage.Store(0.95)
	if _, err := s.cleanOnce(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(keyedMsg("C", 1)); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("put on a full disk: %v", err)
	}
	if _, err := s.PutBatch([]PutMessage{*keyedMsg("C", 2)}, nil); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("batch on a full disk: %v", err)
	}
	if res := s.GetMessages(nil, "C", 0, s.MinOffset("C", 0), 8, 1<<20, nil); res.Status != Found {
		t.Fatalf("read on a full disk: %v", res.Status)
	}
	// Between force-clean and warning ratios the flag stays (hysteresis).
	usage.Store(0.88)
	_, _ = s.cleanOnce() // deletes more; the error is not what this checks
	if _, err := s.Put(keyedMsg("C", 1)); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("put at 88%%: %v", err)
	}
	usage.Store(0.60)
	if _, err := s.cleanOnce(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(keyedMsg("C", 1)); err != nil {
		t.Fatalf("put after space returned: %v", err)
	}
	if got := commitLogFiles(t, s); got >= files {
		t.Fatalf("%d commit log files, had %d", got, files)
	}
}

// openForceCleaning starts a store on cleanupConfig whose disk reads 87%
// full, so every cleanup round deletes (forcibly) what it may.
func openForceCleaning(t *testing.T) *Store {
	t.Helper()
	s, err := Open(cleanupConfig(t.TempDir()), testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	s.ops.diskSpace = func(string) (float64, int64, error) { return 0.87, 1 << 30, nil }
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCleanupWhileReading deletes files under concurrent pulls, queries and
// appends (run with -race).
func TestCleanupWhileReading(t *testing.T) {
	s := openForceCleaning(t)
	defer shutdown(t, s)
	fillForCleanup(t, s, 300)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 0, 64<<10)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				q := int32(i % 2)
				res := s.GetMessages(buf[:0], "C", q, s.MinOffset("C", q)+int64(i%7), 16, 64<<10, nil)
				if res.Status == Found && res.Count == 0 {
					t.Error("found without records")
				}
				s.QueryMessage(buf[:0], "C", "shared1", 8, 0, 1<<62)
			}
		}()
	}
	churnCleanup(t, s)
	close(stop)
	wg.Wait()
}

// DELETE_EXPIRED_COMMITLOG: expired files go outside deleteWhen's hours, for
// Apache's 20 rounds.
func TestCleanupManual(t *testing.T) {
	s, fakeNow := clockedStore(t)
	fillForCleanup(t, s, 600)
	files := commitLogFiles(t, s)
	s.cfg.DeleteWhen = "99"
	fakeNow.Add(int64(73 * time.Hour))
	if d, err := s.cleanOnce(); d != 0 || err != nil {
		t.Fatalf("deleted %d (%v) outside deleteWhen", d, err)
	}
	s.DeleteExpiredManually()
	if d, err := s.cleanOnce(); err != nil || d != files-1 {
		t.Fatalf("manual: deleted %d of %d (%v)", d, files, err)
	}
	if left := s.manualDeletes.Load(); left != manualDeleteRounds-1 {
		t.Errorf("%d manual rounds left, want %d", left, manualDeleteRounds-1)
	}
}
