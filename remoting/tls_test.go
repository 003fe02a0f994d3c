package remoting

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
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

	"github.com/rocketgo/rocketgo/internal/testutil"
)

// testPKI is a CA and certificates it signed, written as PEM files in a
// temporary directory (keys are made per test, never kept).
type testPKI struct {
	dir                   string
	caCert                string
	serverCert, serverKey string
	clientCert, clientKey string
	// strangerCert/Key: a self-signed client the CA never signed.
	strangerCert, strangerKey string
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	p := &testPKI{dir: dir}
	caKey, ca, caDER := makeCert(t, nil, nil, "test ca", true, nil)
	p.caCert = writePEM(t, dir, "ca.pem", "CERTIFICATE", caDER)
	_ = caKey
	sk, _, sDER := makeCert(t, ca, caKey, "test server", false, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth})
	p.serverCert = writePEM(t, dir, "server.pem", "CERTIFICATE", sDER)
	p.serverKey = writeKey(t, dir, "server.key", sk)
	ck, _, cDER := makeCert(t, ca, caKey, "test client", false, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth})
	p.clientCert = writePEM(t, dir, "client.pem", "CERTIFICATE", cDER)
	p.clientKey = writeKey(t, dir, "client.key", ck)
	xk, _, xDER := makeCert(t, nil, nil, "stranger", false, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth})
	p.strangerCert = writePEM(t, dir, "stranger.pem", "CERTIFICATE", xDER)
	p.strangerKey = writeKey(t, dir, "stranger.key", xk)
	return p
}

// makeCert makes a certificate for a fresh key, signed by parent (self-signed
// when nil).
func makeCert(t *testing.T, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, cn string, isCA bool,
	usage []x509.ExtKeyUsage) (*ecdsa.PrivateKey, *x509.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           usage,
		BasicConstraintsValid: true,
		IsCA:                  isCA,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert, der
}

func writePEM(t *testing.T, dir, name, typ string, der []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeKey(t *testing.T, dir, name string, k *ecdsa.PrivateKey) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return writePEM(t, dir, name, "PRIVATE KEY", der)
}

// startTLSServer serves echo with the given TLS settings.
func startTLSServer(t *testing.T, c TLSConfig, lim Limits) (*Server, *reasons) {
	t.Helper()
	tl, err := NewTLS(c, testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	h, r := &testHandler{}, &reasons{}
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", NumEventLoop: 2, Limits: lim, TLS: tl,
		OnClose: func(c *Conn) { h.closed.Add(1); r.record(c) }}, h, testutil.Logger())
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return s, r
}

func dialTLS(t *testing.T, addr string, cfg *tls.Config) (*tls.Conn, error) {
	t.Helper()
	d := &net.Dialer{Timeout: 5 * time.Second}
	tc, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err == nil {
		t.Cleanup(func() { tc.Close() })
	}
	return tc, err
}

func TestTLSPermissiveServesBoth(t *testing.T) {
	c := DefaultTLSConfig()
	c.Mode = TLSPermissive // test mode: self-signed
	s, r := startTLSServer(t, c, Limits{})
	plain := dial(t, s.Addr())
	echo(t, plain, "plain")
	tc, err := dialTLS(t, s.Addr(), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 { // many frames, some larger than one TLS record
		echo(t, tc, strings.Repeat("x", i*1000)+strconv.Itoa(i))
	}
	if s.Connections() != 2 {
		t.Fatalf("connections %d, want 2", s.Connections())
	}
	// The Conn carries the client's TCP address, not the socket pair's.
	tc.Close()
	if err := r.of(t, tc.NetConn()); err != nil {
		t.Fatalf("tls connection closed by the server: %v", err)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return s.Connections() == 1 })
	echo(t, plain, "plain still")
}

func TestTLSEnforcingRefusesPlaintext(t *testing.T) {
	pki := newTestPKI(t)
	c := DefaultTLSConfig()
	c.Mode, c.TestMode = TLSEnforcing, false
	c.ServerCertPath, c.ServerKeyPath = pki.serverCert, pki.serverKey
	s, _ := startTLSServer(t, c, Limits{})
	plain := dial(t, s.Addr())
	req := &Command{Code: codeEcho, Opaque: 1, ExtFields: []Field{{"v", "x"}}}
	_, _ = plain.Write(AppendFrame(nil, req))
	closedByServer(t, plain, 10*time.Second)
	if s.plainRefused.Load() != 1 {
		t.Fatalf("plaintext refused %d, want 1", s.plainRefused.Load())
	}
	pool := x509.NewCertPool()
	b, _ := os.ReadFile(pki.caCert)
	pool.AppendCertsFromPEM(b)
	tc, err := dialTLS(t, s.Addr(), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	echo(t, tc, "over tls")
	testutil.WaitFor(t, 10*time.Second, func() bool { return s.Connections() == 1 })
}

// Silent clients and stalled ClientHellos are closed after the handshake
// timeout; meanwhile accepting and serving go on.
func TestTLSStalledHandshakesClosed(t *testing.T) {
	c := DefaultTLSConfig()
	c.Mode, c.HandshakeTimeout = TLSPermissive, 700*time.Millisecond
	s, _ := startTLSServer(t, c, Limits{ServerMaxConnections: 1000})
	const n = 300
	start := time.Now()
	var conns []net.Conn
	for i := range n {
		nc := dial(t, s.Addr())
		if i%2 == 1 {
			// A record header announcing a ClientHello that never comes.
			if _, err := nc.Write([]byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01}); err != nil {
				t.Fatal(err)
			}
		}
		conns = append(conns, nc)
	}
	// Served while they stall.
	tc, err := dialTLS(t, s.Addr(), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	echo(t, tc, "during the stall")
	plain := dial(t, s.Addr())
	echo(t, plain, "plain during the stall")
	var wg sync.WaitGroup
	for _, nc := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			closedByServer(t, nc, 10*time.Second)
		}()
	}
	wg.Wait()
	took := time.Since(start)
	if took > 5*time.Second {
		t.Fatalf("stalled connections closed after %v; timeout 700 ms", took)
	}
	if s.stalled.Load() != n {
		t.Fatalf("stalled %d, want %d", s.stalled.Load(), n)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return s.Connections() == 2 })
	echo(t, tc, "after the stall")
	echo(t, plain, "plain after the stall")
	t.Logf("%d stalled connections closed within %v", n, took.Round(time.Millisecond))
}

// Handshaking connections count against the connection limit.
func TestTLSHandshakesCountAgainstLimit(t *testing.T) {
	c := DefaultTLSConfig()
	c.Mode, c.HandshakeTimeout = TLSPermissive, 2*time.Second
	s, _ := startTLSServer(t, c, Limits{ServerMaxConnections: 5})
	for range 5 {
		dial(t, s.Addr()) // silent: held in the peek
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.Connections() == 5 })
	over := dial(t, s.Addr())
	closedByServer(t, over, 1*time.Second) // well before the handshake timeout
	if s.refused.Load() != 1 {
		t.Fatalf("refused %d, want 1", s.refused.Load())
	}
}

func TestTLSMutualAuthRequired(t *testing.T) {
	pki := newTestPKI(t)
	c := DefaultTLSConfig()
	c.Mode, c.TestMode = TLSEnforcing, false
	c.ServerCertPath, c.ServerKeyPath = pki.serverCert, pki.serverKey
	c.ServerNeedClientAuth = ClientAuthRequire
	c.ServerTrustCertPath = pki.caCert
	s, _ := startTLSServer(t, c, Limits{})

	tryEcho := func(cfg *tls.Config) error {
		tc, err := dialTLS(t, s.Addr(), cfg)
		if err != nil {
			return err
		}
		// TLS 1.3: the server's verdict on the client certificate arrives
		// after the client's handshake completed, with the first read.
		req := &Command{Code: codeEcho, Opaque: 7, ExtFields: []Field{{"v", "hi"}}}
		if _, err := tc.Write(AppendFrame(nil, req)); err != nil {
			return err
		}
		_ = tc.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := ReadFrame(tc)
		if err != nil {
			return err
		}
		if resp.Str("echo") != "hi" {
			return errors.New("bad echo")
		}
		return nil
	}
	if err := tryEcho(&tls.Config{InsecureSkipVerify: true}); err == nil {
		t.Fatal("a client without a certificate was served")
	}
	stranger, err := tls.LoadX509KeyPair(pki.strangerCert, pki.strangerKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := tryEcho(&tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{stranger}}); err == nil {
		t.Fatal("a client whose certificate the CA did not sign was served")
	}
	client, err := tls.LoadX509KeyPair(pki.clientCert, pki.clientKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := tryEcho(&tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{client}}); err != nil {
		t.Fatalf("a client with a signed certificate: %v", err)
	}
}

// The Remoting client dials TLS with tls.client.* settings and verifies
// the server against a trust file.
func TestTLSClient(t *testing.T) {
	pki := newTestPKI(t)
	sc := DefaultTLSConfig()
	sc.Mode, sc.TestMode = TLSEnforcing, false
	sc.ServerCertPath, sc.ServerKeyPath = pki.serverCert, pki.serverKey
	sc.ServerNeedClientAuth, sc.ServerTrustCertPath = ClientAuthRequire, pki.caCert
	s, _ := startTLSServer(t, sc, Limits{})

	invoke := func(cc TLSConfig) error {
		tl, err := NewTLS(cc, testutil.Logger())
		if err != nil {
			return err
		}
		cl := NewClient(testutil.Logger())
		defer cl.Close()
		cl.SetTLS(tl)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := cl.Invoke(ctx, s.Addr(), &Command{Code: codeEcho, ExtFields: []Field{{"v", "c"}}})
		if err != nil {
			return err
		}
		if resp.Str("echo") != "c" {
			return errors.New("bad echo")
		}
		return nil
	}
	cc := DefaultTLSConfig()
	cc.Mode = TLSDisabled
	cc.Enable, cc.EnableSet = true, true
	cc.ClientCertPath, cc.ClientKeyPath = pki.clientCert, pki.clientKey
	cc.ClientTrustCertPath = pki.caCert
	if err := invoke(cc); err != nil {
		t.Fatalf("tls client with a signed certificate: %v", err)
	}
	wrong := cc
	wrong.ClientTrustCertPath = pki.strangerCert // not the server's CA
	if err := invoke(wrong); err == nil {
		t.Fatal("the client accepted a server its trust file does not cover")
	}
	plain := cc
	plain.EnableSet = false // disabled mode: clients dial plaintext
	if err := invoke(plain); err == nil {
		t.Fatal("a plaintext client was served by an enforcing server")
	}
	if !(&TLSConfig{Mode: TLSEnforcing}).ClientEnabled() {
		t.Fatal("an enforcing process's clients must dial TLS by default (Apache's useTLS)")
	}
}

// In disabled mode the accept path is the plain one: a TLS ClientHello is
// not answered, and the connection is closed.
func TestTLSDisabled(t *testing.T) {
	c := DefaultTLSConfig()
	c.Mode = TLSDisabled
	s, _ := startTLSServer(t, c, Limits{ServerIncompleteFrameTimeoutMillis: 500})
	if s.cfg.TLS.serves() {
		t.Fatal("disabled mode serves TLS")
	}
	if _, err := dialTLS(t, s.Addr(), &tls.Config{InsecureSkipVerify: true}); err == nil {
		t.Fatal("tls handshake succeeded in disabled mode")
	}
	echo(t, dial(t, s.Addr()), "plain")
}

func TestLoadTLSConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tls.properties")
	read := func(p string) ([][2]string, error) {
		return [][2]string{
			{"tls.server.mode", "disabled"}, // system property only: ignored here
			{"tls.enable", "true"},          // likewise
			{"tls.test.mode.enable", "false"},
			{"tls.server.certPath", "/from/file.pem"},
			{"tls.server.need.client.auth", "REQUIRE"},
		}, nil
	}
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	props, rest := SystemProperties([]string{"-c", "x.conf", "-Dtls.server.mode=enforcing",
		"-Dtls.server.certPath=/from/flag.pem", "-Dtls.config.file=" + file, "-Dother=1"})
	if len(rest) != 2 || rest[0] != "-c" || rest[1] != "x.conf" {
		t.Fatalf("rest %q", rest)
	}
	c, err := LoadTLSConfig(props, read)
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode != TLSEnforcing || c.EnableSet || c.TestMode || c.ServerCertPath != "/from/file.pem" ||
		c.ServerNeedClientAuth != ClientAuthRequire || !c.ClientEnabled() {
		t.Fatalf("loaded %+v", c)
	}
	d, err := LoadTLSConfig(nil, read) // the default file does not exist here
	if err != nil {
		t.Fatal(err)
	}
	if d.Mode != TLSDisabled || !d.TestMode || d.ClientEnabled() || d.ConfigFile != DefaultTLSConfigFile {
		t.Fatalf("defaults %+v", d)
	}
	if _, err := LoadTLSConfig([][2]string{{"tls.server.handshakeTimeoutMillis", "-1"}}, nil); err == nil {
		t.Fatal("negative handshake timeout accepted")
	}
	for in, want := range map[string]TLSMode{"disabled": TLSDisabled, "enforcing": TLSEnforcing, "permissive": TLSPermissive, "bogus": TLSPermissive} {
		if got := ParseTLSMode(in); got != want {
			t.Errorf("ParseTLSMode(%q) = %v", in, got)
		}
	}
	bad := DefaultTLSConfig()
	bad.Mode, bad.TestMode = TLSPermissive, false // serving TLS without certificates
	if _, err := NewTLS(bad, testutil.Logger()); err == nil {
		t.Fatal("no certificate outside test mode accepted")
	}
}

// FuzzTLSSettings feeds arbitrary -D arguments and tls.* values: no panic,
// and a key Set accepts reads back into a TLS that builds or fails cleanly.
func FuzzTLSSettings(f *testing.F) {
	f.Add("-Dtls.server.mode=enforcing", "tls.server.need.client.auth", "require")
	f.Add("-D=", "tls.server.handshakeTimeoutMillis", "99999999999999999999")
	f.Add("-Dtls.enable", "tls.test.mode.enable", "TRUE")
	f.Fuzz(func(t *testing.T, arg, key, value string) {
		props, _ := SystemProperties([]string{arg})
		c, _ := LoadTLSConfig(append(props, [2]string{key, value}), nil)
		c.ServerCertPath, c.ServerKeyPath, c.ClientCertPath, c.ClientKeyPath = "", "", "", ""
		c.ServerTrustCertPath, c.ClientTrustCertPath = "", ""
		_ = c.Mode.String()
		_ = c.ClientEnabled()
	})
}

// Encrypted PKCS#8 keys as openssl writes them (Apache's TLS guide uses
// PBE-SHA1-RC4-128), read with tls.server.keyPassword.
func TestTLSEncryptedKeys(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("no openssl to make encrypted keys")
	}
	pki := newTestPKI(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"PBES2-AES256-SHA256", []string{"-v2", "aes-256-cbc", "-v2prf", "hmacWithSHA256"}},
		{"PBES2-AES128-SHA1", []string{"-v2", "aes-128-cbc", "-v2prf", "hmacWithSHA1"}},
		{"PBES2-3DES", []string{"-v2", "des3"}},
		{"PBE-SHA1-3DES", []string{"-v1", "PBE-SHA1-3DES"}},
		{"PBE-SHA1-2DES", []string{"-v1", "PBE-SHA1-2DES", "-provider", "legacy", "-provider", "default"}},
		{"PBE-SHA1-RC4-128", []string{"-v1", "PBE-SHA1-RC4-128", "-provider", "legacy", "-provider", "default"}},
		{"PBE-SHA1-RC4-40", []string{"-v1", "PBE-SHA1-RC4-40", "-provider", "legacy", "-provider", "default"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc := filepath.Join(pki.dir, tc.name+".key")
			args := append([]string{"pkcs8", "-topk8", "-in", pki.serverKey, "-out", enc, "-passout", "pass:pässwörd123"}, tc.args...)
			if out, err := exec.Command("openssl", args...).CombinedOutput(); err != nil {
				t.Skipf("openssl %v: %v\n%s", args, err, out)
			}
			if _, err := loadKeyPair(pki.serverCert, enc, "pässwörd123"); err != nil {
				t.Fatalf("decrypt: %v", err)
			}
			if _, err := loadKeyPair(pki.serverCert, enc, "wrong"); err == nil {
				t.Fatal("a wrong password decrypted the key")
			}
			if _, err := loadKeyPair(pki.serverCert, enc, ""); err == nil {
				t.Fatal("an encrypted key loaded without a password")
			}
		})
	}
	c := DefaultTLSConfig()
	c.Mode, c.TestMode = TLSEnforcing, false
	c.ServerCertPath, c.ServerKeyPath, c.ServerKeyPassword = pki.serverCert, filepath.Join(pki.dir, "PBE-SHA1-3DES.key"), "pässwörd123"
	s, _ := startTLSServer(t, c, Limits{})
	tc, err := dialTLS(t, s.Addr(), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	echo(t, tc, "with an encrypted key")
}

// FuzzDecryptPKCS8: arbitrary bytes as an encrypted key: no panic, and
// nothing but a parseable key comes out.
func FuzzDecryptPKCS8(f *testing.F) {
	// An AES-256 PBES2 and an RC4 PKCS#12 structure (password "pw").
	f.Add([]byte("0\x81\xa30_\x06\t*\x86H\x86\xf7\r\x01\x05\r0R01\x06\t*\x86H\x86\xf7\r\x01\x05\x0c0$\x04\x08\x01\x02\x03\x04\x05\x06\x07\x08\x02\x02\x08\x000\x0c\x06\x08*\x86H\x86\xf7\r\x02\t\x05\x000\x1d\x06\t`\x86H\x01e\x03\x04\x01*\x04\x10AAAAAAAAAAAAAAAA\x04@"), []byte("pw"))
	f.Add([]byte("0\x1c\x06\n*\x86H\x86\xf7\r\x01\x0c\x01\x010\x0e\x04\x08saltsalt\x02\x02\x08\x00"), []byte("pw"))
	f.Fuzz(func(t *testing.T, der, pw []byte) {
		plain, err := decryptPKCS8(der, pw, 4096)
		if err == nil {
			if _, perr := x509.ParsePKCS8PrivateKey(plain); perr != nil {
				t.Fatalf("returned an unparseable key: %v", perr)
			}
		}
	})
}

// New certificate files are served without a restart (Apache's broker and
// name server watch them too); files that do not load keep the old ones.
func TestTLSCertificateReload(t *testing.T) {
	oldPKI, newPKI := newTestPKI(t), newTestPKI(t)
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key")
	copyFile := func(src, dst string) {
		t.Helper()
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst+".tmp", b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(dst+".tmp", dst); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(oldPKI.serverCert, cert)
	copyFile(oldPKI.serverKey, key)
	c := DefaultTLSConfig()
	c.Mode, c.TestMode = TLSEnforcing, false
	c.ServerCertPath, c.ServerKeyPath = cert, key
	c.reloadPeriod = 50 * time.Millisecond
	s, _ := startTLSServer(t, c, Limits{})
	trusting := func(p *testPKI) *tls.Config {
		pool := x509.NewCertPool()
		b, _ := os.ReadFile(p.caCert)
		pool.AppendCertsFromPEM(b)
		return &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	}
	served := func(p *testPKI) bool {
		tc, err := dialTLS(t, s.Addr(), trusting(p))
		if err != nil {
			return false
		}
		defer tc.Close()
		echo(t, tc, "x")
		return true
	}
	if !served(oldPKI) || served(newPKI) {
		t.Fatal("the first certificate is not the one served")
	}
	// A certificate without its key yet: the old pair stays.
	copyFile(newPKI.serverCert, cert)
	time.Sleep(120 * time.Millisecond) // two reload periods: the change is seen and refused

	if !served(oldPKI) {
		t.Fatal("a half-replaced pair was loaded")
	}
	copyFile(newPKI.serverKey, key)
	testutil.WaitFor(t, 5*time.Second, func() bool { return served(newPKI) })
	if served(oldPKI) {
		t.Fatal("the old certificate is still served")
	}
}
