package compattest

// The Java 5.3.3 push consumer in pop mode (java/.../PopTest.java) against
// each target of ROCKETGO_POP_TARGETS (default rocketgo; "rocketgo,apache"
// runs the same class against the Apache 5.3.3 reference broker, the proof
// that it encodes Apache's behaviour). The Java side asks for the broker
// restart (a file in its directory); this side does it.

import (
	"cmp"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

func TestJavaPop(t *testing.T) {
	requireJava(t)
	// Parallel tests start once every sequential one has ended, and no other
	// parallel test runs mvn in java/: its targets run one after the other.
	t.Parallel()
	for _, kind := range targetKinds(t, "ROCKETGO_POP_TARGETS") {
		t.Run(kind, func(t *testing.T) { // not parallel: one mvn at a time compiles into java/target
			b := startTxBroker(t, kind, "pop-java-"+kind)
			dir := t.TempDir()
			stop := make(chan struct{})
			served := make(chan struct{})
			go func() {
				defer close(served)
				serveRestarts(b, dir, stop)
			}()
			start := time.Now()
			run := fmt.Sprintf("rmq5-pop-%d", time.Now().UnixNano()%1_000_000)
			// ROCKETGO_POP_SERIALIZE=ROCKETMQ: the binary header form (JSON by default).
			ser := cmp.Or(os.Getenv("ROCKETGO_POP_SERIALIZE"), "JSON")
			outputs := runMaven(t, mavenRun{profile: "rmq5", serialize: ser, class: "PopTest", props: map[string]string{
				"namesrv": b.c.nsAddr, "run": run, "cluster": clusterName, "brokerName": b.c.brokerName,
				"brokerAddr": b.c.brokerAddr, "go2javaTopic": "unused", "java2goTopic": "unused", "txDir": dir, "txTarget": kind,
			}})
			close(stop)
			<-served
			var stats []string
			for _, out := range outputs {
				if s := popStats(out); s != "" {
					stats = append(stats, s)
				}
			}
			t.Logf("target=%s %.1fs: %s", kind, time.Since(start).Seconds(), strings.Join(stats, " "))
		})
	}
}

// popStats is the POPSTATS line of a PopTest case's output.
func popStats(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, "POPSTATS "); ok {
			return rest
		}
	}
	return ""
}
