package replicas

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/ctltest"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
)

// startController runs one rocketgo controller (a one-member raft group)
// and returns its Remoting address once it leads.
func startController(t *testing.T) string { return ctltest.Start(t) }

func newClient(t *testing.T, addr string) *Client {
	t.Helper()
	rc := remoting.NewClient(testutil.Logger())
	t.Cleanup(func() { rc.Close() })
	return NewClient(rc, addr, 3*time.Second)
}

// becomeMaster heartbeats and asks to be elected until the controller
// answers (the heartbeat is one way, so the first elect may come first).
func becomeMaster(t *testing.T, c *Client, b Broker, id int64) ReplicaState {
	t.Helper()
	ctx := context.Background()
	var st ReplicaState
	testutil.WaitFor(t, 10*time.Second, func() bool {
		if err := c.SendHeartbeat(ctx, Heartbeat{Cluster: b.Cluster, BrokerName: b.BrokerName, BrokerAddr: b.Addr,
			BrokerID: id, Epoch: -1, TimeoutMillis: 10000}); err != nil {
			_ = err // a dead controller in the list; the live one got it
		}
		var err error
		st, err = c.Elect(ctx, b.Cluster, b.BrokerName, id)
		if err != nil {
			t.Log(err)
		}
		return err == nil && st.MasterID != nil
	})
	return st
}

// A broker set registered through a rocketgo controller: ids 1 and 2 from
// get-next-id/apply-id, the first elected master with epoch 1, the second
// told who the master is, and a restart keeping its id.
func TestRegisterWithController(t *testing.T) {
	registerScenario(t, startController(t))
}

// registerScenario is run against rocketgo's controller here and Apache's
// in apache_test.go.
func registerScenario(t *testing.T, addr string) {
	c := newClient(t, "127.0.0.1:1;"+addr) // a dead address first: the leader lookup skips it
	ctx := context.Background()
	a := Broker{Cluster: "c1", BrokerName: "b1", Addr: "127.0.0.1:30911"}
	filesA := IdentityFiles{Root: t.TempDir()}
	idA, st, err := Register(ctx, c, filesA, a)
	if err != nil {
		t.Fatal(err)
	}
	if idA != 1 || st.MasterID != nil {
		t.Fatalf("first broker: id %d state %+v, want id 1 and no master", idA, st)
	}
	raw, err := os.ReadFile(filepath.Join(filesA.Root, FileIdentity))
	if err != nil || string(raw) != "c1#b1#1" {
		t.Fatalf("brokerIdentity %q %v", raw, err)
	}
	if _, err := os.Stat(filepath.Join(filesA.Root, FileIdentityTemp)); !os.IsNotExist(err) {
		t.Fatalf("temp file left: %v", err)
	}
	st = becomeMaster(t, c, a, idA)
	if *st.MasterID != 1 || st.MasterAddr != a.Addr || st.MasterEpoch != 1 || len(st.SyncStateSet) != 1 || st.SyncStateSet[0] != 1 {
		t.Fatalf("elected: %+v", st)
	}

	b := Broker{Cluster: "c1", BrokerName: "b1", Addr: "127.0.0.1:30921"}
	filesB := IdentityFiles{Root: t.TempDir()}
	idB, st, err := Register(ctx, c, filesB, b)
	if err != nil {
		t.Fatal(err)
	}
	if idB != 2 || st.MasterID == nil || *st.MasterID != 1 || st.MasterAddr != a.Addr || st.MasterEpoch != 1 {
		t.Fatalf("second broker: id %d state %+v", idB, st)
	}
	info, err := c.ReplicaInfo(ctx, "b1")
	if err != nil {
		t.Fatal(err)
	}
	if info.MasterID == nil || *info.MasterID != 1 || info.MasterEpoch != 1 || len(info.SyncStateSet) != 1 {
		t.Fatalf("replica info: %+v", info)
	}

	// A restart reads brokerIdentity and does not ask for a new id.
	again, _, err := Register(ctx, c, filesA, a)
	if err != nil || again != 1 {
		t.Fatalf("restart: id %d %v", again, err)
	}
	if next, err := c.NextBrokerID(ctx, "c1", "b1"); err != nil || next != 3 {
		t.Fatalf("next id after the restart: %d %v, want 3", next, err)
	}
}

// A crash between get-next-id and apply-id resumes from the temp file; an
// id another broker applied is refused and the temp file dropped; files of
// another broker name stop registration.
func TestRegisterResumeAndRefusals(t *testing.T) {
	resumeScenario(t, startController(t))
}

func resumeScenario(t *testing.T, addr string) {
	c := newClient(t, addr)
	ctx := context.Background()
	b := Broker{Cluster: "c1", BrokerName: "b2", Addr: "127.0.0.1:30931"}

	next, err := c.NextBrokerID(ctx, "c1", "b2")
	if err != nil {
		t.Fatal(err)
	}
	files := IdentityFiles{Root: t.TempDir()}
	if err := files.WriteTemp(Identity{Cluster: "c1", BrokerName: "b2", BrokerID: next, CheckCode: b.Addr + ";1"}); err != nil {
		t.Fatal(err)
	}
	id, _, err := Register(ctx, c, files, b)
	if err != nil || id != next {
		t.Fatalf("resume: id %d %v, want %d", id, err, next)
	}

	// The same id with another check code: the controller refuses it.
	other := IdentityFiles{Root: t.TempDir()}
	if err := other.WriteTemp(Identity{Cluster: "c1", BrokerName: "b2", BrokerID: next, CheckCode: "127.0.0.1:30941;2"}); err != nil {
		t.Fatal(err)
	}
	_, _, err = Register(ctx, c, other, Broker{Cluster: "c1", BrokerName: "b2", Addr: "127.0.0.1:30941"})
	var ref *RefusedError
	if !errors.As(err, &ref) || ref.Code != remoting.ControllerBrokerIDInvalid {
		t.Fatalf("taken id: %v, want CONTROLLER_BROKER_ID_INVALID", err)
	}
	if _, ok, _ := other.ReadTemp(); ok {
		t.Fatal("refused temp file kept")
	}

	// Store of another broker name under this config.
	if _, _, err := Register(ctx, c, files, Broker{Cluster: "c1", BrokerName: "b3", Addr: b.Addr}); !errors.Is(err, ErrIdentity) {
		t.Fatalf("other broker name: %v", err)
	}
}

func TestIdentityParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		temp bool
		ok   bool
	}{
		{"c#b#1", false, true},
		{"c#b#1#127.0.0.1:10911;1700000000000", true, true},
		{"c#b#1#extra", false, true}, // Apache reads fields by position
		{"c#b", false, false},
		{"c#b#x", false, false},
		{"#b#1", false, false},
		{"c#b#1", true, false},
		{"c#b#1#", true, false},
	} {
		_, err := parseIdentity(tc.in, tc.temp)
		if (err == nil) != tc.ok {
			t.Errorf("parse %q temp=%v: %v", tc.in, tc.temp, err)
		}
	}
}
