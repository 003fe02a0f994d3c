package compattest

// Multi-host harness: every name server and broker of a
// replication test runs on its own "host", a network namespace made by the
// test (ip netns, addresses 10.14.X.Y/24), so that a host's link can be cut
// and restored and a host's broker killed with -9 while the others run on.
// The hosts' veth pairs join a bridge in a "switch" namespace of the test;
// one veth pair (its root end holds X.1) links the root namespace to that
// bridge, and the Go clients of the test process talk to every host through
// it.
//
// Only that uplink is ever made or deleted in the root namespace: the Java
// clients of tests running beside (TestJavaClients) list the root
// namespace's interfaces when they start (Apache's NetworkUtil), and an
// interface vanishing under that listing made it return null (seen: a
// NullPointerException in ClientConfig while the hosts' veths came and went
// in the root namespace).
//
// cut drops the host's link (its switch-side veth end down): a silent
// partition, packets are dropped, no RST reaches either side, as when a
// cable or switch port fails; restore brings it back up.
//
// Without ip netns (not root, no iproute2) every host is 127.0.0.1 with its
// own ports; cut then stops the host's processes (SIGSTOP) and restore
// continues them, which is silent too but also freezes the host's own
// timers. The fallback is logged by each test and printed once.
//
// Namespaces are named hosts-<pid>-<n>-<host> (the switch's
// hosts-<pid>-<n>-switch), uplinks hb<pid>x<n>: a run removes what it made
// in t.Cleanup, and the first network of a run removes the namespaces of
// dead runs (their pid is gone; an uplink goes with its switch) and the
// root-namespace bridges hb<pid>x<n> runs before the switch namespace left.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

type hostNet struct {
	t      *testing.T
	netns  bool   // namespaces; false: loopback fallback
	id     int    // per-run sequence number
	sw     string // the switch namespace holding the bridge (netns only)
	uplink string // root end of the root <-> switch veth pair, holds X.1
	subnet string // "10.14.X" (netns only)
	dir    string // per-test files
	hosts  []*host
}

type host struct {
	net   *hostNet
	name  string
	ns    string // namespace ("" in loopback mode)
	ip    string
	veth  string // switch-side end of the host's veth pair
	mu    sync.Mutex
	procs []*proc // processes started on this host (cut/restore in loopback mode)
	isCut bool
}

var (
	subnetMu        sync.Mutex
	hostNetSeq      int
	hostNetMu       sync.Mutex
	hostNetChecked  bool
	hostNetUsable   bool
	hostNetFallback string
)

// netnsUsable reports (once per run) whether ip netns works here, and
// removes namespaces and bridges left by dead runs.
func netnsUsable() (bool, string) {
	hostNetMu.Lock()
	defer hostNetMu.Unlock()
	if hostNetChecked {
		return hostNetUsable, hostNetFallback
	}
	hostNetChecked = true
	if os.Getenv("ROCKETGO_HOSTS_LOOPBACK") != "" {
		hostNetFallback = "ROCKETGO_HOSTS_LOOPBACK is set"
		return false, hostNetFallback
	}
	if os.Geteuid() != 0 {
		hostNetFallback = "not root"
		return false, hostNetFallback
	}
	if _, err := exec.LookPath("ip"); err != nil {
		hostNetFallback = "no ip (iproute2)"
		return false, hostNetFallback
	}
	probe := fmt.Sprintf("hosts-%d-probe", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		hostNetFallback = fmt.Sprintf("ip netns add: %v %s", err, strings.TrimSpace(string(out)))
		return false, hostNetFallback
	}
	_ = exec.Command("ip", "netns", "del", probe).Run()
	cleanStaleHosts()
	hostNetUsable = true
	return true, ""
}

// cleanStaleHosts deletes namespaces and bridges of runs whose process is
// gone (a killed go test leaves them behind).
func cleanStaleHosts() {
	alive := func(pid string) bool {
		_, err := os.Stat("/proc/" + pid)
		return err == nil
	}
	if out, err := exec.Command("ip", "netns", "list").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) == 0 || !strings.HasPrefix(f[0], "hosts-") {
				continue
			}
			parts := strings.SplitN(f[0], "-", 3)
			if len(parts) >= 2 && !alive(parts[1]) {
				_ = exec.Command("ip", "netns", "del", f[0]).Run()
			}
		}
	}
	if out, err := exec.Command("ip", "-o", "link", "show", "type", "bridge").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			name := strings.TrimSuffix(f[1], ":")
			if !strings.HasPrefix(name, "hb") || !strings.Contains(name, "x") {
				continue
			}
			pid := strings.TrimPrefix(name[:strings.Index(name, "x")], "hb")
			if _, err := strconv.Atoi(pid); err == nil && !alive(pid) {
				_ = exec.Command("ip", "link", "del", name).Run()
			}
		}
	}
}

func runIP(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// freeSubnet picks a 10.14.X.0/24 no interface of the root namespace uses.
func freeSubnet() (string, error) {
	out, err := exec.Command("ip", "-4", "-o", "addr").Output()
	if err != nil {
		return "", err
	}
	for x := 1 + os.Getpid()%200; x < 1+os.Getpid()%200+250; x++ {
		s := fmt.Sprintf("10.14.%d", x%250+1)
		if !strings.Contains(string(out), " "+s+".") {
			return s, nil
		}
	}
	return "", fmt.Errorf("no free 10.14.X.0/24")
}

// newHostNet makes one host per name, each reachable from the test process.
func newHostNet(t *testing.T, names ...string) *hostNet {
	t.Helper()
	hostNetMu.Lock()
	hostNetSeq++
	id := hostNetSeq
	hostNetMu.Unlock()
	n := &hostNet{t: t, id: id, dir: filepath.Join(workDir, fmt.Sprintf("hosts%d-%s", id, strings.ReplaceAll(t.Name(), "/", "_")))}
	if err := os.MkdirAll(n.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	n.watchdog(t)
	ok, why := netnsUsable()
	if !ok {
		t.Logf("HOSTS: network namespaces unavailable (%s): loopback fallback, every host is 127.0.0.1, cut = SIGSTOP", why)
		for _, name := range names {
			n.hosts = append(n.hosts, &host{net: n, name: name, ip: "127.0.0.1"})
		}
		return n
	}
	n.netns = true
	t.Cleanup(n.teardown)
	n.sw = fmt.Sprintf("hosts-%d-%d-switch", os.Getpid(), id)
	n.uplink = fmt.Sprintf("hb%dx%d", os.Getpid(), id)
	// The bridge lives in the switch namespace; a fresh namespace's
	// FORWARD chain accepts, so bridged frames pass even where
	// br_netfilter sends them through iptables and the root namespace's
	// FORWARD drops (as a Docker engine leaves it).
	for _, args := range [][]string{
		{"netns", "add", n.sw},
		{"-n", n.sw, "link", "add", "name", "sw0", "type", "bridge"},
		{"-n", n.sw, "link", "set", "dev", "sw0", "up"},
	} {
		if err := runIP(args...); err != nil {
			t.Fatal(err)
		}
	}
	// Parallel tests (TestHostsInterop) pick subnets at the same time: the
	// pick and the uplink's address are one step.
	subnetMu.Lock()
	var err error
	if n.subnet, err = freeSubnet(); err != nil {
		subnetMu.Unlock()
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"link", "add", "name", n.uplink, "type", "veth", "peer", "name", "upl0", "netns", n.sw},
		{"addr", "add", n.subnet + ".1/24", "dev", n.uplink},
		{"link", "set", "dev", n.uplink, "up"},
		{"-n", n.sw, "link", "set", "dev", "upl0", "master", "sw0"},
		{"-n", n.sw, "link", "set", "dev", "upl0", "up"},
	} {
		if err := runIP(args...); err != nil {
			subnetMu.Unlock()
			t.Fatal(err)
		}
	}
	subnetMu.Unlock()
	for i, name := range names {
		h := &host{net: n, name: name, ns: fmt.Sprintf("hosts-%d-%d-%s", os.Getpid(), id, name),
			ip: fmt.Sprintf("%s.%d", n.subnet, 10+i), veth: fmt.Sprintf("hv%d", i)}
		peer := h.veth + "p"
		for _, args := range [][]string{
			{"netns", "add", h.ns},
			{"-n", n.sw, "link", "add", "name", h.veth, "type", "veth", "peer", "name", peer, "netns", h.ns},
			{"-n", n.sw, "link", "set", "dev", h.veth, "master", "sw0"},
			{"-n", n.sw, "link", "set", "dev", h.veth, "up"},
			{"-n", h.ns, "addr", "add", h.ip + "/24", "dev", peer},
			{"-n", h.ns, "link", "set", peer, "up"},
			{"-n", h.ns, "link", "set", "lo", "up"},
		} {
			if err := runIP(args...); err != nil {
				t.Fatal(err)
			}
		}
		n.hosts = append(n.hosts, h)
	}
	t.Logf("HOSTS: %d network namespaces on a bridge in %s, uplink %s (%s.0/24): %s", len(names), n.sw, n.uplink, n.subnet, n.describe())
	return n
}

// hostsTestLimit bounds one test on hosts (ROCKETGO_HOSTS_LIMIT, default
// 6 min: the Apache failover takes ~1.5 min).
func hostsTestLimit(t *testing.T) time.Duration {
	if v := os.Getenv("ROCKETGO_HOSTS_LIMIT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("ROCKETGO_HOSTS_LIMIT=%q: %v", v, err)
		}
		return d
	}
	return 6 * time.Minute
}

// watchdog fails the test once it has run past its limit and kills every
// process on its hosts, so that whatever the test waits for ends now
// rather than at go test's global timeout (which kills the whole run
// without cleanups: namespaces and servers would be left behind).
func (n *hostNet) watchdog(t *testing.T) {
	limit := hostsTestLimit(t)
	timer := time.AfterFunc(limit, func() {
		t.Errorf("HOSTS: test still running after %s: killing its servers", limit)
		for _, h := range n.hosts {
			h.mu.Lock()
			procs := append([]*proc(nil), h.procs...)
			h.mu.Unlock()
			for _, p := range procs {
				_ = p.cmd.Process.Signal(syscall.SIGKILL)
			}
		}
	})
	t.Cleanup(func() { timer.Stop() })
}

func (n *hostNet) describe() string {
	var parts []string
	for _, h := range n.hosts {
		parts = append(parts, h.name+"="+h.ip)
	}
	return strings.Join(parts, " ")
}

func (n *hostNet) host(name string) *host {
	for _, h := range n.hosts {
		if h.name == name {
			return h
		}
	}
	n.t.Fatalf("no host %q", name)
	return nil
}

// teardown deletes the hosts' namespaces (their veth pairs go with them)
// and the switch namespace (the bridge and the uplink go with it).
// Processes still inside were stopped by earlier cleanups (t.Cleanup runs
// last-in first-out, the network is made first).
func (n *hostNet) teardown() {
	for _, h := range n.hosts {
		if h.ns != "" {
			_ = exec.Command("ip", "netns", "del", h.ns).Run()
		}
	}
	if n.sw != "" {
		_ = exec.Command("ip", "netns", "del", n.sw).Run()
	}
}

// start runs bin on the host (ip netns exec execs it: the pid is the
// server's own, so kill -9 hits the server).
func (h *host) start(name, bin string, args []string, logPath string) (*proc, error) {
	if h.ns != "" {
		args = append([]string{"netns", "exec", h.ns, bin}, args...)
		bin = "ip"
	}
	p, err := startProc(name+"@"+h.name, bin, args, logPath)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.procs = append(h.procs, p)
	h.mu.Unlock()
	return p, nil
}

// cut isolates the host: nothing goes in or out until restore.
func (h *host) cut(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.isCut {
		return
	}
	h.isCut = true
	if h.ns != "" {
		if err := runIP("-n", h.net.sw, "link", "set", "dev", h.veth, "down"); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, p := range h.procs {
		if !p.exited() {
			_ = p.cmd.Process.Signal(syscall.SIGSTOP)
		}
	}
}

func (h *host) restore(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.isCut {
		return
	}
	h.isCut = false
	if h.ns != "" {
		if err := runIP("-n", h.net.sw, "link", "set", "dev", h.veth, "up"); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, p := range h.procs {
		if !p.exited() {
			_ = p.cmd.Process.Signal(syscall.SIGCONT)
		}
	}
}

// ---------------------------------------------------------------------------
// servers on hosts: rocketgo or the Apache reference (reference/run.sh)

func referenceScript(t *testing.T) string {
	t.Helper()
	s, err := filepath.Abs(filepath.Join("reference", "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// hostNamesrv is a name server on a host.
type hostNamesrv struct {
	kind string
	h    *host
	port int
	addr string
	dir  string
	p    *proc
}

func startHostNamesrv(t *testing.T, h *host, kind, name string) *hostNamesrv {
	t.Helper()
	port, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	s := &hostNamesrv{kind: kind, h: h, port: port, addr: fmt.Sprintf("%s:%d", h.ip, port), dir: filepath.Join(h.net.dir, name)}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(s.dir, "namesrv.log")
	timeout := readyTimeout
	switch kind {
	case "apache":
		requireJava(t)
		s.p, err = h.start("apache-namesrv", referenceScript(t), []string{"namesrv", strconv.Itoa(port), s.dir}, log)
		timeout = 90 * time.Second
	default:
		conf := filepath.Join(s.dir, "namesrv.properties")
		if err := os.WriteFile(conf, []byte(fmt.Sprintf("listenPort=%d\nkvConfigPath=%s\n", port, filepath.Join(s.dir, "kvConfig.json"))), 0o644); err != nil {
			t.Fatal(err)
		}
		s.p, err = h.start("mqnamesrv", filepath.Join(binDir, "mqnamesrv"), []string{"-c", conf}, log)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.restore(t) // a stopped (loopback cut) process cannot take SIGTERM
		termProc(s.p, 30*time.Second)
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("----- tail of %s -----\n%s", log, tailFile(log, 30))
		}
	})
	if err := waitTCP(s.p, s.addr, timeout); err != nil {
		t.Fatal(err)
	}
	return s
}

// hostBroker is a broker on a host; its configuration is Apache's keys for
// both kinds.
type hostBroker struct {
	kind    string
	h       *host
	name    string // process label: master, slave
	dir     string
	port    int
	addr    string
	nsAddrs string // "a;b"
	props   string // the role's and the test's lines
	p       *proc
	starts  int
}

// haTimingProps shortens Apache's replication intervals for tests (same keys
// for both kinds): reports and heartbeats every second, an idle HA
// connection dropped after 6 s, registration every 10 s (Apache's minimum),
// the slave's metadata copy every second.
const haTimingProps = "haSendHeartbeatInterval=1000\nhaHousekeepingInterval=6000\nslaveTimeout=3000\nregisterNameServerPeriod=10000\n" +
	"slaveSynchronizePeriod=1000\n" // rocketgo's key (Apache: fixed 60 s in 5.x), so a slave learns new topics soon

func newHostBroker(t *testing.T, h *host, kind, name, brokerName string, id int, role string, nsAddrs []string, extra string) *hostBroker {
	t.Helper()
	port, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	b := &hostBroker{kind: kind, h: h, name: name, dir: filepath.Join(h.net.dir, name), port: port,
		addr: fmt.Sprintf("%s:%d", h.ip, port), nsAddrs: strings.Join(nsAddrs, ";")}
	if err := os.MkdirAll(filepath.Join(b.dir, "store"), 0o755); err != nil {
		t.Fatal(err)
	}
	b.props = fmt.Sprintf(`brokerClusterName=%s
brokerName=%s
brokerId=%d
brokerRole=%s
listenPort=%d
haListenPort=%d
namesrvAddr=%s
brokerIP1=%s
brokerIP2=%s
storePathRootDir=%s
storePathCommitLog=%s
flushDiskType=ASYNC_FLUSH
autoCreateTopicEnable=true
mappedFileSizeCommitLog=67108864
diskMaxUsedSpaceRatio=99
slaveReadEnable=true
`, clusterName, brokerName, id, role, port, port+1, b.nsAddrs, h.ip, h.ip,
		filepath.Join(b.dir, "store"), filepath.Join(b.dir, "store", "commitlog")) + haTimingProps
	if kind == "apache" && role == "SYNC_MASTER" {
		// 5.x waits for a slave only with inSyncReplicas >= 2 (the master
		// counts as one); 4.9.8 and rocketgo wait for one slave by role.
		b.props += "inSyncReplicas=2\n"
	}
	b.props += extra
	t.Cleanup(func() {
		if b.p != nil {
			h.restore(t)
			termProc(b.p, 60*time.Second)
		}
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("----- tail of %s broker.log -----\n%s", b.name, tailFile(filepath.Join(b.dir, "broker.log"), 40))
		}
	})
	return b
}

// start (re)starts the broker on its store and waits until it answers and a
// name server routes TBW102 to it.
func (b *hostBroker) start(t *testing.T) {
	t.Helper()
	if err := b.startErr(); err != nil {
		t.Fatalf("start %s broker %s on %s: %v", b.kind, b.name, b.h.name, err)
	}
}

func (b *hostBroker) startErr() error {
	b.starts++
	log := filepath.Join(b.dir, "broker.log")
	label := fmt.Sprintf("%s-%s#%d", b.kind, b.name, b.starts)
	timeout := readyTimeout
	var err error
	switch b.kind {
	case "apache":
		// run.sh writes its own broker.properties and appends
		// broker.extra.properties (later keys win).
		if err := os.WriteFile(filepath.Join(b.dir, "broker.extra.properties"), []byte(b.props), 0o644); err != nil {
			return err
		}
		script, err2 := filepath.Abs(filepath.Join("reference", "run.sh"))
		if err2 != nil {
			return err2
		}
		b.p, err = b.h.start(label, script, []string{"broker", strconv.Itoa(b.port), b.nsAddrs, b.dir, clusterName}, log)
		timeout = 90 * time.Second
	default:
		conf := filepath.Join(b.dir, "broker.properties")
		if err := os.WriteFile(conf, []byte(b.props), 0o644); err != nil {
			return err
		}
		b.p, err = b.h.start(label, filepath.Join(binDir, "mqbroker"), []string{"-c", conf}, log)
	}
	if err != nil {
		return err
	}
	if err := waitTCP(b.p, b.addr, timeout); err != nil {
		return err
	}
	nsAddr := strings.Split(b.nsAddrs, ";")[0]
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		if b.p.exited() {
			return fmt.Errorf("exited during start-up: %v\n%s", b.p.waitErr, tailFile(log, 30))
		}
		code, rd, remark, err := queryRoute(nsAddr, "TBW102")
		switch {
		case err != nil:
			last = err.Error()
		case code != 0:
			last = fmt.Sprintf("code %d %s", code, remark)
		case !rd.hasBroker(b.addr):
			last = "TBW102 route without " + b.addr + ": " + rd.raw
		default:
			// After a kill -9 the name server may still hold the old
			// registration: the new process must answer too.
			if resp, err := rawInvoke(b.addr, javaRequest(28, nil, nil), 5*time.Second); err == nil && resp.Code == 0 {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("not routed within %s: %s", timeout, last)
}

// kill is kill -9 of the host's broker.
func (b *hostBroker) kill() {
	if b.p != nil {
		killProc(b.p)
	}
}

// wipe deletes the broker's store (stopped broker).
func (b *hostBroker) wipe(t *testing.T) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(b.dir, "store")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(b.dir, "store"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// haPair is a name server host, a master host and a slave host.
type haPair struct {
	kind          string // "<master's kind>/<slave's kind>", each rocketgo or apache
	net           *hostNet
	ns            *hostNamesrv
	master, slave *hostBroker
	c             *cluster // for the client helpers: nsAddr, brokerAddr = master
	brokerName    string
}

// startHAPair starts a name server, a master (role SYNC_MASTER or
// ASYNC_MASTER) and its slave of the given kinds on three hosts.
func startHAPair(t *testing.T, masterKind, slaveKind, role, extra string) *haPair {
	t.Helper()
	n := newHostNet(t, "ns", "master", "slave")
	nsKind := masterKind
	pr := &haPair{kind: masterKind + "/" + slaveKind, net: n, brokerName: uniq("ha")}
	began := time.Now()
	pr.ns = startHostNamesrv(t, n.host("ns"), nsKind, "namesrv")
	pr.master = newHostBroker(t, n.host("master"), masterKind, "master", pr.brokerName, 0, role, []string{pr.ns.addr}, extra)
	pr.slave = newHostBroker(t, n.host("slave"), slaveKind, "slave", pr.brokerName, 1, "SLAVE", []string{pr.ns.addr}, extra)
	pr.master.start(t)
	pr.slave.start(t)
	pr.c = &cluster{name: pr.brokerName, dir: n.dir, nsAddr: pr.ns.addr, brokerAddr: pr.master.addr, brokerName: pr.brokerName}
	t.Logf("HA pair %s (%s) up in %.1fs: namesrv %s, master %s, slave %s", pr.kind, role,
		time.Since(began).Seconds(), pr.ns.addr, pr.master.addr, pr.slave.addr)
	return pr
}
