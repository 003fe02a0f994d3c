package compattest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMQAdminController: the controller commands of the Go mqadmin and of
// Apache 5.5.0's on three rocketgo controllers and three rocketgo brokers
// in controller mode (a quiet set: nothing sent), Java's first, outputs
// equal: the controllers' metadata and config, a config update, the sync
// state set by broker name and by cluster, the brokers' epochs, and the
// election of a slave (each tool its own: the new master's address and
// the epochs masked; Java's printing Apache's success lines with the
// address it elected).
func TestMQAdminController(t *testing.T) {
	requireJava(t)
	t.Parallel()
	cp := referenceClasspath(t)
	r, _, state := newGoCtlSet(t, "admctl")
	g := r.g
	li := g.leader(30 * time.Second)
	follower := g.addrs[(li+1)%3]
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	java := startJavaAdmin(t, cp, home)
	s := state()
	var target string
	for _, a := range s.inSync {
		if a != s.masterAddr {
			target = a
		}
	}
	if target == "" {
		t.Fatalf("no in-sync slave to elect: %+v", s)
	}
	masterIs := func(addr string) func(t *testing.T) {
		return func(t *testing.T) {
			t.Helper()
			if !waitFor(t, 60*time.Second, func() bool { return state().masterAddr == addr }) {
				t.Fatalf("master %s not elected: %+v", addr, state())
			}
		}
	}
	ns := r.c.nsAddr
	// a slave that lags drops out of the set (its epoch moves): both tools
	// read it whole
	allInSync := func(t *testing.T) {
		t.Helper()
		if !waitFor(t, 60*time.Second, func() bool { return len(state().inSync) == 3 }) {
			t.Fatalf("sync state set not whole: %+v", state())
		}
	}
	runMQAdminSteps(t, java, []mqadminStep{
		{args: []string{"getControllerMetaData", "-a", follower}},
		{args: []string{"getControllerMetaData", "--controllerAddress", g.addrs[li]}},
		{args: []string{"updateControllerConfig", "-a", follower, "-k", "electMasterMaxRetryCount", "-v", "4"}},
		{args: []string{"getControllerConfig", "-a", follower}, sets: true},
		{args: []string{"getSyncStateSet", "-a", follower, "-b", ctlBrokerSet}, settle: allInSync},
		{args: []string{"getSyncStateSet", "-n", ns, "-a", follower, "-c", clusterName}, settle: allInSync},
		{args: []string{"getBrokerEpoch", "-n", ns, "-b", ctlBrokerSet}, sets: true},
		{args: []string{"haStatus", "-n", ns, "-c", clusterName}, settle: allInSync},
		{args: []string{"haStatus", "-n", ns, "-b", target}, norm: haTimesNorm},
		// an id no broker lives under: cleaned (Java's run, then the Go one's)
		{args: []string{"cleanBrokerMetadata", "-a", follower, "-c", clusterName, "-bn", ctlBrokerSet, "-b", "99"}},
	})
	// electMaster: Java's of one slave, then the Go tool's of the other
	// once it is back in the sync state set (an election shrinks it to the
	// new master): the same output but for the new master's address and
	// the epochs, masked.
	var other string
	for _, a := range s.inSync {
		if a != s.masterAddr && a != target {
			other = a
		}
	}
	elect := func(addr string) []string {
		return []string{"electMaster", "-a", follower, "-c", clusterName, "-bn", ctlBrokerSet, "-b", strconv.FormatInt(s.ids[addr], 10)}
	}
	// Apache 5.5.0's tool fails when the elect body's member group has
	// fastjson's bare integer keys (the controller quotes them, see
	// controller/body.go): its output is then empty, the stack trace on
	// stderr.
	jOut := java.run(t, elect(target))
	want := fmt.Sprintf("\n#ClusterName\t%s\n#BrokerName\t%s\n#BrokerMasterAddr\t%s\n", clusterName, ctlBrokerSet, target)
	if !strings.HasPrefix(jOut, want) || !electEpoch.MatchString(jOut) {
		t.Fatalf("Java electMaster: want Apache's success lines electing %s, got:\n%s\nstderr:\n%s", target, jOut, java.stderr.String())
	}
	if !waitFor(t, 90*time.Second, func() bool {
		st := state()
		return st.masterAddr == target && slices.Contains(st.inSync, other)
	}) {
		t.Fatalf("%s not master with %s in sync: %+v", target, other, state())
	}
	gOut := runGoAdmin(t, elect(other))
	if j, g := electNorm(jOut), electNorm(gOut); j != g {
		t.Errorf("electMaster: outputs differ\nJava:\n%s\nGo:\n%s\nJava stderr:\n%s", jOut, gOut, java.stderr.String())
	}
	masterIs(other)(t)
}

// haTimesNorm masks a slave's last read and write times (heartbeats
// move them between the two runs). Its master, offsets and speed stay
// compared.
func haTimesNorm(s string) string { return haTimes.ReplaceAllString(s, "${1}*") }

var haTimes = regexp.MustCompile(`(?m)^(#Last(?:Read|Write)Time\t).*$`)

// electNorm masks electMaster's new master and epochs: the two tools
// elect different slaves, one after the other.
func electNorm(s string) string {
	return electEpoch.ReplaceAllString(electMasterAddr.ReplaceAllString(s, "${1}*"), "${1}*")
}

var electMasterAddr = regexp.MustCompile(`(?m)^(#BrokerMasterAddr\t)\S+`)

var electEpoch = regexp.MustCompile(`(?m)^(#(?:MasterEpoch|SyncStateSetEpoch)\t)\d+`)
