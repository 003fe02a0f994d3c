package compattest

// The controller's authenticated control plane, against real rocketgo
// controllers (authenticationEnabled): strangers' requests are refused,
// the port listens on the peer address only, a broker with credentials
// registers and is elected, and mqadmin 5.3.3 with credentials reads and
// updates the config.

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/tidwall/gjson"
)

var (
	ctlAdminCred = primitive.Credentials{AccessKey: "ctlAdmin", SecretKey: "ctlAdmin-secret"}
	ctlInnerCred = primitive.Credentials{AccessKey: "ctlInner", SecretKey: "ctlInner-secret"}
)

const ctlAuthConf = `authenticationEnabled=true
initAuthenticationUser={"username":"ctlAdmin","password":"ctlAdmin-secret"}
innerClientAuthenticationCredentials={"accessKey":"ctlInner","secretKey":"ctlInner-secret"}
`

// signedLeader waits for the controller that leads, asking as ctlAdmin.
func signedLeader(t *testing.T, g *ctlGroup) int {
	t.Helper()
	at := -1
	if !waitFor(t, 30*time.Second, func() bool {
		for i, a := range g.addrs {
			r, err := rawInvoke(a, signRaw(javaRequest(1005, nil, nil), ctlAdminCred), 2*time.Second)
			if err == nil && r.Code == 0 && r.ExtFields["isLeader"] == "true" {
				at = i
				return true
			}
		}
		return false
	}) {
		t.Fatal("no controller leads (or ctlAdmin is refused)")
	}
	return at
}

// signedMaster is the set's master address as whichever controller leads
// reports it, asked as ctlAdmin.
func signedMaster(g *ctlGroup) string {
	for _, a := range g.addrs {
		r, err := rawInvoke(a, signRaw(javaRequest(1006, nil, []byte(`["`+ctlBrokerSet+`"]`)), ctlAdminCred), 3*time.Second)
		if err == nil && r.Code == 0 {
			return gjson.GetBytes(r.Body, "replicasInfoTable."+ctlBrokerSet+".masterAddress").String()
		}
	}
	return ""
}

// startCtlAuthSet starts three rocketgo controllers with conf, a name
// server and a rocketgo broker signing with ctlInnerCred, and waits for the
// broker to be master; li is the leading controller.
func startCtlAuthSet(t *testing.T, name, conf string) (g *ctlGroup, li int, nsAddr string, b *ctlBroker) {
	t.Helper()
	g = startControllersConf(t, name+"-raft", conf)
	li = signedLeader(t, g)
	ns, err := startNamesrvConf(name+"-ns", "")
	if ns != nil {
		t.Cleanup(ns.stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	bport, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	b = startGoCtlBrokerOn(t, nil, filepath.Join(workDir, name+"-b0"), bport, ns.nsAddr, strings.Join(g.addrs, ";"),
		fmt.Sprintf("innerClientAuthenticationCredentials={\"accessKey\":\"%s\",\"secretKey\":\"%s\"}\n", ctlInnerCred.AccessKey, ctlInnerCred.SecretKey))
	if !waitFor(t, 60*time.Second, func() bool { return signedMaster(g) == b.addr }) {
		t.Fatalf("the signed broker never became master: %q", signedMaster(g))
	}
	return g, li, ns.nsAddr, b
}

// notOn127002 fails t when addr's port answers on 127.0.0.2: the port
// listens on every interface, not on the peer address 127.0.0.1 only.
func notOn127002(t *testing.T, addr string) {
	t.Helper()
	_, port, _ := net.SplitHostPort(addr)
	if c, err := net.DialTimeout("tcp", "127.0.0.2:"+port, 2*time.Second); err == nil {
		c.Close()
		t.Errorf("the controller port answers on 127.0.0.2:%s: it listens on every interface", port)
	}
}

// TestControllerConfigRefusals: without authentication, UPDATE_CONTROLLER_
// CONFIG does not take a start-only key or a value with a newline (which
// forged a configStorePath line in GET_CONTROLLER_CONFIG), and nobody erases
// a living broker set. About 3 s.
func TestControllerConfigRefusals(t *testing.T) {
	g, li, _, b := startCtlAuthSet(t, uniq("ctlcfg"), "")
	leader := g.addrs[li]
	notOn127002(t, leader)
	for _, c := range []struct {
		body string
		code int
	}{
		{"controllerStorePath=/tmp/evil\n", 16},
		{"controllerDLegerPeers=n0-6.6.6.6:1\n", 16},
		{"bindAddress=0.0.0.0\n", 16},
		{"controllerDLegerGroup=g\\nconfigStorePath=/tmp/evil\n", 29},
	} {
		if r, err := rawInvoke(leader, javaRequest(1009, nil, []byte(c.body)), 3*time.Second); err != nil || r.Code != c.code {
			t.Errorf("update %q: %v %+v, want %d", c.body, err, r, c.code)
		}
	}
	if r, err := rawInvoke(leader, javaRequest(1010, nil, nil), 3*time.Second); err != nil || r.Code != 0 || strings.Contains(string(r.Body), "evil") {
		t.Errorf("config after the updates: %v %+v\n%s", err, r, r.Body)
	}
	clean := map[string]string{"clusterName": "other", "brokerName": ctlBrokerSet, "isCleanLivingBroker": "true"}
	for _, a := range g.addrs { // whichever leads now (the others answer 2007)
		if r, err := rawInvoke(a, javaRequest(1011, clean, nil), 3*time.Second); err != nil || r.Code != 2007 && r.Code != 2009 {
			t.Errorf("clean the living set at %s: %v %+v, want 2009", a, err, r)
		}
	}
	if m := signedMaster(g); m != b.addr {
		t.Fatalf("master after the clean: %q, want %s", m, b.addr)
	}
}

// TestControllerAuth: each attack an anonymous client made on the
// controller is refused with NO_PERMISSION; the set a signed broker
// registered survives them. About 20 s with the JVM.
func TestControllerAuth(t *testing.T) {
	name := uniq("ctlauth")
	g, li, nsAddr, b := startCtlAuthSet(t, name, ctlAuthConf)
	leader := g.addrs[li]
	notOn127002(t, leader)
	master := func() string { return signedMaster(g) }

	evil := map[string]string{"clusterName": clusterName, "brokerName": "evilset", "brokerId": "1", "brokerAddr": "6.6.6.6:1",
		"brokerAddress": "6.6.6.6:1", "appliedBrokerId": "1", "registerCheckCode": "6.6.6.6:1;1", "designateElect": "false"}
	attacks := []struct {
		name string
		code int
		ext  map[string]string
		body string
	}{
		{"update unclean election", 1009, nil, "enableElectUncleanMaster=true\nnotifyBrokerRoleChanged=false\nscanNotActiveBrokerInterval=1\n"},
		{"update the store path", 1009, nil, "controllerStorePath=/tmp/evil\n"},
		{"forge a config line", 1009, nil, "electMasterMaxRetryCount=3\\nconfigStorePath=/tmp/evil\n"},
		{"next id", 1012, evil, ""},
		{"apply id", 1013, evil, ""},
		{"register", 1003, evil, ""},
		{"heartbeat", 904, evil, ""},
		{"elect", 1002, evil, ""},
		{"clean the living set", 1011, map[string]string{"clusterName": clusterName, "brokerName": ctlBrokerSet, "isCleanLivingBroker": "true"}, ""},
	}
	for _, a := range attacks {
		r, err := rawInvoke(leader, javaRequest(a.code, a.ext, []byte(a.body)), 3*time.Second)
		if err != nil || r.Code != 16 {
			t.Errorf("anonymous %s (%d): %v %+v, want 16", a.name, a.code, err, r)
		}
	}
	if m := master(); m != b.addr {
		t.Fatalf("master after the attacks: %q, want %s", m, b.addr)
	}

	// mqadmin with ctlAdmin's credentials (conf/tools.yml).
	home := filepath.Join(workDir, name+"-admin")
	if err := os.MkdirAll(filepath.Join(home, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	tools := "accessKey: " + ctlAdminCred.AccessKey + "\nsecretKey: " + ctlAdminCred.SecretKey + "\n"
	if err := os.WriteFile(filepath.Join(home, "conf", "tools.yml"), []byte(tools), 0o644); err != nil {
		t.Fatal(err)
	}
	requireJava(t)
	ja := startJavaAdmin(t, toolsClasspath(t), home)
	if out := ja.run(t, []string{"updateControllerConfig", "-a", leader, "-k", "electMasterMaxRetryCount", "-v", "4"}); !strings.Contains(out, "update controller config success!") {
		t.Fatalf("updateControllerConfig as ctlAdmin:\n%s", out)
	}
	out := ja.run(t, []string{"getControllerConfig", "-a", leader})
	if !regexp.MustCompile(`electMasterMaxRetryCount\s*=\s*4\n`).MatchString(out) || !regexp.MustCompile(`enableElectUncleanMaster\s*=\s*false\n`).MatchString(out) ||
		strings.Contains(out, ctlAdminCred.SecretKey) || strings.Contains(out, "/tmp/evil") {
		t.Fatalf("getControllerConfig as ctlAdmin:\n%s", out)
	}

	// mqadmin createUser on the leader: the user reaches every controller
	// through the raft log, and a Normal user reads but does not update.
	if out := ja.run(t, []string{"createUser", "-n", nsAddr, "-b", leader, "-u", "ctlBob", "-p", "ctlBob-pw", "-t", "Normal"}); !strings.Contains(out, "create user to "+leader+" success.") {
		t.Fatalf("createUser on the controller:\n%s", out)
	}
	bob := primitive.Credentials{AccessKey: "ctlBob", SecretKey: "ctlBob-pw"}
	follower := g.addrs[(li+1)%3]
	if !waitFor(t, 10*time.Second, func() bool {
		out := ja.run(t, []string{"getUser", "-n", nsAddr, "-b", follower, "-u", "ctlBob"})
		return regexp.MustCompile(`ctlBob\s+ctlBob-pw\s+Normal\s+enable`).MatchString(out)
	}) {
		t.Fatal("ctlBob never reached a follower")
	}
	if r, err := rawInvoke(follower, signRaw(javaRequest(1005, nil, nil), bob), 3*time.Second); err != nil || r.Code != 0 {
		t.Fatalf("ctlBob at a follower: %v %+v", err, r)
	}
	if r, err := rawInvoke(leader, signRaw(javaRequest(1009, nil, []byte("electMasterMaxRetryCount=5\n")), bob), 3*time.Second); err != nil || r.Code != 16 {
		t.Fatalf("Normal ctlBob updates the config: %v %+v", err, r)
	}
}

// TestControllerAuthApacheBroker: an Apache 5.3.3 broker whose
// innerClientAuthenticationCredentials are the controllers' registers with
// rocketgo controllers that have authenticationEnabled and is elected
// master (Apache's BrokerOuterAPI signs its controller requests).
func TestControllerAuthApacheBroker(t *testing.T) {
	requireJava(t)
	if os.Getenv("ROCKETGO_CONTROLLER") == "" {
		t.Skip("runs with ROCKETGO_CONTROLLER=1 (make test-controller)")
	}
	name := uniq("ctlauthj")
	g := startControllersConf(t, name+"-raft", ctlAuthConf)
	signedLeader(t, g)
	c, _ := startApacheNamesrv(t, name+"-ns", "")
	// Apache's broker adds its inner credentials as a user at start, which
	// needs a metadata provider (authentication itself stays off).
	extra := fmt.Sprintf("brokerName=%s\nbrokerId=-1\nbrokerRole=SLAVE\nenableControllerMode=true\ncontrollerAddr=%s\n"+
		"authenticationMetadataProvider=org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider\n"+
		"innerClientAuthenticationCredentials={\"accessKey\":\"%s\",\"secretKey\":\"%s\"}\n",
		ctlBrokerSet, strings.Join(g.addrs, ";"), ctlInnerCred.AccessKey, ctlInnerCred.SecretKey)
	_, addr, _ := startApacheBroker(t, name+"-b0", c.nsAddr, extra)
	if !waitFor(t, 90*time.Second, func() bool { return signedMaster(g) == addr }) {
		t.Fatalf("the Apache broker %s never became master: %q", addr, signedMaster(g))
	}
}
