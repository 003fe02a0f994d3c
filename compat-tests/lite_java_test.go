package compattest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// liteBrokerConf turns lite topics on: multi-dispatch needs both store keys.
const liteBrokerConf = "\nenableLmq=true\nenableMultiDispatch=true\n"

// liteProxyJSON makes the proxy's receive invisible time short, so that a
// failed lite message comes back within seconds (the Java SDK, 5.1.0 and
// 5.2.0, nacks without the lite topic: the broker redelivers when the batch's invisible
// time ends), and renews held messages within 5 s of their end.
const liteProxyJSON = `,"defaultInvisibleTimeMills":15000,"renewAheadTimeMillis":5000`

// TestJavaLite: lite topics (Apache 5.5, RIP-83) with the official Java SDK
// 5.2.0 (java-newest/) through rocketgo's proxy in cluster mode to a rocketgo
// broker with enableLmq and
// enableMultiDispatch: a LITE parent topic and lite groups
// (+lite.bind.topic) made by admin requests. LiteTest#delivery: a producer
// sends 5 messages to each of 4 lite topics, a LitePushConsumer subscribed
// to 3 receives exactly those, in order per lite topic; the one its listener
// fails comes back from the broker (attempt 2) after the invisible time,
// never after a later message of its lite topic; unsubscribing stops a lite
// topic's delivery. LiteTest#exclusive: in an Exclusive group a second
// consumer takes a lite topic and the first is told (NotifyUnsubscribeLite
// drops it from its set) and receives no more of it.
// Both cases run over plaintext and TLS at once, in one JVM, each with its
// own topic and groups (ClientConfiguration.enableSsl; the proxy serves a
// certificate of the test's own CA, as in TestLiteSDK); a relay in front
// of the proxy per transport sees each connection's first byte, so that
// the test proves which one the SDK used (the SDK's default is TLS).
// ROCKETGO_LITE_TARGETS=rocketgo,apache also runs them against Apache's
// broker (differential); ROCKETGO_LITE_PROXIES names the proxies (apache:
// Apache 5.5's, in cluster mode, the only one serving lite in 5.5;
// rocketgo; local: mqbroker --enable-proxy, a rocketgo broker only, last as
// it restarts the broker).
func TestJavaLite(t *testing.T) {
	requireJava(t)
	t.Parallel() // its own Maven project
	// Apache's proxy and local mode: make test-proxy-apache.
	eachBrokerAndProxy(t, "LITE", []string{"rocketgo"}, liteBrokerConf, liteProxyJSON, runJavaLite)
}

// eachBrokerAndProxy runs fn for each broker of ROCKETGO_<what>_TARGETS
// (rocketgo, apache; default rocketgo), started with brokerConf, and each
// proxy in front of it of ROCKETGO_<what>_PROXIES (apache, rocketgo,
// local; default proxies, local last as it restarts the broker), the
// proxy started with proxyJSON and serving TLS with a certificate of the
// test's own CA besides plaintext.
func eachBrokerAndProxy(t *testing.T, what string, proxies []string, brokerConf, proxyJSON string,
	fn func(t *testing.T, c *cluster, pp *proxyProc)) {
	kinds := []string{"rocketgo"}
	if v := strings.TrimSpace(os.Getenv("ROCKETGO_" + what + "_TARGETS")); v != "" {
		kinds = strings.Split(v, ",")
	}
	if v := strings.TrimSpace(os.Getenv("ROCKETGO_" + what + "_PROXIES")); v != "" {
		proxies = strings.Split(v, ",")
	}
	pki := newTLSPKI(t)
	tlsJSON := fmt.Sprintf(`,"tlsTestModeEnable":false,"tlsCertPath":%q,"tlsKeyPath":%q`, pki.serverCert, pki.serverKey)
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			c := startTargetBroker(t, kind, uniq(strings.ToLower(what)+"-"+kind), brokerConf).c
			for _, impl := range proxies {
				t.Run(impl, func(t *testing.T) {
					if impl == "local" && kind != "rocketgo" {
						t.Skip("local mode is a rocketgo broker's")
					}
					fn(t, c, startProxyImpl(t, c, proxyJSON+tlsJSON, impl))
				})
			}
		})
	}
}

// runJavaLite runs LiteTest#delivery and #exclusive through the proxy pp,
// over plaintext and TLS at once.
func runJavaLite(t *testing.T, c *cluster, pp *proxyProc) {
	transports := []string{"plain", "tls"}
	props := map[string]string{"transports": strings.Join(transports, ",")}
	relays := map[string]*transportRelay{}
	for _, tr := range transports {
		topic, group, groupX := uniq("LP"), uniq("LG"), uniq("LX")
		createTypedTopic(t, c, topic, "LITE")
		createLiteGroup(t, c, group, topic, "")
		createLiteGroup(t, c, groupX, topic, `,"+lite.sub.model":"Exclusive"`)
		relays[tr] = startTransportRelay(t, pp.addr)
		props[tr+".proxy"], props[tr+".topic"], props[tr+".group"], props[tr+".groupX"] = relays[tr].addr, topic, group, groupX
	}
	out := runMaven(t, mavenRun{dir: "java-newest", serialize: "JSON", class: "LiteTest#delivery+exclusive", props: props})
	logLines(t, out, "LITE ")
	relaysSawTheirTransport(t, relays)
}

// logLines logs the lines of each JUnit case's output that start with
// prefix, named by the case.
func logLines(t *testing.T, out map[string]string, prefix string) {
	t.Helper()
	for name, s := range out {
		for _, line := range strings.Split(s, "\n") {
			if strings.HasPrefix(line, prefix) {
				t.Logf("%s: %s", name, line)
			}
		}
	}
}

// relaysSawTheirTransport fails t unless each relay saw only connections of
// its transport (named by the map's key, plain or tls), and some.
func relaysSawTheirTransport(t *testing.T, relays map[string]*transportRelay) {
	t.Helper()
	for tr, r := range relays {
		tlsN, plainN := r.tls.Load(), r.plain.Load()
		t.Logf("%s: %d TLS and %d plaintext connections to the proxy", tr, tlsN, plainN)
		ok := tlsN > 0 && plainN == 0
		if tr == "plain" {
			ok = plainN > 0 && tlsN == 0
		}
		if !ok {
			t.Errorf("%s: the SDK opened %d TLS and %d plaintext connections", tr, tlsN, plainN)
		}
	}
}

// transportRelay forwards connections to a proxy and counts those a client
// opened with a TLS handshake record (0x16, the ClientHello) and the others
// (HTTP/2's preface): which transport an SDK spoke. In local mode the SDK
// reaches the proxy's own port for its routes after the first connection,
// which the relay still sees.
type transportRelay struct {
	addr       string
	tls, plain atomic.Int64

	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func startTransportRelay(t *testing.T, target string) *transportRelay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &transportRelay{addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		r.mu.Lock()
		for c := range r.conns {
			c.Close()
		}
		r.mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); r.serve(c, target) }()
		}
	}()
	return r
}

// track keeps c for the cleanup, or closes it when that has begun.
func (r *transportRelay) track(c net.Conn, on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if on {
		r.conns[c] = struct{}{}
	} else {
		delete(r.conns, c)
	}
}

func (r *transportRelay) serve(c net.Conn, target string) {
	r.track(c, true)
	defer func() { r.track(c, false); c.Close() }()
	br := bufio.NewReader(c)
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	if first[0] == 0x16 {
		r.tls.Add(1)
	} else {
		r.plain.Add(1)
	}
	up, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		return
	}
	r.track(up, true)
	defer func() { r.track(up, false); up.Close() }()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(up, br) // ends when the client closes; then the proxy's side goes too
		up.Close()
		close(done)
	}()
	_, _ = io.Copy(c, up)
	c.Close()
	<-done
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
