package compattest

// Registration under hostile load: a broker with
// 100,000 topics stays in the cluster and its routes are served, whether the
// table got there by config, by compressedRegister / enableSplitRegistration,
// or by a flood of heartbeats for 100,000 groups; and a frame the name server
// cannot read on the broker's registration connection does not unregister it.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
)

const hrTopics = 100_000

// hrWriteTopics writes a topics.json of n topics hostile-registration-topic-<i> (1 queue each; 21 MB of JSON) into
// the broker's store, as a broker that created them would have left it.
func hrWriteTopics(t *testing.T, c *cluster, n int) []string {
	t.Helper()
	names := make([]string, n)
	var b strings.Builder
	fmt.Fprintf(&b, `{"dataVersion":{"counter":%d,"stateVersion":0,"timestamp":%d},"topicConfigTable":{`, n, time.Now().UnixMilli())
	for i := range names {
		names[i] = fmt.Sprintf("hostile-registration-topic-%06d", i)
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `%q:{"attributes":{},"order":false,"perm":6,"readQueueNums":1,"topicFilterType":"SINGLE_TAG","topicName":%q,"topicSysFlag":0,"writeQueueNums":1}`,
			names[i], names[i])
	}
	b.WriteString("}}")
	dir := filepath.Join(c.dir, "store", "config")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "topics.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return names
}

// hrTopicList returns the name server's topic list (206).
func hrTopicList(t *testing.T, nsAddr string) map[string]bool {
	t.Helper()
	resp, err := rawInvoke(nsAddr, javaRequest(206, nil, nil), 30*time.Second)
	if err != nil || resp.Code != 0 {
		t.Logf("GET_ALL_TOPIC_LIST_FROM_NAMESERVER: %v %v", resp, err)
		return nil
	}
	var tl struct {
		TopicList []string `json:"topicList"`
	}
	if err := json.Unmarshal(resp.Body, &tl); err != nil {
		t.Fatalf("topic list: %v", err)
	}
	out := make(map[string]bool, len(tl.TopicList))
	for _, s := range tl.TopicList {
		out[s] = true
	}
	return out
}

// hrWaitTopics waits until the name server lists every name; it returns how
// long that took.
func hrWaitTopics(t *testing.T, c *cluster, names []string, timeout time.Duration, what string) time.Duration {
	t.Helper()
	start := time.Now()
	var missing int
	if !waitFor(t, timeout, func() bool {
		have := hrTopicList(t, c.nsAddr)
		missing = 0
		for _, n := range names {
			if !have[n] {
				missing++
			}
		}
		return missing == 0
	}) {
		t.Fatalf("%s: %d of %d topics missing from the name server after %s\n%s", what, missing, len(names), timeout, c.logTails(10))
	}
	return time.Since(start)
}

// hrSendSample sends to a sample of the topics with the official Go client,
// which finds each route through the name server.
func hrSendSample(t *testing.T, c *cluster, names []string) {
	t.Helper()
	p := newProducer(t, c)
	defer p.shutdown()
	sample := []string{names[0], names[len(names)/2], names[len(names)-1]}
	for i := 0; i < 3; i++ {
		sample = append(sample, names[rand.IntN(len(names))])
	}
	for _, topic := range sample {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		r, err := p.sendSync(ctx, primitive.NewMessage(topic, []byte("hr")))
		cancel()
		if err != nil || r.Status != primitive.SendOK {
			t.Errorf("send to %s through the name server's route: %v %v", topic, r, err)
		}
	}
}

// hrStillRegistered checks that TBW102 still routes to the broker.
func hrStillRegistered(t *testing.T, c *cluster, when string) {
	t.Helper()
	code, route, remark, err := queryRoute(c.nsAddr, "TBW102")
	if err != nil || code != 0 || !route.hasBroker(c.brokerAddr) {
		t.Errorf("%s: broker gone from the name server: code %d %q %v\n%s", when, code, remark, err, c.logTails(20))
	}
}

// TestHostileRegistration100kTopics: a broker whose table holds 100,000
// topics registers them all — in compressed bodies, in split parts, and by
// default (rocketgo splits a table that would not fit a frame; Apache sends
// an 18 MB frame its name server refuses) — and the official client finds
// their routes. Time and memory are reported.
func TestHostileRegistration100kTopics(t *testing.T) {
	for _, tc := range []struct{ name, conf string }{
		{"compressed", "compressedRegister=true\n"},
		{"split", "enableSplitRegistration=true\n"},
		{"default", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClusterConf(t, "hr100k-"+tc.name, tc.conf)
			c.stopBroker()
			names := hrWriteTopics(t, c, hrTopics)
			nsRSS0 := hsVmRSS(t, c.ns.cmd.Process.Pid)
			start := time.Now()
			if err := c.startBroker(); err != nil {
				t.Fatalf("start broker with %d topics: %v", hrTopics, err)
			}
			hrWaitTopics(t, c, names, 2*time.Minute, tc.name)
			took := time.Since(start)
			t.Logf("%s: %d topics routed %s after the broker's start; VmRSS broker %d MB, name server %d MB (%d MB before)",
				tc.name, hrTopics, took.Round(time.Millisecond), hsVmRSS(t, c.broker.cmd.Process.Pid)>>20,
				hsVmRSS(t, c.ns.cmd.Process.Pid)>>20, nsRSS0>>20)
			hrSendSample(t, c, names)
			hrStillRegistered(t, c, tc.name)
			if b, _ := os.ReadFile(c.ns.logPath); strings.Contains(string(b), "closed a connection") {
				t.Errorf("%s: the name server cut a broker connection:\n%s", tc.name, c.logTails(10))
			}
		})
	}
}

// hrHeartbeat sends one HEART_BEAT (34) on conn with consumer groups
// prefix-<from..to>.
func hrHeartbeat(t *testing.T, conn net.Conn, prefix string, from, to int) {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"clientID":"hr-flood@1","producerDataSet":[],"consumerDataSet":[`)
	for i := from; i < to; i++ {
		if i > from {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"groupName":"%s%06d","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","subscriptionDataSet":[],"unitMode":false}`, prefix, i)
	}
	b.WriteString("]}")
	resp, err := invokeOn(conn, newRequest(codeHeartbeat, nil, []byte(b.String())), time.Minute)
	if err != nil || resp.Code != 0 {
		t.Fatalf("heartbeat %d..%d: %v %v", from, to, resp, err)
	}
}

// TestHostileHeartbeatFlood: raw heartbeats for 100,000 consumer groups
// create 100,000 %RETRY% topics (as Apache does); with the default
// registration keys the broker stays in the cluster and every retry topic
// is routed (before the fix, the 18.6 MB registration frame was refused every
// period and no new topic ever reached the name server).
func TestHostileHeartbeatFlood(t *testing.T) {
	c := newClusterConf(t, "hrflood", "registerNameServerPeriod=5000\n")
	conn, err := net.DialTimeout("tcp", c.brokerAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	prefix := "hrflood-"
	start := time.Now()
	const per = 1000
	for i := 0; i < hrTopics; i += per {
		hrHeartbeat(t, conn, prefix, i, i+per)
	}
	conn.Close()
	t.Logf("%d heartbeat groups sent in %s", hrTopics, time.Since(start).Round(time.Millisecond))
	names := make([]string, hrTopics)
	for i := range names {
		names[i] = fmt.Sprintf("%%RETRY%%%s%06d", prefix, i)
	}
	took := hrWaitTopics(t, c, names, 3*time.Minute, "heartbeat flood")
	t.Logf("all %d retry topics routed %s after the flood; VmRSS broker %d MB, name server %d MB",
		hrTopics, took.Round(time.Millisecond), hsVmRSS(t, c.broker.cmd.Process.Pid)>>20, hsVmRSS(t, c.ns.cmd.Process.Pid)>>20)
	// Two more periods: the full registrations of 100,000 topics keep it in.
	waitFor(t, 11*time.Second, func() bool { return false })
	hrStillRegistered(t, c, "two registration periods after the flood")
	hrSendSample(t, c, names)
}

// hrProxy forwards one listener to target, keeping the upstream connections
// so that the test can write into them.
type hrProxy struct {
	ln     net.Listener
	mu     sync.Mutex
	upconn []net.Conn
	cut    atomic.Int32 // upstream connections the target closed
}

func newHRProxy(t *testing.T, target string) *hrProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &hrProxy{ln: ln}
	go func() {
		for {
			down, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				down.Close()
				continue
			}
			p.mu.Lock()
			p.upconn = append(p.upconn, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, down); up.Close() }()
			go func() { _, _ = io.Copy(down, up); p.cut.Add(1); down.Close() }()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range p.upconn {
			c.Close()
		}
		p.mu.Unlock()
	})
	return p
}

// poison writes a frame whose length field is below 4 into every upstream
// connection: the name server cannot read it and cuts the connection.
func (p *hrProxy) poison() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.upconn {
		_, _ = c.Write([]byte{0, 0, 0, 1, 0xff})
	}
	return len(p.upconn)
}

// TestHostileBadFrameKeepsBroker: the broker registers through a proxy; a
// frame the name server cannot read, written into that registration
// connection, makes the name server cut it — and the broker stays routed
// (it is alive; only its connection was bad). Before 5515742 the name server
// dropped every broker registered over a connection it closed.
func TestHostileBadFrameKeepsBroker(t *testing.T) {
	c := newCluster(t, "hrbadframe")
	proxy := newHRProxy(t, c.nsAddr)
	c.stopBroker()
	// The broker's namesrvAddr (-n) is the proxy while it starts.
	real := c.nsAddr
	c.nsAddr = proxy.ln.Addr().String()
	err := c.startBroker()
	c.nsAddr = real
	if err != nil {
		t.Fatalf("start broker behind the proxy: %v", err)
	}
	n := proxy.poison()
	if n == 0 {
		t.Fatal("the broker opened no connection through the proxy")
	}
	if !waitFor(t, 10*time.Second, func() bool { return int(proxy.cut.Load()) >= n }) {
		t.Fatalf("the name server did not cut the poisoned connections (%d of %d)\n%s", proxy.cut.Load(), n, c.logTails(10))
	}
	hrStillRegistered(t, c, "right after the name server cut the registration connection")
	if b, _ := os.ReadFile(c.ns.logPath); strings.Contains(string(b), "broker removed") {
		t.Errorf("the name server removed the broker:\n%s", c.logTails(10))
	}
}
