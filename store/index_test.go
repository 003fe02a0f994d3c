package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
)

func indexConfig(dir string) Config {
	cfg := testConfig(dir)
	cfg.MaxHashSlotNum = 16
	cfg.MaxIndexNum = 20 // 19 entries per file: files roll over often
	return cfg
}

func keyedMsg(topic string, i int) *PutMessage {
	m := testMsg(topic, int32(i%2), i)
	m.Properties = fmt.Sprintf("TAGS\x01T\x02KEYS\x01k%d shared%d\x02UNIQ_KEY\x01U%04d\x02", i, i%3, i)
	return m
}

// queryKeys returns the KEYS of the records QueryMessage finds.
func queryKeys(t *testing.T, s *Store, topic, key string, maxNum int, begin, end int64) []string {
	t.Helper()
	res := s.QueryMessage(nil, topic, key, maxNum, begin, end)
	var out []string
	b := res.Body
	for len(b) > 0 {
		r, rest, err := message.DecodeRecord(b)
		if err != nil {
			t.Fatalf("query %s: decode: %v", key, err)
		}
		out = append(out, message.Property(r.Properties, message.PropKeys))
		b = rest
	}
	if len(out) != res.Count {
		t.Fatalf("query %s: count %d, decoded %d", key, res.Count, len(out))
	}
	if res.Count > 0 && (res.IndexLastUpdatePhyoffset <= 0 || res.IndexLastUpdateTimestamp <= 0) {
		t.Fatalf("query %s: index last update %d/%d", key, res.IndexLastUpdatePhyoffset, res.IndexLastUpdateTimestamp)
	}
	return out
}

func checkIndexed(t *testing.T, s *Store, topic string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		want := fmt.Sprintf("k%d shared%d", i, i%3)
		for _, key := range []string{fmt.Sprintf("k%d", i), fmt.Sprintf("U%04d", i)} {
			got := queryKeys(t, s, topic, key, 32, 0, math.MaxInt64)
			found := false
			for _, k := range got {
				found = found || k == want
			}
			if !found {
				t.Fatalf("query %s: got %q, want a record with KEYS %q", key, got, want)
			}
		}
	}
}

func TestIndexQuery(t *testing.T) {
	dir := t.TempDir()
	s := openStarted(t, indexConfig(dir))
	const n = 30
	for i := 0; i < n; i++ {
		if _, err := s.Put(keyedMsg("IdxTopic", i)); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 5*1e9, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
	checkIndexed(t, s, "IdxTopic", n)

	// Three keys per record, 19 entries per file: 90 entries, 5 files (and
	// maybe a sixth made ahead by the allocator, with no entry: its header's
	// indexCount, the last 4 of its 40 bytes, is 0).
	files, _ := os.ReadDir(filepath.Join(dir, "index"))
	written := 0
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, "index", f.Name()))
		if err != nil || len(b) < 40 {
			t.Fatalf("index file %s: %v, %d bytes", f.Name(), err, len(b))
		}
		if binary.BigEndian.Uint32(b[36:40]) != 0 {
			written++
		}
	}
	if written != 5 {
		t.Fatalf("%d index files written (%d in all), want 5", written, len(files))
	}
	if got := queryKeys(t, s, "IdxTopic", "shared1", 32, 0, math.MaxInt64); len(got) != 10 {
		t.Fatalf("shared1: %d records, want 10", len(got))
	}
	if got := queryKeys(t, s, "IdxTopic", "shared1", 4, 0, math.MaxInt64); len(got) < 4 {
		t.Fatalf("shared1 maxNum 4: %d records", len(got))
	}
	if got := queryKeys(t, s, "OtherTopic", "k1", 32, 0, math.MaxInt64); len(got) != 0 {
		t.Fatalf("other topic: %q", got)
	}
	if got := queryKeys(t, s, "IdxTopic", "k1", 32, 0, 1000); len(got) != 0 {
		t.Fatalf("time range in 1970: %q", got)
	}
	shutdown(t, s)

	// A clean restart keeps every file and entry.
	s = openStarted(t, indexConfig(dir))
	defer shutdown(t, s)
	checkIndexed(t, s, "IdxTopic", n)
	putN(t, s, "IdxTopic", 2, n, 1)
}

// putKeyed puts keyedMsg records from..to-1 on IdxTopic and waits until
// they are dispatched (indexed).
func putKeyed(t *testing.T, s *Store, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if _, err := s.Put(keyedMsg("IdxTopic", i)); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 5*1e9, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
}

// machineCrash makes the abort file another boot's, as a store left by a
// machine that went down looks at the next boot.
func machineCrash(t *testing.T, s *Store) {
	t.Helper()
	s.crashClose()
	if err := os.WriteFile(s.abortPath(), []byte("00000000-0000-0000-0000-000000000000"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// indexEntries sums the entries of the index files under dir, and maps
// each file's name to its header's end timestamp.
func indexEntries(t *testing.T, dir string) (map[string]int64, int32) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	files := make(map[string]int64)
	var sum int32
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, "index", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if c := int32(binary.BigEndian.Uint32(b[36:40])); c > 0 {
			files[e.Name()] = int64(binary.BigEndian.Uint64(b[8:16]))
			sum += c - 1
		}
	}
	return files, sum
}

func TestIndexRebuiltAfterMachineCrash(t *testing.T) {
	if readBootID() == "" {
		t.Skip("no boot id")
	}
	dir := t.TempDir()
	cfg := indexConfig(dir)
	s := openStarted(t, cfg)
	const n = 25
	putKeyed(t, s, 0, n)
	machineCrash(t, s)
	before, _ := indexEntries(t, dir)
	ck, err := loadCheckpoint(filepath.Join(dir, "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}

	// Every index file newer than the checkpoint is deleted (as Apache
	// does) and rebuilt from its begin offset: the files are made again,
	// with new names.
	s = openStarted(t, cfg)
	checkIndexed(t, s, "IdxTopic", n)
	after, _ := indexEntries(t, dir)
	newer := 0
	for name, end := range before {
		if _, ok := after[name]; ok && end > ck.index.Load() {
			t.Fatalf("index file %s, newer than the checkpoint, kept after a machine crash", name)
		}
		if end > ck.index.Load() {
			newer++
		}
	}
	if newer == 0 {
		t.Fatal("no index file newer than the checkpoint")
	}
	machineCrash(t, s)

	// The same with a checkpoint on disk (full files flushed and recorded).
	cfg.FlushConsumeQueueThoroughInterval = 1
	s = openStarted(t, cfg)
	testutil.WaitFor(t, 5*1e9, func() bool { return s.ckpt.index.Load() > 0 })
	machineCrash(t, s)
	s = openStarted(t, cfg)
	defer shutdown(t, s)
	checkIndexed(t, s, "IdxTopic", n)
}

func TestIndexKeptAfterKill(t *testing.T) {
	if readBootID() == "" {
		t.Skip("no boot id")
	}
	dir := t.TempDir()
	cfg := indexConfig(dir)
	s := openStarted(t, cfg)
	const n = 25
	putKeyed(t, s, 0, n)
	s.crashClose()
	before, entries := indexEntries(t, dir)

	// A put stopped by the kill after writing its entry and pointing the
	// entry's slot at it, before counting it: the entry of a key "torn" at
	// offset 1<<40, chained to whatever the slot held.
	var last string
	for name := range before {
		last = max(last, name)
	}
	path := filepath.Join(dir, "index", last)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	count := int32(binary.BigEndian.Uint32(b[36:40]))
	h := indexKeyHash([]byte("IdxTopic"), []byte("torn"))
	slot := int64(indexHeaderSize) + int64(h%int32(cfg.MaxHashSlotNum))*indexSlotSize
	ep := int64(indexHeaderSize) + int64(cfg.MaxHashSlotNum)*indexSlotSize + int64(count)*indexEntrySize
	var e [indexEntrySize]byte
	binary.BigEndian.PutUint32(e[0:], uint32(h))
	binary.BigEndian.PutUint64(e[4:], 1<<40)
	copy(e[16:], b[slot:slot+4])
	binary.BigEndian.PutUint32(b[slot:], uint32(count))
	copy(b[ep:], e[:])
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}

	// Killed on this boot: the files are kept as the process left them,
	// and the re-dispatch adds no entry twice.
	s = openStarted(t, cfg)
	testutil.WaitFor(t, 5*1e9, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
	checkIndexed(t, s, "IdxTopic", n)
	if got := queryKeys(t, s, "IdxTopic", "torn", 32, 0, math.MaxInt64); len(got) != 0 {
		t.Fatalf("the torn entry is found: %q", got)
	}
	after, entriesAfter := indexEntries(t, dir)
	for name := range before {
		if _, ok := after[name]; !ok {
			t.Fatalf("index file %s deleted after a kill on the same boot", name)
		}
	}
	if entriesAfter != entries {
		t.Fatalf("%d index entries after the restart, want the %d written before the kill", entriesAfter, entries)
	}

	// The torn entry's place is written again: its slot no longer leads there.
	putKeyed(t, s, n, n+3)
	checkIndexed(t, s, "IdxTopic", n+3)
	if got := queryKeys(t, s, "IdxTopic", "torn", 32, 0, math.MaxInt64); len(got) != 0 {
		t.Fatalf("the torn entry is found after new puts: %q", got)
	}
	shutdown(t, s)
}

func TestIndexFileLayout(t *testing.T) {
	// "T#k1".hashCode() = ((84*31+35)*31+107)*31+49 = 2539445.
	if h := indexKeyHash([]byte("T"), []byte("k1")); h != 2539445 {
		t.Fatalf("hash %d", h)
	}
	dir := t.TempDir()
	cfg := indexConfig(dir)
	cfg.MaxHashSlotNum, cfg.MaxIndexNum = 4, 8
	s := openStarted(t, cfg)
	m := testMsg("T", 0, 0)
	m.Properties = "KEYS\x01k1\x02"
	r, err := s.Put(m)
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*1e9, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
	shutdown(t, s)
	files, _ := os.ReadDir(filepath.Join(dir, "index"))
	if len(files) != 1 || len(files[0].Name()) != 17 {
		t.Fatalf("index files %v", files)
	}
	b, err := os.ReadFile(filepath.Join(dir, "index", files[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 40+4*4+8*20 {
		t.Fatalf("size %d", len(b))
	}
	be := binary.BigEndian
	hdr := []int64{int64(be.Uint64(b[0:])), int64(be.Uint64(b[8:])), int64(be.Uint64(b[16:])), int64(be.Uint64(b[24:])),
		int64(be.Uint32(b[32:])), int64(be.Uint32(b[36:]))}
	want := []int64{r.StoreTimestamp, r.StoreTimestamp, r.PhysicalOffset, r.PhysicalOffset, 1, 2}
	if fmt.Sprint(hdr) != fmt.Sprint(want) {
		t.Fatalf("header %v, want %v", hdr, want)
	}
	slot := 2539445 % 4
	if v := be.Uint32(b[40+slot*4:]); v != 1 {
		t.Fatalf("slot %d = %d", slot, v)
	}
	e := b[40+4*4+20:]
	if be.Uint32(e) != 2539445 || int64(be.Uint64(e[4:])) != r.PhysicalOffset || be.Uint32(e[12:]) != 0 || be.Uint32(e[16:]) != 0 {
		t.Fatalf("entry % x", e[:20])
	}
}

// indexCounts returns the entry count field of every index file on disk.
func indexCounts(t *testing.T, dir string) map[string]int32 {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "index"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := map[string]int32{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, "index", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = int32(binary.BigEndian.Uint32(b[36:]))
	}
	return out
}

// The allocator makes a new store's first commit log file and the index
// file the dispatcher writes next before either is needed (made on
// the first Put and the first dispatch they took milliseconds). A file
// made ahead and never written is removed at shutdown, and dropped by the
// next load after a crash.
func TestFilesMadeAhead(t *testing.T) {
	dir := t.TempDir()
	cfg := indexConfig(dir)
	cfg.MaxIndexNum = 40
	s := openStarted(t, cfg)
	testutil.WaitFor(t, 5*1e9, func() bool {
		_, err := os.Stat(filepath.Join(dir, "commitlog", fileName(0)))
		return err == nil && len(indexCounts(t, dir)) == 1
	})
	for name, n := range indexCounts(t, dir) {
		if n != 0 {
			t.Fatalf("index file %s made ahead holds %d entries", name, n)
		}
	}
	// 39 entries per file, 3 per record: 13 records fill the first, so
	// the second is made ahead (on the signal a roll sends).
	const n = 13
	for i := 0; i < n; i++ {
		if _, err := s.Put(keyedMsg("AheadTopic", i)); err != nil {
			t.Fatal(err)
		}
		testutil.WaitFor(t, 5*1e9, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
		s.signal(s.allocCh)
	}
	checkIndexed(t, s, "AheadTopic", n)
	testutil.WaitFor(t, 5*1e9, func() bool {
		cs := indexCounts(t, dir)
		empty := 0
		for _, c := range cs {
			if c == 0 {
				empty++
			}
		}
		return len(cs) == 2 && empty == 1
	})
	s.crashClose()

	// Records indexed after the crash go to a file with a header (an empty
	// file made ahead would lose its first key: count 0 is "no entry").
	s = openStarted(t, cfg)
	for i := n; i < n+2; i++ {
		if _, err := s.Put(keyedMsg("AheadTopic", i)); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 5*1e9, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
	checkIndexed(t, s, "AheadTopic", n+2)
	shutdown(t, s)
	for name, c := range indexCounts(t, dir) {
		if c <= 0 {
			t.Fatalf("index file %s made ahead still on disk after shutdown", name)
		}
		// Entry 0 is never written (counts start at 1, a slot holding 0 is
		// empty): a file loaded without its header would lose a key there.
		b, err := os.ReadFile(filepath.Join(dir, "index", name))
		if err != nil {
			t.Fatal(err)
		}
		at := indexHeaderSize + int64(cfg.MaxHashSlotNum)*indexSlotSize
		if e := b[at : at+indexEntrySize]; !bytes.Equal(e, make([]byte, indexEntrySize)) {
			t.Fatalf("index file %s has an entry 0: % x", name, e)
		}
	}
}
