package compattest

// The Java TransactionMQProducer scenarios (java/.../TransactionTest.java)
// for 4.9.8 and 5.3.3, against each target of ROCKETGO_TX_TARGETS. The Java
// side asks for the broker restarts (a file in txDir); this side does them.

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestJavaTransactions(t *testing.T) {
	requireJava(t)
	for _, kind := range targetKinds(t, "ROCKETGO_TX_TARGETS") {
		t.Run(kind, func(t *testing.T) {
			b := startTxBroker(t, kind, "tx-java-"+kind)
			for _, r := range txJavaRuns {
				if only := os.Getenv("ROCKETGO_TX_JAVA_LINE"); only != "" && only != r.line.label {
					continue // e.g. ROCKETGO_TX_JAVA_LINE=5.3.3: one client line only
				}
				t.Run(r.line.label+"/"+r.ser, func(t *testing.T) { runJavaTransactions(t, b, r.line, r.ser) })
			}
		})
	}
}

// txJavaRuns are the JVMs run per target: both client lines with JSON
// headers, and 5.3.3 with ROCKETMQ (binary) headers too — the prepared send,
// END_TRANSACTION and the check's answer in the other encoding. (Not all four:
// each run takes ~30 s, and the suite stays under 3 minutes.)
var txJavaRuns = []struct {
	line struct{ profile, label string }
	ser  string
}{
	{javaLines[0], "JSON"},
	{javaLines[1], "JSON"},
	{javaLines[1], "ROCKETMQ"},
}

func runJavaTransactions(t *testing.T, b *txBroker, line struct{ profile, label string }, ser string) {
	start := time.Now()
	dir := t.TempDir()
	stop := make(chan struct{})
	served := make(chan struct{})
	go func() {
		defer close(served)
		serveRestarts(b, dir, stop)
	}()
	run := strings.ToLower(fmt.Sprintf("%s-%s-tx-%d", line.profile, ser, time.Now().UnixNano()%1_000_000))
	outputs := runMaven(t, mavenRun{profile: line.profile, serialize: ser, class: cmp.Or(os.Getenv("ROCKETGO_TX_JAVA_TEST"), "TransactionTest"), props: map[string]string{
		"namesrv": b.c.nsAddr, "run": run, "cluster": clusterName, "brokerName": b.c.brokerName,
		"brokerAddr": b.c.brokerAddr, "go2javaTopic": "unused", "java2goTopic": "unused", "txDir": dir, "txTarget": b.kind,
	}})
	close(stop)
	<-served
	stats, _ := os.ReadFile(filepath.Join(dir, "txstats"))
	if len(stats) == 0 {
		stats = []byte(outputs["verifyAll()"])
	}
	sent, delivered, extra := parseTxStats(string(stats))
	report(t, start, sent, delivered, "target="+b.kind+" "+extra)
}

// serveRestarts restarts the broker whenever the Java side asks
// (restart-request-term or -kill in dir) and answers in restart-done-<how>:
// empty on success, the error otherwise.
func serveRestarts(b *txBroker, dir string, stop <-chan struct{}) {
	done := map[string]bool{}
	for {
		select {
		case <-stop:
			return
		case <-time.After(100 * time.Millisecond):
		}
		for _, how := range []string{"term", "kill"} {
			if done[how] {
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, "restart-request-"+how)); err != nil {
				continue
			}
			done[how] = true
			msg := ""
			if err := b.restartErr(how == "kill"); err != nil {
				msg = err.Error()
			}
			tmp := filepath.Join(dir, "restart-done-"+how+".tmp")
			if os.WriteFile(tmp, []byte(msg), 0o644) == nil {
				_ = os.Rename(tmp, filepath.Join(dir, "restart-done-"+how))
			}
		}
	}
}

// parseTxStats reads TransactionTest's TXSTATS line.
func parseTxStats(out string) (sent, delivered int, extra string) {
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "TXSTATS ") {
			continue
		}
		var delivery, check []time.Duration
		for _, f := range strings.Fields(l)[1:] {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "sent":
				sent, _ = strconv.Atoi(v)
			case "delivered":
				delivered, _ = strconv.Atoi(v)
			case "deliveryMs", "checkMs":
				for _, x := range strings.Split(v, ",") {
					if ms, err := strconv.Atoi(x); err == nil {
						if k == "deliveryMs" {
							delivery = append(delivery, time.Duration(ms)*time.Millisecond)
						} else {
							check = append(check, time.Duration(ms)*time.Millisecond)
						}
					}
				}
			}
		}
		return sent, delivered, fmt.Sprintf("commit->delivery %s prepare->first check %s", durStats(delivery), durStats(check))
	}
	return 0, 0, "no TXSTATS line"
}
