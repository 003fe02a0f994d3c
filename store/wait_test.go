package store

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

// answers records what a waiter's callbacks were called with, in order.
type answers struct {
	mu   sync.Mutex
	ids  []int
	errs map[int]error
}

func (a *answers) cb(id int) func(error) {
	return func(err error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.errs == nil {
			a.errs = map[int]error{}
		}
		if _, dup := a.errs[id]; dup {
			panic("answered twice")
		}
		a.ids = append(a.ids, id)
		a.errs[id] = err
	}
}

func (a *answers) got() ([]int, map[int]error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.ids), a.errs
}

func newTestWaiter() *offsetWaiter {
	w := newOffsetWaiter()
	w.enable(Flushed, time.Hour, 0)
	return w
}

// TestWaitOrder: a source reaching an offset answers every waiter at or
// below it, lowest offset first (equal offsets in registration order),
// whatever order they registered in; the others keep waiting.
func TestWaitOrder(t *testing.T) {
	t.Parallel()
	w := newTestWaiter()
	var a answers
	ends := []int64{30, 10, 20, 10, 40, 25}
	for i, e := range ends {
		w.wait(e, Flushed, a.cb(i))
	}
	w.advance(Flushed, 25)
	if ids, _ := a.got(); !slices.Equal(ids, []int{1, 3, 2, 5}) {
		t.Fatalf("answered %v at 25, want [1 3 2 5]", ids)
	}
	if w.pending() != 2 {
		t.Fatalf("%d pending", w.pending())
	}
	w.advance(Flushed, 24) // going back changes nothing
	w.advance(Flushed, 40)
	ids, errs := a.got()
	if !slices.Equal(ids, []int{1, 3, 2, 5, 0, 4}) {
		t.Fatalf("answered %v", ids)
	}
	for id, err := range errs {
		if err != nil {
			t.Fatalf("waiter %d: %v", id, err)
		}
	}
	// Already covered: answered at once, by the caller.
	w.wait(40, Flushed, a.cb(6))
	if ids, _ := a.got(); len(ids) != 7 || w.pending() != 0 {
		t.Fatalf("covered waiter: answered %v, %d pending", ids, w.pending())
	}
}

// TestWaitManyPerOffset: one advance answers every waiter of an offset,
// each exactly once (the group commit: one flush, many waiters).
func TestWaitManyPerOffset(t *testing.T) {
	t.Parallel()
	w := newTestWaiter()
	var n atomic.Int64
	cb := func(err error) {
		if err != nil {
			t.Error(err)
		}
		n.Add(1)
	}
	for range 1000 {
		w.wait(100, Flushed, cb)
	}
	w.wait(101, Flushed, cb)
	w.advance(Flushed, 100)
	if n.Load() != 1000 || w.pending() != 1 {
		t.Fatalf("%d answered, %d pending", n.Load(), w.pending())
	}
}

// TestWaitTimeout: a waiter its source has not covered in time hears the
// source's timeout error; one covered meanwhile does not. A waiter for two
// sources that both missed hears the replica's (Apache's precedence).
func TestWaitTimeout(t *testing.T) {
	t.Parallel()
	w := newTestWaiter()
	w.enable(Replicated, time.Hour, 0)
	var a answers
	w.wait(10, Flushed, a.cb(0))
	w.wait(20, Flushed, a.cb(1))
	w.wait(10, Flushed|Replicated, a.cb(2))
	w.wait(30, Flushed|Replicated, a.cb(3))
	w.wait(10, Replicated, a.cb(4))
	w.expire()
	if ids, _ := a.got(); len(ids) != 0 {
		t.Fatalf("answered %v before any timeout", ids)
	}
	w.advance(Flushed, 10) // 0 done; 2 flushed, not replicated
	w.setTimeout(Flushed, 0)
	w.setTimeout(Replicated, 0)
	w.expire()
	ids, errs := a.got()
	if len(ids) != 5 || w.pending() != 0 {
		t.Fatalf("answered %v, %d pending", ids, w.pending())
	}
	want := map[int]error{0: nil, 1: ErrFlushTimeout, 2: ErrReplicaTimeout, 3: ErrReplicaTimeout, 4: ErrReplicaTimeout}
	for id, err := range want {
		if got := errs[id]; (err == nil) != (got == nil) || !errors.Is(got, err) {
			t.Errorf("waiter %d: %v, want %v", id, got, err)
		}
	}
}

// TestWaitShutdownAnswersEveryone: close answers every waiter with its
// error, and every waiter after it at once.
func TestWaitShutdownAnswersEveryone(t *testing.T) {
	t.Parallel()
	w := newTestWaiter()
	w.enable(Replicated, time.Hour, 0)
	var a answers
	for i := range 100 {
		w.wait(int64(i), Flushed|Durability(i%2)*Replicated, a.cb(i))
	}
	w.close(ErrClosed)
	w.wait(1, Flushed, a.cb(100))
	ids, errs := a.got()
	if len(ids) != 101 || w.pending() != 0 {
		t.Fatalf("%d answered, %d pending", len(ids), w.pending())
	}
	for id, err := range errs {
		// 0 was covered at registration (offset 0).
		if id != 0 && !errors.Is(err, ErrClosed) {
			t.Fatalf("waiter %d: %v", id, err)
		}
	}
}

// TestWaitSources: a waiter for two sources is answered when both covered
// its offset; replicas without a source enabled are not available, and a
// replica failure answers only the waiters it has not covered yet.
func TestWaitSources(t *testing.T) {
	t.Parallel()
	w := newTestWaiter()
	var a answers
	w.wait(10, Replicated, a.cb(0))
	w.wait(10, Flushed|Replicated, a.cb(1))
	if _, errs := a.got(); !errors.Is(errs[0], ErrReplicaNotAvailable) || !errors.Is(errs[1], ErrReplicaNotAvailable) {
		t.Fatalf("replicas not enabled: %v", errs)
	}
	w.enable(Replicated, time.Hour, 5)
	w.wait(10, Flushed|Replicated, a.cb(2))
	w.wait(20, Flushed|Replicated, a.cb(3))
	w.wait(8, Replicated, a.cb(4))
	w.advance(Flushed, 100)
	if ids, _ := a.got(); len(ids) != 2 {
		t.Fatalf("answered %v with replicas behind", ids)
	}
	w.advance(Replicated, 12)
	if ids, errs := a.got(); !slices.Equal(ids, []int{0, 1, 4, 2}) || errs[2] != nil || errs[4] != nil {
		t.Fatalf("answered %v (%v)", ids, errs)
	}
	w.fail(Replicated, ErrReplicaNotAvailable, false) // replicas lost: 3 fails
	if _, errs := a.got(); !errors.Is(errs[3], ErrReplicaNotAvailable) {
		t.Fatalf("waiter 3: %v", errs[3])
	}
	w.wait(30, Replicated, a.cb(5)) // not sticky: waits
	if w.pending() != 1 {
		t.Fatalf("%d pending", w.pending())
	}
	w.advance(Replicated, 30)
	if _, errs := a.got(); errs[5] != nil {
		t.Fatalf("waiter 5: %v", errs[5])
	}
}

// TestWaitStickyFailure: a failed flush answers the waiters it did not
// cover with its error, and every later waiter for a flush at once.
func TestWaitStickyFailure(t *testing.T) {
	t.Parallel()
	w := newTestWaiter()
	var a answers
	w.wait(10, Flushed, a.cb(0))
	w.wait(20, Flushed, a.cb(1))
	w.advance(Flushed, 10)
	errEIO := errors.New("eio")
	w.fail(Flushed, errEIO, true)
	w.wait(15, Flushed, a.cb(2))
	w.wait(5, Flushed, a.cb(3)) // covered before the failure: durable
	_, errs := a.got()
	if errs[0] != nil || !errors.Is(errs[1], errEIO) || !errors.Is(errs[2], errEIO) || errs[3] != nil {
		t.Fatalf("answers %v", errs)
	}
}

// TestWaitConcurrent: waiters registering from many goroutines while the
// source advances are each answered exactly once (run with -race).
func TestWaitConcurrent(t *testing.T) {
	t.Parallel()
	w := newTestWaiter()
	var answered atomic.Int64
	var wg sync.WaitGroup
	const writers, each = 8, 500
	var offset atomic.Int64
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var once [each]atomic.Bool
			for i := range each {
				w.wait(offset.Add(1), Flushed, func(err error) {
					if err != nil || once[i].Swap(true) {
						t.Errorf("answer %d: %v, twice %v", i, err, once[i].Load())
					}
					answered.Add(1)
				})
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for answered.Load() < writers*each {
			w.advance(Flushed, offset.Load())
		}
	}()
	wg.Wait()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%d of %d answered", answered.Load(), writers*each)
	}
}

// TestWaitAllocs: waiting and being answered allocates nothing per waiter
// (the caller's callback aside) once the lists have grown.
func TestWaitAllocs(t *testing.T) {
	w := newTestWaiter()
	var n int
	cb := func(error) { n++ }
	off := int64(0)
	round := func() {
		for range 64 {
			off++
			w.wait(off, Flushed, cb)
		}
		w.advance(Flushed, off)
	}
	round()
	if allocs := testing.AllocsPerRun(100, round); allocs != 0 {
		t.Fatalf("%v allocations per 64 waiters", allocs)
	}
}

// TestGroupCommit: one flush answers every SYNC_FLUSH waiter registered
// before it, with one msync.
func TestGroupCommit(t *testing.T) {
	t.Parallel()
	var msyncs atomic.Int64
	ops := hostOps()
	ops.msync = func(path string, b []byte) error {
		msyncs.Add(1)
		return sysOps.msync(path, b)
	}
	cfg := testConfig(t.TempDir())
	cfg.FlushDiskType = SyncFlush
	s := openWithOps(t, cfg, ops) // not started: this test is the flush goroutine
	defer shutdown(t, s)
	var answered atomic.Int64
	cb := func(err error) {
		if err != nil {
			t.Error(err)
		}
		answered.Add(1)
	}
	for i := range 100 {
		r, err := s.Put(testMsg("G", 0, i))
		if err != nil {
			t.Fatal(err)
		}
		s.WaitFlush(r.PhysicalOffset+int64(r.WroteBytes), cb)
	}
	if answered.Load() != 0 {
		t.Fatal("answered before a flush")
	}
	s.flushCommitLogLogged(0)
	s.answerWaits()
	if answered.Load() != 100 || msyncs.Load() != 1 {
		t.Fatalf("%d answered after %d msyncs", answered.Load(), msyncs.Load())
	}
}

// TestWaitFlushShutdown: Shutdown answers every waiter it leaves waiting
// (ErrClosed: sends waiting for replicas that never acknowledged), and
// WaitFlush after it answers at once.
func TestWaitFlushShutdown(t *testing.T) {
	t.Parallel()
	s := openStarted(t, testConfig(t.TempDir()))
	s.EnableSource(Replicated, time.Minute, 0)
	var a answers
	for i, r := range putN(t, s, "TopicA", 1, 0, 10) {
		s.Wait(r.PhysicalOffset+int64(r.WroteBytes), Replicated, a.cb(i))
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.WaitFlush(1, a.cb(10))
	ids, errs := a.got()
	if len(ids) != 11 {
		t.Fatalf("%d answered", len(ids))
	}
	for id, err := range errs {
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("waiter %d: %v", id, err)
		}
	}
}

// TestWaitFlushFailureSticky: a failed commit log msync fails the waiters
// it did not cover, and every later one, without waiting for the timeout.
func TestWaitFlushFailureSticky(t *testing.T) {
	t.Parallel()
	var fail atomic.Bool
	ops := hostOps()
	ops.msync = func(path string, b []byte) error {
		if fail.Load() {
			return errors.New("injected eio")
		}
		return sysOps.msync(path, b)
	}
	cfg := testConfig(t.TempDir())
	cfg.FlushDiskType = SyncFlush
	s := openWithOps(t, cfg, ops)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Shutdown(context.Background()); err == nil {
			t.Error("shutdown with a failing msync reported nothing")
		}
	}()
	fail.Store(true)
	r, err := s.Put(testMsg("F", 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	var a answers
	s.WaitFlush(r.PhysicalOffset+int64(r.WroteBytes), a.cb(0))
	testutil.WaitFor(t, 5*time.Second, func() bool { ids, _ := a.got(); return len(ids) == 1 })
	s.WaitFlush(r.PhysicalOffset+int64(r.WroteBytes), a.cb(1))
	_, errs := a.got()
	if errs[0] == nil || errors.Is(errs[0], ErrFlushTimeout) || errs[1] == nil {
		t.Fatalf("answers %v", errs)
	}
}
