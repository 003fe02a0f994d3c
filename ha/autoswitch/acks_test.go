package autoswitch

import (
	"errors"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/store"
)

// Apache's controller-mode decision for every combination of
// allAckInSyncStateSet, inSyncReplicas, minInSyncReplicas and set size.
func TestSendNeedsReplicas(t *testing.T) {
	cases := []struct {
		allAck        bool
		inSync, min   int
		setSize       int32
		wait, refused bool
	}{
		{false, 1, 1, 1, false, false}, // the quick start's lone master
		{false, 1, 1, 2, false, false}, // a master of two: stored is enough
		{false, 1, 2, 1, false, true},  // below minInSyncReplicas
		{false, 2, 1, 1, true, false},  // waits for one slave (times out alone)
		{false, 2, 1, 2, true, false},
		{false, 0, 1, 1, false, false},
		{false, -1, 1, 1, false, false}, // -1 is every member: the master alone
		{false, -1, 1, 3, true, false},
		{false, -5, 1, 2, true, false},
		{true, 1, 1, 1, false, false}, // every member of a set of one
		{true, 1, 1, 2, true, false},
		{true, 3, 1, 2, true, false}, // inSyncReplicas ignored
		{true, 1, 2, 1, false, true},
		{true, 1, 3, 2, false, true},
		{true, 1, 2, 2, true, false},
	}
	for _, c := range cases {
		cfg := DefaultConfig()
		cfg.AllAckInSyncStateSet, cfg.InSyncReplicas, cfg.MinInSyncReplicas = c.allAck, c.inSync, c.min
		s := &Service{cfg: cfg, sampled: testutil.Logger()}
		s.inSync.Store(c.setSize)
		wait, err := s.SendNeedsReplicas()
		if refused := errors.Is(err, ErrInSyncReplicasNotEnough); refused != c.refused || (!refused && err != nil) || wait != c.wait {
			t.Errorf("allAck %v inSyncReplicas %d min %d set of %d: wait %v err %v; want wait %v refused %v",
				c.allAck, c.inSync, c.min, c.setSize, wait, err, c.wait, c.refused)
		}
	}
}

// The offset a waiting send is answered up to, from the slaves' acks.
func TestReplicatedOffset(t *testing.T) {
	acks := map[int64]int64{2: 500, 3: 300, 4: 900}
	cases := []struct {
		need int
		set  []int64
		want int64
	}{
		{allAcks, []int64{1}, 1000},
		{allAcks, []int64{1, 2, 3}, 300},
		{allAcks, []int64{1, 2, 5}, 0}, // member 5 has not acked
		{1, []int64{1}, 1000},
		{0, []int64{1, 2}, 1000},
		{2, []int64{1}, 900}, // any slave counts, as Apache's connection list
		{3, []int64{1}, 500},
		{4, []int64{1}, 300},
		{5, []int64{1}, 0}, // more than there are slaves
		{-3, []int64{1}, 900},
	}
	for _, c := range cases {
		if got := replicated(c.need, 1000, 1, c.set, acks); got != c.want {
			t.Errorf("need %d set %v: %d, want %d", c.need, c.set, got, c.want)
		}
	}
}

// Over real sockets: inSyncReplicas 2 waits for the slave's ack and is
// answered once it comes; with the slave gone, the wait ends in the
// replica time-out (FLUSH_SLAVE_TIMEOUT), not a refusal.
func TestInSyncReplicasWaitsForSlave(t *testing.T) {
	cfg := testConfig()
	cfg.InSyncReplicas = 2
	cfg.SlaveTimeout = 500 * time.Millisecond
	m := openNode(t, cfg)
	m.master(t, 1, 1, []int64{1}, 1)
	if wait, err := m.svc.SendNeedsReplicas(); err != nil || !wait {
		t.Fatalf("inSyncReplicas 2: wait %v err %v", wait, err)
	}
	put(t, m.st, 0, 10, 2)
	if err := waitResult(m.st, m.st.MaxPhyOffset()); !errors.Is(err, store.ErrReplicaTimeout) {
		t.Fatalf("no slave: %v, want the replica time-out", err)
	}
	sl := openNode(t, testConfig())
	if err := sl.svc.BecomeSlave(m.svc.Addr(), 1, 2); err != nil {
		t.Fatal(err)
	}
	sameLogs(t, m, sl, 2)
	put(t, m.st, 10, 10, 2)
	if err := waitResult(m.st, m.st.MaxPhyOffset()); err != nil {
		t.Fatalf("with the slave: %v", err)
	}
}
