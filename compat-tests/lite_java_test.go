package compattest

import (
	"os"
	"strings"
	"testing"
	"time"
)

// liteBrokerConf turns lite topics on: multi-dispatch needs both store keys.
const liteBrokerConf = "\nenableLmq=true\nenableMultiDispatch=true\n"

// liteProxyJSON makes the proxy's receive invisible time short, so that a
// failed lite message comes back within seconds (the Java SDK 5.1.0 nacks
// without the lite topic: the broker redelivers when the batch's invisible
// time ends), and renews held messages within 5 s of their end.
const liteProxyJSON = `,"defaultInvisibleTimeMills":15000,"renewAheadTimeMillis":5000`

// TestJavaLite: lite topics (Apache 5.5, RIP-83) with the official Java SDK
// 5.1.0 (java-lite/) through Apache 5.5's proxy in cluster mode — the only
// proxy serving them in 5.5 — to a rocketgo broker with enableLmq and
// enableMultiDispatch: a LITE parent topic and lite groups
// (+lite.bind.topic) made by admin requests. LiteTest#delivery: a producer
// sends 5 messages to each of 4 lite topics, a LitePushConsumer subscribed
// to 3 receives exactly those, in order per lite topic; the one its listener
// fails comes back from the broker (attempt 2) after the invisible time,
// never after a later message of its lite topic; unsubscribing stops a lite
// topic's delivery. LiteTest#exclusive: in an Exclusive group a second
// consumer takes a lite topic and the first is told (NotifyUnsubscribeLite
// drops it from its set) and receives no more of it.
// ROCKETGO_LITE_TARGETS=rocketgo,apache also runs them against Apache's
// broker (differential). The same script runs through rocketgo's proxy in
// cluster mode too; ROCKETGO_LITE_PROXIES names the proxies (apache,
// rocketgo, local: mqbroker --enable-proxy, a rocketgo broker only, last
// as it restarts the broker).
func TestJavaLite(t *testing.T) {
	requireJava(t)
	t.Parallel() // its own Maven project
	kinds := []string{"rocketgo"}
	if v := strings.TrimSpace(os.Getenv("ROCKETGO_LITE_TARGETS")); v != "" {
		kinds = strings.Split(v, ",")
	}
	proxies := []string{"rocketgo"} // Apache's proxy and local mode: make test-proxy-apache
	if v := strings.TrimSpace(os.Getenv("ROCKETGO_LITE_PROXIES")); v != "" {
		proxies = strings.Split(v, ",")
	}
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			c := startTargetBroker(t, kind, uniq("lite-"+kind), liteBrokerConf).c
			for _, impl := range proxies {
				t.Run(impl, func(t *testing.T) {
					if impl == "local" && kind != "rocketgo" {
						t.Skip("local mode is a rocketgo broker's")
					}
					runJavaLite(t, c, startProxyImpl(t, c, liteProxyJSON, impl))
				})
			}
		})
	}
}

// runJavaLite runs LiteTest#delivery and #exclusive through the proxy pp.
func runJavaLite(t *testing.T, c *cluster, pp *proxyProc) {
	topic, group, groupX := uniq("LP"), uniq("LG"), uniq("LX")
	createTypedTopic(t, c, topic, "LITE")
	createLiteGroup(t, c, group, topic, "")
	createLiteGroup(t, c, groupX, topic, `,"+lite.sub.model":"Exclusive"`)
	out := runMaven(t, mavenRun{dir: "java-lite", serialize: "JSON", class: "LiteTest#delivery+exclusive",
		props: map[string]string{"proxy": pp.addr, "topic": topic, "group": group, "groupX": groupX}})
	for name, s := range out {
		for _, line := range strings.Split(s, "\n") {
			if strings.HasPrefix(line, "LITE ") {
				t.Logf("%s: %s", name, line)
			}
		}
	}
}

// createLiteGroup creates a lite group bound to topic
// (+lite.bind.topic=topic, and the extra attributes given as JSON members).
func createLiteGroup(t *testing.T, c *cluster, group, topic, extraAttrs string) {
	t.Helper()
	body := `{"groupName":"` + group + `","consumeEnable":true,"consumeFromMinEnable":true,"consumeBroadcastEnable":true,` +
		`"retryQueueNums":1,"retryMaxTimes":16,"brokerId":0,"whichBrokerWhenConsumeSlowly":1,` +
		`"notifyConsumerIdsChangedEnable":true,"attributes":{"+lite.bind.topic":"` + topic + `"` + extraAttrs + `}}`
	resp, err := rawInvoke(c.brokerAddr, newRequest(200, map[string]string{}, []byte(body)), 5*time.Second)
	if err != nil || resp.Code != 0 {
		t.Fatalf("create lite group %s: %v %+v", group, err, resp)
	}
}
