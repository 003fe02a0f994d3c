package compattest

// Controllers and brokers configured by host name, as in Kubernetes
// (controllerDLegerPeers, controllerAddr and namesrvAddr naming a headless
// service's pods), with a controller whose pod restarts under the same name
// on another IP. Every process runs in a mount namespace of its own whose
// /etc/hosts is a file of the test (unshare --mount, a bind mount; root):
// rewriting it moves a name for all of them, as a DNS record update does.

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// nameHosts is the /etc/hosts the test's processes see.
type nameHosts struct {
	path  string
	mu    sync.Mutex
	names map[string]string // name → IP
}

// newNameHosts makes the file, or skips the test where a mount namespace
// cannot be made.
func newNameHosts(t *testing.T) *nameHosts {
	t.Helper()
	h := &nameHosts{path: filepath.Join(t.TempDir(), "hosts"), names: map[string]string{}}
	h.write(t)
	if out, err := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c",
		`mount --bind "$0" /etc/hosts`, h.path).CombinedOutput(); err != nil {
		t.Skipf("no mount namespace for a private /etc/hosts (root and unshare needed): %v %s", err, out)
	}
	return h
}

// set points name at ip. The file is rewritten in place: the bind mounts
// hold its inode.
func (h *nameHosts) set(t *testing.T, name, ip string) {
	t.Helper()
	h.mu.Lock()
	h.names[name] = ip
	h.mu.Unlock()
	h.write(t)
}

func (h *nameHosts) write(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	var names []string
	for n := range h.names {
		names = append(names, n)
	}
	sort.Strings(names)
	b := []byte("127.0.0.1 localhost\n")
	for _, n := range names {
		b = fmt.Appendf(b, "%s %s\n", h.names[n], n)
	}
	if err := os.WriteFile(h.path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// start runs bin with this /etc/hosts.
func (h *nameHosts) start(name, bin string, args []string, log string) (*proc, error) {
	return startProc(name, "unshare", append([]string{"--mount", "--propagation", "private", "sh", "-c",
		`mount --bind "$0" /etc/hosts && exec "$@"`, h.path, bin}, args...), log)
}

// TestControllerHostNames: three controllers that know each other by name,
// a name server and three rocketgo brokers that know them by name. Two
// controllers stop and come back on other IPs under their names; the one
// that stayed must let their raft connections in (it looks the names up
// again) — before, it had resolved them once at start and refused them for
// good. The group then agrees on one leader, and through it the brokers
// fail over: the master killed, another elected, the killed one back in
// sync.
func TestControllerHostNames(t *testing.T) {
	hosts := newNameHosts(t)
	t.Parallel()
	name := uniq("hostnames")
	dir := filepath.Join(workDir, name)
	ips := []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}
	var ports []int
	var peers []string
	for i := range 3 {
		p, err := pickPort()
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, p)
		hosts.set(t, fmt.Sprintf("ctl%d.rocketgo.test", i), ips[i])
		peers = append(peers, fmt.Sprintf("n%d-ctl%d.rocketgo.test:%d", i, i, p))
	}
	// The test process reads no private /etc/hosts: it talks to the
	// controllers at their IPs.
	g := &ctlGroup{t: t, bin: controllerBin(t), dir: dir, procs: make([]*proc, 3)}
	for i := range 3 {
		g.addrs = append(g.addrs, fmt.Sprintf("%s:%d", ips[i], ports[i]))
	}
	start := func(i int) {
		t.Helper()
		d := filepath.Join(dir, fmt.Sprintf("n%d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		conf := filepath.Join(d, "controller.conf")
		if err := os.WriteFile(conf, []byte(fmt.Sprintf("controllerDLegerGroup=%s\ncontrollerDLegerPeers=%s\ncontrollerDLegerSelfId=n%d\n"+
			"controllerStorePath=%s\nconfigStorePath=%s\n", name, strings.Join(peers, ";"), i, d, filepath.Join(d, "controller.properties"))), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := hosts.start(fmt.Sprintf("controller-n%d", i), g.bin, []string{"-c", conf}, filepath.Join(d, "controller.log"))
		if err != nil {
			t.Fatal(err)
		}
		g.procs[i] = p
		if err := waitTCP(p, g.addrs[i], readyTimeout); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		start(i)
	}
	t.Cleanup(func() {
		for i, p := range g.procs {
			if p != nil {
				p.stop()
			}
			if t.Failed() {
				t.Logf("tail of controller n%d:\n%s", i, tailFile(filepath.Join(dir, fmt.Sprintf("n%d", i), "controller.log"), 30))
			}
		}
	})
	// leaders is each controller's answer to who leads (its id): they
	// name their peers by host name, which this process does not resolve.
	leaders := func() []string {
		var ids []string
		for _, a := range g.addrs {
			resp, err := rawInvoke(a, javaRequest(1005, nil, nil), 2*time.Second)
			if err != nil || resp.Code != 0 || resp.ExtFields["controllerLeaderId"] == "" {
				return nil
			}
			ids = append(ids, resp.ExtFields["controllerLeaderId"])
		}
		return ids
	}
	agree := func() bool {
		ids := leaders()
		return len(ids) == 3 && ids[0] == ids[1] && ids[1] == ids[2]
	}
	if !waitFor(t, 60*time.Second, agree) {
		t.Fatalf("the controllers never agreed on a leader: %v", leaders())
	}
	state := func() ctlSyncState {
		for i := range g.addrs {
			if s, err := g.syncState(i); err == nil {
				return s
			}
		}
		return ctlSyncState{}
	}

	c, err := startNamesrvConf(name+"-ns", "")
	if c != nil {
		t.Cleanup(c.stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	_, nsPort, _ := strings.Cut(c.nsAddr, ":")
	hosts.set(t, "ns.rocketgo.test", "127.0.0.1")
	var ctlNames []string
	for i := range 3 {
		ctlNames = append(ctlNames, fmt.Sprintf("ctl%d.rocketgo.test:%d", i, ports[i]))
	}
	startBroker := func(i, port int) *ctlBroker {
		bdir := filepath.Join(workDir, fmt.Sprintf("%s-b%d", name, i))
		if err := os.MkdirAll(bdir, 0o755); err != nil {
			t.Fatal(err)
		}
		conf := filepath.Join(bdir, "broker.properties")
		if err := os.WriteFile(conf, []byte(goCtlBrokerConf(bdir, "127.0.0.1", port, "ns.rocketgo.test:"+nsPort, strings.Join(ctlNames, ";"))), 0o644); err != nil {
			t.Fatal(err)
		}
		bname := filepath.Base(bdir)
		p, err := hosts.start(bname, filepath.Join(binDir, "mqbroker"), []string{"-c", conf}, filepath.Join(bdir, "broker.log"))
		if err != nil {
			t.Fatal(err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		if err := waitTCP(p, addr, readyTimeout); err != nil {
			t.Fatalf("%s: %v\n%s", bname, err, tailFile(filepath.Join(bdir, "broker.log"), 30))
		}
		t.Cleanup(func() {
			p.stop()
			if t.Failed() {
				t.Logf("tail of %s:\n%s", bname, tailFile(filepath.Join(bdir, "broker.log"), 40))
			}
		})
		return &ctlBroker{name: bname, addr: addr, p: p}
	}
	r, bports := newGoCtlRigOn(t, c, state, startBroker)
	r.g = g

	// Two controllers stop and come back on other IPs under their names.
	moved := []int{1, 2}
	newIPs := []string{"127.0.0.6", "127.0.0.7"}
	for k, i := range moved {
		g.procs[i].stop()
		g.procs[i] = nil
		hosts.set(t, fmt.Sprintf("ctl%d.rocketgo.test", i), newIPs[k])
		g.addrs[i] = fmt.Sprintf("%s:%d", newIPs[k], ports[i])
	}
	movedAt := time.Now()
	for _, i := range moved {
		start(i)
	}
	// All three name the same leader, and the one that stayed lets the
	// moved ones in: a connection to its raft port from a moved
	// controller's new address is kept (once it looked the names up again;
	// Go reads the hosts file again after 5 s at most), not closed. Raft
	// alone would not show it: with the others refused, the one that
	// stayed may win the next election and lead them by its own dials.
	if !waitFor(t, 60*time.Second, agree) {
		t.Fatalf("the controllers never agreed on a leader after two moved: %v", leaders())
	}
	raft0 := fmt.Sprintf("%s:%d", ips[0], ports[0]+1)
	if !waitFor(t, 30*time.Second, func() bool { return raftKeeps(raft0, newIPs[0]) }) {
		t.Fatalf("controller n0 closes raft connections from %s, ctl1's new address:\n%s", newIPs[0],
			tailFile(filepath.Join(dir, "n0", "controller.log"), 20))
	}
	if !raftKeeps(raft0, newIPs[1]) {
		t.Fatalf("controller n0 closes raft connections from %s, ctl2's new address", newIPs[1])
	}

	// The brokers reach the moved controllers by name: a failover.
	old := r.bs[slices.IndexFunc(r.bs, func(b *ctlBroker) bool { return b.addr == state().masterAddr })]
	killAt := time.Now()
	_ = old.p.cmd.Process.Kill() // SIGKILL: its connections close at once
	<-old.p.done
	var newMaster string
	if !waitFor(t, 60*time.Second, func() bool {
		newMaster = state().masterAddr
		return newMaster != "" && newMaster != old.addr
	}) {
		t.Fatalf("no new master after the kill: %+v", state())
	}
	elected := time.Since(killAt)
	i := slices.Index(r.bs, old)
	r.bs[i] = startBroker(i, bports[i])
	if !waitFor(t, 90*time.Second, func() bool {
		s := state()
		return s.masterAddr == newMaster && len(s.inSync) == 3
	}) {
		t.Fatalf("the killed master never back in sync: %+v", state())
	}
	report(t, movedAt, 0, 0, fmt.Sprintf("elected=%s", elected.Round(time.Millisecond)))
}

// raftKeeps reports whether a controller's raft port keeps a connection
// from ip open (a peer's), rather than closing it (a stranger's).
func raftKeeps(raftAddr, ip string) bool {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 2 * time.Second}
	c, err := d.Dial("tcp", raftAddr)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	var one [1]byte
	_, err = c.Read(one[:])
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
