package compattest

// TestDocker drives rocketgo's image in a real Docker engine, brought up by
// docker/test.sh (make test-docker) from docker/docker-compose.yml: the
// official Go client (rocketmq-client-go v2) produces and consumes from the
// host through the published ports, then the broker container is restarted
// and every acknowledged message must still be consumable. Skipped unless
// ROCKETGO_DOCKER=1; the addresses come from test.sh:
//
//	ROCKETGO_DOCKER_NS              name server, host:published port
//	ROCKETGO_DOCKER_BROKER          brokerIP1:listenPort (same port in and out)
//	ROCKETGO_DOCKER_BROKER_CONTAINER the broker's container id (docker restart);
//	                                empty in the run from a container on the
//	                                compose network, which has no docker CLI
//	ROCKETGO_DOCKER_PROXY           the proxy's published gRPC port (TestDocker5x)
//	ROCKETGO_DOCKER_SLAVE           the broker's slave (docker-compose-2m2s.yml):
//	                                routes must list it
//	ROCKETGO_DOCKER_METRICS         the broker's published metrics port
//	                                (host:port): the sends must be counted there
//	ROCKETGO_DOCKER_DRAIN           1: run the image's mqbroker-drain in the
//	                                broker container (its broker.conf lets
//	                                brokerPermission be updated)

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
)

// dockerEnv returns the compose deployment test.sh started, or skips.
func dockerEnv(t *testing.T) (c *cluster, container string) {
	t.Helper()
	if os.Getenv("ROCKETGO_DOCKER") != "1" {
		t.Skip("ROCKETGO_DOCKER=1 not set: run make test-docker (docker/test.sh)")
	}
	ns, br := os.Getenv("ROCKETGO_DOCKER_NS"), os.Getenv("ROCKETGO_DOCKER_BROKER")
	container = os.Getenv("ROCKETGO_DOCKER_BROKER_CONTAINER")
	if ns == "" || br == "" {
		t.Fatal("ROCKETGO_DOCKER_NS and ROCKETGO_DOCKER_BROKER must be set (docker/test.sh sets them)")
	}
	return &cluster{name: "docker", nsAddr: ns, brokerAddr: br}, container
}

// dockerProxy returns the proxy container's gRPC address test.sh published.
func dockerProxy(t *testing.T) string {
	t.Helper()
	addr := os.Getenv("ROCKETGO_DOCKER_PROXY")
	if addr == "" {
		t.Fatal("ROCKETGO_DOCKER_PROXY must be set (docker/test.sh sets it)")
	}
	return addr
}

// waitDial waits until addr accepts TCP connections.
func waitDial(t *testing.T, addr string, timeout time.Duration) {
	t.Helper()
	var last error
	if !waitFor(t, timeout, func() bool {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			last = err
			return false
		}
		_ = conn.Close()
		return true
	}) {
		t.Fatalf("%s not accepting connections within %s: %v", addr, timeout, last)
	}
}

func TestDocker(t *testing.T) {
	c, container := dockerEnv(t)
	waitDial(t, c.nsAddr, 30*time.Second)
	waitDial(t, c.brokerAddr, 30*time.Second)

	topic := uniq("DockerTopic")
	createTopic(t, c, topic)
	if slave := os.Getenv("ROCKETGO_DOCKER_SLAVE"); slave != "" {
		// The name server lists every registered address of a broker name
		// in its routes: the slave under brokerId 1.
		var last string
		if !waitFor(t, 60*time.Second, func() bool {
			_, r, _, err := queryRoute(c.nsAddr, topic)
			if err != nil || r == nil {
				return false
			}
			last = r.raw
			// Apache's fastjson writes the integer keys unquoted; accept both.
			return strings.Contains(r.raw, `1:"`+slave+`"`) || strings.Contains(r.raw, `"1":"`+slave+`"`)
		}) {
			t.Fatalf("route of %s never listed the slave %s under brokerId 1: %s", topic, slave, last)
		}
	}
	p := newProducer(t, c)

	const n = 200
	var acked []string
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("d%03d", i)
		r := p.mustSend(t, newMsg(topic, id, "docker"))
		if r.MessageQueue.BrokerName != "broker-a" {
			t.Fatalf("send %s went to broker %q, want broker-a from the compose file's broker.conf", id, r.MessageQueue.BrokerName)
		}
		acked = append(acked, id)
	}

	if m := os.Getenv("ROCKETGO_DOCKER_METRICS"); m != "" {
		dockerMetrics(t, m, topic, n)
	}

	col := newCollector("before")
	h := startConsumer(t, c, uniq("DockerCG"), topic, "*", col)
	waitAll(t, col, acked, 60*time.Second, "consume from the published ports")
	h.shutdown()
	if container == "" {
		t.Log("no ROCKETGO_DOCKER_BROKER_CONTAINER (run from a container): no drain, no broker restart")
		return
	}
	if os.Getenv("ROCKETGO_DOCKER_DRAIN") == "1" {
		dockerDrain(t, c, container, topic)
	}

	// docker restart sends SIGTERM, waits up to -t seconds, then SIGKILL;
	// the store is a bind mount, so it outlives the container's process.
	startedAt := func() string {
		out, err := exec.Command("docker", "inspect", "-f", "{{.State.StartedAt}}", container).Output()
		if err != nil {
			t.Fatalf("docker inspect %s: %v", container, err)
		}
		return strings.TrimSpace(string(out))
	}
	before := startedAt()
	start := time.Now()
	out, err := exec.Command("docker", "restart", "-t", "20", container).CombinedOutput()
	if err != nil {
		t.Fatalf("docker restart %s: %v\n%s", container, err, out)
	}
	if after := startedAt(); after == before {
		t.Fatalf("broker container start time unchanged (%s): it was not restarted", before)
	}
	waitDial(t, c.brokerAddr, 30*time.Second)
	t.Logf("broker container restarted and listening in %s", time.Since(start).Round(time.Millisecond))
	waitRoute(t, c, topic, 0)

	// After the restart: a fresh group reads the topic from the first
	// offset and must see every message acknowledged before it, plus new
	// ones sent after it.
	for i := 0; i < 20; i++ {
		id := fmt.Sprintf("after%02d", i)
		var sendErr error
		if !waitFor(t, 30*time.Second, func() bool {
			_, sendErr = p.sendSync(context.Background(), newMsg(topic, id, "docker"))
			return sendErr == nil
		}) {
			t.Fatalf("send %s after the broker restart: %v", id, sendErr)
		}
		acked = append(acked, id)
	}
	col2 := newCollector("after")
	startConsumer(t, c, uniq("DockerCG2"), topic, "*", col2)
	waitAll(t, col2, acked, 60*time.Second, "consume after docker restart of the broker")
	if d := col2.distinct(); d != len(acked) {
		t.Fatalf("after restart: %d distinct messages, want %d", d, len(acked))
	}
}

// TestDocker5x: docker/docker-compose-5.x.yml (name server, broker, proxy
// containers); the official Go v5 SDK sends and receives through the proxy
// container's published gRPC port, so the proxy, inside the compose
// network, must reach the broker at the address the broker advertises.
func TestDocker5x(t *testing.T) {
	c, _ := dockerEnv(t)
	proxyAddr := dockerProxy(t)
	waitDial(t, c.nsAddr, 30*time.Second)
	waitDial(t, c.brokerAddr, 30*time.Second)
	waitDial(t, proxyAddr, 30*time.Second)
	quietSDK()
	pp := &proxyProc{addr: proxyAddr}

	topic := uniq("Docker5Topic")
	createTopic(t, c, topic)
	p := newV5Producer(t, pp, rmq.WithTopics(topic))
	const n = 50
	var want []string
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("v5-%02d", i)
		m := &rmq.Message{Topic: topic, Body: []byte("body-" + id)}
		m.AddProperty(idProp, id)
		m.SetTag("docker")
		if _, err := p.Send(context.Background(), m); err != nil {
			t.Fatalf("v5 send %s through the proxy container %s: %v", id, proxyAddr, err)
		}
		want = append(want, id)
	}

	cfg := sdkConfig(pp)
	cfg.ConsumerGroup = uniq("Docker5CG")
	sc, err := rmq.NewSimpleConsumer(cfg, rmq.WithAwaitDuration(5*time.Second),
		rmq.WithSubscriptionExpressions(map[string]*rmq.FilterExpression{topic: rmq.SUB_ALL}))
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Start(); err != nil {
		t.Fatalf("v5 SimpleConsumer start via %s: %v", proxyAddr, err)
	}
	t.Cleanup(func() { _ = sc.GracefulStop() })

	got := map[string]int{}
	deadline := time.Now().Add(60 * time.Second)
	for len(got) < n && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		mvs, err := sc.Receive(ctx, 16, 20*time.Second)
		cancel()
		if err != nil {
			continue // MESSAGE_NOT_FOUND after a long poll: receive again
		}
		for _, mv := range mvs {
			got[mv.GetProperties()[idProp]]++
			if err := sc.Ack(context.Background(), mv); err != nil {
				t.Fatalf("ack: %v", err)
			}
		}
	}
	for _, id := range want {
		if got[id] == 0 {
			t.Fatalf("received %d of %d through the proxy container (e.g. %s missing)", len(got), n, id)
		}
	}
}

// dockerMetrics scrapes the broker's published metrics port until it
// counts n messages in for topic (the exporter reads the counters at
// scrape time, so the first scrape after the sends has them).
func dockerMetrics(t *testing.T, addr, topic string, n int) {
	t.Helper()
	label, value := `topic="`+topic+`"`, fmt.Sprintf("} %d", n)
	var last string
	if !waitFor(t, 30*time.Second, func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			last = err.Error()
			return false
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			last = err.Error()
			return false
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "rocketmq_messages_in_total{") && strings.Contains(line, label) && strings.HasSuffix(line, value) {
				return true
			}
			if strings.HasPrefix(line, "rocketmq_messages_in_total{") && strings.Contains(line, label) {
				last = line
			}
		}
		return false
	}) {
		t.Fatalf("metrics at %s never counted %d messages in for %s; last rocketmq_messages_in_total line: %s", addr, n, topic, last)
	}
}

// dockerDrain runs the image's mqbroker-drain (the Helm chart's preStop) in
// the broker container: the broker must then be routed read-only (perm 4)
// and the script end at once (no consumer online, so no lag to wait for).
// The write permission is given back afterwards, as a restarted pod's
// fresh broker.conf would.
func dockerDrain(t *testing.T, c *cluster, container, topic string) {
	t.Helper()
	start := time.Now()
	out, err := exec.Command("docker", "exec", "-e", "BROKER_ADDR=127.0.0.1:"+portOf(c.brokerAddr),
		container, "./mqbroker-drain", "20").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "write permission wiped") || !strings.Contains(string(out), "drained") {
		t.Fatalf("mqbroker-drain in %s: %v\n%s", container, err, out)
	}
	took := time.Since(start)
	if ok, last := waitPerm(t, c, topic, 4); !ok {
		t.Fatalf("after mqbroker-drain the route of %s never became read-only (perm 4): %s", topic, last)
	}
	t.Logf("mqbroker-drain: read-only in the route, script done in %s", took.Round(time.Millisecond))
	// Back, as the script took it: the name servers' write bit.
	restore := []string{"./mqadmin", "addWritePerm", "-b", "broker-a"}
	out, err = exec.Command("docker", append([]string{"exec", container}, restore...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("write permission back (%v): %v\n%s", restore, err, out)
	}
	if ok, last := waitPerm(t, c, topic, 6); !ok {
		t.Fatalf("route of %s not writable again after addWritePerm: %s", topic, last)
	}
}

func portOf(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}
