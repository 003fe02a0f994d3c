package compattest

// Targets for the transaction scenarios: rocketgo, and the Apache
// reference broker run from the pinned Maven jars, each with the transaction
// intervals shortened, restartable gracefully or with kill -9 on the same
// store. ROCKETGO_TX_TARGETS picks them (comma separated, default
// "rocketgo"; "rocketgo,apache" runs every scenario against both — the proof
// that the scenarios encode Apache's behaviour, and what rocketgo must match).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Apache BrokerConfig keys, set low so a check comes ~1-2 s after a prepare
// instead of 6 s + up to 30 s. transactionOpBatchInterval (5.x, 3000 ms by
// default) is the delay before Apache writes the op record of a commit or
// rollback; above the check interval it makes Apache check an answered
// message again (and commit it twice), so it stays well below it.
const (
	txTimeoutMs  = 1000
	txIntervalMs = 1000
	// Every check counts, answered or not: one that finds no live producer
	// of the group (the producer left, the broker restarting, the next
	// member not yet registered) too. Apache's 15 would discard the
	// restart scenarios' messages after 15 s without a producer (Apache's
	// graceful stop alone takes ~17 s here, checks running meanwhile).
	txCheckMax = 60
)

var txBrokerConf = fmt.Sprintf("transactionTimeOut=%d\ntransactionCheckInterval=%d\ntransactionCheckMax=%d\ntransactionOpBatchInterval=200\n",
	txTimeoutMs, txIntervalMs, txCheckMax)

// targetKinds is the target list in env split: "rocketgo" (the default)
// and "apache", which runs the same scenarios against the Apache 5.3.3
// reference, the proof that they encode Apache's behaviour.
func targetKinds(t *testing.T, env string) []string {
	v := os.Getenv(env)
	if v == "" {
		return []string{"rocketgo"}
	}
	var out []string
	for _, k := range strings.Split(v, ",") {
		switch k = strings.TrimSpace(k); k {
		case "rocketgo", "apache":
			out = append(out, k)
		case "":
		default:
			t.Fatalf("%s: unknown target %q (rocketgo, apache)", env, k)
		}
	}
	return out
}

// txBroker is a name server + broker of one kind with the transaction
// settings; c carries the addresses every client helper takes.
type txBroker struct {
	kind     string
	c        *cluster
	startFn  func() error // (re)starts the broker on the same port and store
	restarts int
}

// startTxBroker starts a dedicated pair of the given kind, stopped at cleanup.
func startTxBroker(t *testing.T, kind, name string) *txBroker {
	t.Helper()
	return startTargetBroker(t, kind, name, txBrokerConf)
}

// startTargetBroker is startTxBroker with the broker configuration conf.
func startTargetBroker(t *testing.T, kind, name, conf string) *txBroker {
	t.Helper()
	switch kind {
	case "rocketgo":
		c := newClusterConf(t, name, conf)
		return &txBroker{kind: kind, c: c, startFn: c.startBroker}
	case "apache":
		return startApacheTx(t, name, conf)
	}
	t.Fatalf("unknown target %q", kind)
	return nil
}

// restart stops the broker (SIGTERM and wait, or SIGKILL) and starts it again
// on the same store; the name server keeps running.
func (b *txBroker) restart(t *testing.T, kill bool) time.Duration {
	t.Helper()
	start := time.Now()
	if err := b.restartErr(kill); err != nil {
		t.Fatal(err)
	}
	return time.Since(start)
}

func (b *txBroker) restartErr(kill bool) error {
	if kill {
		killProc(b.c.broker)
	} else if !termProc(b.c.broker, 90*time.Second) {
		return fmt.Errorf("%s broker did not stop within 90 s of SIGTERM", b.kind)
	}
	b.restarts++
	if err := b.startFn(); err != nil {
		return fmt.Errorf("restart %s broker: %v\n%s", b.kind, err, b.c.logTails(40))
	}
	return nil
}

// termProc sends SIGTERM and waits up to timeout for the exit (Apache's
// shutdown hook takes longer than the harness's 10 s grace period), then kills.
func termProc(p *proc, timeout time.Duration) bool {
	if p.exited() {
		return true
	}
	start := time.Now()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	graceful := true
	select {
	case <-p.done:
	case <-time.After(timeout):
		graceful = false
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	fmt.Fprintf(p.logFile, "===== %s stopped graceful=%v after %s: %v\n", p.name, graceful, time.Since(start), p.waitErr)
	p.logFile.Close()
	return graceful
}

// killProc is kill -9: no shutdown hook, no flush, no unregistration.
func killProc(p *proc) {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	fmt.Fprintf(p.logFile, "===== %s killed with SIGKILL: %v\n", p.name, p.waitErr)
	p.logFile.Close()
}

// startApacheNamesrv starts the reference name server (reference/run.sh)
// of a cluster record whose broker the caller starts: its directory and
// two free ports, stopped and its logs shown when the test ends. script
// is run.sh's path.
func startApacheNamesrv(t *testing.T, name, extra string) (c *cluster, script string) {
	t.Helper()
	requireJava(t)
	script, err := filepath.Abs(filepath.Join("reference", "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	c = &cluster{name: name, brokerName: "broker-" + name, extraConf: extra, dir: filepath.Join(workDir, name)}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if c.nsPort, err = pickPort(); err != nil {
		t.Fatal(err)
	}
	if c.brokerPort, err = pickPort(); err != nil {
		t.Fatal(err)
	}
	c.nsAddr = fmt.Sprintf("127.0.0.1:%d", c.nsPort)
	c.brokerAddr = fmt.Sprintf("127.0.0.1:%d", c.brokerPort)
	t.Cleanup(c.stop)
	c.attachLogs(t)
	c.ns, err = startProc("apache-namesrv", script, []string{"namesrv", strconv.Itoa(c.nsPort), filepath.Join(c.dir, "ns")},
		filepath.Join(c.dir, "namesrv.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := waitTCP(c.ns, c.nsAddr, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	return c, script
}

// startApacheTx runs the reference name server and broker
// (reference/run.sh) with extra broker.properties lines: run.sh appends
// DIR/broker.extra.properties to the configuration it writes, so every
// start, restarts included, gets the transaction keys and the same store.
func startApacheTx(t *testing.T, name, extra string) *txBroker {
	t.Helper()
	c, script := startApacheNamesrv(t, name, extra)
	props := fmt.Sprintf("brokerName=%s\nbrokerClusterName=%s\n", c.brokerName, clusterName) + c.extraConf
	if err := os.WriteFile(filepath.Join(c.dir, "broker.extra.properties"), []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	start := func() error {
		c.starts++
		p, err := startProc(fmt.Sprintf("apache-broker#%d", c.starts), script,
			[]string{"broker", strconv.Itoa(c.brokerPort), c.nsAddr, c.dir, clusterName}, filepath.Join(c.dir, "broker.log"))
		if err != nil {
			return err
		}
		c.broker = p
		if err := waitTCP(p, c.brokerAddr, 90*time.Second); err != nil {
			return err
		}
		deadline := time.Now().Add(90 * time.Second)
		for time.Now().Before(deadline) {
			if p.exited() {
				return fmt.Errorf("apache broker exited during startup: %v", p.waitErr)
			}
			// After a kill -9 the name server still routes to the old
			// registration: wait for the new process to answer too.
			code, rd, _, err := queryRoute(c.nsAddr, "TBW102")
			if err == nil && code == 0 && rd.hasBroker(c.brokerAddr) {
				if resp, err := rawInvoke(c.brokerAddr, javaRequest(28, nil, nil), 5*time.Second); err == nil && resp.Code == 0 {
					return nil
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
		return fmt.Errorf("apache broker not routed within 90 s")
	}
	b := &txBroker{kind: "apache", c: c, startFn: start}
	began := time.Now()
	if err := start(); err != nil {
		t.Fatalf("start apache broker: %v\n%s", err, c.logTails(40))
	}
	t.Logf("Apache reference (transactions) up in %.1fs: namesrv %s, broker %s, files under %s",
		time.Since(began).Seconds(), c.nsAddr, c.brokerAddr, c.dir)
	return b
}

// producerClients lists the client ids of the producer group's connections
// on the broker (GET_PRODUCER_CONNECTION_LIST 204): who a check can go to.
func producerClients(addr, group string) ([]string, error) {
	resp, err := rawInvoke(addr, javaRequest(204, map[string]string{"producerGroup": group}, nil), 5*time.Second)
	if err != nil {
		return nil, err
	}
	if resp.Code != 0 {
		return nil, fmt.Errorf("GET_PRODUCER_CONNECTION_LIST %s: code %d remark %q", group, resp.Code, resp.Remark)
	}
	var body struct {
		ConnectionSet []struct {
			ClientID string `json:"clientId"`
		} `json:"connectionSet"`
	}
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		return nil, fmt.Errorf("GET_PRODUCER_CONNECTION_LIST body %q: %v", resp.Body, err)
	}
	ids := make([]string, 0, len(body.ConnectionSet))
	for _, c := range body.ConnectionSet {
		ids = append(ids, c.ClientID)
	}
	return ids, nil
}

// waitProducers waits until the group's connections on the broker are
// exactly the given instances (client ids end with "@<instance>").
func waitProducers(t *testing.T, b *txBroker, group string, instances ...string) {
	t.Helper()
	var last string
	ok := waitFor(t, 45*time.Second, func() bool {
		ids, err := producerClients(b.c.brokerAddr, group)
		if err != nil {
			last = err.Error()
			return false
		}
		last = fmt.Sprint(ids)
		if len(ids) != len(instances) {
			return false
		}
		for _, inst := range instances {
			found := false
			for _, id := range ids {
				found = found || strings.HasSuffix(id, "@"+inst)
			}
			if !found {
				return false
			}
		}
		return true
	})
	if !ok {
		t.Fatalf("%s: producer group %s connections never became %v (last: %s)", b.kind, group, instances, last)
	}
}
