package proxy

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
)

// tlsCertPath/tlsKeyPath are served when both files exist; otherwise test
// mode generates a certificate, and without test mode the proxy refuses to
// start.
func TestCertificateChoice(t *testing.T) {
	cfg := DefaultConfig()
	gen, generated, err := loadOrGenerateCert(cfg)
	if err != nil || !generated {
		t.Fatalf("generate: %v (generated %v)", err, generated)
	}
	dir := t.TempDir()
	cfg.TLSCertPath, cfg.TLSKeyPath = filepath.Join(dir, "rocketmq.crt"), filepath.Join(dir, "rocketmq.key")
	keyDER, err := x509.MarshalPKCS8PrivateKey(gen.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg.TLSCertPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: gen.Certificate[0]}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg.TLSKeyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, generated, err := loadOrGenerateCert(cfg)
	if err != nil || generated || !bytes.Equal(loaded.Certificate[0], gen.Certificate[0]) {
		t.Fatalf("configured files not served: %v (generated %v)", err, generated)
	}

	// Served on a real connection: the client sees the configured certificate.
	cfg.NamesrvAddr = "127.0.0.1:1"
	s, err := New(cfg, zerologNop())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Shutdown(t.Context()) }()
	c, err := tls.Dial("tcp", s.Addr().String(), &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	st := c.ConnectionState()
	_ = c.Close()
	if st.NegotiatedProtocol != "h2" || !bytes.Equal(st.PeerCertificates[0].Raw, gen.Certificate[0]) {
		t.Fatalf("served protocol %q, certificate equal %v", st.NegotiatedProtocol, bytes.Equal(st.PeerCertificates[0].Raw, gen.Certificate[0]))
	}

	cfg.TLSCertPath = filepath.Join(dir, "missing.crt")
	cfg.TLSTestModeEnable = false
	if _, _, err := loadOrGenerateCert(cfg); err == nil {
		t.Fatal("no certificate and no test mode accepted")
	}
}
