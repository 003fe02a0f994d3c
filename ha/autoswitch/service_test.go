package autoswitch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/store"
)

// The in-process controller (controller_test.go) leaves hashicorp/raft's
// inbound handlers behind.
func TestMain(m *testing.M) {
	store.FakeDiskUsage(0.5) // no test depends on how full the host disk is
	testutil.VerifyNoLeaksRaft(m)
}

const fileSize = 64 << 10

// node is one broker's store, epoch file and service.
type node struct {
	dir    string
	st     *store.Store
	epochs *store.EpochCache
	svc    *Service
}

func openNode(t testing.TB, cfg Config) *node { return openNodeSize(t, cfg, fileSize) }

func openNodeSize(t testing.TB, cfg Config, size int64) *node {
	t.Helper()
	n := &node{dir: t.TempDir()}
	scfg := store.DefaultConfig()
	scfg.StorePathRootDir = n.dir
	scfg.MappedFileSizeCommitLog = size
	scfg.MappedFileSizeConsumeQueue = 100 * 20
	scfg.FlushIntervalCommitLog = 10
	scfg.FlushIntervalConsumeQueue = 10
	st, err := store.Open(scfg, testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Start(); err != nil {
		t.Fatal(err)
	}
	n.st = st
	if n.epochs, err = store.OpenEpochFile(filepath.Join(n.dir, store.FileEpochCheckpoint)); err != nil {
		t.Fatal(err)
	}
	if n.svc, err = New(cfg, "127.0.0.1:0", st, n.epochs, testutil.Logger()); err != nil {
		t.Fatal(err)
	}
	if err := n.svc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := n.svc.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		if err := st.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return n
}

// master makes n master of epoch as replicas.Roles.Apply and the broker
// do: the epoch entry first, then the service.
func (n *node) master(t testing.TB, epoch int32, self int64, set []int64, setEpoch int32) {
	t.Helper()
	if err := n.epochs.BeginTerm(epoch, n.st.MaxPhyOffset()); err != nil {
		t.Fatal(err)
	}
	if err := n.svc.BecomeMaster(epoch, self, set, setEpoch); err != nil {
		t.Fatal(err)
	}
}

func testConfig() Config {
	cfg := DefaultConfig()
	cfg.HASendHeartbeatInterval = 100 * time.Millisecond
	cfg.HAHousekeepingInterval = 2 * time.Second
	cfg.HAMaxTimeSlaveNotCatchup = 3 * time.Second
	cfg.CheckSyncStateSetPeriod = time.Second
	return cfg
}

var host = netip.MustParseAddrPort("127.0.0.1:10911")

func put(t testing.TB, st *store.Store, from, n int, queues int32) {
	t.Helper()
	for i := from; i < from+n; i++ {
		_, err := st.Put(&store.PutMessage{
			Topic: "TopicAS", QueueID: int32(i) % queues, Body: fmt.Appendf(nil, "body-%d-%s", i, bytes.Repeat([]byte("x"), i%300)),
			Properties: "TAGS\x01t\x02", BornTimestamp: int64(i), BornHost: host, StoreHost: host,
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// sameLogs waits for the slave to hold the master's end and compares the
// bytes over the slave's range, the epoch entries and the queues.
func sameLogs(t testing.TB, m, sl *node, queues int32) {
	t.Helper()
	testutil.WaitFor(t, 20*time.Second, func() bool { return sl.st.MaxPhyOffset() == m.st.MaxPhyOffset() })
	for off := sl.st.MinPhyOffset(); off < m.st.MaxPhyOffset(); {
		a, ok1 := m.st.ReadReplica(off, 1<<20)
		b, ok2 := sl.st.ReadReplica(off, 1<<20)
		if !ok1 || !ok2 {
			t.Fatalf("read at %d: master %v slave %v", off, ok1, ok2)
		}
		k := min(len(a.Bytes), len(b.Bytes))
		if !bytes.Equal(a.Bytes[:k], b.Bytes[:k]) {
			t.Fatalf("commit logs differ in [%d, %d)", off, off+int64(k))
		}
		off += int64(k)
		a.Release()
		b.Release()
	}
	if me, se := m.epochs.All(), sl.epochs.All(); !slices.Equal(me, se) {
		t.Fatalf("epoch entries: master %v slave %v", me, se)
	}
	testutil.WaitFor(t, 20*time.Second, func() bool {
		return sl.st.DispatchedPhyOffset() >= sl.st.MaxPhyOffset() && m.st.DispatchedPhyOffset() >= m.st.MaxPhyOffset()
	})
	for q := range queues {
		if a, b := m.st.MaxOffset("TopicAS", q), sl.st.MaxOffset("TopicAS", q); a != b {
			t.Fatalf("queue %d: max offset master %d slave %d", q, a, b)
		}
	}
}

// Two rocketgo stores over real sockets: an empty slave takes everything
// from the master's first file (syncFromLastFile off), live traffic
// follows across files and epochs, and a slave that reconnects resumes.
func TestReplicateMasterToSlave(t *testing.T) {
	m := openNode(t, testConfig())
	m.master(t, 1, 1, []int64{1}, 1)
	put(t, m.st, 0, 600, 4)
	sl := openNode(t, testConfig())
	if err := sl.svc.BecomeSlave(m.svc.Addr(), 1, 2); err != nil {
		t.Fatal(err)
	}
	sameLogs(t, m, sl, 4)
	if sl.st.MinPhyOffset() != 0 {
		t.Fatalf("slave starts at %d, want the master's first file", sl.st.MinPhyOffset())
	}
	put(t, m.st, 600, 1200, 4)
	sameLogs(t, m, sl, 4)

	// A new term on the same master: the slave records the epoch from the
	// frames.
	m.master(t, 3, 1, []int64{1}, 1)
	if err := sl.svc.BecomeSlave(m.svc.Addr(), 3, 2); err != nil {
		t.Fatal(err)
	}
	put(t, m.st, 1800, 300, 4)
	sameLogs(t, m, sl, 4)
	if e := sl.epochs.All(); len(e) != 2 || e[1].Epoch != 3 {
		t.Fatalf("slave epochs %v", e)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool {
		s := m.svc.Status()
		return len(s.Slaves) == 1 && s.Slaves[0].AckOffset == m.st.MaxPhyOffset()
	})
	if s := sl.svc.Status(); !s.Connected || s.SlaveMaxOffset != m.st.MaxPhyOffset() {
		t.Fatalf("slave status %+v", s)
	}
	if c := sl.svc.ConfirmOffset(); c != m.st.MaxPhyOffset() {
		t.Fatalf("slave confirm offset %d, want the master's end %d", c, m.st.MaxPhyOffset())
	}
}

// The old master wrote a tail alone (epoch 2) while the other broker was
// elected (epoch 3): following the new master it cuts the tail at the
// consistent point and takes epoch 3's bytes, byte for byte.
func TestSlaveTruncatesDivergentTail(t *testing.T) {
	a := openNode(t, testConfig())
	b := openNode(t, testConfig())
	a.master(t, 1, 1, []int64{1}, 1)
	put(t, a.st, 0, 400, 2)
	if err := b.svc.BecomeSlave(a.svc.Addr(), 1, 2); err != nil {
		t.Fatal(err)
	}
	sameLogs(t, a, b, 2)
	common := a.st.MaxPhyOffset()

	// b is elected in epoch 3 (it stops following a first: a slave still
	// connected would copy part of a's epoch-2 tail, seen under load), a
	// writes alone in epoch 2, b writes in epoch 3.
	b.master(t, 3, 2, []int64{2}, 1)
	a.master(t, 2, 1, []int64{1}, 1)
	put(t, a.st, 400, 900, 2) // into the second file
	put(t, b.st, 5000, 200, 2)
	if a.st.MaxPhyOffset() <= b.st.MaxPhyOffset() {
		t.Fatalf("want a longer divergent tail: a %d b %d", a.st.MaxPhyOffset(), b.st.MaxPhyOffset())
	}
	if err := a.svc.BecomeSlave(b.svc.Addr(), 3, 1); err != nil {
		t.Fatal(err)
	}
	sameLogs(t, b, a, 2)
	want := []store.EpochEntry{{Epoch: 1, StartOffset: 0}, {Epoch: 3, StartOffset: common}}
	got := a.epochs.All()
	if len(got) != 2 || got[0].Epoch != want[0].Epoch || got[1].Epoch != 3 || got[1].StartOffset != common {
		t.Fatalf("epochs after truncation %v, want %v", got, want)
	}
	// The cut queues read on from the new master's records.
	put(t, b.st, 5200, 100, 2)
	sameLogs(t, b, a, 2)
	r := a.st.GetMessages(nil, "TopicAS", 0, a.st.MaxOffset("TopicAS", 0)-1, 1, 1<<20, nil)
	if r.Count != 1 || !bytes.Contains(r.Body, []byte("body-5298-")) {
		t.Fatalf("the last message of queue 0 on the truncated slave: %+v", r)
	}
}

// haFlowControlEnable: a master sends a slave at most
// maxHaTransferByteInSecond per second (Apache's FlowMonitor), so about
// 2.5 windows of bytes take at least two seconds.
func TestMasterFlowControl(t *testing.T) {
	cfg := testConfig()
	cfg.HAFlowControlEnable = true
	cfg.MaxHATransferByteInSecond = 64 << 10
	m := openNode(t, cfg)
	m.master(t, 1, 1, []int64{1}, 1)
	for m.st.MaxPhyOffset() < 160<<10 {
		put(t, m.st, int(m.st.MaxPhyOffset()), 50, 2)
	}
	sl := openNode(t, testConfig())
	t0 := time.Now()
	if err := sl.svc.BecomeSlave(m.svc.Addr(), 1, 2); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 30*time.Second, func() bool { return sl.st.MaxPhyOffset() == m.st.MaxPhyOffset() })
	if took := time.Since(t0); took < 1900*time.Millisecond {
		t.Fatalf("%d bytes at 64 KiB/s took %v", m.st.MaxPhyOffset(), took)
	}
	sameLogs(t, m, sl, 2)
}

// Mastership moves between two brokers and back again with nothing
// written in between (admin elections on a quiet set), from an empty
// commit log and from one holding data: each time the new slave follows
// (acknowledges the master's end, holds its epoch entries). A term in
// which nothing was written keeps an empty epoch entry, and a slave whose
// consistent point is the start of the epoch it shares with the master
// keeps that entry: dropped, the slave later elected would start an epoch
// file no other broker's matches.
func TestMastershipBackAndForthQuiet(t *testing.T) {
	for _, data := range []int{0, 200} {
		t.Run(fmt.Sprintf("data=%d", data), func(t *testing.T) {
			cfg := testConfig()
			cfg.HASendHeartbeatInterval = time.Second
			nodes := []*node{openNode(t, cfg), openNode(t, cfg)}
			for epoch := int32(1); epoch <= 6; epoch++ {
				i := int(epoch-1) % 2
				m, sl := nodes[i], nodes[1-i]
				m.master(t, epoch, int64(i+1), []int64{int64(i + 1)}, epoch)
				if epoch == 1 {
					put(t, m.st, 0, data, 2)
				}
				if err := sl.svc.BecomeSlave(m.svc.Addr(), epoch, int64(2-i)); err != nil {
					t.Fatal(err)
				}
				// Following: the master's end acknowledged; the first time
				// also its epoch entry taken from a frame (a new replica has
				// none before). Later the swap comes at once, before the next
				// heartbeat frame.
				followed := func() bool {
					s := m.svc.Status()
					return len(s.Slaves) == 1 && s.Slaves[0].AckOffset == m.st.MaxPhyOffset() &&
						(epoch > 1 || slices.Equal(m.epochs.All(), sl.epochs.All()))
				}
				for deadline := time.Now().Add(10 * time.Second); !followed() && time.Now().Before(deadline); {
					time.Sleep(10 * time.Millisecond) // polling interval
				}
				if !followed() {
					t.Fatalf("epoch %d: the slave never acknowledged the master's end %d: %+v; epochs master %v slave %v",
						epoch, m.st.MaxPhyOffset(), m.svc.Status(), m.epochs.All(), sl.epochs.All())
				}
			}
			put(t, nodes[1].st, data, 50, 2) // the last term's first bytes carry its epoch
			sameLogs(t, nodes[1], nodes[0], 2)
		})
	}
}

// A slave that learnt the master's term from a heartbeat, before any of
// its bytes, is elected while the old master still writes in that term
// (unacknowledged: the new master never had those bytes). The new master
// writes from the same offset under its own epoch; when the old master
// follows it, it cuts its own bytes of the old term at the term's start
// and then holds exactly the new master's log. Had the new term no entry
// of its own, both would hold the old term's entry, the consistent point
// would be the shorter of the two ends, and the old master would keep
// bytes no other replica has.
func TestElectedWhereTheOldTermBegan(t *testing.T) {
	cfg := testConfig()
	a, b := openNode(t, cfg), openNode(t, cfg)
	a.master(t, 1, 1, []int64{1}, 1)
	put(t, a.st, 0, 40, 2)
	if err := b.svc.BecomeSlave(a.svc.Addr(), 1, 2); err != nil {
		t.Fatal(err)
	}
	sameLogs(t, a, b, 2)
	// b's term 2 begins where term 1 ended; a follows and takes (2, end)
	// from a heartbeat.
	b.master(t, 2, 2, []int64{2}, 2)
	if err := a.svc.BecomeSlave(b.svc.Addr(), 2, 1); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return a.epochs.LastEpoch() == 2 })
	start := a.st.MaxPhyOffset()
	// a is elected (term 3) without a byte of term 2; b, not yet told,
	// writes in term 2.
	a.master(t, 3, 1, []int64{1}, 3)
	put(t, b.st, 1000, 25, 2)
	put(t, a.st, 2000, 40, 2)
	if got := a.epochs.All(); len(got) != 3 || got[1].StartOffset != start || got[2].StartOffset != start {
		t.Fatalf("new master's epoch entries %v, want terms 2 and 3 both at %d", got, start)
	}
	if err := b.svc.BecomeSlave(a.svc.Addr(), 3, 2); err != nil {
		t.Fatal(err)
	}
	sameLogs(t, a, b, 2)
}

// A master's send still waiting for its slaves when the broker becomes a
// slave is answered at once with the replica time-out (FLUSH_SLAVE_TIMEOUT,
// as Apache answers it when its wait ends), not slaveTimeout later.
func TestBecomeSlaveAnswersWaitingSends(t *testing.T) {
	cfg := testConfig()
	cfg.AllAckInSyncStateSet = true
	cfg.SlaveTimeout = time.Minute // only the role change may answer it
	a, b := openNode(t, cfg), openNode(t, cfg)
	a.master(t, 1, 1, []int64{1, 2}, 1) // 2 is a member, not connected: nothing is acknowledged
	put(t, a.st, 0, 5, 2)
	got := make(chan error, 1)
	a.st.Wait(a.st.MaxPhyOffset(), store.Replicated, func(err error) { got <- err })
	select {
	case err := <-got:
		t.Fatalf("answered %v before any slave acknowledged", err)
	case <-time.After(100 * time.Millisecond):
	}
	b.master(t, 2, 2, []int64{2}, 2)
	if err := a.svc.BecomeSlave(b.svc.Addr(), 2, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if !errors.Is(err, store.ErrReplicaTimeout) {
			t.Fatalf("answered %v, want the replica time-out", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting send was not answered when the broker became a slave")
	}
}
