package store

import (
	"testing"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

// TestAppendPathsAgree: appends beyond the populated pages go through
// pwrite, those below it through the mapping; single puts, batches and the
// BLANK record at a file's end read back the same either way, before and
// after a restart. The store is not started, so no prefaulter runs: in odd
// rounds the test and Put's assist populate, in even rounds populating is
// off and every append goes through pwrite.
func TestAppendPathsAgree(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir()) // 64 KiB commit log files
	s, err := Open(cfg, testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	mapped := func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		mf := s.cl.q.lastLocked()
		if mf == nil {
			return false // the first put creates the file
		}
		pos := mf.wrote.Load()
		dst := s.appendDstLocked(mf, pos, 512)
		return cap(dst) > 0 && &dst[:1][0] == &mf.data[pos]
	}
	n := 0
	for round := range 8 {
		populating := round%2 == 1
		s.noPopulate.Store(!populating)
		if populating {
			if err := s.prefault(); err != nil {
				t.Skipf("no MADV_POPULATE_WRITE: %v", err)
			}
		} else if mf := s.cl.q.lastLocked(); mf != nil {
			mf.populated.Store(0) // as if the prefaulter fell behind
		}
		if got := mapped(); got != populating {
			t.Fatalf("round %d: appends through the mapping: %v", round, got)
		}
		putN(t, s, "T", 2, n, 300) // ~40 KiB: files fill, roll and close with BLANK
		n += 300
		// After a roll the new file is populated only by Put's assist.
		if mf := s.cl.q.lastLocked(); populating && mf.populated.Load() < min(mf.wrote.Load()+assistAhead, mf.size) {
			t.Fatalf("round %d: populated to %d, wrote %d", round, mf.populated.Load(), mf.wrote.Load())
		}
		batch := make([]PutMessage, 8)
		for i := range batch {
			batch[i] = *testMsg("B", 0, round*len(batch)+i)
		}
		if _, err := s.PutBatch(batch, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.cl.q.files) < 4 {
		t.Fatalf("only %d commit log files", len(s.cl.q.files))
	}
	for _, mf := range s.cl.q.files[:len(s.cl.q.files)-1] {
		if mf.fd.Load() >= 0 {
			t.Fatalf("%s is full and still open for writing", mf.path)
		}
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5e9, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
	checkQueues(t, s, "T", 2, n)
	if got := len(readAll(t, s, "B", 0)); got != 64 {
		t.Fatalf("batches: %d records, want 64", got)
	}
	shutdown(t, s)
	s = openStarted(t, cfg)
	defer shutdown(t, s)
	checkQueues(t, s, "T", 2, n)
}
