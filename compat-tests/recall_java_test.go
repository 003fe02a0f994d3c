package compattest

// Recall of a timer message with the Java 5.3.3 producer
// (java/.../RecallTest.java) against each target of ROCKETGO_RECALL_TARGETS
// (default rocketgo; "rocketgo,apache" runs the same class against the
// Apache 5.3.3 reference broker, the proof that it encodes Apache's
// behaviour), each a broker of its own with recallMessageEnable=true.

import (
	"fmt"
	"testing"
	"time"
)

func TestJavaRecall(t *testing.T) {
	requireJava(t)
	for _, kind := range targetKinds(t, "ROCKETGO_RECALL_TARGETS") {
		t.Run(kind, func(t *testing.T) { // one mvn at a time compiles into java/target
			b := startTargetBroker(t, kind, "recall-java-"+kind, "recallMessageEnable=true\n")
			start := time.Now()
			run := fmt.Sprintf("rmq5-recall-%d", time.Now().UnixNano()%1_000_000)
			runMaven(t, mavenRun{profile: "rmq5", serialize: "JSON", class: "RecallTest", props: map[string]string{
				"namesrv": b.c.nsAddr, "run": run, "cluster": clusterName, "brokerName": b.c.brokerName,
				"brokerAddr": b.c.brokerAddr, "go2javaTopic": "unused", "java2goTopic": "unused",
			}})
			t.Logf("target=%s %.1fs", kind, time.Since(start).Seconds())
		})
	}
}
