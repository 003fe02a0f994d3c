package store

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

func replicaConfig(dir string) Config {
	cfg := testConfig(dir)
	cfg.Replica = true
	return cfg
}

// copyReplica ships the master's commit log from offset to its end into
// the replica in chunks of at most chunk bytes, as the HA writer does
// (ReadReplica never crosses a file), and returns where it stopped.
func copyReplica(t *testing.T, m, r *Store, from int64, chunk int) int64 {
	t.Helper()
	for {
		sp, ok := m.ReadReplica(from, chunk)
		if !ok {
			return from
		}
		if len(sp.Bytes) > chunk || len(sp.Bytes) == 0 {
			t.Fatalf("span of %d bytes at %d, limit %d", len(sp.Bytes), from, chunk)
		}
		if err := r.AppendReplica(sp.Offset, sp.Bytes); err != nil {
			t.Fatalf("append replica at %d: %v", from, err)
		}
		from += int64(len(sp.Bytes))
		sp.Release()
	}
}

// sameCommitLog compares both commit logs byte for byte over [from, end).
func sameCommitLog(t *testing.T, m, r *Store, from, end int64) {
	t.Helper()
	for off := from; off < end; {
		a, ok1 := m.ReadReplica(off, 1<<20)
		b, ok2 := r.ReadReplica(off, 1<<20)
		if !ok1 || !ok2 {
			t.Fatalf("read at %d: master %v replica %v", off, ok1, ok2)
		}
		n := min(len(a.Bytes), len(b.Bytes))
		if !bytes.Equal(a.Bytes[:n], b.Bytes[:n]) {
			t.Fatalf("commit logs differ in [%d, %d)", off, off+int64(n))
		}
		off += int64(n)
		a.Release()
		b.Release()
	}
}

// sameQueues compares the consume queues of topic: max offsets and every
// entry from the replica's first real one.
func sameQueues(t *testing.T, m, r *Store, topic string, queues int32) {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, func() bool { return m.DispatchedPhyOffset() >= m.MaxPhyOffset() })
	for q := range queues {
		mq, rq := m.findCQ(topic, q), r.findCQ(topic, q)
		if mq == nil || rq == nil {
			t.Fatalf("queue %s-%d: master %v replica %v", topic, q, mq != nil, rq != nil)
		}
		if mx, rx := mq.maxLogical.Load(), rq.maxLogical.Load(); mx != rx {
			t.Fatalf("queue %s-%d: max offset master %d replica %d", topic, q, mx, rx)
		}
		for i := rq.maxLogical.Load() - 1; i >= 0; i-- {
			re, ok := rq.entry(i)
			if !ok || re.filler() {
				break // before the replica's first record
			}
			me, ok := mq.entry(i)
			if !ok || me != re {
				t.Fatalf("queue %s-%d entry %d: master %+v replica %+v", topic, q, i, me, re)
			}
		}
	}
}

func TestReplicaCopiesByteForByte(t *testing.T) {
	m := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, m)
	r := openStarted(t, replicaConfig(t.TempDir()))
	defer shutdown(t, r)
	putN(t, m, "TopicA", 4, 0, 2000) // several 64 KiB files, BLANK tails
	if m.MinPhyOffset() != 0 || m.MaxPhyOffset() < 3*m.cfg.MappedFileSizeCommitLog {
		t.Fatalf("master log [%d, %d): want several files", m.MinPhyOffset(), m.MaxPhyOffset())
	}
	// 997-byte chunks split records and BLANK records alike.
	end := copyReplica(t, m, r, 0, 997)
	if end != m.MaxPhyOffset() || r.MaxPhyOffset() != end {
		t.Fatalf("copied to %d, master %d, replica %d", end, m.MaxPhyOffset(), r.MaxPhyOffset())
	}
	sameCommitLog(t, m, r, 0, end)
	testutil.WaitFor(t, 10*time.Second, func() bool { return r.DispatchedPhyOffset() >= end })
	sameQueues(t, m, r, "TopicA", 4)
	checkQueues(t, r, "TopicA", 4, 2000)

	// More, in 32 KiB frames: the replica follows on.
	putN(t, m, "TopicA", 4, 2000, 300)
	end = copyReplica(t, m, r, end, 32<<10)
	sameCommitLog(t, m, r, 0, end)
	testutil.WaitFor(t, 10*time.Second, func() bool { return r.DispatchedPhyOffset() >= end })
	sameQueues(t, m, r, "TopicA", 4)

	// The replica refuses ordinary writes and appends off its end.
	if _, err := r.Put(testMsg("TopicA", 0, 1)); !errors.Is(err, ErrReplica) {
		t.Fatalf("put on a replica: %v, want ErrReplica", err)
	}
	if _, err := r.PutBatch([]PutMessage{*testMsg("TopicA", 0, 1)}, nil); !errors.Is(err, ErrReplica) {
		t.Fatalf("put batch on a replica: %v, want ErrReplica", err)
	}
	if err := r.AppendReplica(end+1, []byte{1}); !errors.Is(err, ErrReplicaOffset) {
		t.Fatalf("append beyond the end: %v, want ErrReplicaOffset", err)
	}
	if err := r.AppendReplica(end-1, []byte{1}); !errors.Is(err, ErrReplicaOffset) {
		t.Fatalf("append below the end: %v, want ErrReplicaOffset", err)
	}
}

func TestReplicaStartsAtMastersLastFile(t *testing.T) {
	m := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, m)
	putN(t, m, "TopicA", 2, 0, 1500)
	size := m.cfg.MappedFileSizeCommitLog
	last := m.MaxPhyOffset() - m.MaxPhyOffset()%size // the report-0 rule
	if last == 0 {
		t.Fatal("want a master with several files")
	}
	r := openStarted(t, replicaConfig(t.TempDir()))
	if err := r.AppendReplica(last+8, []byte{1}); !errors.Is(err, ErrReplicaOffset) {
		t.Fatalf("empty replica, append off a file boundary: %v, want ErrReplicaOffset", err)
	}
	end := copyReplica(t, m, r, last, 4000)
	if r.MinPhyOffset() != last || r.MaxPhyOffset() != end {
		t.Fatalf("replica log [%d, %d), want [%d, %d)", r.MinPhyOffset(), r.MaxPhyOffset(), last, end)
	}
	sameCommitLog(t, m, r, last, end)
	testutil.WaitFor(t, 10*time.Second, func() bool { return r.DispatchedPhyOffset() >= end })
	sameQueues(t, m, r, "TopicA", 2)
	putN(t, m, "TopicA", 2, 1500, 1000) // on across the next boundaries
	end = copyReplica(t, m, r, end, 32<<10)
	testutil.WaitFor(t, 10*time.Second, func() bool { return r.DispatchedPhyOffset() >= end })
	sameQueues(t, m, r, "TopicA", 2)
	shutdown(t, r)

	// Reopened, a store whose first file is not 0 recovers as it was.
	r = openStarted(t, replicaConfig(r.cfg.StorePathRootDir))
	defer shutdown(t, r)
	if r.MinPhyOffset() != last || r.MaxPhyOffset() != end {
		t.Fatalf("reopened replica log [%d, %d), want [%d, %d)", r.MinPhyOffset(), r.MaxPhyOffset(), last, end)
	}
	sameQueues(t, m, r, "TopicA", 2)
}

// A slave killed with a record half received recovers to the record's
// start and continues from there, as after a reconnect.
func TestReplicaCrashMidRecord(t *testing.T) {
	m := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, m)
	res := putN(t, m, "TopicA", 2, 0, 120)
	rcfg := replicaConfig(t.TempDir())
	r := openStarted(t, rcfg)
	// Everything up to the middle of record 100's properties (its body is in,
	// so its body CRC matches: strictTail must catch it), then stop.
	cut := res[100].PhysicalOffset + int64(res[100].WroteBytes) - 5
	for off := int64(0); off < cut; {
		sp, _ := m.ReadReplica(off, int(min(997, cut-off)))
		if err := r.AppendReplica(off, sp.Bytes); err != nil {
			t.Fatal(err)
		}
		off += int64(len(sp.Bytes))
		sp.Release()
	}
	if r.MaxPhyOffset() != cut {
		t.Fatalf("replica at %d, want %d", r.MaxPhyOffset(), cut)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return r.DispatchedPhyOffset() == res[100].PhysicalOffset })
	r.crashClose()

	r = openStarted(t, rcfg)
	defer shutdown(t, r)
	if got := r.MaxPhyOffset(); got != res[100].PhysicalOffset {
		t.Fatalf("recovered to %d, want the torn record's start %d", got, res[100].PhysicalOffset)
	}
	end := copyReplica(t, m, r, r.MaxPhyOffset(), 32<<10)
	sameCommitLog(t, m, r, 0, end)
	testutil.WaitFor(t, 10*time.Second, func() bool { return r.DispatchedPhyOffset() >= end })
	sameQueues(t, m, r, "TopicA", 2)
	checkQueues(t, r, "TopicA", 2, 120)
}

// Shutdown of a replica waiting at a split record is a clean exit.
func TestReplicaShutdownAtSplitRecord(t *testing.T) {
	m := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, m)
	res := putN(t, m, "TopicA", 1, 0, 10)
	r := openStarted(t, replicaConfig(t.TempDir()))
	cut := res[5].PhysicalOffset + 10
	sp, _ := m.ReadReplica(0, int(cut))
	if err := r.AppendReplica(0, sp.Bytes); err != nil {
		t.Fatal(err)
	}
	sp.Release()
	testutil.WaitFor(t, 10*time.Second, func() bool { return r.DispatchedPhyOffset() == res[5].PhysicalOffset })
	done := make(chan error, 1)
	go func() { done <- r.Shutdown(t.Context()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("shutdown waits for a record that never completes")
	}
}

func TestAppendedWakes(t *testing.T) {
	m := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, m)
	ch := make(chan struct{}, 1)
	for range 2 { // the same channel twice: one registration
		if m.NotifyAppended(0, ch) {
			t.Fatal("empty log: beyond 0")
		}
	}
	if n := len(m.appended.chans); n != 1 {
		t.Fatalf("one channel registered twice: %d registrations", n)
	}
	select {
	case <-ch:
		t.Fatal("empty log: woken before an append")
	default:
	}
	putN(t, m, "TopicA", 1, 0, 1)
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("not woken by a put")
	}
	if !m.NotifyAppended(0, ch) {
		t.Fatal("log beyond 0: not reported at once")
	}
	if _, ok := m.ReadReplica(m.MaxPhyOffset(), 100); ok {
		t.Fatal("read at the end returned bytes")
	}
	if _, ok := m.ReadReplica(-1, 100); ok {
		t.Fatal("read at -1 returned bytes")
	}
	// Nothing allocated per wake, nor per put while nobody sleeps.
	if n := testing.AllocsPerRun(100, func() {
		m.NotifyAppended(m.MaxPhyOffset(), ch)
		m.appended.notify()
		<-ch
		m.appended.notify()
	}); n != 0 {
		t.Fatalf("register and wake allocate %v", n)
	}
}

func TestLimitSourceRefusesAtOnce(t *testing.T) {
	s := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, s)
	s.EnableSource(Replicated, time.Minute, 0)
	putN(t, s, "TopicA", 1, 0, 20) // the offsets waited for are written
	if s.MaxPhyOffset() < 1000 {
		t.Fatalf("commit log end %d, want 1000 or more", s.MaxPhyOffset())
	}
	got := make(chan error, 4)
	s.LimitSource(Replicated, false, 1000)
	s.Wait(100, Replicated, func(err error) { got <- err })
	if err := <-got; !errors.Is(err, ErrReplicaNotAvailable) {
		t.Fatalf("no replica: %v", err)
	}
	s.LimitSource(Replicated, true, 1000)
	s.Wait(1000, Replicated, func(err error) { got <- err })
	if err := <-got; !errors.Is(err, ErrReplicaNotAvailable) {
		t.Fatalf("1000 behind, gap 1000: %v", err)
	}
	answered := false
	s.Wait(999, Replicated, func(err error) { answered = true; got <- err })
	if answered {
		t.Fatal("within the gap: answered before an ack")
	}
	s.Advance(Replicated, 999)
	if err := <-got; err != nil {
		t.Fatalf("within the gap: %v", err)
	}
}

// Apache's suggestPullingFromSlave: the last entry examined is further
// behind the commit log end than the memory share.
func TestSuggestPullingFromSlave(t *testing.T) {
	s := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, s)
	res := putN(t, s, "TopicA", 1, 0, 100)
	testutil.WaitFor(t, 10*time.Second, func() bool { return s.DispatchedPhyOffset() >= s.MaxPhyOffset() })
	s.coldDistance = s.MaxPhyOffset() - res[50].PhysicalOffset - 1 // test: before any pull
	for _, tc := range []struct {
		from int64
		n    int
		want bool
	}{
		{0, 10, true},   // last examined: record 9
		{40, 11, true},  // record 50: just beyond the distance
		{42, 10, false}, // record 51: within it
		{90, 10, false},
	} {
		for _, views := range []bool{false, true} {
			var g GetResult
			if views {
				g = s.GetMessageViews("TopicA", 0, tc.from, tc.n, 1<<20, nil, AnyPages)
			} else {
				g = s.GetMessages(nil, "TopicA", 0, tc.from, tc.n, 1<<20, nil)
			}
			if g.Count != tc.n || g.SuggestPullingFromSlave != tc.want {
				t.Errorf("pull %d from %d (views %v): count %d, suggest %v, want %v", tc.n, tc.from, views, g.Count, g.SuggestPullingFromSlave, tc.want)
			}
			if g.Release != nil {
				g.Release()
			}
		}
	}
	if g := s.GetMessages(nil, "TopicA", 0, 100, 10, 1<<20, nil); g.SuggestPullingFromSlave {
		t.Error("nothing found, yet a suggestion")
	}
}

func TestBecomeReplicaRefusesPut(t *testing.T) {
	s := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, s)
	putN(t, s, "TopicA", 1, 0, 1)
	s.BecomeReplica()
	if _, err := s.Put(testMsg("TopicA", 0, 1)); !errors.Is(err, ErrReplica) {
		t.Fatalf("put after BecomeReplica: %v, want ErrReplica", err)
	}
	if err := s.AppendReplica(s.MaxPhyOffset(), []byte{0, 0, 0, 0}); err != nil {
		t.Fatalf("append replica: %v", err)
	}
}

// A SYNC_FLUSH slave flushes after its appends, not at the async interval.
func TestReplicaSyncFlush(t *testing.T) {
	m := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, m)
	putN(t, m, "TopicA", 1, 0, 50)
	rcfg := replicaConfig(t.TempDir())
	rcfg.FlushDiskType = SyncFlush
	rcfg.FlushIntervalCommitLog = 3_600_000 // never, within the test
	rcfg.FlushCommitLogThoroughInterval = 3_600_000
	r := openStarted(t, rcfg)
	defer shutdown(t, r)
	end := copyReplica(t, m, r, 0, 1000)
	testutil.WaitFor(t, 10*time.Second, func() bool { return r.cl.flushedWhere.Load() >= end })
}
