package store

import (
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
