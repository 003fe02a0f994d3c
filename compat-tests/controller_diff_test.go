package compattest

// The controller codes differentially: one script of broker and
// admin requests — registration, first election, SyncStateSet changes,
// fencing, refusals, hostile headers and bodies, a master whose connection
// closes — sent to Apache 5.3.3's controller (ControllerStartup, DLedger,
// one node) and to a rocketgo mqcontroller (raft, one node). Every answer
// must carry the same code, the same header fields and the same body; the
// remark too, except where Apache's is a Java exception's text. Enabled by
// ROCKETGO_JAVA=1 and ROCKETGO_CONTROLLER=1 (make test-controller).

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// ctlTarget is one controller under test and the script's connections.
type ctlTarget struct {
	name  string
	addr  string
	conns map[string]net.Conn // a fake broker's connection: its heartbeats' channel
}

func startCtlTarget(t *testing.T, name string, apache bool) *ctlTarget {
	t.Helper()
	port, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(workDir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	conf := filepath.Join(dir, "controller.conf")
	// configStorePath in the target's dir: both write it on "update a key".
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("controllerDLegerGroup=diff\ncontrollerDLegerPeers=n0-%s\ncontrollerDLegerSelfId=n0\ncontrollerStorePath=%s\n"+
		"configStorePath=%s\n", addr, filepath.Join(dir, "store"), filepath.Join(dir, "controller.properties"))), 0o644); err != nil {
		t.Fatal(err)
	}
	var p *proc
	if apache {
		script, err := filepath.Abs(filepath.Join("reference", "run.sh"))
		if err != nil {
			t.Fatal(err)
		}
		p, err = startProc(name, script, []string{"controller", conf, dir}, filepath.Join(dir, "controller.log"))
		if err != nil {
			t.Fatal(err)
		}
	} else {
		p, err = startProc(name, controllerBin(t), []string{"-c", conf}, filepath.Join(dir, "controller.log"))
		if err != nil {
			t.Fatal(err)
		}
	}
	ct := &ctlTarget{name: name, addr: addr, conns: map[string]net.Conn{}}
	t.Cleanup(func() {
		for _, c := range ct.conns {
			c.Close()
		}
		p.stop()
		if t.Failed() {
			t.Logf("tail of %s:\n%s", name, tailFile(p.logPath, 30))
		}
	})
	if err := waitTCP(p, addr, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	// Serving once it leads: a read answers something else than NOT_LEADER.
	if !waitFor(t, 60*time.Second, func() bool {
		r, err := rawInvoke(addr, javaRequest(1004, map[string]string{"brokerName": "warmup"}, nil), 2*time.Second)
		return err == nil && r.Code != 2007
	}) {
		t.Fatalf("%s never led", name)
	}
	return ct
}

// call sends req on the fake broker's connection (dialled on first use), or
// on a fresh one when broker is "".
func (ct *ctlTarget) call(t *testing.T, broker string, req *rawCmd) *rawCmd {
	t.Helper()
	if broker == "" {
		r, err := rawInvoke(ct.addr, req, 5*time.Second)
		if err != nil {
			t.Fatalf("%s: code %d: %v", ct.name, req.Code, err)
		}
		return r
	}
	c := ct.conns[broker]
	if c == nil {
		var err error
		if c, err = net.DialTimeout("tcp", ct.addr, 3*time.Second); err != nil {
			t.Fatal(err)
		}
		ct.conns[broker] = c
	}
	r, err := invokeOn(c, req, 5*time.Second)
	if err != nil {
		t.Fatalf("%s: code %d: %v", ct.name, req.Code, err)
	}
	return r
}

var bareIDKey = regexp.MustCompile(`([{,])(-?\d+):`)

// ctlStep is one request of the script.
type ctlStep struct {
	name   string
	broker string // connection to send on ("": a fresh one)
	code   int
	ext    map[string]string
	body   string
	// exceptionText: Apache answers with a Java exception's text; only the
	// code is compared.
	exceptionText bool
	// ownBody: the body lists each controller's own configuration; only
	// code and remark are compared.
	ownBody bool
	// close: close this broker's connection instead of sending (the
	// controller sees the broker die) and wait for the election.
	close string
}

// describe is an answer as compared: code, remark, sorted header fields
// with the controllers' own addresses masked, body.
func (ct *ctlTarget) describe(r *rawCmd, withRemark, withBody bool) string {
	var keys []string
	for k := range r.ExtFields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "code=%d", r.Code)
	if withRemark {
		fmt.Fprintf(&b, " remark=%q", r.Remark)
	}
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%s", k, strings.ReplaceAll(r.ExtFields[k], ct.addr, "CTL"))
	}
	if withBody {
		// rocketgo quotes the elect body's member ids where Apache leaves
		// them bare (controller/body.go): compared as quoted.
		fmt.Fprintf(&b, " body=%s", bareIDKey.ReplaceAll(r.Body, []byte(`$1"$2":`)))
	}
	return b.String()
}

func TestControllerDifferential(t *testing.T) {
	requireJava(t)
	if os.Getenv("ROCKETGO_CONTROLLER") == "" {
		t.Skip("runs with ROCKETGO_CONTROLLER=1 (make test-controller)")
	}
	t.Parallel()
	targets := []*ctlTarget{startCtlTarget(t, "ctl-diff-apache", true), startCtlTarget(t, "ctl-diff-rocketgo", false)}

	// Fake brokers: their addresses take no connections (a notification
	// to them fails at once, on both controllers).
	const a1, a2, a3 = "127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"
	hb := func(broker, addr, id string, epoch, maxOffset int) ctlStep {
		return ctlStep{name: "heartbeat " + broker, broker: broker, code: 904, ext: map[string]string{"clusterName": "dc", "brokerName": "ds",
			"brokerAddr": addr, "brokerId": id, "epoch": fmt.Sprint(epoch), "maxOffset": fmt.Sprint(maxOffset), "confirmOffset": "0",
			"heartbeatTimeoutMills": "60000", "electionPriority": "2147483647"}}
	}
	ds := map[string]string{"clusterName": "dc", "brokerName": "ds"}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	alter := func(masterID, masterEpoch, syncEpoch string, ids string) ctlStep {
		return ctlStep{name: fmt.Sprintf("alter master %s epoch %s set epoch %s [%s]", masterID, masterEpoch, syncEpoch, ids), broker: "b1", code: 1001,
			ext:  map[string]string{"brokerName": "ds", "masterBrokerId": masterID, "masterEpoch": masterEpoch, "invokeTime": "1"},
			body: fmt.Sprintf(`{"syncStateSet":[%s],"syncStateSetEpoch":%s}`, ids, syncEpoch)}
	}
	steps := []ctlStep{
		{name: "replica info of an unknown set", code: 1004, ext: map[string]string{"brokerName": "ds"}},
		{name: "next id of an unknown set", code: 1012, ext: ds},
		{name: "apply id 2 first", code: 1013, ext: with(ds, "appliedBrokerId", "2", "registerCheckCode", a2+";1")},
		{name: "register an unknown set", code: 1003, ext: with(ds, "brokerId", "1", "brokerAddress", a1, "invokeTime", "1")},
		{name: "elect in an unknown set", code: 1002, ext: with(ds, "brokerId", "1", "designateElect", "false", "invokeTime", "1")},
		{name: "apply id 1", code: 1013, ext: with(ds, "appliedBrokerId", "1", "registerCheckCode", a1+";1")},
		{name: "replica info before any master", code: 1004, ext: map[string]string{"brokerName": "ds"}},
		{name: "next id after one", code: 1012, ext: ds},
		hb("b1", a1, "1", 0, 0),
		{name: "register id 1", broker: "b1", code: 1003, ext: with(ds, "brokerId", "1", "brokerAddress", a1, "invokeTime", "1")},
		{name: "first election", broker: "b1", code: 1002, ext: with(ds, "brokerId", "1", "designateElect", "false", "invokeTime", "1")},
		{name: "apply a taken id", code: 1013, ext: with(ds, "appliedBrokerId", "1", "registerCheckCode", a3+";9")},
		{name: "apply id 2", code: 1013, ext: with(ds, "appliedBrokerId", "2", "registerCheckCode", a2+";1")},
		hb("b2", a2, "2", 0, 0),
		{name: "register id 2", broker: "b2", code: 1003, ext: with(ds, "brokerId", "2", "brokerAddress", a2, "invokeTime", "1")},
		{name: "register id 2 at a new address", broker: "b2", code: 1003, ext: with(ds, "brokerId", "2", "brokerAddress", a3, "invokeTime", "1")},
		{name: "register id 2 back", broker: "b2", code: 1003, ext: with(ds, "brokerId", "2", "brokerAddress", a2, "invokeTime", "1")},
		{name: "elect while the master lives", broker: "b2", code: 1002, ext: with(ds, "brokerId", "2", "designateElect", "false", "invokeTime", "1")},
		alter("1", "1", "1", "1"),
		alter("2", "1", "1", "1,2"),
		alter("1", "0", "1", "1,2"),
		alter("1", "1", "0", "1,2"),
		alter("1", "1", "1", "1,7"),
		alter("1", "1", "1", "2"),
		alter("1", "1", "1", "1,2"),
		{name: "sync state data", code: 1006, body: `["ds","nope","ds"]`},
		{name: "clean a living broker", code: 1011, ext: with(ds, "brokerControllerIdsToClean", "2")},
		{name: "clean a whole living set", code: 1011, ext: ds},
		{name: "clean with bad ids", code: 1011, ext: with(ds, "brokerControllerIdsToClean", "1;x")},
		{name: "clean an unknown set", code: 1011, ext: map[string]string{"clusterName": "dc", "brokerName": "nope", "brokerControllerIdsToClean": "5"}},
		{name: "heartbeat without id", code: 904, ext: map[string]string{"clusterName": "dc", "brokerName": "ds", "brokerAddr": a3}},
		{name: "heartbeat without cluster", code: 904, ext: map[string]string{"brokerName": "ds", "brokerAddr": a3, "brokerId": "3"}, exceptionText: true},
		{name: "alter without body", code: 1001, ext: map[string]string{"brokerName": "ds", "masterBrokerId": "1", "masterEpoch": "1"}, exceptionText: true},
		{name: "alter with bad json", code: 1001, ext: map[string]string{"brokerName": "ds", "masterBrokerId": "1", "masterEpoch": "1"}, body: `{"syncStateSet":[1,`, exceptionText: true},
		{name: "elect with an overflowing id", code: 1002, ext: with(ds, "brokerId", "99999999999999999999", "designateElect", "false"), exceptionText: true},
		{name: "sync state data without body", code: 1006},
		{name: "epoch cache on a controller", code: 1007},
		{name: "admin elects a dead id", code: 1002, ext: with(ds, "brokerId", "3", "designateElect", "true", "invokeTime", "1")},
		{name: "master's connection closes", close: "b1"},
		{name: "replica info after the master died", code: 1004, ext: map[string]string{"brokerName": "ds"}},
		{name: "sync state data after the master died", code: 1006, body: `["ds"]`},
		{name: "admin elects the dead old master", code: 1002, ext: with(ds, "brokerId", "1", "designateElect", "true", "invokeTime", "1")},
		{name: "clean the dead old master", code: 1011, ext: with(ds, "brokerControllerIdsToClean", "1")},
		{name: "sync state data after the clean", code: 1006, body: `["ds"]`},
		{name: "metadata", code: 1005},
		{name: "update a black-listed key", code: 1009, body: "notifyBrokerRoleChanged=true\nconfigStorePath=/tmp/x\n"},
		{name: "update a key", code: 1009, body: "notifyBrokerRoleChanged=true\n"},
		{name: "update with no body", code: 1009},
		{name: "get the config", code: 1010, ownBody: true},
	}
	for _, st := range steps {
		var got []string
		for _, ct := range targets {
			if st.close != "" {
				ct.conns[st.close].Close()
				delete(ct.conns, st.close)
				// The election the close triggers: wait until the set has a
				// new master (or give up after 10 s and compare as is).
				waitFor(t, 10*time.Second, func() bool {
					r, err := rawInvoke(ct.addr, javaRequest(1004, map[string]string{"brokerName": "ds"}, nil), 2*time.Second)
					return err == nil && r.ExtFields["masterBrokerId"] == "2"
				})
				continue
			}
			r := ct.call(t, st.broker, javaRequest(st.code, st.ext, []byte(st.body)))
			got = append(got, ct.describe(r, !st.exceptionText, !st.ownBody))
		}
		if st.close != "" {
			continue
		}
		if got[0] != got[1] {
			t.Errorf("%s:\n  apache   %s\n  rocketgo %s", st.name, got[0], got[1])
		} else {
			t.Logf("%s: %s", st.name, got[0])
		}
	}
}
