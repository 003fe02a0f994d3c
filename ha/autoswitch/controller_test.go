package autoswitch

import (
	"context"
	"errors"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/ctltest"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/replicas"
	"github.com/rocketgo/rocketgo/store"
)

// waitResult is a store.Wait answer.
func waitResult(st *store.Store, end int64) error {
	ch := make(chan error, 1)
	st.Wait(end, store.Replicated, func(err error) { ch <- err })
	return <-ch
}

// The SyncStateSet through a real rocketgo controller (CONTROLLER_ALTER_
// SYNC_STATE_SET from the master's housekeeper), with allAckInSyncStateSet
// and minInSyncReplicas 2: alone, a SYNC_MASTER send is refused before it
// is stored;
// the caught-up slave is added (the controller's set becomes {1, 2}) and
// acknowledges; the slave gone, it leaves the set at once; a member that
// stops acknowledging holds waits (timeouts) and dispatch (the confirm
// offset) until the master closes it and shrinks the set.
func TestAutoSwitchSyncStateSetWithController(t *testing.T) {
	if os.Getenv("ROCKETGO_CONTROLLER") == "" {
		t.Skip("ROCKETGO_CONTROLLER=1 (make test-controller): an in-process controller, ~10 s")
	}
	addr := ctltest.Start(t)
	rc := remoting.NewClient(testutil.Logger())
	t.Cleanup(func() { rc.Close() })
	cl := replicas.NewClient(rc, addr, 3*time.Second)
	ctx := context.Background()
	const cluster, name = "c1", "bAS"

	cfg := testConfig()
	cfg.AllAckInSyncStateSet = true
	cfg.MinInSyncReplicas = 2
	cfg.SlaveTimeout = 700 * time.Millisecond
	cfg.HAMaxTimeSlaveNotCatchup = 4 * time.Second
	var alters sync.Mutex
	var proposals [][]int64
	cfg.AlterSyncStateSet = func(master int64, epoch int32, set []int64, setEpoch int32) ([]int64, int32, error) {
		alters.Lock()
		proposals = append(proposals, set)
		alters.Unlock()
		return cl.AlterSyncStateSet(ctx, name, master, epoch, set, setEpoch)
	}
	a := openNode(t, cfg)
	b := openNode(t, cfg)
	brokers := []replicas.Broker{{Cluster: cluster, BrokerName: name, Addr: "127.0.0.1:31911"},
		{Cluster: cluster, BrokerName: name, Addr: "127.0.0.1:31921"}}
	var ids [2]int64
	for i, br := range brokers {
		id, _, err := replicas.Register(ctx, cl, replicas.IdentityFiles{Root: t.TempDir()}, br)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	// Both brokers heartbeat (the controller adds only live brokers).
	stop := make(chan struct{})
	var hb sync.WaitGroup
	hb.Add(1)
	go func() {
		defer hb.Done()
		tk := time.NewTicker(300 * time.Millisecond)
		defer tk.Stop()
		for {
			for i, br := range brokers {
				_ = cl.SendHeartbeat(ctx, replicas.Heartbeat{Cluster: cluster, BrokerName: name, BrokerAddr: br.Addr,
					BrokerID: ids[i], Epoch: -1, TimeoutMillis: 10000})
			}
			select {
			case <-stop:
				return
			case <-tk.C:
			}
		}
	}()
	t.Cleanup(func() { close(stop); hb.Wait() })

	var st replicas.ReplicaState
	testutil.WaitFor(t, 10*time.Second, func() bool {
		var err error
		st, err = cl.Elect(ctx, cluster, name, ids[0])
		return err == nil && st.MasterID != nil && *st.MasterID == ids[0]
	})
	a.master(t, st.MasterEpoch, ids[0], st.SyncStateSet, st.SyncStateSetEpoch)
	if _, err := a.svc.SendNeedsReplicas(); !errors.Is(err, ErrInSyncReplicasNotEnough) {
		t.Fatalf("alone with minInSyncReplicas 2: %v, want refused", err)
	}
	put(t, a.st, 0, 50, 2)

	if err := b.svc.BecomeSlave(a.svc.Addr(), st.MasterEpoch, ids[1]); err != nil {
		t.Fatal(err)
	}
	both := []int64{ids[0], ids[1]}
	testutil.WaitFor(t, 10*time.Second, func() bool {
		info, err := cl.ReplicaInfo(ctx, name)
		return err == nil && slices.Equal(info.SyncStateSet, both) && slices.Equal(a.svc.SyncStateSet(), both)
	})
	if wait, err := a.svc.SendNeedsReplicas(); err != nil || !wait {
		t.Fatalf("in sync: wait %v, %v; want to wait for the slave", wait, err)
	}
	put(t, a.st, 50, 50, 2)
	if err := waitResult(a.st, a.st.MaxPhyOffset()); err != nil {
		t.Fatalf("in sync: %v", err)
	}
	sameLogs(t, a, b, 2)
	if c := a.svc.ConfirmOffset(); c != a.st.MaxPhyOffset() {
		t.Fatalf("confirm %d, want %d", c, a.st.MaxPhyOffset())
	}

	// The slave goes away: the master drops it from the set at once
	// (Apache's removeConnection), which is then below minInSyncReplicas.
	ctxS, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := b.svc.Shutdown(ctxS); err != nil {
		t.Fatal(err)
	}
	inSet := func(want []int64) func() bool {
		return func() bool {
			info, err := cl.ReplicaInfo(ctx, name)
			return err == nil && slices.Equal(info.SyncStateSet, want) && slices.Equal(a.svc.SyncStateSet(), want)
		}
	}
	testutil.WaitFor(t, 10*time.Second, inSet(ids[:1]))
	if _, err := a.svc.SendNeedsReplicas(); !errors.Is(err, ErrInSyncReplicasNotEnough) {
		t.Fatalf("shrunk below minInSyncReplicas: %v, want refused", err)
	}
	put(t, a.st, 100, 20, 2)
	testutil.WaitFor(t, 10*time.Second, func() bool { return a.st.DispatchedPhyOffset() == a.st.MaxPhyOffset() })

	// A slave (id 2 again, a raw connection) that reports the master's
	// end, joins the set, then repeats that offset: waits time out, the
	// confirm offset and dispatch stay at its ack until the master drops
	// it after haMaxTimeSlaveNotCatchup.
	c, err := net.Dial("tcp", a.svc.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(AppendSlaveHandshake(nil, false, false, ids[1])); err != nil {
		t.Fatal(err)
	}
	fr := &frameReader{c: c, buf: make([]byte, slaveReadBuffer), idle: 5 * time.Second}
	if hs, err := fr.next(); err != nil || hs.State != StateHandshake || hs.MaxOffset != a.st.MaxPhyOffset() {
		t.Fatalf("handshake: %+v %v", hs, err)
	}
	held := a.st.MaxPhyOffset()
	if _, err := c.Write(AppendSlaveReport(nil, held)); err != nil {
		t.Fatal(err)
	}
	repeat := make(chan struct{})
	var rw sync.WaitGroup
	rw.Add(1)
	go func() {
		defer rw.Done()
		tk := time.NewTicker(200 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-repeat:
				return
			case <-tk.C:
				if _, err := c.Write(AppendSlaveReport(nil, held)); err != nil {
					return
				}
			}
		}
	}()
	defer func() { close(repeat); rw.Wait() }()
	testutil.WaitFor(t, 10*time.Second, inSet(both))
	put(t, a.st, 120, 20, 2)
	if err := waitResult(a.st, a.st.MaxPhyOffset()); !errors.Is(err, store.ErrReplicaTimeout) {
		t.Fatalf("silent member: %v, want a timeout", err)
	}
	if c, d := a.svc.ConfirmOffset(), a.st.DispatchedPhyOffset(); c != held || d > held {
		t.Fatalf("silent member: confirm %d dispatched %d, want both at its ack %d", c, d, held)
	}
	testutil.WaitFor(t, 10*time.Second, inSet(ids[:1]))
	testutil.WaitFor(t, 10*time.Second, func() bool { return a.st.DispatchedPhyOffset() == a.st.MaxPhyOffset() })
	alters.Lock()
	defer alters.Unlock()
	if len(proposals) < 2 || !slices.Equal(proposals[0], both) {
		t.Fatalf("proposals %v", proposals)
	}
}
