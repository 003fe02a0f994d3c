package replicas

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// fakeBroker is the controller-facing part of a broker: a Remoting server
// that takes NOTIFY_BROKER_ROLE_CHANGED, its identity, epoch file and a
// heartbeat loop that can be stopped (the broker "dies" for the controller).
type fakeBroker struct {
	b        Broker
	id       int64
	roles    *Roles
	epochs   *store.EpochCache
	notified chan ReplicaState
	stopHB   chan struct{}
	hbDone   sync.WaitGroup
	beats    atomic.Int64 // heartbeats the loop sent
}

func startFakeBroker(t *testing.T, addr string, maxOffset int64) *fakeBroker {
	t.Helper()
	// Its own connection, as a real broker has: the controller closes the
	// connection of a broker whose heartbeats expired, which would drop
	// every broker sharing it.
	c := newClient(t, addr)
	fb := &fakeBroker{notified: make(chan ReplicaState, 4), stopHB: make(chan struct{})}
	srv := remoting.NewServer(remoting.ServerConfig{Addr: "127.0.0.1:0", NumEventLoop: 1}, remoting.Table{
		remoting.NotifyBrokerRoleChanged: func(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
			// Decoding only: the role change writes the epoch file, which
			// must not run on the event loop.
			st, err := DecodeRoleChanged(req)
			if err != nil {
				t.Errorf("notify: %v", err)
				return nil
			}
			fb.notified <- st
			return nil
		},
	}, testutil.Logger())
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	fb.b = Broker{Cluster: "c1", BrokerName: "rb", Addr: srv.Addr()}
	dir := t.TempDir()
	id, _, err := Register(context.Background(), c, IdentityFiles{Root: dir}, fb.b)
	if err != nil {
		t.Fatal(err)
	}
	fb.id = id
	if fb.epochs, err = store.OpenEpochFile(filepath.Join(dir, store.FileEpochCheckpoint)); err != nil {
		t.Fatal(err)
	}
	fb.roles = NewRoles(id, fb.epochs, func() int64 { return maxOffset }, testutil.Logger())
	fb.hbDone.Add(1)
	go func() {
		defer fb.hbDone.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			_ = c.SendHeartbeat(context.Background(), Heartbeat{Cluster: "c1", BrokerName: "rb", BrokerAddr: fb.b.Addr,
				BrokerID: id, Epoch: fb.epochs.LastEpoch(), MaxOffset: maxOffset, ConfirmOffset: maxOffset, TimeoutMillis: 3000})
			fb.beats.Add(1)
			select {
			case <-fb.stopHB:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(fb.die)
	return fb
}

func (fb *fakeBroker) die() {
	select {
	case <-fb.stopHB:
	default:
		close(fb.stopHB)
	}
	fb.hbDone.Wait()
}

// Two rocketgo brokers' control plane through a rocketgo controller: the
// first is elected (epoch 1 in its epoch file), the second follows it, the
// master puts it in the SyncStateSet (1001), then the master stops
// heartbeating: the controller elects the second and pushes
// NOTIFY_BROKER_ROLE_CHANGED; it becomes master of epoch 2 starting at its
// max offset, and the old master's poll (1004) makes it a slave.
func TestRoleChangeWithController(t *testing.T) {
	roleScenario(t, startController(t))
}

func roleScenario(t *testing.T, addr string) {
	c := newClient(t, addr)
	ctx := context.Background()
	a := startFakeBroker(t, addr, 4096)
	b := startFakeBroker(t, addr, 2048)

	st := becomeMaster(t, c, a.b, a.id)
	role, changed, err := a.roles.Apply(st)
	if err != nil || !changed || !role.Master || role.BrokerID != 0 || role.MasterEpoch != 1 {
		t.Fatalf("a: %+v %v %v", role, changed, err)
	}
	if got := a.epochs.All(); len(got) != 1 || got[0].Epoch != 1 || got[0].StartOffset != 4096 {
		t.Fatalf("a's epoch file: %v", got)
	}
	info, err := c.ReplicaInfo(ctx, "rb")
	if err != nil {
		t.Fatal(err)
	}
	role, changed, err = b.roles.Apply(info)
	if err != nil || !changed || role.Master || role.BrokerID != b.id || role.MasterAddr != a.b.Addr {
		t.Fatalf("b: %+v %v %v", role, changed, err)
	}
	if _, again, _ := b.roles.Apply(info); again {
		t.Fatal("the same epoch applied twice")
	}

	set, setEpoch, err := c.AlterSyncStateSet(ctx, "rb", a.id, 1, []int64{a.id, b.id}, info.SyncStateSetEpoch)
	if err != nil {
		t.Fatal(err)
	}
	if len(set) != 2 || setEpoch != info.SyncStateSetEpoch+1 {
		t.Fatalf("alter: %v epoch %d", set, setEpoch)
	}

	// One more beat of a's own loop: becomeMaster's heartbeat set a 10 s
	// timeout, the loop's sets 3 s, and the last one counts.
	sent := a.beats.Load()
	testutil.WaitFor(t, 5*time.Second, func() bool { return a.beats.Load() > sent+1 })
	killed := time.Now()
	a.die()
	// The first election was pushed to b too (epoch 1, already applied from
	// the poll): wait for the push that makes it master.
	deadline := time.After(15 * time.Second)
	for role = (Role{}); !role.Master; {
		select {
		case pushed := <-b.notified:
			if role, _, err = b.roles.Apply(pushed); err != nil {
				t.Fatal(err)
			}
		case <-deadline:
			t.Fatal("no NOTIFY_BROKER_ROLE_CHANGED electing b within 15 s")
		}
	}
	t.Logf("master heartbeats stopped → b notified it is master: %v", time.Since(killed).Round(time.Millisecond))
	// Epoch 2 unless a loaded machine delayed b's heartbeats past their
	// 3 s timeout too, and an election failed in between (each takes one).
	if role.MasterEpoch < 2 || role.BrokerID != 0 || role.MasterID != b.id {
		t.Fatalf("b after the push: %+v", role)
	}
	if got := b.epochs.All(); len(got) != 1 || got[0].Epoch != role.MasterEpoch || got[0].StartOffset != 2048 {
		t.Fatalf("b's epoch file: %v", got)
	}
	info, err = c.ReplicaInfo(ctx, "rb")
	if err != nil {
		t.Fatal(err)
	}
	role, changed, err = a.roles.Apply(info)
	if err != nil || !changed || role.Master || role.MasterAddr != b.b.Addr || role.MasterEpoch != b.roles.Epoch() {
		t.Fatalf("old master after the poll: %+v %v %v", role, changed, err)
	}
}

// A role the broker failed to take is applied again after Reset; an
// answer of the same epoch without Reset is dropped.
func TestRolesReset(t *testing.T) {
	epochs, err := store.OpenEpochFile(filepath.Join(t.TempDir(), "epochFileCheckpoint"))
	if err != nil {
		t.Fatal(err)
	}
	r := NewRoles(2, epochs, func() int64 { return 100 }, testutil.Logger())
	master := int64(2)
	st := ReplicaState{MasterID: &master, MasterAddr: "127.0.0.1:1", MasterEpoch: 3, SyncStateSet: []int64{2}}
	prev := r.Epoch()
	if _, changed, err := r.Apply(st); err != nil || !changed {
		t.Fatalf("first apply: changed %v %v", changed, err)
	}
	if _, changed, _ := r.Apply(st); changed {
		t.Fatal("the same epoch applied twice")
	}
	r.Reset(prev)
	role, changed, err := r.Apply(st)
	if err != nil || !changed || !role.Master || r.Epoch() != 3 {
		t.Fatalf("after Reset: %+v changed %v %v epoch %d", role, changed, err, r.Epoch())
	}
	if e, ok := epochs.Last(); !ok || e.Epoch != 3 || e.StartOffset != 100 || epochs.Len() != 1 {
		t.Fatalf("epoch file after the retry: %+v (%d entries)", e, epochs.Len())
	}
}
