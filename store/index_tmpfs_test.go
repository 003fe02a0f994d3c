package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"golang.org/x/sys/unix"
)

// TestSparseIndexOnFullTmpfs: an index file as Apache leaves it (sparse:
// only the pages it wrote have blocks), loaded from a tmpfs that is full.
// On tmpfs even reading a hole through a mapping needs a page, and without
// one the read faults (SIGBUS, which would end the broker). Queries must
// neither fault nor lose what they found before once space is back. Needs
// a tmpfs mount (root); skipped where there is none.
func TestSparseIndexOnFullTmpfs(t *testing.T) {
	mnt := testutil.MountTmpfs(t, 16)
	cfg := testConfig(filepath.Join(mnt, "store"))
	cfg.MappedFileSizeCommitLog = 1 << 20
	cfg.MappedFileSizeConsumeQueue = 6000
	cfg.MaxHashSlotNum, cfg.MaxIndexNum = 250_000, 1000 // 1 MB of slots: hundreds of pages
	s := openStarted(t, cfg)
	putN(t, s, "I", 1, 0, 10)
	dispatched(t, s)
	shutdown(t, s)

	// Rewrite the index file as Apache's: holes wherever a page is zero.
	dir := filepath.Join(cfg.StorePathRootDir, "index")
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 1 {
		t.Fatalf("index dir: %v, %d files", err, len(ents))
	}
	path := filepath.Join(dir, ents[0].Name())
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(int64(len(data))); err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	zero := make([]byte, page)
	for off := 0; off < len(data); off += page {
		if p := data[off:min(off+page, len(data))]; !bytes.Equal(p, zero[:len(p)]) {
			if _, err := f.WriteAt(p, int64(off)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil || st.Blocks*512 >= int64(len(data))/2 {
		t.Fatalf("the rewritten index file is not sparse: %d of %d bytes have blocks (%v)", st.Blocks*512, len(data), err)
	}

	// Fill the tmpfs to its last page, before Open and again after it
	// (Open frees what the previous run made ahead).
	ballast := filepath.Join(mnt, "ballast")
	fill(t, ballast)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true)) // a fault fails the test instead of ending the process
	s = openWithOps(t, cfg, hostOps())
	defer shutdown(t, s)
	fill(t, ballast)
	query := func(key string) (n int, fault any) {
		defer func() { fault = recover() }()
		return s.QueryMessage(nil, "I", key, 32, 0, time.Now().UnixMilli()+1000).Count, nil
	}
	for i := range 200 { // keys absent: their slots are mostly holes
		if _, fault := query(strconv.Itoa(i*7919) + "-absent"); fault != nil {
			t.Fatalf("a query on a full tmpfs faulted: %v", fault)
		}
	}
	if n, fault := query("k3"); fault != nil {
		t.Fatalf("a query on a full tmpfs faulted: %v", fault)
	} else {
		t.Logf("k3 on a full tmpfs: %d found", n)
	}

	// Space back: a flush gives the file its blocks, and its keys are found.
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	if _, err := s.idx.flush(false); err != nil {
		t.Fatal(err)
	}
	if !s.idx.files[0].backed.Load() {
		// The last file is backed by the dispatcher's next reserve.
		s.idx.back(s.idx.files)
	}
	for i := range 10 {
		if n, fault := query("k" + strconv.Itoa(i)); fault != nil || n == 0 {
			t.Fatalf("key k%d after space came back: %d found, fault %v", i, n, fault)
		}
	}
}

// fill appends to path until the file system holding it has no page left.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for _, n := range []int{len(chunk), os.Getpagesize()} {
		for {
			if _, err := f.Write(chunk[:n]); err != nil {
				if !errors.Is(err, unix.ENOSPC) {
					t.Fatal(err)
				}
				break
			}
		}
	}
}
