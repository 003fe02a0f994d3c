package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"
)

// usageOps reports the disk usage *usage holds.
func usageOps(usage *atomic.Value) fileOps {
	ops := hostOps()
	ops.diskSpace = func(string) (float64, int64, error) { return usage.Load().(float64), 1 << 30, nil }
	return ops
}

// TestDiskFullAtStartup: a store opened on a full disk refuses appends
// from the first one and serves reads; once space is freed appends are
// taken again without a restart, and without waiting for cleanup.
func TestDiskFullAtStartup(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	cfg.CleanResourceInterval = 600000
	s := openStarted(t, cfg)
	putN(t, s, "F", 1, 0, 5)
	shutdown(t, s)

	var usage atomic.Value
	usage.Store(0.95)
	s = openWithOps(t, cfg, usageOps(&usage))
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, s)
	if _, err := s.Put(testMsg("F", 0, 5)); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("first put on a full disk: %v", err)
	}
	if _, err := s.PutBatch([]PutMessage{*testMsg("F", 0, 5)}, nil); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("first batch on a full disk: %v", err)
	}
	checkQueues(t, s, "F", 1, 5)
	usage.Store(0.88) // between the force-clean and warning ratios: still refused
	if _, err := s.checkSpace(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(testMsg("F", 0, 5)); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("put at 88%%: %v", err)
	}
	usage.Store(0.50)
	testutil.WaitFor(t, 5*time.Second, func() bool {
		_, err := s.Put(testMsg("F", 0, 5))
		return err == nil
	})
	dispatched(t, s)
	checkQueues(t, s, "F", 1, 6)
}

// TestSpaceCheckedOnAppendPath: appends ask for a usage reading after an
// eighth of the room below the warning level, and at every roll; the
// reading they cause refuses the next append once usage is above it.
func TestSpaceCheckedOnAppendPath(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	cfg.MappedFileSizeCommitLog = 64 << 20
	// The store counts the next commit log file, made ahead once started,
	// as used (space.go): the readings below leave room for it.
	ahead := float64(cfg.MappedFileSizeCommitLog) / (1 << 30)
	var usage atomic.Value
	usage.Store(0.80 - ahead)
	s := openWithOps(t, cfg, usageOps(&usage)) // not started: nothing reads the signals
	defer shutdown(t, s)
	// 10% of 1 GiB below 90%: a reading every 1/8 of it (13.4 MB).
	if got := s.checkEvery.Load(); got < 12<<20 || got > 14<<20 {
		t.Fatalf("checkEvery %d", got)
	}
	if _, err := s.Put(testMsg("A", 0, 0)); err != nil { // the first file: a roll
		t.Fatal(err)
	}
	if len(s.spaceCh) != 1 {
		t.Fatal("no reading asked at a roll")
	}
	<-s.spaceCh
	usage.Store(0.899 - ahead) // 1 MiB left: a reading every 128 KiB or so
	if _, err := s.checkSpace(); err != nil {
		t.Fatal(err)
	}
	every := s.checkEvery.Load()
	if every < 128<<10 || every > 136<<10 {
		t.Fatalf("checkEvery %d near the warning level", every)
	}
	s.mu.Lock()
	s.sinceCheck = 0
	s.mu.Unlock()
	var n int64
	for {
		r, err := s.Put(testMsg("A", 0, 0))
		if err != nil {
			t.Fatal(err)
		}
		if n += int64(r.WroteBytes); n >= every {
			break
		}
		if len(s.spaceCh) != 0 {
			t.Fatalf("reading asked after %d bytes, every %d", n, every)
		}
	}
	if len(s.spaceCh) != 1 {
		t.Fatalf("no reading asked after %d bytes", n)
	}
	usage.Store(0.91)
	if _, err := s.checkSpace(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(testMsg("A", 0, 0)); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("put above the warning level: %v", err)
	}
}

// TestRollFailureNotSticky: a commit log file that cannot get its blocks
// (ENOSPC) refuses the append with ErrDiskFull and leaves nothing behind;
// once space is back the next roll succeeds, without a restart.
func TestRollFailureNotSticky(t *testing.T) {
	t.Parallel()
	var fail atomic.Bool
	var failed atomic.Int64
	cfg := testConfig(t.TempDir())
	s := openWithOps(t, cfg, failAllocOps("commitlog", &fail, &failed))
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, s)
	fail.Store(true)
	var err error
	n := 0
	for ; err == nil; n++ {
		_, err = s.Put(testMsg("W", 0, n))
	}
	if !errors.Is(err, ErrDiskFull) || failed.Load() == 0 {
		t.Fatalf("put at a roll without space: %v (fallocate failed %d times)", err, failed.Load())
	}
	n--
	if _, err := s.Put(testMsg("W", 0, n)); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("put right after: %v", err)
	}
	fail.Store(false)
	s.mu.Lock()
	s.rollRetryAt = time.Time{} // the second is up
	s.mu.Unlock()
	if _, err := s.Put(testMsg("W", 0, n)); err != nil {
		t.Fatalf("put after space returned: %v", err)
	}
	dispatched(t, s)
	checkQueues(t, s, "W", 1, n+1)
}

// TestIndexFileWithoutSpace: an index file that cannot get its blocks
// never holds dispatch back: every message reaches its consume queue, the
// ones dispatched meanwhile are not indexed, and indexing resumes once
// space is back.
func TestIndexFileWithoutSpace(t *testing.T) {
	t.Parallel()
	var fail atomic.Bool
	var failed atomic.Int64
	cfg := testConfig(t.TempDir())
	cfg.MaxHashSlotNum, cfg.MaxIndexNum = 16, 10
	s := openWithOps(t, cfg, failAllocOps("index", &fail, &failed))
	s.idx.retry = 50 * time.Millisecond
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, s)
	fail.Store(true)
	putN(t, s, "I", 1, 0, 30) // three index files' worth
	dispatched(t, s)
	checkQueues(t, s, "I", 1, 30)
	if failed.Load() == 0 || s.dispatchStalled.Load() {
		t.Fatalf("index allocations failed %d times; dispatch stalled %v", failed.Load(), s.dispatchStalled.Load())
	}
	fail.Store(false)
	time.Sleep(100 * time.Millisecond) // past the retry pause
	putN(t, s, "I", 1, 30, 10)
	dispatched(t, s)
	for i := 30; i < 40; i++ {
		if r := s.QueryMessage(nil, "I", "k"+strconv.Itoa(i), 32, 0, time.Now().UnixMilli()+1000); r.Count == 0 {
			t.Fatalf("key k%d not indexed after space came back", i)
		}
	}
}

// TestIndexLoadedWithoutBlocks: an index file loaded from an older store
// or Apache's (sparse) is asked at Open for the blocks of what it holds,
// and not queried without them (a hole read on a full tmpfs faults); the
// file written next gets them, and its next entries', from the first
// record indexed after Open, in steps. When there is no space the records
// dispatched meanwhile are not indexed, and indexing resumes in the same
// file once space is back. Nothing is ever stored into a page without its
// block.
func TestIndexLoadedWithoutBlocks(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	cfg.MaxHashSlotNum, cfg.MaxIndexNum = 16, 100
	s := openStarted(t, cfg)
	putN(t, s, "I", 1, 0, 10)
	shutdown(t, s)
	idx := filepath.Join(cfg.StorePathRootDir, "index")
	if n := countFiles(t, idx); n != 1 {
		t.Fatalf("%d index files", n)
	}

	var fail atomic.Bool
	var failed atomic.Int64
	fail.Store(true)
	s = openWithOps(t, cfg, failAllocOps("index", &fail, &failed))
	if failed.Load() == 0 || s.idx.files[0].backed.Load() {
		t.Fatal("the loaded index file is queried without blocks for what it holds")
	}
	if r := s.QueryMessage(nil, "I", "k0", 32, 0, time.Now().UnixMilli()+1000); r.Count != 0 {
		t.Fatal("a query read an index file without its blocks")
	}
	s.idx.retry = 50 * time.Millisecond
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, s)
	putN(t, s, "I", 1, 10, 5)
	dispatched(t, s) // not held back by the index
	if failed.Load() == 0 {
		t.Fatal("the index wrote without asking for blocks")
	}
	fail.Store(false)
	time.Sleep(100 * time.Millisecond) // past the retry pause
	putN(t, s, "I", 1, 15, 5)
	dispatched(t, s)
	checkQueues(t, s, "I", 1, 20)
	if n := countFiles(t, idx); n != 1 {
		t.Fatalf("%d index files, want the same one", n)
	}
	if f := s.idx.files[0]; f.allocated < f.entryPos(f.indexCount()) {
		t.Fatalf("entries up to %d stored, blocks up to %d", f.entryPos(f.indexCount()), f.allocated)
	}
	for _, i := range []int{0, 5, 9, 15, 19} {
		if r := s.QueryMessage(nil, "I", "k"+strconv.Itoa(i), 32, 0, time.Now().UnixMilli()+1000); r.Count == 0 {
			t.Fatalf("key k%d not found", i)
		}
	}
}

// TestIndexFileSparse: with Apache's default geometry (5,000,000 slots,
// 20,000,000 entries: a 420 MB file) an index file holding a few records
// has the blocks of its header, its slots and one step of entries, not of
// the whole file.
func TestIndexFileSparse(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	s := openStarted(t, cfg)
	defer shutdown(t, s)
	putN(t, s, "I", 1, 0, 10)
	dispatched(t, s)
	idx := filepath.Join(cfg.StorePathRootDir, "index")
	ents, err := os.ReadDir(idx)
	if err != nil || len(ents) == 0 {
		t.Fatalf("index files: %v %v", ents, err)
	}
	want := indexFileSize(cfg.MaxHashSlotNum, cfg.MaxIndexNum)
	for _, e := range ents {
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join(idx, e.Name()), &st); err != nil {
			t.Fatal(err)
		}
		blocks := st.Blocks * 512
		t.Logf("%s: size %d, blocks %d", e.Name(), st.Size, blocks)
		if st.Size != want {
			t.Errorf("%s: size %d, want Apache's %d", e.Name(), st.Size, want)
		}
		if limit := int64(indexHeaderSize) + int64(cfg.MaxHashSlotNum)*indexSlotSize + 2*indexAllocStep; blocks > limit {
			t.Errorf("%s: %d bytes of blocks, want at most %d", e.Name(), blocks, limit)
		}
	}
}

// TestIndexWithoutFallocate: on a file system without fallocate
// (EOPNOTSUPP, NFSv3 and the like) blocks are given by writing back what
// is there, so an index file loaded after a restart keeps its keys when
// the writer reserves its next entries.
func TestIndexWithoutFallocate(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	cfg.MaxHashSlotNum, cfg.MaxIndexNum = 16, 100
	ops := hostOps()
	ops.allocate = func(int, int64, int64) error { return unix.EOPNOTSUPP }
	s := openWithOps(t, cfg, ops)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	putN(t, s, "I", 1, 0, 10)
	dispatched(t, s)
	shutdown(t, s)

	s = openWithOps(t, cfg, ops)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, s)
	putN(t, s, "I", 1, 10, 5)
	dispatched(t, s)
	for i := range 15 {
		if r := s.QueryMessage(nil, "I", "k"+strconv.Itoa(i), 32, 0, time.Now().UnixMilli()+1000); r.Count == 0 {
			t.Fatalf("key k%d lost after a restart without fallocate", i)
		}
	}
}

// TestIndexBackedLater: loaded index files that no longer take entries
// and got no blocks at Open are queried again once a flush could give
// them their blocks.
func TestIndexBackedLater(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	cfg.MaxHashSlotNum, cfg.MaxIndexNum = 16, 8 // 4 records a file (a unique key and a key each)
	s := openStarted(t, cfg)
	putN(t, s, "I", 1, 0, 10)
	dispatched(t, s)
	shutdown(t, s)

	var fail atomic.Bool
	var failed atomic.Int64
	fail.Store(true)
	s = openWithOps(t, cfg, failAllocOps("index", &fail, &failed))
	defer shutdown(t, s)
	if len(s.idx.files) < 2 {
		t.Fatalf("%d index files, want several", len(s.idx.files))
	}
	for _, f := range s.idx.files {
		if f.backed.Load() {
			t.Fatalf("%s backed without blocks", f.name)
		}
	}
	fail.Store(false)
	if _, err := s.idx.flush(false); err != nil {
		t.Fatal(err)
	}
	for i, f := range s.idx.files {
		if want := i < len(s.idx.files)-1 || f.full(); f.backed.Load() != want {
			t.Fatalf("file %d of %d (%s): backed %v after a flush with space", i, len(s.idx.files), f.name, f.backed.Load())
		}
	}
	if r := s.QueryMessage(nil, "I", "k0", 32, 0, time.Now().UnixMilli()+1000); r.Count == 0 {
		t.Fatal("k0 not found once its file was backed")
	}
}

// TestClampedRatiosLogged: a disk ratio outside Apache's bounds is used
// clamped and the store says so, with what it uses.
func TestClampedRatiosLogged(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	cfg.DiskSpaceWarningLevelRatio = 99
	var buf syncBuffer
	s, err := openWith(cfg, zerolog.New(&buf), hostOps())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	shutdown(t, s)
	out := buf.String()
	if !strings.Contains(out, `"diskSpaceWarningLevelRatio":99,"used":90`) || strings.Contains(out, "diskSpaceCleanForciblyRatio") {
		t.Fatalf("log: %s", out)
	}
}

// syncBuffer is a bytes.Buffer that the store's goroutines may write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
