package compattest

// The controller embedded in mqnamesrv (enableControllerInNamesrv=true):
// three name servers, each with a controller on its own port,
// elect a controller leader; a broker set registers and elects its master
// through the leader (raw Remoting, as an Apache broker in controller mode
// sends it); kill -9 of the leading name server leaves the others leading
// with the same state while they still serve routes; the killed one comes
// back and follows. A few seconds, no JVM.

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestControllerInNamesrv(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(workDir, "ctl-in-ns")
	var nsAddrs, ctlAddrs, peers []string
	for i := range 3 {
		np, err := pickPort()
		if err != nil {
			t.Fatal(err)
		}
		cp, err := pickPort() // cp+1 is free too: the raft port
		if err != nil {
			t.Fatal(err)
		}
		nsAddrs = append(nsAddrs, fmt.Sprintf("127.0.0.1:%d", np))
		ctlAddrs = append(ctlAddrs, fmt.Sprintf("127.0.0.1:%d", cp))
		peers = append(peers, fmt.Sprintf("n%d-127.0.0.1:%d", i, cp))
	}
	procs := make([]*proc, 3)
	start := func(i int) {
		t.Helper()
		d := filepath.Join(dir, fmt.Sprintf("ns%d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		conf := filepath.Join(d, "namesrv.properties")
		_, port, _ := net.SplitHostPort(nsAddrs[i])
		if err := os.WriteFile(conf, []byte(fmt.Sprintf(`listenPort=%s
kvConfigPath=%s
enableControllerInNamesrv=true
controllerDLegerGroup=nsgroup
controllerDLegerPeers=%s
controllerDLegerSelfId=n%d
controllerStorePath=%s
`, port, filepath.Join(d, "kvConfig.json"), strings.Join(peers, ";"), i, filepath.Join(d, "controller"))), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := startProc(fmt.Sprintf("mqnamesrv-ctl%d", i), filepath.Join(binDir, "mqnamesrv"), []string{"-c", conf}, filepath.Join(d, "namesrv.log"))
		if err != nil {
			t.Fatal(err)
		}
		procs[i] = p
		for _, a := range []string{nsAddrs[i], ctlAddrs[i]} {
			if err := waitTCP(p, a, readyTimeout); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 3 {
		start(i)
	}
	t.Cleanup(func() {
		for i, p := range procs {
			if p != nil {
				p.stop()
				if t.Failed() {
					t.Logf("tail of ns%d:\n%s", i, tailFile(p.logPath, 20))
				}
			}
		}
	})
	leader := func() int {
		t.Helper()
		at := -1
		if !waitFor(t, 20*time.Second, func() bool {
			for i, a := range ctlAddrs {
				if procs[i] == nil {
					continue
				}
				r, err := rawInvoke(a, javaRequest(1005, nil, nil), 2*time.Second)
				if err == nil && r.ExtFields["isLeader"] == "true" {
					// Serving: a read is answered, not CONTROLLER_NOT_LEADER.
					if rr, err := rawInvoke(a, javaRequest(1004, map[string]string{"brokerName": "nsset"}, nil), 2*time.Second); err == nil && rr.Code != 2007 {
						at = i
						return true
					}
				}
			}
			return false
		}) {
			t.Fatal("no embedded controller leads")
		}
		return at
	}
	li := leader()
	for i, a := range nsAddrs {
		if r, err := rawInvoke(a, javaRequest(106, nil, nil), 3*time.Second); err != nil || r.Code != 0 {
			t.Fatalf("name server %d does not answer cluster info: %v %+v", i, err, r)
		}
	}

	// One broker of set nsset: id, heartbeats on connections kept open to
	// every controller, registration, first election.
	conns := make([]net.Conn, 3)
	for i, a := range ctlAddrs {
		c, err := net.DialTimeout("tcp", a, 3*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
		defer c.Close()
	}
	set := map[string]string{"clusterName": "c", "brokerName": "nsset"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{"clusterName": "c", "brokerName": "nsset"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	call := func(i int, code int, ext map[string]string) *rawCmd {
		t.Helper()
		r, err := invokeOn(conns[i], javaRequest(code, ext, nil), 5*time.Second)
		if err != nil {
			t.Fatalf("code %d to controller %d: %v", code, i, err)
		}
		return r
	}
	if r := call(li, 1012, set); r.Code != 0 || r.ExtFields["nextBrokerId"] != "1" {
		t.Fatalf("next id: %+v", r)
	}
	if r := call(li, 1013, with("appliedBrokerId", "1", "registerCheckCode", "127.0.0.1:1;1")); r.Code != 0 {
		t.Fatalf("apply id: %+v", r)
	}
	for i := range conns {
		if r := call(i, 904, with("brokerAddr", "127.0.0.1:1", "brokerId", "1", "heartbeatTimeoutMills", "60000")); r.Code != 0 {
			t.Fatalf("heartbeat to %d: %+v", i, r)
		}
	}
	if r := call(li, 1003, with("brokerId", "1", "brokerAddress", "127.0.0.1:1")); r.Code != 0 {
		t.Fatalf("register: %+v", r)
	}
	if r := call(li, 1002, with("brokerId", "1", "designateElect", "false")); r.Code != 0 || r.ExtFields["masterBrokerId"] != "1" {
		t.Fatalf("elect: %+v", r)
	}

	// kill -9 of the leading name server: another controller leads with the
	// same master and epoch; the broker is still alive there.
	conns[li].Close()
	_ = procs[li].cmd.Process.Kill()
	<-procs[li].done
	procs[li].logFile.Close()
	procs[li] = nil
	old := li
	killed := time.Now()
	li = leader()
	took := time.Since(killed)
	r := call(li, 1004, map[string]string{"brokerName": "nsset"})
	if r.Code != 0 || r.ExtFields["masterBrokerId"] != "1" || r.ExtFields["masterEpoch"] != "1" {
		t.Fatalf("replica info on the new leader: %+v", r)
	}
	if r := call(li, 1002, with("brokerId", "1", "designateElect", "false")); r.Code != 2011 {
		t.Fatalf("elect on the new leader: %d %s", r.Code, r.Remark)
	}

	// The killed name server comes back with its files and follows.
	start(old)
	if !waitFor(t, 20*time.Second, func() bool {
		r, err := rawInvoke(ctlAddrs[old], javaRequest(1005, nil, nil), 2*time.Second)
		return err == nil && r.ExtFields["controllerLeaderAddress"] == ctlAddrs[li] && r.ExtFields["isLeader"] == "false"
	}) {
		t.Fatal("restarted name server's controller does not follow the leader")
	}
	t.Logf("leading name server killed: controller leader n%d serving again after %v", li, took.Round(time.Millisecond))
}
