package compattest

import (
	"strconv"
	"strings"
	"testing"
)

// TestJavaPriority: priority messages (Apache 5.4, RIP-80) with the
// official Java SDK 5.2.0 (java-newest/, MessageBuilder.setPriority)
// through a gRPC proxy to a broker, over plaintext and TLS at once, each
// transport with its own PRIORITY topic of 4 queues and group.
// PriorityTest#order: two messages of each of priorities 0, 1, 2, 5 and 9,
// lowest first; a SimpleConsumer receiving one at a time gets each with its
// priority, the higher queue first, one queue's in send order (5 and 9
// share the last queue: 5 comes first). PriorityTest#wrongTopic: the SDK
// refuses a priority message to a NORMAL topic, as the route says that
// topic accepts NORMAL messages only (the proxy's own refusal of such a
// send is TestLiteSDK's send_lite_to_normal and TestProxyProducers').
// ROCKETGO_PRIORITY_TARGETS=rocketgo,apache also runs it against Apache's
// broker; ROCKETGO_PRIORITY_PROXIES names the proxies (rocketgo: mqproxy in
// cluster mode; local: mqbroker --enable-proxy, a rocketgo broker only;
// apache: Apache's proxy at the reference version).
func TestJavaPriority(t *testing.T) {
	requireJava(t)
	// Not parallel: TestJavaLite runs Maven in the same project.
	eachBrokerAndProxy(t, "PRIORITY", []string{"rocketgo", "local"}, "", "", runJavaPriority)
}

func runJavaPriority(t *testing.T, c *cluster, pp *proxyProc) {
	transports := []string{"plain", "tls"}
	const queues = 4
	props := map[string]string{"transports": strings.Join(transports, ","), "queues": strconv.Itoa(queues)}
	relays := map[string]*transportRelay{}
	for _, tr := range transports {
		topic, normal := uniq("JPRI"), uniq("JNOR")
		createTypedTopicQueues(t, c, topic, "PRIORITY", queues)
		createTopic(t, c, normal)
		relays[tr] = startTransportRelay(t, pp.addr)
		props[tr+".proxy"], props[tr+".topic"], props[tr+".normal"], props[tr+".group"] = relays[tr].addr, topic, normal, uniq("JPRG")
	}
	out := runMaven(t, mavenRun{dir: "java-newest", serialize: "JSON", class: "PriorityTest#order+wrongTopic", props: props})
	logLines(t, out, "PRIORITY ")
	relaysSawTheirTransport(t, relays)
}
