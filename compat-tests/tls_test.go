package compattest

// TLS on Remoting against real processes: the name server and the broker in
// enforcing mode with mutual TLS (a CA made for the test), the broker
// registering over TLS; the default (permissive) servers serving TLS and
// plaintext on one port; the official Java client with setUseTLS(true) and
// mqadmin with -Dtls.enable=true. The Go Remoting client
// (rocketmq-client-go v2.1.2) has no TLS option.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
)

// tlsPKI is a CA and the certificates it signed, as PEM files in a
// temporary directory; the keys live only as long as the test.
type tlsPKI struct {
	ca, serverCert, serverKey, clientCert, clientKey string
	pool                                             *x509.CertPool
	client                                           tls.Certificate
}

func newTLSPKI(t *testing.T) *tlsPKI {
	t.Helper()
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mk := func(cn string, parent *x509.Certificate, pkey *ecdsa.PrivateKey, ca bool) (*ecdsa.PrivateKey, *x509.Certificate, []byte) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
		tmpl := &x509.Certificate{
			SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
			ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
			BasicConstraintsValid: true, IsCA: ca,
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		}
		if parent == nil {
			parent, pkey = tmpl, key
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, pkey)
		if err != nil {
			t.Fatal(err)
		}
		cert, _ := x509.ParseCertificate(der)
		return key, cert, der
	}
	keyPEM := func(name string, k *ecdsa.PrivateKey) string {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return write(name, "PRIVATE KEY", der)
	}
	p := &tlsPKI{pool: x509.NewCertPool()}
	caKey, ca, caDER := mk("rocketgo test ca", nil, nil, true)
	p.ca = write("ca.pem", "CERTIFICATE", caDER)
	p.pool.AddCert(ca)
	sk, _, sDER := mk("rocketgo test server", ca, caKey, false)
	p.serverCert, p.serverKey = write("server.pem", "CERTIFICATE", sDER), keyPEM("server.key", sk)
	ck, _, cDER := mk("rocketgo test client", ca, caKey, false)
	p.clientCert, p.clientKey = write("client.pem", "CERTIFICATE", cDER), keyPEM("client.key", ck)
	var err error
	if p.client, err = tls.LoadX509KeyPair(p.clientCert, p.clientKey); err != nil {
		t.Fatal(err)
	}
	return p
}

// serverArgs are the -D arguments of a server in enforcing mode with
// mutual TLS, whose own clients (broker→namesrv) present the client
// certificate and verify the server against the CA. The handshake timeout
// is the default (5 s): a cold JVM takes over a second from its connect to
// its ClientHello on a loaded machine.
func (p *tlsPKI) serverArgs() []string {
	return []string{
		"-Dtls.server.mode=enforcing",
		"-Dtls.config.file=/nonexistent/tls.properties",
		"-Dtls.test.mode.enable=false",
		"-Dtls.server.certPath=" + p.serverCert, "-Dtls.server.keyPath=" + p.serverKey,
		"-Dtls.server.need.client.auth=require", "-Dtls.server.authClient=true",
		"-Dtls.server.trustCertPath=" + p.ca,
		"-Dtls.client.certPath=" + p.clientCert, "-Dtls.client.keyPath=" + p.clientKey,
		"-Dtls.client.authServer=true", "-Dtls.client.trustCertPath=" + p.ca,
	}
}

// clientConfig verifies the server against the CA (no host name: servers
// are dialled by IP) and presents the client certificate.
func (p *tlsPKI) clientConfig() *tls.Config {
	return &tls.Config{RootCAs: p.pool, ServerName: "127.0.0.1", Certificates: []tls.Certificate{p.client}}
}

// tlsInvoke sends one request over a TLS connection.
func tlsInvoke(addr string, cfg *tls.Config, req *rawCmd) (*rawCmd, error) {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return invokeOn(conn, req, 5*time.Second)
}

// startTLSCluster starts a name server and a broker with the same -D
// arguments and waits until the broker is in TBW102's route, asked over TLS.
func startTLSCluster(t *testing.T, name string, p *tlsPKI) *cluster {
	t.Helper()
	return startTLSClusterConf(t, name, p.serverArgs(), "", p.clientConfig())
}

// startTLSClusterConf is startTLSCluster with the servers' -D arguments,
// extra broker.conf lines, and the TLS settings to ask the route with.
func startTLSClusterConf(t *testing.T, name string, args []string, extraConf string, client *tls.Config) *cluster {
	t.Helper()
	c := &cluster{name: name, brokerName: "broker-" + name, brokerArgs: args, extraConf: extraConf}
	c.dir = filepath.Join(workDir, name)
	t.Cleanup(func() { os.RemoveAll(c.dir) })
	if err := os.MkdirAll(filepath.Join(c.dir, "store"), 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	if c.nsPort, err = pickPort(); err != nil {
		t.Fatal(err)
	}
	if c.brokerPort, err = pickPort(); err != nil {
		t.Fatal(err)
	}
	c.nsAddr = fmt.Sprintf("127.0.0.1:%d", c.nsPort)
	c.brokerAddr = fmt.Sprintf("127.0.0.1:%d", c.brokerPort)
	t.Cleanup(c.stop)
	c.attachLogs(t)
	nsConf := filepath.Join(c.dir, "namesrv.properties")
	if err := os.WriteFile(nsConf, []byte(fmt.Sprintf("listenPort=%d\nkvConfigPath=%s\n", c.nsPort, filepath.Join(c.dir, "kvConfig.json"))), 0o644); err != nil {
		t.Fatal(err)
	}
	if c.ns, err = startProc("mqnamesrv", filepath.Join(binDir, "mqnamesrv"), append([]string{"-c", nsConf}, args...),
		filepath.Join(c.dir, "namesrv.log")); err != nil {
		t.Fatal(err)
	}
	if err := waitTCP(c.ns, c.nsAddr, readyTimeout); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(c.dir, "broker.properties")
	if err := os.WriteFile(conf, []byte(c.brokerConf()), 0o644); err != nil {
		t.Fatal(err)
	}
	if c.broker, err = startProc("mqbroker", filepath.Join(binDir, "mqbroker"), append([]string{"-n", c.nsAddr, "-c", conf}, c.brokerArgs...),
		filepath.Join(c.dir, "broker.log")); err != nil {
		t.Fatal(err)
	}
	if err := waitTCP(c.broker, c.brokerAddr, readyTimeout); err != nil {
		t.Fatal(err)
	}
	var last string
	ok := waitFor(t, readyTimeout, func() bool {
		resp, err := tlsInvoke(c.nsAddr, client, newRequest(codeGetRouteInfoByTopic, map[string]string{"topic": "TBW102"}, nil))
		switch {
		case err != nil:
			last = err.Error()
		case resp.Code != 0:
			last = fmt.Sprintf("code %d %s", resp.Code, resp.Remark)
		default:
			rd, err := parseRoute(resp.Body)
			if err == nil && rd.hasBroker(c.brokerAddr) {
				return true
			}
			last = "no broker in " + string(resp.Body)
		}
		return false
	})
	if !ok {
		t.Fatalf("broker not registered over TLS within %v: %s", readyTimeout, last)
	}
	return c
}

// The name server and the broker in enforcing mode with mutual TLS: the
// broker registers over TLS; plaintext clients, clients without a
// certificate and stalled handshakes are closed; TLS clients are served.
func TestTLSEnforcingCluster(t *testing.T) {
	start := time.Now()
	p := newTLSPKI(t)
	c := startTLSClusterConf(t, "tls-enforcing", append(p.serverArgs(), "-Dtls.server.handshakeTimeoutMillis=1500"), "", p.clientConfig())
	vip := fmt.Sprintf("127.0.0.1:%d", c.brokerPort-2) // the broker's VIP channel (fastListenPort)
	for _, tg := range []struct{ name, addr string }{{"namesrv", c.nsAddr}, {"broker", c.brokerAddr}, {"broker-vip", vip}} {
		t.Run(tg.name, func(t *testing.T) {
			route := newRequest(codeGetRouteInfoByTopic, map[string]string{"topic": "TBW102"}, nil)
			if strings.HasPrefix(tg.name, "broker") {
				route = newRequest(codeGetMaxOffset, map[string]string{"topic": "TBW102", "queueId": "0"}, nil)
			}
			if resp, err := tlsInvoke(tg.addr, p.clientConfig(), route); err != nil || resp.Code != 0 {
				t.Fatalf("over mutual TLS: %v %v", resp, err)
			}
			if resp, err := rawInvoke(tg.addr, route, 3*time.Second); err == nil {
				t.Fatalf("plaintext request answered by an enforcing server: code %d", resp.Code)
			}
			noCert := &tls.Config{RootCAs: p.pool, ServerName: "127.0.0.1"}
			if resp, err := tlsInvoke(tg.addr, noCert, route); err == nil {
				t.Fatalf("TLS client without a certificate answered: code %d", resp.Code)
			}
			// Stalled handshakes (silent, and a ClientHello record that never
			// completes) are closed within the 1.5 s handshake timeout, while
			// TLS clients are served.
			const stalled = 200
			var wg sync.WaitGroup
			var mu sync.Mutex
			var open []string
			t0 := time.Now()
			for i := range stalled {
				nc, err := net.DialTimeout("tcp", tg.addr, 5*time.Second)
				if err != nil {
					t.Fatalf("dial %d: %v", i, err)
				}
				if i%2 == 1 {
					_, _ = nc.Write([]byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01})
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer nc.Close()
					_ = nc.SetReadDeadline(time.Now().Add(8 * time.Second))
					buf := make([]byte, 512)
					for {
						if _, err := nc.Read(buf); err != nil {
							if ne, ok := err.(net.Error); ok && ne.Timeout() {
								mu.Lock()
								open = append(open, nc.LocalAddr().String())
								mu.Unlock()
							}
							return
						}
					}
				}()
			}
			if resp, err := tlsInvoke(tg.addr, p.clientConfig(), route); err != nil || resp.Code != 0 {
				t.Fatalf("during %d stalled handshakes: %v %v", stalled, resp, err)
			}
			wg.Wait()
			if len(open) > 0 {
				t.Fatalf("%d of %d stalled connections still open after 8 s", len(open), stalled)
			}
			t.Logf("%d stalled handshakes closed within %v", stalled, time.Since(t0).Round(time.Millisecond))
			requireAlive(t, c)
		})
	}
	t.Run("mqadmin", func(t *testing.T) {
		// Go mqadmin takes Apache's -Dtls.* settings on its command line.
		out, err := goAdmin("clusterList", "-n", c.nsAddr, "-Dtls.enable=true", "-Dtls.test.mode.enable=false",
			"-Dtls.config.file=/nonexistent/tls.properties", "-Dtls.client.certPath="+p.clientCert,
			"-Dtls.client.keyPath="+p.clientKey, "-Dtls.client.authServer=true", "-Dtls.client.trustCertPath="+p.ca)
		if err != nil || !strings.Contains(out, c.brokerName) {
			t.Fatalf("mqadmin clusterList over TLS: %v\n%s", err, out)
		}
		if out, err := goAdmin("clusterList", "-n", c.nsAddr); err == nil {
			t.Fatalf("mqadmin clusterList in plaintext answered by an enforcing name server:\n%s", out)
		}
	})
	t.Logf("enforcing, mutual TLS: %v", time.Since(start).Round(time.Millisecond))
}

// A controller, a name server and a broker in controller mode, all
// enforcing mutual TLS: the broker registers with the controller and is
// elected master over TLS (it appears in the route only once its role is
// known); a plaintext request to the controller is refused.
func TestTLSControllerMode(t *testing.T) {
	p := newTLSPKI(t)
	port, err := pickPort() // port+1 is free too: the raft port
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(workDir, "tls-ctl")
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctlAddr := fmt.Sprintf("127.0.0.1:%d", port)
	conf := filepath.Join(dir, "controller.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("controllerDLegerGroup=tls\ncontrollerDLegerPeers=n0-%s\ncontrollerDLegerSelfId=n0\n"+
		"controllerStorePath=%s\nconfigStorePath=%s\n", ctlAddr, filepath.Join(dir, "store"), filepath.Join(dir, "controller.properties"))), 0o644); err != nil {
		t.Fatal(err)
	}
	ctl, err := startProc("mqcontroller", filepath.Join(binDir, "mqcontroller"), append([]string{"-c", conf}, p.serverArgs()...),
		filepath.Join(dir, "controller.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctl.stop()
		if t.Failed() {
			t.Logf("tail of the controller:\n%s", tailFile(ctl.logPath, 30))
		}
	})
	if err := waitTCP(ctl, ctlAddr, readyTimeout); err != nil {
		t.Fatal(err)
	}
	replicaInfo := javaRequest(1004, map[string]string{"brokerName": "warmup"}, nil)
	if !waitFor(t, 30*time.Second, func() bool {
		r, err := tlsInvoke(ctlAddr, p.clientConfig(), replicaInfo)
		return err == nil && r.Code != 2007
	}) {
		t.Fatal("the controller never led (asked over TLS)")
	}
	if r, err := rawInvoke(ctlAddr, replicaInfo, 3*time.Second); err == nil {
		t.Fatalf("plaintext request answered by an enforcing controller: code %d", r.Code)
	}
	c := startTLSClusterConf(t, "tls-ctl-cluster", p.serverArgs(), "enableControllerMode=true\ncontrollerAddr="+ctlAddr+"\n", p.clientConfig())
	resp, err := tlsInvoke(c.nsAddr, p.clientConfig(), newRequest(codeGetRouteInfoByTopic, map[string]string{"topic": "TBW102"}, nil))
	if err != nil || resp.Code != 0 {
		t.Fatalf("route over TLS: %v %v", resp, err)
	}
	rd, err := parseRoute(resp.Body)
	if err != nil || rd.brokers[c.brokerName][0] != c.brokerAddr {
		t.Fatalf("broker not master (id 0) in the route: %v %s", err, resp.Body)
	}
	r, err := tlsInvoke(ctlAddr, p.clientConfig(), javaRequest(1004, map[string]string{"brokerName": c.brokerName}, nil))
	if err != nil || r.Code != 0 || r.ExtFields["masterAddress"] != c.brokerAddr {
		t.Fatalf("controller's replica info over TLS: %v %v", r, err)
	}
	// The controller told the broker its role over TLS: no failed notice,
	// and no plaintext connection refused by the broker.
	if !waitFor(t, 10*time.Second, func() bool {
		b, _ := os.ReadFile(ctl.logPath)
		return strings.Contains(string(b), "role change notified")
	}) {
		t.Fatal("the controller never notified the broker of its role")
	}
	if b, _ := os.ReadFile(ctl.logPath); strings.Contains(string(b), "role change not notified") {
		t.Fatalf("a role change notice failed:\n%s", tailFile(ctl.logPath, 20))
	}
	if b, _ := os.ReadFile(c.broker.logPath); strings.Contains(string(b), "plaintext connection refused") {
		t.Fatalf("the broker refused a plaintext connection:\n%s", tailFile(c.broker.logPath, 20))
	}
}

// mqproxy's Remoting side with -Dtls.enable and the client certificate, in
// front of the enforcing, mutual-TLS cluster: the Go v5 SDK's sends reach
// the broker (the proxy routes through the name server and sends to the
// broker over TLS). The proxy's gRPC side is the SDK's TLS as always.
func TestTLSProxy(t *testing.T) {
	if proxyImpl() != "rocketgo" {
		t.Skip("mqproxy (cluster mode) only")
	}
	p := newTLSPKI(t)
	c := startTLSCluster(t, "tls-proxy", p)
	topic := uniq("TlsProxy")
	if resp, err := tlsInvoke(c.brokerAddr, p.clientConfig(), createTopicReq(topic, 1, 1)); err != nil || resp.Code != 0 {
		t.Fatalf("create topic over TLS: %v %v", resp, err)
	}
	quietSDK()
	port, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(c.dir, "rmq-proxy.json")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(`{"rocketMQClusterName":%q,"namesrvAddr":%q,"grpcServerPort":%d}`,
		clusterName, c.nsAddr, port)), 0o644); err != nil {
		t.Fatal(err)
	}
	pp := &proxyProc{addr: fmt.Sprintf("127.0.0.1:%d", port), log: filepath.Join(c.dir, "proxy.log"), bin: filepath.Join(binDir, "mqproxy"),
		args: append([]string{"-pc", conf, "-Dtls.enable=true"}, p.serverArgs()[1:]...)}
	if pp.p, err = startProc("mqproxy", pp.bin, pp.args, pp.log); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pp.p.stop()
		if t.Failed() {
			t.Logf("tail of mqproxy:\n%s", tailFile(pp.log, 30))
		}
	})
	if err := waitTCP(pp.p, pp.addr, readyTimeout); err != nil {
		t.Fatal(err)
	}
	prod := newV5Producer(t, pp, rmq.WithTopics(topic))
	const n = 5
	for i := range n {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := prod.Send(ctx, &rmq.Message{Topic: topic, Body: []byte(fmt.Sprintf("tls-proxy-%d", i))})
		cancel()
		if err != nil {
			t.Fatalf("send %d through the proxy: %v", i, err)
		}
	}
	// The consume queue is written behind the send's answer: wait for it.
	var resp *rawCmd
	if !waitFor(t, 5*time.Second, func() bool {
		resp, err = tlsInvoke(c.brokerAddr, p.clientConfig(), newRequest(codeGetMaxOffset, map[string]string{"topic": topic, "queueId": "0"}, nil))
		return err == nil && resp.Code == 0 && resp.ExtFields["offset"] == fmt.Sprint(n)
	}) {
		t.Fatalf("max offset over TLS: %v %v; want %d", resp, err, n)
	}
}

// Apache's servers and ours, all enforcing mutual TLS from one CA: our
// broker registers with Apache's name server (our TLS client, Netty's
// server) and Apache's broker with ours (Netty's client, our server). The
// settings reach the JVMs as Apache's scripts pass them, in JAVA_OPT, which
// our binaries read too.
func TestReferenceTLS(t *testing.T) {
	requireJava(t)
	p := newTLSPKI(t)
	t.Setenv("JAVA_OPT", strings.Join(p.serverArgs(), " "))
	ours := startTLSClusterConf(t, "tls-ref-ours", nil, "", p.clientConfig()) // -D from JAVA_OPT
	// Both JVMs start side by side: Apache's name server, and Apache's
	// broker registering with ours.
	script := referenceScript(t)
	dir := filepath.Join(workDir, "tls-ref-apache")
	t.Cleanup(func() { os.RemoveAll(dir) })
	var nsPort, brokerPort int
	var err error
	if nsPort, err = pickPort(); err == nil {
		brokerPort, err = pickPort()
	}
	if err != nil {
		t.Fatal(err)
	}
	apacheNS, apacheBroker := fmt.Sprintf("127.0.0.1:%d", nsPort), fmt.Sprintf("127.0.0.1:%d", brokerPort)
	for _, j := range []struct {
		name string
		args []string
	}{
		{"apache-namesrv", []string{"namesrv", strconv.Itoa(nsPort), filepath.Join(dir, "ns")}},
		{"apache-broker", []string{"broker", strconv.Itoa(brokerPort), ours.nsAddr, filepath.Join(dir, "broker"), clusterName}},
	} {
		if err := os.MkdirAll(filepath.Join(dir, j.args[0]), 0o755); err != nil {
			t.Fatal(err)
		}
		jp, err := startProc(j.name, script, j.args, filepath.Join(dir, j.name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			jp.stop()
			if t.Failed() {
				t.Logf("tail of %s:\n%s", j.name, tailFile(jp.logPath, 30))
			}
		})
	}
	routeHas := func(nsAddr, brokerAddr string) func() bool {
		return func() bool {
			resp, err := tlsInvoke(nsAddr, p.clientConfig(), newRequest(codeGetRouteInfoByTopic, map[string]string{"topic": "TBW102"}, nil))
			if err != nil || resp.Code != 0 {
				return false
			}
			rd, err := parseRoute(resp.Body)
			return err == nil && rd.hasBroker(brokerAddr)
		}
	}
	// Our broker, pointed at Apache's name server (its registrations are
	// retried until that name server is up).
	b := &cluster{name: "tls-ref-ours-b2", brokerName: "broker-tls-ref-b2", nsAddr: apacheNS,
		dir: filepath.Join(workDir, "tls-ref-ours-b2")}
	t.Cleanup(func() { os.RemoveAll(b.dir) })
	if err := os.MkdirAll(filepath.Join(b.dir, "store"), 0o755); err != nil {
		t.Fatal(err)
	}
	if b.brokerPort, err = pickPort(); err != nil {
		t.Fatal(err)
	}
	b.brokerAddr = fmt.Sprintf("127.0.0.1:%d", b.brokerPort)
	conf := filepath.Join(b.dir, "broker.properties")
	if err := os.WriteFile(conf, []byte(b.brokerConf()), 0o644); err != nil {
		t.Fatal(err)
	}
	if b.broker, err = startProc("mqbroker-to-apache", filepath.Join(binDir, "mqbroker"), []string{"-c", conf},
		filepath.Join(b.dir, "broker.log")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.broker.stop()
		if t.Failed() {
			t.Logf("tail of our broker:\n%s", tailFile(b.broker.logPath, 30))
		}
	})
	if !waitFor(t, 120*time.Second, routeHas(ours.nsAddr, apacheBroker)) {
		t.Fatalf("Apache's broker %s not registered with our enforcing name server", apacheBroker)
	}
	if !waitFor(t, 90*time.Second, routeHas(apacheNS, b.brokerAddr)) {
		t.Fatalf("our broker %s not registered with Apache's enforcing name server", b.brokerAddr)
	}
	if resp, err := rawInvoke(apacheNS, newRequest(codeGetRouteInfoByTopic, map[string]string{"topic": "TBW102"}, nil), 3*time.Second); err == nil {
		t.Fatalf("Apache's name server answered plaintext (code %d): the TLS settings did not reach it", resp.Code)
	}
}

// goAdmin runs bin/mqadmin and returns its output.
func goAdmin(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(binDir, "mqadmin"), args...).CombinedOutput()
	return string(out), err
}

// Permissive mode without certificates (tls.test.mode.enable: a
// self-signed one): TLS and plaintext on one port, the broker registering
// in plaintext (tls.enable is off). Servers started without -Dtls.* speak
// no TLS (rocketgo's default is disabled; Apache's is permissive).
func TestTLSPermissive(t *testing.T) {
	insecure := &tls.Config{InsecureSkipVerify: true}
	c := startTLSClusterConf(t, "tls-permissive", []string{"-Dtls.server.mode=permissive",
		"-Dtls.config.file=/nonexistent/tls.properties"}, "", insecure)
	resp, err := tlsInvoke(c.brokerAddr, insecure, newRequest(codeGetMaxOffset, map[string]string{"topic": "TBW102", "queueId": "0"}, nil))
	if err != nil || resp.Code != 0 {
		t.Fatalf("broker over TLS: %v %v", resp, err)
	}
	if code, _, _, err := queryRoute(c.nsAddr, "TBW102"); err != nil || code != 0 {
		t.Fatalf("name server in plaintext: %d %v", code, err)
	}
	officialClientWorks(t, c, 20) // the Go client, in plaintext
	shared := sharedCluster(t)
	if _, err := tlsInvoke(shared.nsAddr, insecure, newRequest(codeGetRouteInfoByTopic, map[string]string{"topic": "TBW102"}, nil)); err == nil {
		t.Fatal("a name server started without -Dtls.server.mode answered over TLS")
	}
}

// TestJavaTLS runs the official Java client (setUseTLS(true)) and mqadmin
// (-Dtls.enable=true) of both lines against the enforcing, mutual-TLS
// cluster, with Apache's tls.client.* system properties.
func TestJavaTLS(t *testing.T) {
	requireJava(t)
	p := newTLSPKI(t)
	c := startTLSCluster(t, "tls-java", p)
	for _, line := range javaLines {
		t.Run(line.label, func(t *testing.T) {
			home := t.TempDir()
			if err := os.MkdirAll(filepath.Join(home, "conf"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(home, "conf", "logback_tools.xml"), []byte("<configuration/>\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			run := fmt.Sprintf("%s-tls-%d", line.profile, time.Now().UnixNano()%1_000_000)
			runMaven(t, mavenRun{profile: line.profile, serialize: "JSON", class: "TlsTest", props: map[string]string{
				"namesrv": c.nsAddr, "run": run, "cluster": clusterName, "brokerName": c.brokerName,
				"brokerAddr": c.brokerAddr, "go2javaTopic": "unused", "java2goTopic": "unused",
				"rocketmq.home.dir": home, "user.home": home,
				"tls.enable": "true", "tls.test.mode.enable": "false",
				"tls.config.file":       "/nonexistent/tls.properties",
				"tls.client.certPath":   p.clientCert,
				"tls.client.keyPath":    p.clientKey,
				"tls.client.authServer": "true", "tls.client.trustCertPath": p.ca,
			}})
		})
	}
}
