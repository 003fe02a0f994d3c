package store

import (
	"bytes"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
)

// checkNoHolds fails if a commit log file is still held or a retired one
// still mapped: every GetMessageViews answer was released exactly once.
func checkNoHolds(t testing.TB, s *Store) {
	t.Helper()
	s.reap() // files whose last hold went wait for the unmapper
	q := &s.cl.q
	q.mu.RLock()
	defer q.mu.RUnlock()
	for _, mf := range q.files {
		if n := mf.refs.Load(); n != 1 {
			t.Errorf("%s: refs %d, want 1", mf.path, n)
		}
	}
	for _, mf := range q.retired {
		if !mf.unmapped.Load() || mf.refs.Load() != 0 {
			t.Errorf("retired %s: refs %d, unmapped %v", mf.path, mf.refs.Load(), mf.unmapped.Load())
		}
	}
}

// getBoth runs the same query as a copy and as views and fails unless they
// agree in everything but the form of the records; it returns the views
// result, still held.
func getBoth(t *testing.T, s *Store, topic string, qid int32, off int64, max, maxBytes int,
	match func(int64, []byte) bool) (GetResult, GetResult) {
	t.Helper()
	c := s.GetMessages(nil, topic, qid, off, max, maxBytes, match)
	v := s.GetMessageViews(topic, qid, off, max, maxBytes, match, AnyPages)
	if v.Status != c.Status || v.NextBeginOffset != c.NextBeginOffset || v.Count != c.Count ||
		v.MinOffset != c.MinOffset || v.MaxOffset != c.MaxOffset {
		t.Fatalf("views %v next %d count %d min %d max %d; copy %v next %d count %d min %d max %d",
			v.Status, v.NextBeginOffset, v.Count, v.MinOffset, v.MaxOffset,
			c.Status, c.NextBeginOffset, c.Count, c.MinOffset, c.MaxOffset)
	}
	if got := bytes.Join(v.Vec, nil); !bytes.Equal(got, c.Body) {
		t.Fatalf("views hold %d bytes, copy %d, not equal", len(got), len(c.Body))
	}
	if (v.Release != nil) != (v.Status == Found) || (v.Vec != nil) != (v.Status == Found) {
		t.Fatalf("status %v with release %v and %d slices", v.Status, v.Release != nil, len(v.Vec))
	}
	return v, c
}

func TestGetMessageViews(t *testing.T) {
	t.Parallel()
	s := openStarted(t, testConfig(t.TempDir())) // 64 KiB commit log files
	defer shutdown(t, s)
	// Queue 0 alone first (adjacent records), then 0 and 1 interleaved,
	// over several commit log files.
	putN(t, s, "T", 1, 0, 40)
	for i := 40; i < 1200; i++ {
		if _, err := s.Put(testMsg("T", int32(i%2), i)); err != nil {
			t.Fatal(err)
		}
	}
	// Then U alone, sure to cross into another file.
	putN(t, s, "U", 1, 0, 800)
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
	// crossAt is the queue offset of the first record of topic/0 in a
	// later commit log file than the record before it.
	crossAt := func(topic string) int64 {
		cq := s.findCQ(topic, 0)
		prev, _ := cq.entry(0)
		for off := int64(1); off < cq.maxLogical.Load(); off++ {
			e, _ := cq.entry(off)
			if e.phy/s.cl.q.fileSize != prev.phy/s.cl.q.fileSize {
				return off
			}
			prev = e
		}
		t.Fatalf("%s: no record in a second commit log file", topic)
		return 0
	}
	crossT, crossU := crossAt("T"), crossAt("U")
	tests := []struct {
		name   string
		topic  string
		qid    int32
		offset int64
		max    int
		bytes  int
		match  func(int64, []byte) bool
		slices int // -1: not checked
	}{
		{"adjacent records in one slice", "T", 0, 0, 32, 1 << 20, nil, 1},
		{"interleaved queue", "T", 0, 100, 32, 1 << 20, nil, 32},
		{"other queue", "T", 1, 0, 32, 1 << 20, nil, 32},
		{"max msgs", "T", 0, 2, 3, 1 << 20, nil, 1},
		{"max bytes keeps first", "T", 0, 0, 32, 1, nil, 1},
		{"max bytes", "T", 0, 0, 32, 1000, nil, 1},
		{"filter", "T", 0, 0, 32, 1 << 20, onlyA, -1},
		{"filter interleaved", "T", 0, 100, 32, 1 << 20, onlyA, -1},
		{"all filtered", "T", 0, 0, 32, 1 << 20, never, 0},
		{"across commit log files", "T", 0, crossT - 5, 10, 1 << 20, nil, 10},
		{"across commit log files, adjacent", "U", 0, crossU - 5, 10, 1 << 20, nil, 2},
		{"caught up", "T", 0, s.MaxOffset("T", 0), 32, 1 << 20, nil, 0},
		{"overflow badly", "T", 0, s.MaxOffset("T", 0) + 1, 32, 1 << 20, nil, 0},
		{"unknown queue", "T", 7, 0, 32, 1 << 20, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, _ := getBoth(t, s, tt.topic, tt.qid, tt.offset, tt.max, tt.bytes, tt.match)
			if v.Release != nil {
				defer v.Release()
			}
			if tt.slices >= 0 && len(v.Vec) != tt.slices {
				t.Fatalf("%d slices, want %d", len(v.Vec), tt.slices)
			}
			for _, b := range v.Vec {
				if cap(b) != len(b) {
					t.Fatal("a slice can grow into the mapping")
				}
			}
		})
	}
	checkNoHolds(t, s)
}

// The filter sees each record as a view of the mapping, whole.
func TestGetMessageViewsMatchSeesRecord(t *testing.T) {
	t.Parallel()
	s := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, s)
	putN(t, s, "T", 1, 0, 10)
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.MaxOffset("T", 0) == 10 })
	seen := 0
	res := s.GetMessageViews("T", 0, 0, 32, 1<<20, func(_ int64, rec []byte) bool {
		r, rest, err := message.DecodeRecord(rec)
		if err != nil || len(rest) != 0 || r.QueueOffset != int64(seen) {
			t.Errorf("record %d: %+v rest %d: %v", seen, r, len(rest), err)
		}
		seen++
		return seen%2 == 0
	}, AnyPages)
	if seen != 10 || res.Count != 5 || len(res.Vec) != 5 {
		t.Fatalf("match called %d times, %d records in %d slices", seen, res.Count, len(res.Vec))
	}
	res.Release()
	checkNoHolds(t, s)
}

// More separate records than maxViewSlices: the answer stops there, the
// next pull goes on from the first record left out.
func TestGetMessageViewsSliceCap(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	cfg.MappedFileSizeCommitLog = 1 << 20
	cfg.MappedFileSizeConsumeQueue = 1000 * cqEntrySize
	s := openStarted(t, cfg)
	defer shutdown(t, s)
	const n = maxViewSlices + 40
	putN(t, s, "T", 2, 0, 2*n)
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.MaxOffset("T", 0) == n })
	c := s.GetMessages(nil, "T", 0, 0, n, 1<<20, nil)
	v := s.GetMessageViews("T", 0, 0, n, 1<<20, nil, AnyPages)
	defer v.Release()
	if c.Count != n || v.Count != maxViewSlices || len(v.Vec) != maxViewSlices || v.NextBeginOffset != maxViewSlices {
		t.Fatalf("copy %d records; views %d records in %d slices, next %d", c.Count, v.Count, len(v.Vec), v.NextBeginOffset)
	}
	if got := bytes.Join(v.Vec, nil); !bytes.Equal(got, c.Body[:len(got)]) {
		t.Fatal("views differ from the copy")
	}
}

// A file cleanup deletes while an answer holds it stays mapped and
// readable, unlinked, until the release; then it is unmapped.
func TestViewsHeldAcrossCleanup(t *testing.T) {
	s := openForceCleaning(t)
	defer shutdown(t, s)
	fillForCleanup(t, s, 400)
	first := s.cl.q.files[0]
	v := s.GetMessageViews("C", 0, 0, 16, 1<<20, nil, AnyPages)
	if v.Status != Found || first.refs.Load() != 2 {
		t.Fatalf("%v, refs %d", v.Status, first.refs.Load())
	}
	want := bytes.Join(v.Vec, nil) // a copy taken while surely mapped
	s.cfg.DeleteFileBatchMax = 1
	if d, err := s.cleanOnce(); d != 1 || err != nil {
		t.Fatalf("deleted %d: %v", d, err)
	}
	if s.MinPhyOffset() == first.start {
		t.Fatal("the held file is still in the list")
	}
	if _, err := os.Stat(first.path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("held file not unlinked: %v", err)
	}
	if first.unmapped.Load() || first.refs.Load() != 1 {
		t.Fatalf("held file unmapped %v, refs %d", first.unmapped.Load(), first.refs.Load())
	}
	if !bytes.Equal(bytes.Join(v.Vec, nil), want) {
		t.Fatal("held views changed")
	}
	// A new pull of the same offsets finds them gone.
	if res := s.GetMessageViews("C", 0, 0, 16, 1<<20, nil, AnyPages); res.Status == Found {
		res.Release()
		t.Fatal("deleted records still served")
	}
	v.Release()
	s.reap() // the unmapper's work, done here and now
	if !first.unmapped.Load() || first.refs.Load() != 0 {
		t.Fatalf("released file unmapped %v, refs %d", first.unmapped.Load(), first.refs.Load())
	}
	// The next retirement prunes it; an unheld file is unmapped at once.
	if d, err := s.cleanOnce(); d != 1 || err != nil {
		t.Fatalf("deleted %d: %v", d, err)
	}
	s.cl.q.mu.RLock()
	retired := len(s.cl.q.retired)
	s.cl.q.mu.RUnlock()
	if retired != 0 {
		t.Fatalf("%d retired files kept", retired)
	}
	checkNoHolds(t, s)
}

// Shutdown unmaps a file an answer still holds (its release may never
// come); a release after that changes nothing.
func TestShutdownUnmapsHeld(t *testing.T) {
	s := openForceCleaning(t)
	fillForCleanup(t, s, 400)
	first, last := s.cl.q.files[0], s.cl.q.lastLocked()
	v1 := s.GetMessageViews("C", 0, 0, 4, 1<<20, nil, AnyPages)
	v2 := s.GetMessageViews("C", 1, s.MaxOffset("C", 1)-1, 4, 1<<20, nil, AnyPages)
	if v1.Status != Found || v2.Status != Found {
		t.Fatal(v1.Status, v2.Status)
	}
	s.cfg.DeleteFileBatchMax = 1
	if d, err := s.cleanOnce(); d != 1 || err != nil {
		t.Fatalf("deleted %d: %v", d, err)
	}
	shutdown(t, s)
	if !first.unmapped.Load() || !last.unmapped.Load() {
		t.Fatalf("held files mapped after shutdown: retired %v, in list %v", first.unmapped.Load(), last.unmapped.Load())
	}
	v1.Release()
	v2.Release()
}

// Pulls by views under concurrent cleanup and appends, answers released
// by other goroutines as the network layer does (run with -race): no
// count is lost, every retired file ends unmapped.
func TestViewsWhileCleaning(t *testing.T) {
	s := openForceCleaning(t)
	defer shutdown(t, s)
	fillForCleanup(t, s, 300)
	stop := make(chan struct{})
	releases := make(chan GetResult, 64)
	var wg, rwg sync.WaitGroup
	rwg.Add(1)
	go func() { // the "network": checks the bytes late, then releases
		defer rwg.Done()
		for res := range releases {
			for _, b := range res.Vec {
				for len(b) > 0 {
					r, rest, err := message.DecodeRecordView(b)
					if err != nil || message.BodyCRC(r.Body) != r.BodyCRC {
						t.Errorf("held record unreadable: %v", err)
						break
					}
					b = rest
				}
			}
			res.Release()
		}
	}()
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				q := int32(i % 2)
				res := s.GetMessageViews("C", q, s.MinOffset("C", q)+int64(i%7), 16, 64<<10, nil, AnyPages)
				if res.Status != Found {
					continue
				}
				if res.Count == 0 || len(res.Vec) == 0 {
					t.Error("found without records")
				}
				releases <- res
			}
		}()
	}
	churnCleanup(t, s)
	close(stop)
	wg.Wait()
	close(releases)
	rwg.Wait()
	checkNoHolds(t, s)
}

func TestGetMessageViewsAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under -race")
	}
	cfg := testConfig(t.TempDir())
	cfg.MappedFileSizeConsumeQueue = 1000 * cqEntrySize // reads stay in the file the dispatcher maps
	s := openStarted(t, cfg)
	defer shutdown(t, s)
	// The queues' files first, so that the entries are written through
	// their mappings (a file made for entries kept in memory is written and
	// read with pread, which allocates the path it opens).
	putN(t, s, "T", 2, 0, 2)
	testutil.WaitFor(t, 5*time.Second, func() bool {
		for q := range int32(2) {
			if cq := s.findCQ("T", q); cq == nil || cq.hasPending() {
				return false
			}
		}
		return true
	})
	putN(t, s, "T", 2, 2, 198)
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.MaxOffset("T", 1) == 100 })
	waitMappedQueues(t, s, "T", 2)
	for i := 0; i < 4; i++ { // warm the pool
		if res := s.GetMessageViews("T", int32(i%2), 0, 32, 1<<20, nil, AnyPages); res.Release != nil {
			res.Release()
		}
	}
	i := 0
	allocs := testing.AllocsPerRun(200, func() {
		i++
		res := s.GetMessageViews("T", int32(i%2), int64(i%60), 32, 1<<20, nil, AnyPages)
		if res.Count != 32 {
			t.Fatalf("count %d", res.Count)
		}
		res.Release()
	})
	if allocs != 0 {
		t.Fatalf("GetMessageViews+Release allocates %v times", allocs)
	}
	checkNoHolds(t, s)
}

// waitMappedQueues waits until the consume queue files of topic's first
// queues are mapped, storing one more message in each while they are not:
// a queue's first file is made by the creator goroutine and mapped by the
// dispatcher's next store into it; until then a read opens and preads the
// file, which allocates (resource.go preadFull).
func waitMappedQueues(t *testing.T, s *Store, topic string, queues int32) {
	t.Helper()
	mapped := func() bool {
		for q := int32(0); q < queues; q++ {
			cq := s.findCQ(topic, q)
			if cq == nil {
				return false
			}
			cq.q.mu.RLock()
			ok := len(cq.q.files) > 0 && cq.q.files[len(cq.q.files)-1].data != nil
			cq.q.mu.RUnlock()
			if !ok {
				return false
			}
		}
		return true
	}
	next := int(s.MaxOffset(topic, 0)) * int(queues)
	testutil.WaitFor(t, 10*time.Second, func() bool {
		if mapped() {
			return true
		}
		putN(t, s, topic, queues, next, int(queues))
		next += int(queues)
		testutil.WaitFor(t, 5*time.Second, func() bool { return s.MaxOffset(topic, queues-1) == int64(next)/int64(queues) })
		return mapped()
	})
}
