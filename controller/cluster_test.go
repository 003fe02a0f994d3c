package controller

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
)

// freePorts returns n ports p, each with p+1 free too (the raft port),
// none of the 2n ports repeated: the kernel may hand a port just closed out
// again, and two controllers on one address fail raft's bootstrap.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	taken := map[int]bool{}
	var out []int
	for range 50 * n {
		if len(out) == n {
			return out
		}
		l1, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l1.Addr().(*net.TCPAddr).Port
		if taken[p] || taken[p+1] {
			l1.Close()
			continue
		}
		l2, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+1))
		l1.Close()
		if err == nil {
			l2.Close()
			taken[p], taken[p+1] = true, true
			out = append(out, p)
		}
	}
	if len(out) < n {
		t.Fatal("no free port pairs")
	}
	return out
}

// group is three in-process controllers with real raft on real files.
type group struct {
	t    *testing.T
	cfgs []Config
	cs   []*Controller
}

func testConfig(peers, self, dir string) Config {
	cfg := DefaultConfig()
	cfg.ControllerDLegerGroup = "group1"
	cfg.ControllerDLegerPeers = peers
	cfg.ControllerDLegerSelfID = self
	cfg.ControllerStorePath = dir
	cfg.ConfigStorePath = filepath.Join(dir, "controller-"+self+".properties")
	// Apache's defaults (1 s): at 300 ms the leader changed under -race on
	// a loaded 2-core box between finding it and asking it (2007, not leader).
	cfg.ControllerRaftHeartbeatTimeoutMillis = 1000
	cfg.ControllerRaftElectionTimeoutMillis = 1000
	cfg.ScanInactiveMasterInterval = 500
	cfg.ScanNotActiveBrokerInterval = 500
	cfg.ControllerThreadPoolNums = 4
	cfg.ControllerRequestThreadPoolQueueCapacity = 64
	return cfg
}

func startGroup(t *testing.T, mutate func(*Config)) *group {
	t.Helper()
	dir := t.TempDir()
	var parts []string
	for i, p := range freePorts(t, 3) {
		parts = append(parts, fmt.Sprintf("n%d-127.0.0.1:%d", i, p))
	}
	g := &group{t: t}
	for i := range 3 {
		cfg := testConfig(strings.Join(parts, ";"), fmt.Sprintf("n%d", i), dir)
		if mutate != nil {
			mutate(&cfg)
		}
		g.cfgs = append(g.cfgs, cfg)
		g.cs = append(g.cs, nil)
		g.start(i)
	}
	t.Cleanup(func() {
		for i := range g.cs {
			g.stop(i)
		}
	})
	return g
}

// startSingle runs a one-member group (mutate may change its config) and
// returns it once it leads; it is stopped when the test ends.
func startSingle(t *testing.T, mutate func(*Config)) *Controller {
	t.Helper()
	cfg := testConfig(fmt.Sprintf("n0-127.0.0.1:%d", freePorts(t, 1)[0]), "n0", t.TempDir())
	cfg.ControllerRaftHeartbeatTimeoutMillis = 300
	cfg.ControllerRaftElectionTimeoutMillis = 300
	if mutate != nil {
		mutate(&cfg)
	}
	c, err := New(cfg, testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	testutil.WaitFor(t, 15*time.Second, c.IsLeader)
	return c
}

func (g *group) start(i int) {
	g.t.Helper()
	c, err := New(g.cfgs[i], testutil.Logger())
	if err != nil {
		g.t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		g.t.Fatal(err)
	}
	g.cs[i] = c
}

func (g *group) stop(i int) {
	if g.cs[i] == nil {
		return
	}
	// 30 s: raft's shutdown waits out its transport's I/O to stopped peers
	// (5 s timeouts); 10 s was exceeded once under -race on a loaded box.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.cs[i].Shutdown(ctx); err != nil {
		buf := make([]byte, 1<<20)
		g.t.Errorf("shutdown %d: %v; goroutines:\n%s", i, err, buf[:runtime.Stack(buf, true)])
	}
	g.cs[i] = nil
}

// leader waits for a serving leader and returns its index.
func (g *group) leader() int {
	g.t.Helper()
	at := -1
	testutil.WaitFor(g.t, 15*time.Second, func() bool {
		for i, c := range g.cs {
			if c != nil && c.IsLeader() {
				at = i
				return true
			}
		}
		return false
	})
	return at
}

func (g *group) addrs() []string {
	var out []string
	for _, c := range g.cfgs {
		for _, p := range must(c.Peers()) {
			if p.ID == c.ControllerDLegerSelfID {
				out = append(out, p.Addr)
			}
		}
	}
	return out
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// fakeBroker speaks the broker side of controller mode over real
// connections: its own client (closing it is the broker dying) and a
// server receiving NOTIFY_BROKER_ROLE_CHANGED.
type fakeBroker struct {
	t       *testing.T
	cluster string
	name    string
	id      int64
	cl      *remoting.Client
	srv     *remoting.Server
	mu      sync.Mutex
	notices []*remoting.Command
}

func newFakeBroker(t *testing.T, name string) *fakeBroker {
	t.Helper()
	b := &fakeBroker{t: t, cluster: "c1", name: name, cl: remoting.NewClient(testutil.Logger())}
	b.srv = remoting.NewServer(remoting.ServerConfig{Addr: "127.0.0.1:0", Limits: remoting.DefaultLimits()}, remoting.Table{
		remoting.NotifyBrokerRoleChanged: func(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
			b.mu.Lock()
			b.notices = append(b.notices, req.Clone())
			b.mu.Unlock()
			return nil
		},
	}, testutil.Logger())
	if err := b.srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = b.srv.Shutdown(ctx)
	})
	return b
}

func (b *fakeBroker) addr() string { return b.srv.Addr() }

func (b *fakeBroker) call(addr string, code int32, ext map[string]string, body []byte) *remoting.Command {
	b.t.Helper()
	resp, err := b.try(addr, code, ext, body)
	if err != nil {
		b.t.Fatalf("code %d to %s: %v", code, addr, err)
	}
	return resp
}

// try is call for any goroutine: the error is returned, not fatal.
func (b *fakeBroker) try(addr string, code int32, ext map[string]string, body []byte) (*remoting.Command, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return b.cl.Invoke(ctx, addr, remoting.NewRequest(code, ext, body))
}

func (b *fakeBroker) heartbeatFields(epoch int32, maxOffset int64) map[string]string {
	return map[string]string{
		"clusterName": b.cluster, "brokerName": b.name, "brokerAddr": b.addr(), "brokerId": fmt.Sprint(b.id),
		"epoch": fmt.Sprint(epoch), "maxOffset": fmt.Sprint(maxOffset), "confirmOffset": fmt.Sprint(maxOffset),
		"heartbeatTimeoutMills": "3000", "electionPriority": "3",
	}
}

func (b *fakeBroker) heartbeat(addrs []string, epoch int32, maxOffset int64) {
	b.t.Helper()
	for _, a := range addrs {
		resp := b.call(a, remoting.BrokerHeartbeat, b.heartbeatFields(epoch, maxOffset), nil)
		if resp.Code != remoting.Success {
			b.t.Fatalf("heartbeat to %s: %d %s", a, resp.Code, resp.Remark)
		}
	}
}

// beat is heartbeat from any goroutine: a stopped controller's error is
// ignored, as a broker ignores it.
func (b *fakeBroker) beat(addrs []string, epoch int32, maxOffset int64) {
	for _, a := range addrs {
		_, _ = b.try(a, remoting.BrokerHeartbeat, b.heartbeatFields(epoch, maxOffset), nil)
	}
}

// register runs Apache's broker registration: next id, apply, register.
func (b *fakeBroker) register(leader string) *remoting.Command {
	b.t.Helper()
	resp := b.call(leader, remoting.ControllerGetNextBrokerID, map[string]string{"clusterName": b.cluster, "brokerName": b.name}, nil)
	if resp.Code != remoting.Success {
		b.t.Fatalf("next id: %d %s", resp.Code, resp.Remark)
	}
	b.id = must(strconv.ParseInt(resp.Str("nextBrokerId"), 10, 64))
	resp = b.call(leader, remoting.ControllerApplyBrokerID, map[string]string{"clusterName": b.cluster, "brokerName": b.name,
		"appliedBrokerId": fmt.Sprint(b.id), "registerCheckCode": b.addr() + ";1700000000000"}, nil)
	if resp.Code != remoting.Success {
		b.t.Fatalf("apply id %d: %d %s", b.id, resp.Code, resp.Remark)
	}
	return b.call(leader, remoting.ControllerRegisterBroker, map[string]string{"clusterName": b.cluster, "brokerName": b.name,
		"brokerId": fmt.Sprint(b.id), "brokerAddress": b.addr(), "invokeTime": "1"}, nil)
}

func (b *fakeBroker) elect(leader string) *remoting.Command {
	return b.call(leader, remoting.ControllerElectMaster, map[string]string{"clusterName": b.cluster, "brokerName": b.name,
		"brokerId": fmt.Sprint(b.id), "designateElect": "false", "invokeTime": "1"}, nil)
}

func (b *fakeBroker) lastNotice() *remoting.Command {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.notices) == 0 {
		return nil
	}
	return b.notices[len(b.notices)-1]
}

func TestFailoverThroughRaft(t *testing.T) {
	g := startGroup(t, nil)
	li := g.leader()
	addrs := g.addrs()
	leader := addrs[li]
	follower := addrs[(li+1)%3]

	// Every controller says who leads.
	probe := newFakeBroker(t, "probe")
	md := probe.call(follower, remoting.ControllerGetMetadataInfo, nil, nil)
	if md.Code != remoting.Success || md.Str("controllerLeaderAddress") != leader || md.Str("isLeader") != "false" || md.Str("group") != "group1" {
		t.Fatalf("metadata from follower: %d %v", md.Code, md.ExtFields)
	}
	if !strings.Contains(md.Str("peers"), fmt.Sprintf("n%d:%s;", li, leader)) {
		t.Fatalf("peers %q", md.Str("peers"))
	}
	// Followers refuse what only the leader decides.
	if r := probe.call(follower, remoting.ControllerGetReplicaInfo, map[string]string{"brokerName": "b"}, nil); r.Code != remoting.ControllerNotLeader {
		t.Fatalf("follower replica info: %d %s", r.Code, r.Remark)
	}

	bs := []*fakeBroker{newFakeBroker(t, "b"), newFakeBroker(t, "b"), newFakeBroker(t, "b")}
	for i, b := range bs {
		resp := b.register(leader)
		if resp.Code != remoting.Success || b.id != int64(i+1) {
			t.Fatalf("register %d: id %d code %d %s", i, b.id, resp.Code, resp.Remark)
		}
		b.heartbeat(addrs, 0, 100*int64(i))
	}
	// The first broker to ask is the first master.
	r := bs[0].elect(leader)
	if r.Code != remoting.Success || r.Str("masterBrokerId") != "1" || r.Str("masterEpoch") != "1" {
		t.Fatalf("first elect: %d %s %v", r.Code, r.Remark, r.ExtFields)
	}
	// The member group's ids quoted: Apache 5.5's mqadmin skips the group
	// with fastjson2, which refuses bare keys.
	if want := fmt.Sprintf(`{"brokerMemberGroup":{"brokerAddrs":{"1":%q,"2":%q,"3":%q},"brokerName":"b","cluster":"c1"},"syncStateSet":[1]}`,
		bs[0].addr(), bs[1].addr(), bs[2].addr()); string(r.Body) != want {
		t.Fatalf("first elect body %s, want %s", r.Body, want)
	}
	if r := bs[1].elect(leader); r.Code != remoting.ControllerMasterStillExist || r.Str("masterBrokerId") != "1" {
		t.Fatalf("second elect: %d %s", r.Code, r.Remark)
	}
	// The master widens the SyncStateSet; a stale epoch is fenced.
	alter := func(masterEpoch, syncEpoch int, ids string) *remoting.Command {
		return bs[0].call(leader, remoting.ControllerAlterSyncStateSet, map[string]string{"brokerName": "b", "masterBrokerId": "1",
			"masterEpoch": fmt.Sprint(masterEpoch), "invokeTime": "1"}, []byte(fmt.Sprintf(`{"syncStateSet":[%s],"syncStateSetEpoch":%d}`, ids, syncEpoch)))
	}
	if r := alter(0, 1, "1,2,3"); r.Code != remoting.ControllerFencedMasterEpoch {
		t.Fatalf("stale master epoch: %d %s", r.Code, r.Remark)
	}
	if r := alter(1, 0, "1,2,3"); r.Code != remoting.ControllerFencedSyncStateSet {
		t.Fatalf("stale sync epoch: %d %s", r.Code, r.Remark)
	}
	if r := alter(1, 1, "1,2,3"); r.Code != remoting.Success || r.Str("newSyncStateSetEpoch") != "2" ||
		string(r.Body) != `{"syncStateSet":[1,2,3],"syncStateSetEpoch":2}` {
		t.Fatalf("alter: %d %s %s", r.Code, r.Remark, r.Body)
	}

	// Broker 3 has the most data; the master dies (its connections close).
	bs[2].heartbeat(addrs, 1, 500)
	bs[1].heartbeat(addrs, 1, 400)
	bs[0].cl.Close()
	testutil.WaitFor(t, 10*time.Second, func() bool {
		n2, n3 := bs[1].lastNotice(), bs[2].lastNotice()
		return n2 != nil && n3 != nil && n3.Str("masterBrokerId") == "3" && n2.Str("masterBrokerId") == "3"
	})
	n := bs[2].lastNotice()
	if n.Str("masterEpoch") != "2" || n.Str("masterAddress") != bs[2].addr() || string(n.Body) != `{"syncStateSet":[3],"syncStateSetEpoch":3}` {
		t.Fatalf("notice: %v %s", n.ExtFields, n.Body)
	}

	// The controller leader dies: another leads with the same state, and
	// the old one rejoins from its files.
	g.stop(li)
	nl := g.leader()
	r = bs[1].call(addrs[nl], remoting.ControllerGetReplicaInfo, map[string]string{"brokerName": "b"}, nil)
	if r.Code != remoting.Success || r.Str("masterBrokerId") != "3" || r.Str("masterEpoch") != "2" {
		t.Fatalf("replica info on new leader: %d %s %v", r.Code, r.Remark, r.ExtFields)
	}
	g.start(li)
	testutil.WaitFor(t, 10*time.Second, func() bool {
		m, ok := g.cs[li].ru.masterOf("b")
		return ok && m == 3
	})
}

// TestLeaderDiesDuringElection: the controller leader dies, then the master
// before a new leader is there to see its connection close: the election
// that close would have asked for never happens. The next leader finds the
// set's master inactive in its own scan and elects, and the survivor hears
// of it.
func TestLeaderDiesDuringElection(t *testing.T) {
	g := startGroup(t, nil)
	li := g.leader()
	addrs := g.addrs()
	bs := []*fakeBroker{newFakeBroker(t, "b"), newFakeBroker(t, "b")}
	for i, b := range bs {
		if r := b.register(addrs[li]); r.Code != remoting.Success {
			t.Fatalf("register %d: %d %s", i, r.Code, r.Remark)
		}
		b.heartbeat(addrs, 0, 0)
	}
	if r := bs[0].elect(addrs[li]); r.Code != remoting.Success {
		t.Fatalf("elect: %d %s", r.Code, r.Remark)
	}
	alter := bs[0].call(addrs[li], remoting.ControllerAlterSyncStateSet, map[string]string{"brokerName": "b", "masterBrokerId": "1", "masterEpoch": "1"},
		[]byte(`{"syncStateSet":[1,2],"syncStateSetEpoch":1}`))
	if alter.Code != remoting.Success {
		t.Fatalf("alter: %d %s", alter.Code, alter.Remark)
	}
	// Broker 2 lives on: it heartbeats every 500 ms, as a broker does
	// (heartbeatTimeoutMills 3 s; the re-election below may take longer
	// than that on a loaded box).
	stopBeat := make(chan struct{})
	beaten := make(chan struct{})
	go func() {
		defer close(beaten)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopBeat:
				return
			case <-tick.C:
				bs[1].beat(addrs, 0, 0)
			}
		}
	}()
	defer func() { close(stopBeat); <-beaten }()
	// Stop the leader first, then the master dies: no controller elects
	// on the connection's close (the followers do not lead).
	g.stop(li)
	bs[0].cl.Close()
	// Whoever leads next finds the master inactive in its scan, one
	// interval after it leads, and elects broker 2.
	nl := g.leader()
	testutil.WaitFor(t, 15*time.Second, func() bool {
		r, err := bs[1].try(addrs[nl], remoting.ControllerGetReplicaInfo, map[string]string{"brokerName": "b"}, nil)
		return err == nil && r.Code == remoting.Success && r.Str("masterBrokerId") == "2" && r.Str("masterEpoch") == "2"
	})
	testutil.WaitFor(t, 5*time.Second, func() bool {
		n := bs[1].lastNotice()
		return n != nil && n.Str("masterBrokerId") == "2"
	})
}
