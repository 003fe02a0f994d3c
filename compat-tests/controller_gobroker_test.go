package compattest

// rocketgo brokers in controller mode: three mqbroker
// processes with enableControllerMode=true in one broker set, three
// rocketgo controllers (mqcontroller) or Apache 5.3.3's, a rocketgo name
// server, the official Go client sending through the name server. The
// controller elects a master, which registers as brokerId 0 and takes the
// sends; kill -9 of the master → another is elected, takes the role on the
// controller's NOTIFY_BROKER_ROLE_CHANGED or its poll, re-registers with
// the name server, and the sends succeed again (the time from the kill to
// the first accepted send is logged). AutoSwitch HA with
// allAckInSyncStateSet (SYNC_MASTER): both slaves join the SyncStateSet
// before the load, every acknowledged message must be on the new master,
// and the old master, restarted on its store, rejoins as an in-sync slave.
// TestControllerGoBrokers (rocketgo controllers) runs in make test;
// TestControllerGoBrokersApache (Apache's controller, mqadmin) with
// ROCKETGO_JAVA=1 ROCKETGO_CONTROLLER=1 (make test-controller).

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// goCtlBrokerConf is a rocketgo broker of the controller-mode set.
func goCtlBrokerConf(dir, ip string, port int, nsAddr, ctlAddrs string) string {
	return fmt.Sprintf(`brokerClusterName=%s
brokerName=%s
listenPort=%d
fastListenPort=-1
namesrvAddr=%s
brokerIP1=%s
storePathRootDir=%s
flushDiskType=ASYNC_FLUSH
autoCreateTopicEnable=true
mappedFileSizeCommitLog=67108864
metricsExporterType=DISABLE
slaveSynchronizePeriod=1000
enableControllerMode=true
controllerAddr=%s
syncBrokerMetadataPeriod=1000
allAckInSyncStateSet=true
haMaxTimeSlaveNotCatchup=15000
checkSyncStateSetPeriod=1000
`, clusterName, ctlBrokerSet, port, nsAddr, ip, filepath.Join(dir, "store"), ctlAddrs)
}

// startGoCtlBroker starts (or restarts, same store and port) a rocketgo
// broker of the set.
func startGoCtlBroker(t *testing.T, dir string, port int, nsAddr, ctlAddrs string) *ctlBroker {
	t.Helper()
	return startGoCtlBrokerOn(t, nil, dir, port, nsAddr, ctlAddrs, "")
}

// startGoCtlBrokerOn starts the broker on host h (nil: loopback) with
// extra broker.conf lines.
func startGoCtlBrokerOn(t *testing.T, h *host, dir string, port int, nsAddr, ctlAddrs, extra string) *ctlBroker {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ip := "127.0.0.1"
	if h != nil {
		ip = h.ip
	}
	conf := filepath.Join(dir, "broker.properties")
	if err := os.WriteFile(conf, []byte(goCtlBrokerConf(dir, ip, port, nsAddr, ctlAddrs)+extra), 0o644); err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(dir)
	args, log := []string{"-c", conf}, filepath.Join(dir, "broker.log")
	var p *proc
	var err error
	if h != nil {
		p, err = h.start(name, filepath.Join(binDir, "mqbroker"), args, log)
	} else {
		p, err = startProc(name, filepath.Join(binDir, "mqbroker"), args, log)
	}
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("%s:%d", ip, port)
	if err := waitTCP(p, addr, readyTimeout); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, tailFile(filepath.Join(dir, "broker.log"), 30))
	}
	t.Cleanup(func() {
		if h != nil {
			h.restore(t) // a stopped (loopback cut) process cannot take SIGTERM
		}
		p.stop()
		if t.Failed() {
			t.Logf("tail of %s:\n%s", name, tailFile(filepath.Join(dir, "broker.log"), 40))
		}
	})
	return &ctlBroker{name: name, addr: addr, p: p}
}

// routeIDs is the name server's brokerId → address of the set for topic.
func routeIDs(nsAddr, topic string) map[int64]string {
	code, rd, _, err := queryRoute(nsAddr, topic)
	if err != nil || code != 0 || rd == nil {
		return nil
	}
	return rd.brokers[ctlBrokerSet]
}

// goCtlRig is ctlRig with rocketgo brokers; ctl is the controllers'
// address list and leader returns the state as the leading controller
// reports it.
func newGoCtlRig(t *testing.T, name string, ctlAddrs []string, state func() ctlSyncState, extra string) (*ctlRig, []int) {
	t.Helper()
	c, err := startNamesrvConf(name+"-ns", "")
	if c != nil {
		t.Cleanup(c.stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	return newGoCtlRigOn(t, c, state, func(i, port int) *ctlBroker {
		return startGoCtlBrokerOn(t, nil, filepath.Join(workDir, fmt.Sprintf("%s-b%d", name, i)), port, c.nsAddr, strings.Join(ctlAddrs, ";"), extra)
	})
}

// newGoCtlSet starts three rocketgo controllers (raft) and a rig of three
// rocketgo brokers on them, named after prefix; state is the leading
// controller's view of the set.
func newGoCtlSet(t *testing.T, prefix string) (*ctlRig, []int, func() ctlSyncState) {
	t.Helper()
	return newGoCtlSetConf(t, prefix, "")
}

// newGoCtlSetConf is newGoCtlSet with extra broker.conf lines, kept for
// the brokers' restarts (ctlRig.extra).
func newGoCtlSetConf(t *testing.T, prefix, extra string) (*ctlRig, []int, func() ctlSyncState) {
	t.Helper()
	name := uniq(prefix)
	g := startControllers(t, name+"-raft")
	g.leader(30 * time.Second)
	state := liveState(g)
	r, ports := newGoCtlRig(t, name, g.addrs, state, extra)
	r.g, r.extra = g, extra
	return r, ports, state
}

// newGoCtlRigOn is newGoCtlRig with the name server c and start(i, port)
// starting broker i.
func newGoCtlRigOn(t *testing.T, c *cluster, state func() ctlSyncState, start func(i, port int) *ctlBroker) (*ctlRig, []int) {
	t.Helper()
	r := &ctlRig{t: t, c: c}
	var ports []int
	for i := range 3 {
		p, err := pickPort()
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, p)
		r.bs = append(r.bs, start(i, p))
		if i == 0 {
			// The first broker is elected master when it registers alone.
			if !waitFor(t, 60*time.Second, func() bool { return state().masterAddr == r.bs[0].addr }) {
				t.Fatalf("first broker never master: %+v", state())
			}
		}
	}
	// AutoSwitch HA: both slaves catch up and the master adds them to
	// the SyncStateSet (1001).
	if !waitFor(t, 90*time.Second, func() bool {
		s := state()
		return len(s.alive) == 3 && s.alive[r.bs[1].addr] && s.alive[r.bs[2].addr] && len(s.inSync) == 3
	}) {
		t.Fatalf("three brokers never alive and in sync at the controller: %+v", state())
	}
	r.topic = uniq("GoCtl")
	createTopicOn(t, c.nsAddr, r.bs[0].addr, r.topic)
	// The master is id 0 in the route, the slaves their controller ids.
	if !waitFor(t, 60*time.Second, func() bool {
		ids, s := routeIDs(c.nsAddr, r.topic), state()
		if ids[0] != r.bs[0].addr || len(ids) != 3 {
			return false
		}
		for _, b := range r.bs[1:] {
			if ids[s.ids[b.addr]] != b.addr {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("route %v, want the master as 0 and the slaves by controller id %+v", routeIDs(c.nsAddr, r.topic), state())
	}
	// The slaves copy the topic from the master (slaveSynchronizePeriod),
	// so that the next master has it.
	for _, b := range r.bs[1:] {
		if !waitFor(t, 30*time.Second, func() bool {
			resp, err := rawInvoke(b.addr, javaRequest(21, nil, nil), 3*time.Second)
			return err == nil && resp.Code == 0 && strings.Contains(string(resp.Body), r.topic)
		}) {
			t.Fatalf("slave %s never copied topic %s", b.addr, r.topic)
		}
	}
	return r, ports
}

// goCtlFailover runs the scenario on r: sends, kill -9 of the master, a
// new master elected and routed, sends again; the killed broker restarts
// and rejoins as a slave (by its controller id in the route). It returns
// the measured times.
func goCtlFailover(t *testing.T, r *ctlRig, ports []int, ctlAddrs []string, state func() ctlSyncState) ctlFailover {
	start := time.Now()
	r.startLoad()
	r.waitSends(start, 100, 60*time.Second, "before the kill")
	f := goCtlKill(t, r, ports, ctlAddrs, state)
	all := r.stopLoad()
	// SYNC_MASTER with allAckInSyncStateSet: every acknowledged message is
	// on every member of the set, so on the new master.
	checkAcked(t, &cluster{brokerAddr: f.newMaster}, r.topic, all, "on the new master")
	t.Logf("%d acknowledged messages all on the new master %s", len(all), f.newMaster)
	return f
}

// goCtlKill is one kill -9 of the master under load: a new master
// elected, routed as id 0 and taking sends; the old one restarted on its
// store and port, back as a slave in the route and in the SyncStateSet.
func goCtlKill(t *testing.T, r *ctlRig, ports []int, ctlAddrs []string, state func() ctlSyncState) ctlFailover {
	t.Helper()
	old, f := r.killMaster()
	r.waitSends(time.Now(), 100, 60*time.Second, "after the master's kill")
	f.ack = r.firstAck(f.at, f.newMaster)
	// The new master registered as id 0; the old one is gone from the route.
	ids := routeIDs(r.c.nsAddr, r.topic)
	if ids[0] != f.newMaster || slices.Contains(mapValues(ids), old.addr) {
		t.Fatalf("route after the failover %v: want %s as 0 and no %s", ids, f.newMaster, old.addr)
	}
	// The old master restarts on its store and port: a slave now.
	i := slices.Index(r.bs, old)
	r.bs[i] = startGoCtlBrokerOn(t, nil, filepath.Join(workDir, old.name), ports[i], r.c.nsAddr, strings.Join(ctlAddrs, ";"), r.extra)
	if !waitFor(t, 60*time.Second, func() bool {
		ids := routeIDs(r.c.nsAddr, r.topic)
		for id, a := range ids {
			if a == old.addr && id != 0 && ids[0] == f.newMaster && len(ids) == 3 {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("old master %s did not rejoin as a slave: route %v", old.addr, routeIDs(r.c.nsAddr, r.topic))
	}
	// Back in the SyncStateSet: it truncated what it alone had and
	// caught up with the new master.
	if !waitFor(t, 90*time.Second, func() bool {
		s := state()
		return s.masterAddr == f.newMaster && slices.Contains(s.inSync, old.addr)
	}) {
		t.Fatalf("old master %s never back in the SyncStateSet: %+v", old.addr, state())
	}
	r.waitSends(time.Now(), 50, 60*time.Second, "after the old master rejoined")
	return f
}

// TestControllerGoBrokersSoak kills the master of the rocketgo set again
// and again under load (ROCKETGO_CONTROLLER_KILLS, default 5; make
// soak-controller runs 20): each time another master takes the sends and
// the killed broker rejoins in sync; at the end every acknowledged message
// is on the last master. With ROCKETGO_CONTROLLER_ACKS=default the brokers
// keep Apache's default allAckInSyncStateSet=false: a master acknowledges
// what it alone holds, so a kill may lose the last sends before it (as
// Apache's does); the soak counts and reports them instead.
func TestControllerGoBrokersSoak(t *testing.T) {
	if os.Getenv("ROCKETGO_CONTROLLER_SOAK") == "" {
		t.Skip("repeated master kills run with ROCKETGO_CONTROLLER_SOAK=1 (make soak-controller)")
	}
	kills := 5
	if n, err := strconv.Atoi(os.Getenv("ROCKETGO_CONTROLLER_KILLS")); err == nil && n > 0 {
		kills = n
	}
	extra, allAck := "", true
	if os.Getenv("ROCKETGO_CONTROLLER_ACKS") == "default" {
		extra, allAck = "allAckInSyncStateSet=false\n", false
	}
	r, ports, state := newGoCtlSetConf(t, "goctlsoak", extra)
	g := r.g
	start := time.Now()
	r.startLoad()
	r.waitSends(start, 100, 60*time.Second, "before the first kill")
	var times []string
	var worst time.Duration
	for k := range kills {
		f := goCtlKill(t, r, ports, g.addrs, state)
		worst = max(worst, f.ack)
		times = append(times, f.ack.Round(10*time.Millisecond).String())
		t.Logf("kill %d: new master %s elected %v, routed %v, first accepted send %v (acknowledged %v after)", k+1, f.newMaster,
			f.elected.Round(time.Millisecond), f.routed.Round(time.Millisecond), f.firstSend.Round(time.Millisecond), f.ack.Round(time.Millisecond))
	}
	all := r.stopLoad()
	master := ""
	if !waitFor(t, 60*time.Second, func() bool { master = state().masterAddr; return master != "" }) {
		t.Fatalf("no master after the kills: %+v", state())
	}
	received := len(all)
	if allAck {
		checkAcked(t, &cluster{brokerAddr: master}, r.topic, all, "on the last master")
	} else {
		got := pullAll(t, master, r.topic)
		for _, a := range all {
			if len(got[a.id]) == 0 {
				received--
			}
		}
		t.Logf("allAckInSyncStateSet=false: %d of %d acknowledged messages not on the last master after %d kills", len(all)-received, len(all), kills)
	}
	report(t, start, len(all), received, fmt.Sprintf("kills=%d allAck=%v worst=%s ack=%s", kills, allAck, worst.Round(time.Millisecond), strings.Join(times, ",")))
}

// firstAck is when the new master first acknowledged a send begun after
// t0, from t0: the outage a client that retries at once sees (firstSend,
// when that send began, hides how long it took). Only answers from the new
// master count: at a cut, a send begun a moment after the link went down
// may still be answered by the old master.
func (r *ctlRig) firstAck(t0 time.Time, newMaster string) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var first time.Time
	for _, a := range r.acked {
		if a.began.After(t0) && storeHost(a.offsetID) == newMaster && (first.IsZero() || a.done.Before(first)) {
			first = a.done
		}
	}
	return first.Sub(t0)
}

// storeHost is the ip:port an offsetMsgId names (16 hex digits of IPv4
// address and port, then the commit log offset).
func storeHost(offsetID string) string {
	if len(offsetID) < 16 {
		return ""
	}
	b, err := hex.DecodeString(offsetID[:16])
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d.%d.%d.%d:%d", b[0], b[1], b[2], b[3], binary.BigEndian.Uint32(b[4:8]))
}

// waitNewMaster waits for the controllers to name a master other than old
// and the name server to route to it, and for a send begun after t0 to be
// accepted; times are from t0.
func waitNewMaster(t *testing.T, r *ctlRig, old string, t0 time.Time, timeout time.Duration) ctlFailover {
	t.Helper()
	f := ctlFailover{at: t0}
	if !waitFor(t, timeout, func() bool {
		s := r.state()
		if f.elected == 0 && s.masterAddr != "" && s.masterAddr != old {
			f.elected, f.newMaster = time.Since(t0), s.masterAddr
		}
		if f.elected != 0 && f.routed == 0 && routeMaster(r.c.nsAddr, r.topic) == f.newMaster {
			f.routed = time.Since(t0)
		}
		return f.elected != 0 && f.routed != 0
	}) {
		t.Fatalf("no new master routed: %+v %+v", f, r.state())
	}
	f.firstSend = r.waitSends(t0, 1, 60*time.Second, "after the master was lost").Sub(t0)
	return f
}

// liveState is the set as whichever living controller answers reports it.
func liveState(g *ctlGroup) func() ctlSyncState {
	return func() ctlSyncState {
		for i := range g.addrs {
			if g.procs[i] == nil {
				continue
			}
			if s, err := g.syncState(i); err == nil {
				return s
			}
		}
		return ctlSyncState{}
	}
}

func mapValues(m map[int64]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// TestControllerGoBrokers: rocketgo brokers, rocketgo controllers. Part
// of make test (about 10 s: no JVM; every wait polls with a deadline of a
// minute or more).
func TestControllerGoBrokers(t *testing.T) {
	// Fresh directories on every run (-count): the raft logs and identity
	// files of a previous run name other ports.
	start := time.Now()
	r, ports, state := newGoCtlSet(t, "goctl")
	g := r.g
	goCtlEpochs(t, r, state)
	timers := goCtlTimers(t, r)
	f := goCtlFailover(t, r, ports, g.addrs, state)
	timers(f.newMaster)
	t.Logf("rocketgo controllers: kill -9 master -> new master in controller %v, in the name server route %v, first accepted send %v (acknowledged %v after)",
		f.elected.Round(time.Millisecond), f.routed.Round(time.Millisecond), f.firstSend.Round(time.Millisecond), f.ack.Round(time.Millisecond))

	// kill -9 of the controller leader under load: the brokers find the
	// new leader (1005) for their polls; then the master again, elected by
	// the two controllers left.
	r.startLoad()
	li := g.leader(30 * time.Second)
	ctlKill := time.Now()
	g.kill(li)
	g.leader(30 * time.Second)
	if !waitFor(t, 30*time.Second, func() bool { return state().masterAddr == f.newMaster }) {
		t.Fatalf("new controller leader reports %+v, want master %s", state(), f.newMaster)
	}
	r.waitSends(ctlKill, 50, 60*time.Second, "after the controller leader's kill")
	f2 := goCtlKill(t, r, ports, g.addrs, state)
	all := r.stopLoad()
	checkAcked(t, &cluster{brokerAddr: f2.newMaster}, r.topic, all, "on the master after the second kill")
	t.Logf("controller leader killed; second master kill: elected %v, routed %v, first accepted send %v (acknowledged %v after); %d acknowledged messages on %s",
		f2.elected.Round(time.Millisecond), f2.routed.Round(time.Millisecond), f2.firstSend.Round(time.Millisecond), f2.ack.Round(time.Millisecond), len(all), f2.newMaster)
	report(t, start, len(all), len(all), fmt.Sprintf("failover=%s,%s elected=%s,%s routed=%s,%s",
		f.firstSend.Round(time.Millisecond), f2.firstSend.Round(time.Millisecond), f.elected.Round(time.Millisecond),
		f2.elected.Round(time.Millisecond), f.routed.Round(time.Millisecond), f2.routed.Round(time.Millisecond)))
}

// goCtlTimers sends timer messages to r's master before its kill: three
// due in 0.5 s, delivered before the kill, and two due after the failover.
// The slaves copy the master's timer progress (GET_TIMER_CHECK_POINT), so
// the returned check finds the topic on the new master holding each of the
// five once: the three not delivered again, the two delivered by it.
func goCtlTimers(t *testing.T, r *ctlRig) func(newMaster string) {
	t.Helper()
	topic := uniq("GoCtlTimer")
	createTopicOn(t, r.c.nsAddr, r.bs[0].addr, topic)
	send := func(id string, due time.Time) {
		t.Helper()
		props := propsOf("TIMER_DELIVER_MS", strconv.FormatInt(due.UnixMilli(), 10), "id", id)
		if resp, err := sendRaw(r.bs[0].addr, topic, props); err != nil || resp.Code != 0 {
			t.Fatalf("timer message %s: %v %v", id, resp, err)
		}
	}
	count := func(addr string) int64 {
		n, err := getMaxOffset(addr, topic, 0)
		if err != nil {
			return -1
		}
		return n
	}
	soon := time.Now().Add(500 * time.Millisecond) // not past: a past time is delivered without the timer
	for _, id := range []string{"soon1", "soon2", "soon3"} {
		send(id, soon)
	}
	if !waitFor(t, 30*time.Second, func() bool { return count(r.bs[0].addr) == 3 }) {
		t.Fatalf("three timer messages due in 0.5 s not delivered on the master: %d", count(r.bs[0].addr))
	}
	later := time.Now().Add(15 * time.Second)
	send("later1", later)
	send("later2", later)
	// The slaves copy the topic and, every slaveSynchronizePeriod (1 s),
	// the timer's progress: all five read, the oldest waiting the fourth
	// (their own GET_TIMER_CHECK_POINT answers the copy).
	for _, b := range r.bs[1:] {
		if !waitFor(t, 30*time.Second, func() bool {
			resp, err := rawInvoke(b.addr, javaRequest(21, nil, nil), 3*time.Second)
			return err == nil && resp.Code == 0 && strings.Contains(string(resp.Body), topic)
		}) {
			t.Fatalf("slave %s never copied topic %s", b.addr, topic)
		}
		var ck *rawCmd
		if !waitFor(t, 30*time.Second, func() bool {
			var err error
			ck, err = rawInvoke(b.addr, javaRequest(60, nil, nil), 3*time.Second)
			return err == nil && ck.Code == 0 && len(ck.Body) >= 32 &&
				binary.BigEndian.Uint64(ck.Body[24:]) == 5 && ck.ExtFields["timerLowOffset"] == "3"
		}) {
			t.Fatalf("slave %s never copied the master's timer progress: %v", b.addr, ck)
		}
	}
	return func(newMaster string) {
		t.Helper()
		if !waitFor(t, time.Until(later)+30*time.Second, func() bool { return count(newMaster) >= 5 }) {
			t.Fatalf("timer messages on the new master %s: %d, want 5", newMaster, count(newMaster))
		}
		time.Sleep(2 * time.Second) // a redelivery would follow the deliveries at once
		if n := count(newMaster); n != 5 {
			t.Errorf("timer topic on the new master %s holds %d messages, want the five once each", newMaster, n)
		}
	}
}

// TestControllerGoBrokersApache: rocketgo brokers, Apache 5.3.3's
// controller (one DLedger node, compat-tests/reference/run.sh controller).
func TestControllerGoBrokersApache(t *testing.T) {
	requireJava(t)
	if os.Getenv("ROCKETGO_CONTROLLER") == "" {
		t.Skip("rocketgo brokers with Apache's controller run with ROCKETGO_JAVA=1 ROCKETGO_CONTROLLER=1 (make test-controller)")
	}
	port, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	start := time.Now()
	name := uniq("goctlj")
	dir := filepath.Join(workDir, name+"-apache-ctl")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "controller.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("controllerDLegerGroup=g\ncontrollerDLegerPeers=n0-%s\ncontrollerDLegerSelfId=n0\n"+
		"controllerStorePath=%s\n", addr, filepath.Join(dir, "store"))), 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("reference", "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := startProc("apache-controller", script, []string{"controller", conf, dir}, filepath.Join(dir, "controller.log"))
	if err != nil {
		t.Fatal(err)
	}
	g := &ctlGroup{t: t, dir: dir, addrs: []string{addr}, procs: []*proc{p}}
	t.Cleanup(func() {
		killJava(p)
		if t.Failed() {
			t.Logf("tail of Apache's controller:\n%s", tailFile(filepath.Join(dir, "controller.log"), 40))
		}
	})
	// Serving once it leads: a read answers something else than NOT_LEADER.
	if !waitFor(t, 120*time.Second, func() bool {
		r, err := rawInvoke(addr, javaRequest(1004, map[string]string{"brokerName": "warmup"}, nil), 2*time.Second)
		return err == nil && r.Code != 2007
	}) {
		t.Fatal("Apache's controller never served")
	}
	state := func() ctlSyncState {
		s, err := g.syncState(0)
		if err != nil {
			t.Logf("sync state: %v", err)
		}
		return s
	}
	r, ports := newGoCtlRig(t, name, g.addrs, state, "")
	r.g = g
	goCtlEpochs(t, r, state)
	goCtlAdmin(t, r, g, state)
	f := goCtlFailover(t, r, ports, g.addrs, state)
	t.Logf("Apache's controller: kill -9 master -> new master in controller %v, in the name server route %v, first accepted send %v (acknowledged %v after)",
		f.elected.Round(time.Millisecond), f.routed.Round(time.Millisecond), f.firstSend.Round(time.Millisecond), f.ack.Round(time.Millisecond))
	report(t, start, 0, 0, fmt.Sprintf("failover=%s ack=%s elected=%s routed=%s",
		f.firstSend.Round(time.Millisecond), f.ack.Round(time.Millisecond), f.elected.Round(time.Millisecond), f.routed.Round(time.Millisecond)))
}

// goCtlAdmin runs Apache 5.3.3 mqadmin getSyncStateSet and getBrokerEpoch
// against the rocketgo brokers (getBrokerEpoch asks every broker of the
// set, found through the name server, for GET_BROKER_EPOCH_CACHE).
func goCtlAdmin(t *testing.T, r *ctlRig, g *ctlGroup, state func() ctlSyncState) {
	t.Helper()
	ja := startJavaAdmin(t, toolsClasspath(t), filepath.Join(workDir, "goctl-admin"))
	s := state()
	want := func(out string, parts ...string) {
		t.Helper()
		for _, p := range parts {
			if !strings.Contains(out, p) {
				t.Fatalf("mqadmin output lacks %q:\n%s", p, out)
			}
		}
	}
	out := ja.run(t, []string{"getSyncStateSet", "-a", g.addrs[0], "-b", ctlBrokerSet})
	want(out, "#brokerName\t"+ctlBrokerSet, "#MasterBrokerId\t"+strconv.FormatInt(s.masterID, 10), "#MasterAddr\t"+s.masterAddr)
	out = ja.run(t, []string{"getBrokerEpoch", "-n", r.c.nsAddr, "-b", ctlBrokerSet})
	want(out, "#brokerName\t"+ctlBrokerSet, fmt.Sprintf("#Epoch: EpochEntry{epoch=%d, startOffset=0", s.masterEpoch))
	for _, b := range r.bs {
		want(out, "#brokerAddr\t"+b.addr)
	}
	t.Logf("mqadmin getBrokerEpoch:\n%s", out)
}

// goCtlEpochs checks GET_BROKER_EPOCH_CACHE (1007) on every broker: the
// master's id 0 and one epoch entry at least, the slaves' controller ids.
func goCtlEpochs(t *testing.T, r *ctlRig, state func() ctlSyncState) {
	t.Helper()
	s := state()
	for _, b := range r.bs {
		resp, err := rawInvoke(b.addr, javaRequest(1007, nil, nil), 3*time.Second)
		if err != nil || resp.Code != 0 {
			t.Fatalf("GET_BROKER_EPOCH_CACHE %s: %v %+v", b.addr, err, resp)
		}
		body := string(resp.Body)
		want := `"brokerId":` + strconv.FormatInt(s.ids[b.addr], 10)
		if b.addr == s.masterAddr {
			want = `"brokerId":0`
		}
		if !strings.Contains(body, want) || !strings.Contains(body, `"brokerName":"`+ctlBrokerSet+`"`) {
			t.Fatalf("GET_BROKER_EPOCH_CACHE %s: %s, want %s", b.addr, body, want)
		}
		if b.addr == s.masterAddr && !strings.Contains(body, `"epoch":`+strconv.FormatInt(s.masterEpoch, 10)) {
			t.Fatalf("master's epoch cache %s lacks epoch %d", body, s.masterEpoch)
		}
	}
}

// TestControllerMixedSet: one broker set of an Apache 5.3.3 broker and two
// rocketgo brokers under the rocketgo controllers, AutoSwitch HA between
// them both ways. The Apache broker starts first and is master; the
// rocketgo slaves follow it and join the SyncStateSet. kill -9 of the
// Apache master: a rocketgo broker becomes master and takes the sends; the
// Apache broker restarted on its store follows the rocketgo master back
// into the SyncStateSet; every acknowledged message is on the new master.
// ROCKETGO_JAVA=1 ROCKETGO_CONTROLLER=1 (make test-controller, about a
// minute).
func TestControllerMixedSet(t *testing.T) {
	requireJava(t)
	if os.Getenv("ROCKETGO_CONTROLLER") == "" {
		t.Skip("a mixed Apache/rocketgo broker set runs with ROCKETGO_JAVA=1 ROCKETGO_CONTROLLER=1 (make test-controller)")
	}
	start := time.Now()
	name := uniq("goctlmix")
	g := startControllers(t, name+"-raft")
	g.leader(30 * time.Second)
	r := &ctlRig{t: t, g: g}
	var err error
	r.c, err = startNamesrvConf(name+"-ns", "")
	if r.c != nil {
		t.Cleanup(r.c.stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	ctl := strings.Join(g.addrs, ";")
	apacheExtra := fmt.Sprintf("brokerName=%s\nbrokerId=-1\nbrokerRole=SLAVE\nenableControllerMode=true\ncontrollerAddr=%s\n"+
		"allAckInSyncStateSet=true\nsyncBrokerMetadataPeriod=1000\ncheckSyncStateSetPeriod=1000\nsyncControllerMetadataPeriod=2000\n",
		ctlBrokerSet, ctl)
	jname := name + "-apache"
	p, addr, _ := startApacheBroker(t, jname, r.c.nsAddr, apacheExtra)
	r.bs = append(r.bs, &ctlBroker{name: jname, addr: addr, p: p})
	if !waitFor(t, 120*time.Second, func() bool { return r.state().masterAddr == addr }) {
		t.Fatalf("the Apache broker never master: %+v", r.state())
	}
	// The slaves join while the Apache master's commit log is still empty:
	// it sends heartbeat frames at offset -1 until the first message.
	r.topic = uniq("GoCtlMix")
	createTopicOn(t, r.c.nsAddr, addr, r.topic)
	for i := range 2 {
		port, err := pickPort()
		if err != nil {
			t.Fatal(err)
		}
		r.bs = append(r.bs, startGoCtlBroker(t, filepath.Join(workDir, fmt.Sprintf("%s-b%d", name, i)), port, r.c.nsAddr, ctl))
	}
	if !waitFor(t, 120*time.Second, func() bool { return len(r.state().inSync) == 3 }) {
		t.Fatalf("the rocketgo slaves never joined the Apache master's SyncStateSet: %+v", r.state())
	}
	for _, b := range r.bs[1:] {
		if !waitFor(t, 60*time.Second, func() bool {
			resp, err := rawInvoke(b.addr, javaRequest(21, nil, nil), 3*time.Second)
			return err == nil && resp.Code == 0 && strings.Contains(string(resp.Body), r.topic)
		}) {
			t.Fatalf("rocketgo slave %s never copied topic %s from the Apache master", b.addr, r.topic)
		}
	}
	r.startLoad()
	r.waitSends(start, 100, 60*time.Second, "before the kill")
	old, f := r.killMaster()
	if old.addr != addr {
		t.Fatalf("killed %s, not the Apache master %s", old.addr, addr)
	}
	r.waitSends(time.Now(), 100, 60*time.Second, "after the Apache master's kill")
	f.ack = r.firstAck(f.at, f.newMaster)
	// The Apache broker back (same store, a new port): a slave of the
	// rocketgo master, in its SyncStateSet.
	p, addr, _ = startApacheBroker(t, jname, r.c.nsAddr, apacheExtra)
	r.bs[0] = &ctlBroker{name: jname, addr: addr, p: p}
	if !waitFor(t, 120*time.Second, func() bool {
		s := r.state()
		return s.masterAddr == f.newMaster && slices.Contains(s.inSync, addr)
	}) {
		t.Fatalf("the Apache broker never back in sync with the rocketgo master: %+v", r.state())
	}
	r.waitSends(time.Now(), 50, 60*time.Second, "after the Apache broker rejoined")
	all := r.stopLoad()
	checkAcked(t, &cluster{brokerAddr: f.newMaster}, r.topic, all, "on the rocketgo master")
	t.Logf("Apache master killed -> rocketgo master %s: elected %v, routed %v, first accepted send %v (acknowledged %v after); %d acknowledged messages on it; the Apache broker rejoined in sync",
		f.newMaster, f.elected.Round(time.Millisecond), f.routed.Round(time.Millisecond), f.firstSend.Round(time.Millisecond), f.ack.Round(time.Millisecond), len(all))
	report(t, start, len(all), len(all), fmt.Sprintf("failover=%s ack=%s elected=%s routed=%s",
		f.firstSend.Round(time.Millisecond), f.ack.Round(time.Millisecond), f.elected.Round(time.Millisecond), f.routed.Round(time.Millisecond)))
}

// TestControllerHostsPartition: the controller-mode set on hosts (network
// namespaces, hosts_test.go): three controllers on one host, a name server
// on another, the three rocketgo brokers on a host each. The master's link
// is cut (a silent partition: no RST, its heartbeats stop): after
// controllerHeartBeatTimeoutMills the controllers elect an in-sync slave,
// which takes the sends. The link restored, the old master learns the new
// epoch from its poll, becomes a slave, truncates what it alone had and is
// back in the SyncStateSet; every acknowledged message is on the new
// master. ROCKETGO_CONTROLLER=1 (make test-controller).
func TestControllerHostsPartition(t *testing.T) {
	if os.Getenv("ROCKETGO_CONTROLLER") == "" {
		t.Skip("the controller-mode partition runs with ROCKETGO_CONTROLLER=1 (make test-controller)")
	}
	n := newHostNet(t, "ctl", "ns", "b0", "b1", "b2")
	g := startControllersOn(t, n.host("ctl"), uniq("hctl")+"-raft", "")
	g.leader(30 * time.Second)
	state := liveState(g)
	ns := startHostNamesrv(t, n.host("ns"), "rocketgo", "ns")
	ctl := strings.Join(g.addrs, ";")
	const hbTimeout = 3000 // ms: the partition is noticed by the missing heartbeats
	r, _ := newGoCtlRigOn(t, &cluster{nsAddr: ns.addr}, state, func(i, port int) *ctlBroker {
		h := n.host(fmt.Sprintf("b%d", i))
		return startGoCtlBrokerOn(t, h, filepath.Join(n.dir, fmt.Sprintf("b%d", i)), port, ns.addr, ctl,
			fmt.Sprintf("controllerHeartBeatTimeoutMills=%d\n", hbTimeout))
	})
	r.g = g
	start := time.Now()
	r.startLoad()
	r.waitSends(start, 100, 60*time.Second, "before the cut")
	s := r.state()
	i := slices.IndexFunc(r.bs, func(b *ctlBroker) bool { return b.addr == s.masterAddr })
	if i < 0 {
		t.Fatalf("master %q is none of the brokers", s.masterAddr)
	}
	old, h := r.bs[i], n.host(fmt.Sprintf("b%d", i))
	cutAt := time.Now()
	h.cut(t)
	cutOffSends(t, h, old.addr, r.topic)
	f := waitNewMaster(t, r, old.addr, cutAt, 60*time.Second)
	r.waitSends(time.Now(), 100, 60*time.Second, "after the cut")
	f.ack = r.firstAck(cutAt, f.newMaster)
	h.restore(t)
	if !waitFor(t, 90*time.Second, func() bool {
		s := r.state()
		if s.masterAddr != f.newMaster || !slices.Contains(s.inSync, old.addr) {
			return false
		}
		for id, a := range routeIDs(ns.addr, r.topic) {
			if a == old.addr {
				return id != 0
			}
		}
		return false
	}) {
		t.Fatalf("old master %s not back as an in-sync slave: %+v, route %v", old.addr, r.state(), routeIDs(ns.addr, r.topic))
	}
	r.waitSends(time.Now(), 50, 60*time.Second, "after the restore")
	all := r.stopLoad()
	checkAcked(t, &cluster{brokerAddr: f.newMaster}, r.topic, all, "on the new master")
	t.Logf("master %s cut (heartbeat timeout %d ms): new master %s elected %v, routed %v, first accepted send %v (acknowledged %v after); %d acknowledged messages on it; the old master back in sync",
		old.addr, hbTimeout, f.newMaster, f.elected.Round(time.Millisecond), f.routed.Round(time.Millisecond), f.firstSend.Round(time.Millisecond), f.ack.Round(time.Millisecond), len(all))
	report(t, start, len(all), len(all), fmt.Sprintf("failover=%s ack=%s elected=%s routed=%s",
		f.firstSend.Round(time.Millisecond), f.ack.Round(time.Millisecond), f.elected.Round(time.Millisecond), f.routed.Round(time.Millisecond)))
}

// cutOffSends sends to the cut-off master from inside its partition (its
// own host, mqbench under ip netns exec): with allAckInSyncStateSet it
// reaches none of the in-sync slaves, so it must answer none of them
// SEND_OK (Apache answers FLUSH_SLAVE_TIMEOUT: stored, not replicated).
func cutOffSends(t *testing.T, h *host, addr, topic string) {
	t.Helper()
	bench := filepath.Join(binDir, "mqbench")
	if _, err := os.Stat(bench); err != nil || h.ns == "" {
		t.Logf("sends inside the partition not tried (mqbench %v, namespace %q)", err, h.ns)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", "netns", "exec", h.ns, bench, "produce", "-broker", addr,
		"-broker-name", ctlBrokerSet, "-t", topic, "-q", "1", "-c", "1", "-w", "3", "-count", "3").CombinedOutput()
	m := regexp.MustCompile(`SUMMARY role=send msgs=(\d+) errs=(\d+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("mqbench inside the partition: %v\n%s", err, out)
	}
	stored, _ := strconv.Atoi(string(m[1]))
	notOK := 0
	for _, c := range regexp.MustCompile(`(?m)^STORED_NOT_OK role=send(.*)$`).FindAllSubmatch(out, -1) {
		for _, n := range regexp.MustCompile(`code\d+=(\d+)`).FindAllSubmatch(c[1], -1) {
			k, _ := strconv.Atoi(string(n[1]))
			notOK += k
		}
	}
	if ok := stored - notOK; ok != 0 {
		t.Errorf("the cut-off master answered SEND_OK to %d of 3 sends it could not replicate:\n%s", ok, out)
	}
	t.Logf("inside the partition the old master answered no SEND_OK: %d stored without it, %s refused:\n%s", notOK, m[2], out)
}

// TestControllerGoBrokersLeaderAndMaster kills the controller leader and
// the master together, under load: the controllers that are left elect a
// leader, which has not seen the master's connection close; it elects a
// new master once the master's heartbeats expire
// (controllerHeartBeatTimeoutMills, Apache's 10 s) and its inactive-master
// scan runs. Every acknowledged message is on the new master.
// ROCKETGO_CONTROLLER=1 (make test-controller).
func TestControllerGoBrokersLeaderAndMaster(t *testing.T) {
	if os.Getenv("ROCKETGO_CONTROLLER") == "" {
		t.Skip("the leader-and-master kill runs with ROCKETGO_CONTROLLER=1 (make test-controller)")
	}
	r, _, _ := newGoCtlSet(t, "goctllm")
	g := r.g
	start := time.Now()
	r.startLoad()
	r.waitSends(start, 100, 60*time.Second, "before the kills")
	s := r.state()
	i := slices.IndexFunc(r.bs, func(b *ctlBroker) bool { return b.addr == s.masterAddr })
	if i < 0 {
		t.Fatalf("master %q is none of the brokers", s.masterAddr)
	}
	li := g.leader(30 * time.Second)
	killAt := time.Now()
	g.kill(li)
	killJava(r.bs[i].p)
	f := waitNewMaster(t, r, r.bs[i].addr, killAt, 90*time.Second)
	r.waitSends(time.Now(), 100, 60*time.Second, "after the kills")
	f.ack = r.firstAck(f.at, f.newMaster)
	all := r.stopLoad()
	checkAcked(t, &cluster{brokerAddr: f.newMaster}, r.topic, all, "on the new master")
	t.Logf("controller leader and master killed: new master %s elected %v, routed %v, first acknowledged send %v; %d acknowledged messages on it",
		f.newMaster, f.elected.Round(time.Millisecond), f.routed.Round(time.Millisecond), f.ack.Round(time.Millisecond), len(all))
	report(t, start, len(all), len(all), fmt.Sprintf("ack=%s elected=%s routed=%s",
		f.ack.Round(time.Millisecond), f.elected.Round(time.Millisecond), f.routed.Round(time.Millisecond)))
}

// TestControllerGoBrokersUnclean: a master and a slave that copies but
// never joins the SyncStateSet (asyncLearner=true). The master killed,
// the controllers elect nobody (the slave's store may lack acknowledged
// messages) unless enableElectUncleanMaster=true, when the slave becomes
// master and takes the route. ROCKETGO_CONTROLLER=1 (make test-controller).
func TestControllerGoBrokersUnclean(t *testing.T) {
	if os.Getenv("ROCKETGO_CONTROLLER") == "" {
		t.Skip("the unclean election runs with ROCKETGO_CONTROLLER=1 (make test-controller)")
	}
	for _, unclean := range []bool{false, true} {
		t.Run(fmt.Sprintf("enableElectUncleanMaster=%v", unclean), func(t *testing.T) {
			name := uniq("goctlun")
			extra := ""
			if unclean {
				extra = "enableElectUncleanMaster=true\n"
			}
			g := startControllersConf(t, name+"-raft", extra)
			g.leader(30 * time.Second)
			state := liveState(g)
			c, err := startNamesrvConf(name+"-ns", "")
			if c != nil {
				t.Cleanup(c.stop)
			}
			if err != nil {
				t.Fatal(err)
			}
			ctl := strings.Join(g.addrs, ";")
			start := func(n, extra string) *ctlBroker {
				port, err := pickPort()
				if err != nil {
					t.Fatal(err)
				}
				return startGoCtlBrokerOn(t, nil, filepath.Join(workDir, name+"-"+n), port, c.nsAddr, ctl, extra)
			}
			a := start("a", "")
			if !waitFor(t, 60*time.Second, func() bool { return state().masterAddr == a.addr }) {
				t.Fatalf("first broker never master: %+v", state())
			}
			b := start("b", "asyncLearner=true\n")
			if !waitFor(t, 60*time.Second, func() bool {
				s := state()
				return s.alive[b.addr] && routeIDs(c.nsAddr, "TBW102")[s.ids[b.addr]] == b.addr
			}) {
				t.Fatalf("learner never a registered slave: %+v", state())
			}
			if s := state(); len(s.inSync) != 1 || s.inSync[0] != a.addr {
				t.Fatalf("the learner joined the SyncStateSet: %+v", s)
			}
			killJava(a.p)
			if !unclean {
				// Long enough for the connection close, the inactive-master
				// scans and a few of the learner's polls and elect requests.
				deadline := time.Now().Add(15 * time.Second)
				for time.Now().Before(deadline) {
					if s := state(); s.masterAddr == b.addr {
						t.Fatalf("the learner was elected without enableElectUncleanMaster: %+v", s)
					}
					time.Sleep(500 * time.Millisecond)
				}
				resp, err := rawInvoke(b.addr, javaRequest(1007, nil, nil), 3*time.Second)
				if err != nil || resp.Code != 0 || strings.Contains(string(resp.Body), `"brokerId":0`) {
					t.Fatalf("the learner's epoch cache: %v %+v", err, resp)
				}
				return
			}
			if !waitFor(t, 60*time.Second, func() bool {
				return state().masterAddr == b.addr && routeMaster(c.nsAddr, "TBW102") == b.addr
			}) {
				t.Fatalf("the learner not elected with enableElectUncleanMaster: %+v, route master %q", state(), routeMaster(c.nsAddr, "TBW102"))
			}
		})
	}
}
