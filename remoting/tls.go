package remoting

// TLS settings, read as Apache's TlsSystemConfig reads them: Java system
// properties (-Dtls.server.mode=enforcing on the command line here), then
// the properties file named by tls.config.file (default
// /etc/rocketmq/tls.properties), whose values win over the command line for
// every key but tls.server.mode and tls.enable.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// TLSMode is how a server treats TLS (Apache's TlsMode).
type TLSMode uint8

const (
	// TLSDisabled serves plaintext only; the accept path is untouched.
	// rocketgo's default (Apache's is permissive; see DefaultTLSConfig).
	TLSDisabled TLSMode = iota
	// TLSPermissive serves TLS and plaintext on one port, told apart by the
	// first byte (0x16 opens a TLS handshake).
	TLSPermissive
	// TLSEnforcing serves TLS only and closes plaintext connections.
	TLSEnforcing
)

func (m TLSMode) String() string {
	switch m {
	case TLSPermissive:
		return "permissive"
	case TLSEnforcing:
		return "enforcing"
	default:
		return "disabled"
	}
}

// ParseTLSMode reads a tls.server.mode value. Like Apache, anything it does
// not know is permissive.
func ParseTLSMode(s string) TLSMode {
	switch s {
	case "disabled":
		return TLSDisabled
	case "enforcing":
		return TLSEnforcing
	default:
		return TLSPermissive
	}
}

// ClientAuth is tls.server.need.client.auth: whether a server asks for a
// client certificate.
type ClientAuth uint8

const (
	ClientAuthNone ClientAuth = iota
	ClientAuthOptional
	ClientAuthRequire
)

func (a ClientAuth) String() string {
	switch a {
	case ClientAuthOptional:
		return "optional"
	case ClientAuthRequire:
		return "require"
	default:
		return "none"
	}
}

// parseClientAuth reads Netty's ClientAuth names case-insensitively (none,
// optional, require); "required" is taken for require. Anything else is
// none, as in Apache.
func parseClientAuth(s string) ClientAuth {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "optional":
		return ClientAuthOptional
	case "require", "required":
		return ClientAuthRequire
	default:
		return ClientAuthNone
	}
}

// DefaultTLSConfigFile is Apache's default for tls.config.file.
const DefaultTLSConfigFile = "/etc/rocketmq/tls.properties"

// DefaultTLSHandshakeTimeout bounds the first byte and the TLS handshake
// of a connection in permissive and enforcing mode.
const DefaultTLSHandshakeTimeout = 5 * time.Second

// TLSConfig holds Apache's tls.* keys (TlsSystemConfig), with its defaults.
type TLSConfig struct {
	Mode TLSMode // tls.server.mode
	// Enable (tls.enable) makes outbound clients dial TLS. Unset, it
	// follows the mode: enforcing servers' clients use TLS (Apache's
	// NettyClientConfig.useTLS).
	Enable    bool
	EnableSet bool
	// TestMode (tls.test.mode.enable, default true): a server without a
	// certificate serves a self-signed one, and clients do not verify the
	// server unless told to (ClientAuthServer or a trust file).
	TestMode             bool
	ServerNeedClientAuth ClientAuth // tls.server.need.client.auth
	ServerKeyPath        string     // tls.server.keyPath (PEM)
	ServerKeyPassword    string     // tls.server.keyPassword (encrypted PKCS#8 key)
	ServerCertPath       string     // tls.server.certPath (PEM chain)
	ServerAuthClient     bool       // tls.server.authClient
	ServerTrustCertPath  string     // tls.server.trustCertPath (PEM)
	ClientKeyPath        string     // tls.client.keyPath
	ClientKeyPassword    string     // tls.client.keyPassword
	ClientCertPath       string     // tls.client.certPath
	ClientAuthServer     bool       // tls.client.authServer
	ClientTrustCertPath  string     // tls.client.trustCertPath
	ConfigFile           string     // tls.config.file
	// HandshakeTimeout (rocketgo's tls.server.handshakeTimeoutMillis)
	// closes a connection that has not sent its first byte and completed
	// its handshake in that time.
	HandshakeTimeout time.Duration
	// reloadPeriod: how often handshakes look for changed certificate
	// files (DefaultTLSReloadPeriod when 0; tests shorten it).
	reloadPeriod time.Duration
}

// DefaultTLSConfig returns Apache's defaults (test mode, no client
// authentication, the config file at DefaultTLSConfigFile) but for the
// mode: disabled, where Apache's is permissive. Permissive hands each
// connection to the event loops only once its first byte is in, within the
// handshake timeout; a server nobody asked to speak TLS keeps the plain
// accept path, and serves no self-signed certificate that authenticates
// nothing.
func DefaultTLSConfig() TLSConfig {
	return TLSConfig{
		Mode:             TLSDisabled,
		TestMode:         true,
		ConfigFile:       DefaultTLSConfigFile,
		HandshakeTimeout: DefaultTLSHandshakeTimeout,
	}
}

// ClientEnabled reports whether outbound clients dial TLS.
func (c *TLSConfig) ClientEnabled() bool {
	if c.EnableSet {
		return c.Enable
	}
	return c.Mode == TLSEnforcing
}

// Set applies one tls.* key; it reports false for a key that is not one.
func (c *TLSConfig) Set(key, value string) (bool, error) {
	value = strings.TrimSpace(value)
	var err error
	switch key {
	case "tls.server.mode":
		c.Mode = ParseTLSMode(value)
	case "tls.enable":
		c.Enable, c.EnableSet = parseJavaBool(value), true
	case "tls.test.mode.enable":
		c.TestMode = parseJavaBool(value)
	case "tls.server.need.client.auth":
		c.ServerNeedClientAuth = parseClientAuth(value)
	case "tls.server.keyPath":
		c.ServerKeyPath = value
	case "tls.server.keyPassword":
		c.ServerKeyPassword = value
	case "tls.server.certPath":
		c.ServerCertPath = value
	case "tls.server.authClient":
		c.ServerAuthClient = parseJavaBool(value)
	case "tls.server.trustCertPath":
		c.ServerTrustCertPath = value
	case "tls.client.keyPath":
		c.ClientKeyPath = value
	case "tls.client.keyPassword":
		c.ClientKeyPassword = value
	case "tls.client.certPath":
		c.ClientCertPath = value
	case "tls.client.authServer":
		c.ClientAuthServer = parseJavaBool(value)
	case "tls.client.trustCertPath":
		c.ClientTrustCertPath = value
	case "tls.config.file":
		c.ConfigFile = value
	case "tls.server.handshakeTimeoutMillis":
		var ms int64
		if ms, err = strconv.ParseInt(value, 10, 64); err == nil && ms <= 0 {
			err = errors.New("must be positive")
		}
		c.HandshakeTimeout = time.Duration(ms) * time.Millisecond
	default:
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("remoting: %s=%q: %w", key, value, err)
	}
	return true, nil
}

// parseJavaBool is Boolean.parseBoolean: "true" in any case, else false.
func parseJavaBool(s string) bool { return strings.EqualFold(s, "true") }

// LoadTLSConfig builds the TLS settings from system properties (-Dkey=value
// pairs; other keys are ignored) and then from the tls.config.file they
// name, if it exists and can be read, as Apache does. readFile parses a
// properties file (config.ReadProperties' shape), injected so that this
// package needs no file format of its own.
func LoadTLSConfig(props [][2]string, readFile func(path string) ([][2]string, error)) (TLSConfig, error) {
	c := DefaultTLSConfig()
	for _, kv := range props {
		if _, err := c.Set(kv[0], kv[1]); err != nil {
			return c, err
		}
	}
	if c.ConfigFile == "" || readFile == nil {
		return c, nil
	}
	if st, err := os.Stat(c.ConfigFile); err != nil || !st.Mode().IsRegular() {
		return c, nil // Apache: "Tls config file doesn't exist, skip it"
	}
	fileProps, err := readFile(c.ConfigFile)
	if err != nil {
		return c, fmt.Errorf("remoting: tls.config.file %s: %w", c.ConfigFile, err)
	}
	for _, kv := range fileProps {
		switch kv[0] {
		case "tls.server.mode", "tls.enable", "tls.config.file":
			continue // Apache reads these from system properties only
		}
		if _, err := c.Set(kv[0], kv[1]); err != nil {
			return c, fmt.Errorf("remoting: tls.config.file %s: %w", c.ConfigFile, err)
		}
	}
	return c, nil
}

// TLS is a built TLS configuration, shared by a process's servers and
// clients. A nil *TLS means disabled: plaintext servers, plaintext clients.
type TLS struct {
	Mode             TLSMode
	HandshakeTimeout time.Duration
	server           *tls.Config // nil when Mode is TLSDisabled
	client           *tls.Config // nil when clients dial plaintext
}

// NewTLS loads certificates and builds the server and client settings.
func NewTLS(c TLSConfig, log zerolog.Logger) (*TLS, error) {
	t := &TLS{Mode: c.Mode, HandshakeTimeout: c.HandshakeTimeout}
	if t.HandshakeTimeout <= 0 {
		t.HandshakeTimeout = DefaultTLSHandshakeTimeout
	}
	if c.Mode != TLSDisabled {
		period := c.reloadPeriod
		if period <= 0 {
			period = DefaultTLSReloadPeriod
		}
		sc, err := newServerCerts(c, period, log)
		if err != nil {
			return nil, err
		}
		t.server = sc
	}
	if c.ClientEnabled() {
		cc, err := clientTLS(c)
		if err != nil {
			return nil, err
		}
		t.client = cc
	}
	log.Info().Str("tls.server.mode", c.Mode.String()).Bool("tls.enable", t.client != nil).
		Bool("tls.test.mode.enable", c.TestMode).Str("tls.server.certPath", c.ServerCertPath).
		Stringer("tls.server.need.client.auth", c.ServerNeedClientAuth).
		Bool("clientVerifiesServer", t.client != nil && t.client.VerifyConnection != nil).
		Msg("tls configured")
	return t, nil
}

// serves reports whether servers accept TLS.
func (t *TLS) serves() bool { return t != nil && t.server != nil && t.Mode != TLSDisabled }

func serverTLS(c TLSConfig) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	switch {
	case c.ServerCertPath != "" || c.ServerKeyPath != "":
		cert, err := loadKeyPair(c.ServerCertPath, c.ServerKeyPath, c.ServerKeyPassword)
		if err != nil {
			return nil, fmt.Errorf("remoting: tls.server.certPath/keyPath: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	case c.TestMode:
		cert, err := selfSigned()
		if err != nil {
			return nil, fmt.Errorf("remoting: self-signed certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	default:
		return nil, errors.New("remoting: tls.server.mode is " + c.Mode.String() +
			" and tls.test.mode.enable=false, but tls.server.certPath and tls.server.keyPath are not set")
	}
	// need.client.auth decides whether a certificate is asked for (Apache's
	// test mode ignores it; here it holds in test mode too). A client
	// certificate is verified when authClient is set or a trust file is
	// given; otherwise any is taken, as Apache's insecure trust manager does.
	auth := c.ServerNeedClientAuth
	verify := c.ServerAuthClient || c.ServerTrustCertPath != ""
	if verify {
		pool, err := certPool(c.ServerTrustCertPath)
		if err != nil {
			return nil, fmt.Errorf("remoting: tls.server.trustCertPath: %w", err)
		}
		cfg.ClientCAs = pool
	}
	switch {
	case auth == ClientAuthNone:
		cfg.ClientAuth = tls.NoClientCert
	case auth == ClientAuthOptional && verify:
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case auth == ClientAuthOptional:
		cfg.ClientAuth = tls.RequestClientCert
	case verify:
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	default:
		cfg.ClientAuth = tls.RequireAnyClientCert
	}
	return cfg, nil
}

func clientTLS(c TLSConfig) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true}
	if c.ClientCertPath != "" || c.ClientKeyPath != "" {
		cert, err := loadKeyPair(c.ClientCertPath, c.ClientKeyPath, c.ClientKeyPassword)
		if err != nil {
			return nil, fmt.Errorf("remoting: tls.client.certPath/keyPath: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	// Apache's clients verify the server only outside test mode with
	// authServer set; a trust file given is taken as a wish to verify too.
	// Like Netty's handler without a peer host, the chain is checked and
	// the host name is not (servers are dialled by IP).
	if (!c.TestMode && c.ClientAuthServer) || c.ClientTrustCertPath != "" {
		pool, err := certPool(c.ClientTrustCertPath)
		if err != nil {
			return nil, fmt.Errorf("remoting: tls.client.trustCertPath: %w", err)
		}
		cfg.VerifyConnection = verifyChain(pool)
	}
	return cfg, nil
}

// verifyChain checks the server's chain against roots (the system's when
// nil), without a host name.
func verifyChain(roots *x509.CertPool) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("remoting: server sent no certificate")
		}
		inter := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
			Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny},
		})
		return err
	}
}

// certPool reads PEM certificates from path; an empty path is the system's
// roots (a JDK trust manager without a file uses the JDK's).
func certPool(path string) (*x509.CertPool, error) {
	if path == "" {
		return x509.SystemCertPool()
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s: no PEM certificate", path)
	}
	return pool, nil
}

// selfSigned makes the certificate test mode serves, as Netty's
// SelfSignedCertificate does: a fresh key, valid for a year.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "rocketgo self-signed (tls.test.mode.enable)"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// SystemProperties splits Java-style -Dkey=value arguments (Apache's
// scripts pass tls.* this way in JAVA_OPT) from the rest, which keep their
// order for the flag package.
func SystemProperties(args []string) (props [][2]string, rest []string) {
	for _, a := range args {
		if kv, ok := strings.CutPrefix(a, "-D"); ok && len(kv) > 0 {
			k, v, _ := strings.Cut(kv, "=")
			props = append(props, [2]string{k, v})
			continue
		}
		rest = append(rest, a)
	}
	return props, rest
}
