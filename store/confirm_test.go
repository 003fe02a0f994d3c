package store

import (
	"encoding/binary"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

// With the gate on, the dispatcher stops at the confirm offset and goes
// on when it moves; off, it dispatches everything.
func TestConfirmGateHoldsDispatch(t *testing.T) {
	s := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, s)
	putN(t, s, "TopicA", 1, 0, 10)
	testutil.WaitFor(t, 10*time.Second, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
	s.SetConfirmOffset(s.MaxPhyOffset())
	s.SetConfirmGate(true)
	more := putN(t, s, "TopicA", 1, 10, 10)
	s.SetConfirmOffset(more[4].PhysicalOffset) // records 10..13 confirmed
	testutil.WaitFor(t, 10*time.Second, func() bool { return s.DispatchedPhyOffset() == more[4].PhysicalOffset })
	time.Sleep(50 * time.Millisecond) // and no further
	if d := s.DispatchedPhyOffset(); d != more[4].PhysicalOffset {
		t.Fatalf("dispatched to %d past the confirm offset %d", d, more[4].PhysicalOffset)
	}
	if n := s.MaxOffset("TopicA", 0); n != 14 {
		t.Fatalf("queue max offset %d, want 14", n)
	}
	// A confirm offset inside a record (a slave's ack ends where its last
	// frame did): dispatch waits at the record, neither stalls nor counts
	// as behind.
	s.SetConfirmOffset(more[6].PhysicalOffset + 10)
	testutil.WaitFor(t, 10*time.Second, func() bool { return s.DispatchedPhyOffset() == more[6].PhysicalOffset })
	time.Sleep(50 * time.Millisecond)
	if s.dispatchStalled.Load() || s.dispatchBehind() || s.MaxOffset("TopicA", 0) != 16 {
		t.Fatalf("confirm inside a record: stalled %v behind %v queue max %d", s.dispatchStalled.Load(), s.dispatchBehind(), s.MaxOffset("TopicA", 0))
	}
	s.SetConfirmOffset(s.MaxPhyOffset())
	testutil.WaitFor(t, 10*time.Second, func() bool { return s.MaxOffset("TopicA", 0) == 20 })
	s.SetConfirmGate(false)
}

// A replica cuts its commit log, consume queues and queue offsets at a
// record boundary, across a file end; a store taking Puts refuses.
// LeaveReplica then cuts a record a frame split and takes Puts from the
// consume queues' ends.
func TestTruncateReplicaAndLeave(t *testing.T) {
	m := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, m)
	res := putN(t, m, "TopicA", 2, 0, 1500) // several 64 KiB files
	r := openStarted(t, replicaConfig(t.TempDir()))
	defer shutdown(t, r)
	end := copyReplica(t, m, r, 0, 32<<10)
	testutil.WaitFor(t, 10*time.Second, func() bool { return r.DispatchedPhyOffset() == end })

	if err := m.TruncateReplica(res[100].PhysicalOffset); !errors.Is(err, ErrNotReplica) {
		t.Fatalf("truncate a master: %v", err)
	}
	cut := res[400].PhysicalOffset
	if cut > r.cfg.MappedFileSizeCommitLog {
		t.Fatalf("want the cut in the first file: %d", cut)
	}
	if err := r.TruncateReplica(cut); err != nil {
		t.Fatal(err)
	}
	if r.MaxPhyOffset() != cut || r.DispatchedPhyOffset() > cut {
		t.Fatalf("after the cut: max %d dispatched %d, want %d", r.MaxPhyOffset(), r.DispatchedPhyOffset(), cut)
	}
	for q := range int32(2) {
		if n := r.MaxOffset("TopicA", q); n != 200 {
			t.Fatalf("queue %d max offset %d, want 200", q, n)
		}
	}
	// The master's bytes from the cut on follow again, byte for byte.
	end = copyReplica(t, m, r, cut, 32<<10)
	sameCommitLog(t, m, r, 0, end)
	testutil.WaitFor(t, 10*time.Second, func() bool { return r.DispatchedPhyOffset() == end })
	sameQueues(t, m, r, "TopicA", 2)

	// A frame ends inside a record: leaving cuts it, Puts continue.
	more := putN(t, m, "TopicA", 2, 1500, 2)
	sp, _ := m.ReadReplica(end, int(more[1].PhysicalOffset-end)+10)
	if err := r.AppendReplica(end, sp.Bytes); err != nil {
		t.Fatal(err)
	}
	sp.Release()
	at, err := r.LeaveReplica()
	if err != nil || at != more[1].PhysicalOffset {
		t.Fatalf("leave: end %d %v, want %d", at, err, more[1].PhysicalOffset)
	}
	pr, err := r.Put(testMsg("TopicA", 1, 7))
	if err != nil || pr.QueueOffset != 750 || pr.PhysicalOffset != at {
		t.Fatalf("put after leaving: %+v %v, want queue offset 750 at %d", pr, err, at)
	}
}

// A master's send still waiting for replicas when the store becomes a
// replica and cuts its commit log is answered ErrTruncated, and the
// replicated mark comes down to the cut: a record written at those offsets
// later waits for its own acknowledgement.
func TestTruncateAnswersCutWaiters(t *testing.T) {
	s := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, s)
	s.EnableSource(Replicated, time.Minute, 0)
	res := putN(t, s, "TopicA", 1, 0, 10)
	s.Advance(Replicated, res[9].PhysicalOffset) // records 0..8 acknowledged
	answers := make(chan error, 4)
	s.Wait(s.MaxPhyOffset(), Replicated, func(err error) { answers <- err }) // record 9
	s.BecomeReplica()
	if err := s.TruncateReplica(res[5].PhysicalOffset); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-answers:
		if !errors.Is(err, ErrTruncated) {
			t.Fatalf("the cut record's send answered %v, want ErrTruncated", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cut record's send not answered")
	}
	// A send whose wait comes after the cut (its goroutine was late) is
	// refused at once: its record is beyond the end.
	s.Wait(res[8].PhysicalOffset, Replicated, func(err error) { answers <- err })
	if err := <-answers; !errors.Is(err, ErrTruncated) {
		t.Fatalf("a wait after the cut answered %v, want ErrTruncated", err)
	}
	if _, err := s.LeaveReplica(); err != nil {
		t.Fatal(err)
	}
	again := putN(t, s, "TopicA", 1, 100, 1) // at res[5]'s offset, below the old mark
	end := again[0].PhysicalOffset + int64(again[0].WroteBytes)
	if again[0].PhysicalOffset != res[5].PhysicalOffset || end > res[9].PhysicalOffset {
		t.Fatalf("new record at %d..%d, want it at %d below %d", again[0].PhysicalOffset, end, res[5].PhysicalOffset, res[9].PhysicalOffset)
	}
	s.Wait(end, Replicated, func(err error) { answers <- err })
	select {
	case err := <-answers:
		t.Fatalf("a record written after the cut answered %v without an acknowledgement", err)
	case <-time.After(100 * time.Millisecond):
	}
	s.Advance(Replicated, end)
	if err := <-answers; err != nil {
		t.Fatalf("acknowledged: %v", err)
	}
}

// With ConfirmGate (controller mode) the confirm offset survives a
// restart in the checkpoint (Apache's confirmPhyOffset, byte 32) and
// recovery dispatches no further; the records after it keep their queue
// offsets for the next Put. Without the gate everything is dispatched.
func TestConfirmOffsetKeptOverRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir)
	cfg.ConfirmGate = true
	s := openStarted(t, cfg)
	res := putN(t, s, "TopicA", 1, 0, 20)
	s.SetConfirmOffset(res[10].PhysicalOffset)
	testutil.WaitFor(t, 10*time.Second, func() bool { return s.MaxOffset("TopicA", 0) == 10 })
	shutdown(t, s)
	raw, err := os.ReadFile(mustStorePath(dir, fileCheckpoint))
	if err != nil || int64(binary.BigEndian.Uint64(raw[32:])) != res[10].PhysicalOffset {
		t.Fatalf("checkpoint confirmPhyOffset: %x %v, want %d", raw[32:40], err, res[10].PhysicalOffset)
	}

	s = openStarted(t, cfg)
	if c, n := s.ConfirmOffset(), s.MaxOffset("TopicA", 0); c != res[10].PhysicalOffset || n != 10 {
		t.Fatalf("reopened: confirm %d queue max %d, want %d and 10", c, n, res[10].PhysicalOffset)
	}
	pr, err := s.Put(testMsg("TopicA", 0, 20))
	if err != nil || pr.QueueOffset != 20 {
		t.Fatalf("put after the restart: %+v %v, want queue offset 20", pr, err)
	}
	s.SetConfirmOffset(s.MaxPhyOffset())
	testutil.WaitFor(t, 10*time.Second, func() bool { return s.MaxOffset("TopicA", 0) == 21 })
	shutdown(t, s)

	cfg.ConfirmGate = false
	s = openStarted(t, cfg)
	defer shutdown(t, s)
	if n := s.MaxOffset("TopicA", 0); n != 21 {
		t.Fatalf("without the gate: queue max %d, want 21", n)
	}
}
