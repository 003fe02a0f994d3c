package compattest

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	grpccreds "google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// The gRPC proxy (cmd/mqproxy) in front of a cluster, driven by
// the official Go v5 SDK (github.com/apache/rocketmq-clients/golang/v5,
// pinned in go.mod) and, for hostile input, by a raw gRPC client built on
// the SDK's generated apache.rocketmq.v2 stubs.

type proxyProc struct {
	addr string // 127.0.0.1:grpcPort
	p    *proc
	log  string
	bin  string // what started it, for restart
	args []string
	c    *cluster // local mode: the broker serving the proxy, restarted with it
}

// restart stops the proxy (SIGTERM) and starts it again on the same port.
func (pp *proxyProc) restart(t *testing.T) {
	t.Helper()
	if pp.c != nil {
		termProc(pp.c.broker, 30*time.Second)
		if err := pp.c.startBroker(); err != nil {
			t.Fatalf("restart broker with its proxy: %v", err)
		}
		pp.p = pp.c.broker
		if err := waitTCP(pp.p, pp.addr, readyTimeout); err != nil {
			t.Fatalf("restarted local proxy not listening: %v", err)
		}
		return
	}
	termProc(pp.p, 30*time.Second)
	var err error
	pp.p, err = startProc(pp.p.name, pp.bin, pp.args, pp.log)
	if err != nil {
		t.Fatalf("restart proxy: %v", err)
	}
	if err := waitTCP(pp.p, pp.addr, 90*time.Second); err != nil {
		t.Fatalf("restarted proxy not listening: %v", err)
	}
}

var sdkLogOnce sync.Once

// implOverride, when set, is proxyImpl's answer whatever the environment
// says (TestProxyLocal).
var implOverride atomic.Value

// TestProxyLocal: the producer and consumer scenarios with the proxy
// inside the broker (mqbroker --enable-proxy, Apache's local mode): gRPC
// served from the broker's process, requests handed to its handlers with no
// socket in between. make test-proxy-local runs every proxy test so.
func TestProxyLocal(t *testing.T) {
	implOverride.Store("local")
	defer implOverride.Store("")
	t.Run("producers", func(t *testing.T) { testProxyProducers(t, "rocketgo") })
	t.Run("simpleConsumer", func(t *testing.T) { testProxySimpleConsumer(t, "rocketgo") })
	t.Run("fifoConsumer", func(t *testing.T) { testProxyFIFOConsumer(t, "rocketgo") })
}

// proxyImpl is ROCKETGO_PROXY_IMPL: "rocketgo" (mqproxy, the default),
// "local" (mqbroker --enable-proxy: the broker serves gRPC itself; rocketgo
// brokers only) or "apache", Apache 5.3.3's proxy from the reference jars
// (run.sh proxy, needs Java): the same tests against it prove they encode
// Apache's behaviour.
func proxyImpl() string {
	if v, _ := implOverride.Load().(string); v != "" {
		return v
	}
	if v := os.Getenv("ROCKETGO_PROXY_IMPL"); v != "" {
		return v
	}
	return "rocketgo"
}

// startProxy runs mqproxy in cluster mode against c's name server (or
// Apache's proxy, see proxyImpl).
func startProxy(t *testing.T, c *cluster, extraJSON string) *proxyProc {
	t.Helper()
	return startProxyImpl(t, c, extraJSON, proxyImpl())
}

// startProxyImpl is startProxy with the implementation named (proxyImpl's
// values), whatever the environment says.
func startProxyImpl(t *testing.T, c *cluster, extraJSON, impl string) *proxyProc {
	t.Helper()
	if impl == "apache" {
		return startApacheProxy(t, c, extraJSON)
	}
	quietSDK()
	port, err := pickPort()
	if err != nil {
		t.Fatalf("pick proxy port: %v", err)
	}
	dir := filepath.Join(workDir, uniq("proxy"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "rmq-proxy.json")
	body := fmt.Sprintf(`{"rocketMQClusterName":%q,"namesrvAddr":%q,"grpcServerPort":%d%s}`, clusterName, c.nsAddr, port, extraJSON)
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	pp := &proxyProc{addr: fmt.Sprintf("127.0.0.1:%d", port), log: filepath.Join(dir, "proxy.log"),
		bin: filepath.Join(binDir, "mqproxy"), args: []string{"-pc", conf}}
	if impl == "local" {
		return startLocalProxy(t, c, pp)
	}
	pp.p, err = startProc("mqproxy", pp.bin, pp.args, pp.log)
	if err != nil {
		t.Fatalf("start mqproxy: %v", err)
	}
	t.Cleanup(func() {
		if !pp.p.exited() {
			pp.p.stop()
		}
		if t.Failed() {
			t.Logf("----- tail of %s -----\n%s", pp.log, tailFile(pp.log, 40))
		}
	})
	if err := waitTCP(pp.p, pp.addr, readyTimeout); err != nil {
		t.Fatalf("mqproxy not listening: %v", err)
	}
	return pp
}

// startLocalProxy restarts c's broker (a rocketgo one) with --enable-proxy
// and pp's rmq-proxy.json: Apache's local mode, gRPC served from the
// broker's process. The store, topics and offsets carry over.
func startLocalProxy(t *testing.T, c *cluster, pp *proxyProc) *proxyProc {
	t.Helper()
	if c.broker == nil || strings.HasPrefix(c.broker.name, "apache") {
		t.Fatalf("local proxy mode needs a rocketgo broker")
	}
	termProc(c.broker, 30*time.Second)
	c.brokerArgs = []string{"--enable-proxy", "-pc", pp.args[1]}
	if err := c.startBroker(); err != nil {
		t.Fatalf("restart broker with --enable-proxy: %v\n%s", err, c.logTails(40))
	}
	pp.p, pp.c, pp.log = c.broker, c, filepath.Join(c.dir, "broker.log")
	if err := waitTCP(pp.p, pp.addr, readyTimeout); err != nil {
		t.Fatalf("local proxy not listening: %v\n%s", err, c.logTails(40))
	}
	return pp
}

// quietSDK sends the Go v5 SDK's log to the run's directory, at warn.
func quietSDK() {
	sdkLogOnce.Do(func() {
		// The SDK writes its log under $HOME unless told otherwise.
		_ = os.Setenv("rocketmq.client.logRoot", filepath.Join(workDir, "sdk-logs"))
		_ = os.Setenv("rocketmq.client.logLevel", "warn")
		rmq.ResetLogger()
	})
}

func sdkConfig(pp *proxyProc) *rmq.Config {
	return &rmq.Config{Endpoint: pp.addr, Credentials: &credentials.SessionCredentials{}}
}

// newV5Producer starts an SDK producer (TLS, the SDK's default) for topics.
func newV5Producer(t *testing.T, pp *proxyProc, opts ...rmq.ProducerOption) rmq.Producer {
	t.Helper()
	p, err := rmq.NewProducer(sdkConfig(pp), opts...)
	if err != nil {
		t.Fatalf("v5 NewProducer: %v", err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("v5 producer Start via %s: %v", pp.addr, err)
	}
	t.Cleanup(func() { _ = p.GracefulStop() })
	return p
}

// rawGRPC dials the proxy with the generated stubs: plaintext, or TLS
// without verification (the proxy's certificate is self-signed).
func rawGRPC(t *testing.T, pp *proxyProc, useTLS bool) v2.MessagingServiceClient {
	t.Helper()
	creds := insecure.NewCredentials()
	if useTLS {
		creds = grpccreds.NewTLS(&tls.Config{InsecureSkipVerify: true})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cc, err := grpc.DialContext(ctx, pp.addr, grpc.WithTransportCredentials(creds), grpc.WithBlock())
	if err != nil {
		t.Fatalf("dial proxy %s (tls=%v): %v", pp.addr, useTLS, err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return v2.NewMessagingServiceClient(cc)
}

// clientCtx carries the metadata every SDK call carries (the Go SDK's
// language is "GO", a LanguageCode Apache's proxy knows).
func clientCtx(clientID string) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	return metadata.AppendToOutgoingContext(ctx, "x-mq-client-id", clientID, "x-mq-language", "GO",
		"x-mq-protocol", "v2", "x-mq-client-version", "5.1.2"), cancel
}

// createTypedTopic creates topic with Apache 5's message.type attribute
// (UPDATE_AND_CREATE_TOPIC attributes "+message.type=FIFO"): the proxy
// answers it as the queues' accept_message_types, and the SDKs refuse to
// send another type to it.
func createTypedTopic(t *testing.T, c *cluster, topic, mtype string) {
	t.Helper()
	createTypedTopicQueues(t, c, topic, mtype, 8)
}

// createTypedTopicQueues is createTypedTopic with queues read and write
// queues.
func createTypedTopicQueues(t *testing.T, c *cluster, topic, mtype string, queues int) {
	t.Helper()
	n := strconv.Itoa(queues)
	resp, err := rawInvoke(c.brokerAddr, newRequest(17, map[string]string{
		"topic": topic, "defaultTopic": "TBW102", "readQueueNums": n, "writeQueueNums": n, "perm": "6",
		"topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false",
		"attributes": "+message.type=" + mtype,
	}, nil), 5*time.Second)
	if err != nil || resp.Code != 0 {
		t.Fatalf("create topic %s (%s): %v %+v", topic, mtype, err, resp)
	}
	waitRoute(t, c, topic, 0)
}

// startApacheProxy runs Apache's proxy (cluster mode) from the reference
// jars against c's name server; c's broker must be registered already (the
// proxy creates its heartbeat-sync topic on the cluster at start).
func startApacheProxy(t *testing.T, c *cluster, extraJSON string) *proxyProc {
	t.Helper()
	requireJava(t)
	script, err := filepath.Abs(filepath.Join("reference", "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	gport, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	rport, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(workDir, uniq("apache-proxy"))
	pp := &proxyProc{addr: fmt.Sprintf("127.0.0.1:%d", gport), log: filepath.Join(dir, "proxy.log")}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "proxy.extra.json"), []byte(extraJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	pp.bin, pp.args = script, []string{"proxy", strconv.Itoa(gport), strconv.Itoa(rport), c.nsAddr, dir, clusterName}
	pp.p, err = startProc("apache-proxy", pp.bin, pp.args, pp.log)
	if err != nil {
		t.Fatalf("start apache proxy: %v", err)
	}
	t.Cleanup(func() {
		termProc(pp.p, 30*time.Second)
		if t.Failed() {
			t.Logf("----- tail of %s -----\n%s", pp.log, tailFile(pp.log, 40))
		}
	})
	if err := waitTCP(pp.p, pp.addr, 90*time.Second); err != nil {
		t.Fatalf("apache proxy not listening: %v\n%s", err, tailFile(pp.log, 40))
	}
	return pp
}
