package proxy

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Apache's permissive TLS mode: TLS and plaintext on the same gRPC port.
// Each accepted connection is sniffed on its first byte: 0x16 (a TLS
// handshake record, the ClientHello) makes it a TLS server connection with
// ALPN h2, anything else (the HTTP/2 preface "PRI * ...") stays plaintext.
// The sniff happens on the connection's first Read or Write, in the gRPC
// server's goroutine for that connection, so Accept never waits on a client.

const tlsHandshakeByte = 0x16

// tlsMux is a listener whose connections speak TLS or plaintext.
type tlsMux struct {
	net.Listener
	conf *tls.Config
}

func newTLSMux(ln net.Listener, cfg Config, log zerolog.Logger) (*tlsMux, error) {
	cert, generated, err := loadOrGenerateCert(cfg)
	if err != nil {
		return nil, err
	}
	if generated {
		log.Info().Msg("tls: serving a generated self-signed certificate (tlsTestModeEnable)")
	} else {
		log.Info().Str("tlsCertPath", cfg.TLSCertPath).Msg("tls: serving the configured certificate")
	}
	return &tlsMux{Listener: ln, conf: &tls.Config{
		Certificates: []tls.Certificate{cert},
		NextProtos:   []string{"h2"},
		MinVersion:   tls.VersionTLS12,
	}}, nil
}

func (m *tlsMux) Accept() (net.Conn, error) {
	c, err := m.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &sniffConn{raw: c, conf: m.conf}, nil
}

// sniffConn decides on first use whether it is TLS.
type sniffConn struct {
	raw  net.Conn
	conf *tls.Config

	once sync.Once
	conn net.Conn // the connection to use after the sniff
	err  error
}

// bufConn reads through the sniffing reader first.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufConn) Read(p []byte) (int, error) { return b.r.Read(p) }

func (s *sniffConn) sniff() {
	s.once.Do(func() {
		br := bufio.NewReaderSize(s.raw, 1024)
		first, err := br.Peek(1)
		if err != nil {
			s.err = err
			return
		}
		bc := &bufConn{Conn: s.raw, r: br}
		if first[0] == tlsHandshakeByte {
			s.conn = tls.Server(bc, s.conf)
			return
		}
		s.conn = bc
	})
}

func (s *sniffConn) Read(p []byte) (int, error) {
	if s.sniff(); s.err != nil {
		return 0, s.err
	}
	return s.conn.Read(p)
}

func (s *sniffConn) Write(p []byte) (int, error) {
	if s.sniff(); s.err != nil {
		return 0, s.err
	}
	return s.conn.Write(p)
}

func (s *sniffConn) Close() error                       { return s.raw.Close() }
func (s *sniffConn) LocalAddr() net.Addr                { return s.raw.LocalAddr() }
func (s *sniffConn) RemoteAddr() net.Addr               { return s.raw.RemoteAddr() }
func (s *sniffConn) SetDeadline(t time.Time) error      { return s.raw.SetDeadline(t) }
func (s *sniffConn) SetReadDeadline(t time.Time) error  { return s.raw.SetReadDeadline(t) }
func (s *sniffConn) SetWriteDeadline(t time.Time) error { return s.raw.SetWriteDeadline(t) }

// loadOrGenerateCert loads tlsCertPath/tlsKeyPath when both exist;
// otherwise, in test mode, generates a self-signed certificate for
// localhost as Apache's proxy does (SelfSignedCertificate).
func loadOrGenerateCert(cfg Config) (tls.Certificate, bool, error) {
	if cfg.TLSCertPath != "" && cfg.TLSKeyPath != "" && exists(cfg.TLSCertPath) && exists(cfg.TLSKeyPath) {
		c, err := tls.LoadX509KeyPair(cfg.TLSCertPath, cfg.TLSKeyPath)
		if err != nil {
			return tls.Certificate{}, false, fmt.Errorf("load tls certificate %s: %w", cfg.TLSCertPath, err)
		}
		return c, false, nil
	}
	if !cfg.TLSTestModeEnable {
		return tls.Certificate{}, false, errors.New("proxy: tlsCertPath/tlsKeyPath missing and tlsTestModeEnable is false")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, false, fmt.Errorf("generate tls key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, false, fmt.Errorf("generate tls serial: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, false, fmt.Errorf("generate tls certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, true, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
