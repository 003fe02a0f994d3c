package compattest

// The cheap message-trace check that make test runs (its Java lane): one
// rocketgo cluster with traceTopicEnable=true, the Go client and the Java
// 5.3.3 client with their trace hooks on, a few messages sent and consumed,
// and mqadmin 5.3.3's queryMsgTraceById showing the producer's and the
// consumer's rows for each. The comparison with Apache's records, field by
// field, with both Java lines and a custom trace topic, is make test-trace
// (TestTrace, ~8 min): this proves the path end to end, not the bytes.

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestTraceSmoke runs the Go client's and the Java 5.3.3 client's traced
// producer and push consumer against rocketgo.
func TestTraceSmoke(t *testing.T) {
	requireJava(t)
	t.Parallel()
	start := time.Now()
	c := newClusterConf(t, "trace-smoke", "traceTopicEnable=true\n")
	tg := target{"rocketgo", c.nsAddr, c.brokerAddr, c.brokerName}
	// The two clients' runs share nothing but the trace topic, whose
	// records each reads by its own message ids: side by side.
	t.Run("go", func(t *testing.T) {
		t.Parallel()
		ja := startJavaAdmin(t, toolsClasspath(t), t.TempDir())
		run := fmt.Sprintf("gs%06d", time.Now().UnixNano()%1_000_000)
		r := runGoTrace(t, tg, run, ja)
		checkTraceSmoke(t, r, goTraceCount, c.nsAddr)
	})
	t.Run("java-5.3.3", func(t *testing.T) {
		t.Parallel()
		line := javaLines[len(javaLines)-1]
		runs := runJavaTraceCases(t, []target{tg}, line, []string{"default"})
		checkTraceSmoke(t, runs["default"]["rocketgo"], 3, c.nsAddr) // TraceTest.COUNT
	})
	t.Cleanup(func() { t.Logf("trace smoke: %.1fs", time.Since(start).Seconds()) })
}

// checkTraceSmoke asserts that each of n messages has a Pub, a SubBefore
// and a SubAfter record in the trace topic (collect already waited for
// them), and a queryMsgTraceById output with a Pub and a Sub row, which
// the Go mqadmin's queryMsgTraceById prints the same.
func checkTraceSmoke(t *testing.T, r *traceRun, n int, nsAddr string) {
	t.Helper()
	types := map[string]int{}
	for _, rec := range r.records {
		types[strings.SplitN(rec, " | ", 2)[0]]++
	}
	for _, want := range []string{"Pub", "SubBefore", "SubAfter"} {
		if types[want] < n {
			t.Errorf("%d %s records for %d messages; records:\n  %s", types[want], want, n, strings.Join(r.records, "\n  "))
		}
	}
	if len(r.admin) != n {
		t.Errorf("queryMsgTraceById ran for %d messages, want %d", len(r.admin), n)
	}
	for id, out := range r.admin {
		if !strings.Contains("\n"+out, "\nPub ") || !strings.Contains("\n"+out, "\nSub ") {
			t.Errorf("queryMsgTraceById %s shows no Pub and Sub row:\n%s", id, out)
			continue
		}
		t.Logf("queryMsgTraceById %s:\n%s", id, out)
		for real, placeholder := range r.ids {
			if placeholder != id {
				continue
			}
			// the same normalisation as Apache's output had (run id, times, costs)
			if g := r.normalizeAdmin(runGoAdmin(t, []string{"queryMsgTraceById", "-n", nsAddr, "-i", real})); g != out {
				t.Errorf("queryMsgTraceById %s: the Go mqadmin prints\n%s\nApache's\n%s", id, g, out)
			}
		}
	}
}
