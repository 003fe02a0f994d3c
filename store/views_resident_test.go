package store

import (
	"testing"
	"time"
	"unsafe"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

// coldStore stores n records of 10 KiB (each spans three pages) in C/0 and
// then more than minHotTail bytes in another topic, so the records of C are
// outside the tail taken as in memory. It returns their put results.
func coldStore(t *testing.T, n int) (*Store, []PutResult) {
	t.Helper()
	cfg := testConfig(t.TempDir())
	cfg.MappedFileSizeCommitLog = 8 << 20
	cfg.MappedFileSizeConsumeQueue = 1000 * cqEntrySize
	s := openStarted(t, cfg)
	t.Cleanup(func() { shutdown(t, s) })
	var rs []PutResult
	for i := 0; i < n; i++ {
		m := testMsg("C", 0, i)
		m.Body = make([]byte, 10<<10)
		r, err := s.Put(m)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	filler := testMsg("F", 0, 0)
	filler.Body = make([]byte, 64<<10)
	for written := int64(0); written < minHotTail+(1<<20); written += int64(len(filler.Body)) {
		if _, err := s.Put(filler); err != nil {
			t.Fatal(err)
		}
	}
	// The whole log, not only C/0: the dispatcher holds the file it reads,
	// and the tests count holds.
	testutil.WaitFor(t, 10*time.Second, func() bool {
		return s.MaxOffset("C", 0) == int64(n) && s.DispatchedPhyOffset() == s.MaxPhyOffset()
	})
	return s, rs
}

// evict drops [from, to) of the commit log (page-aligned inward) from the
// page cache (PageOut). The test is skipped where the kernel keeps the
// pages (before Linux 5.4, or a file system that cannot drop them).
func evict(t *testing.T, s *Store, from, to int64) {
	t.Helper()
	out, err := s.PageOut(from, to)
	if err != nil {
		t.Skipf("page out: %v", err)
	}
	if !out {
		t.Skip("pages still in memory after MADV_PAGEOUT")
	}
}

// An event loop's read (ResidentPages) stops before the first record whose
// pages are not in memory: nothing when it is the first, the records
// before it otherwise; PopulatePages brings them in and reads them all.
func TestGetMessageViewsResidency(t *testing.T) {
	s, rs := coldStore(t, 20)
	last := rs[len(rs)-1]
	evict(t, s, rs[5].PhysicalOffset, last.PhysicalOffset+int64(last.WroteBytes))

	res := s.GetMessageViews("C", 0, 6, 32, 1<<20, nil, ResidentPages)
	if res.Status != PagesNotResident || res.Count != 0 || res.Release != nil || res.Vec != nil {
		t.Fatalf("cold first record: %v, %d records", res.Status, res.Count)
	}
	checkNoHolds(t, s)

	// Records 0-4 and the first page of 5 are in memory: the answer ends at 5.
	res = s.GetMessageViews("C", 0, 0, 32, 1<<20, nil, ResidentPages)
	if res.Status != Found || res.Count != 5 || res.NextBeginOffset != 5 {
		t.Fatalf("cut short: %v, %d records, next %d", res.Status, res.Count, res.NextBeginOffset)
	}
	res.Release()

	// A filter never sees a record that is not in memory; filtered records
	// are no answer: the pull is for a reader that may wait.
	seen := 0
	res = s.GetMessageViews("C", 0, 3, 32, 1<<20, func(int64, []byte) bool { seen++; return false }, ResidentPages)
	if res.Status != PagesNotResident || seen != 2 || res.Release != nil {
		t.Fatalf("filtered: %v, match called %d times, next %d", res.Status, seen, res.NextBeginOffset)
	}

	res = s.GetMessageViews("C", 0, 0, 32, 1<<20, nil, PopulatePages)
	if res.Status != Found || res.Count != 20 {
		t.Fatalf("populated: %v, %d records", res.Status, res.Count)
	}
	for _, b := range res.Vec {
		// b may start inside a page: check from its page.
		mf, pos := mappedAt(s, b)
		from := pos &^ (pageSize - 1)
		vec := make([]byte, (pos+int64(len(b))-from+pageSize-1)/pageSize)
		if err := mincore(mf.data[from:pos+int64(len(b))], vec); err != nil {
			t.Fatal(err)
		}
		for i, v := range vec {
			if v&1 == 0 {
				t.Fatalf("page %d not in memory after PopulatePages", i)
			}
		}
	}
	res.Release()
	if res = s.GetMessageViews("C", 0, 0, 32, 1<<20, nil, ResidentPages); res.Count != 20 {
		t.Fatalf("after populate: %v, %d records", res.Status, res.Count)
	}
	res.Release()
	checkNoHolds(t, s)
}

// Records in the last minHotTail bytes of the commit log are read without a
// check, wherever their pages are.
func TestGetMessageViewsHotTail(t *testing.T) {
	s, _ := coldStore(t, 4)
	filler := testMsg("F", 0, 0)
	filler.Body = make([]byte, 64<<10)
	r, err := s.Put(filler)
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.MaxOffset("F", 0) == r.QueueOffset+1 })
	evict(t, s, r.PhysicalOffset, r.PhysicalOffset+int64(r.WroteBytes))
	res := s.GetMessageViews("F", 0, r.QueueOffset, 1, 1<<20, nil, ResidentPages)
	if res.Status != Found || res.Count != 1 {
		t.Fatalf("hot tail: %v, %d records", res.Status, res.Count)
	}
	res.Release()
}

// With Apache's accessMessageInMemoryMaxRatio, records within that share of
// physical memory from the end are read without a check, as Apache takes
// them to be in memory: the records coldStore pushed out of the 16 MiB tail
// and evicted are read (and fault) instead of being handed to a goroutine.
func TestGetMessageViewsMemoryRatio(t *testing.T) {
	s, rs := coldStore(t, 4)
	evict(t, s, rs[0].PhysicalOffset, rs[3].PhysicalOffset+int64(rs[3].WroteBytes))
	if res := s.GetMessageViews("C", 0, 0, 4, 1<<20, nil, ResidentPages); res.Status != PagesNotResident {
		t.Fatalf("ratio 0: %v, %d records", res.Status, res.Count)
	}
	if s.hotTail = hotTailFor(40); s.hotTail < s.MaxPhyOffset() {
		t.Skipf("40%% of this machine's memory (%d bytes) is less than the test's commit log", s.hotTail)
	}
	res := s.GetMessageViews("C", 0, 0, 4, 1<<20, nil, ResidentPages)
	if res.Status != Found || res.Count != 4 {
		t.Fatalf("ratio 40: %v, %d records", res.Status, res.Count)
	}
	res.Release()
}

// mappedAt finds the commit log file and position b (a view) lies at.
func mappedAt(s *Store, b []byte) (*mappedFile, int64) {
	q := &s.cl.q
	q.mu.RLock()
	defer q.mu.RUnlock()
	at := uintptr(unsafe.Pointer(&b[0]))
	for _, mf := range q.files {
		if len(mf.data) == 0 {
			continue
		}
		base := uintptr(unsafe.Pointer(&mf.data[0]))
		if at >= base && at < base+uintptr(len(mf.data)) {
			return mf, int64(at - base)
		}
	}
	panic("BUG: view outside the commit log")
}
