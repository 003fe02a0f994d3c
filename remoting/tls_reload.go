package remoting

// Certificate reloading: like Apache's broker and name server, which watch
// tls.server.certPath, keyPath and trustCertPath and rebuild their TLS
// context when one changes, a server here picks up new files without a
// restart. The files are looked at (stat) by handshakes, at most once per
// period, so nothing runs while no client connects; a change that does not
// load (a key not yet written beside its new certificate) keeps the old
// settings and is retried at the next look.

import (
	"crypto/tls"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// DefaultTLSReloadPeriod is how often handshakes look at the files.
const DefaultTLSReloadPeriod = 10 * time.Second

type fileStamp struct {
	size  int64
	mtime time.Time
}

type serverCerts struct {
	cfg    TLSConfig
	log    zerolog.Logger
	period time.Duration
	cur    atomic.Pointer[tls.Config]

	mu      sync.Mutex // one look at a time; handshakes never wait on it
	checked time.Time
	stamps  [3]fileStamp
}

// newServerCerts loads the server's settings and returns the config
// handshakes start from.
func newServerCerts(c TLSConfig, period time.Duration, log zerolog.Logger) (*tls.Config, error) {
	cfg, err := serverTLS(c)
	if err != nil {
		return nil, err
	}
	if c.ServerCertPath == "" && c.ServerKeyPath == "" && c.ServerTrustCertPath == "" {
		return cfg, nil // self-signed: nothing to watch
	}
	sc := &serverCerts{cfg: c, log: log, period: period, checked: time.Now()}
	sc.stamps = sc.stampsNow()
	sc.cur.Store(cfg)
	return &tls.Config{MinVersion: tls.VersionTLS12, GetConfigForClient: sc.config}, nil
}

func (sc *serverCerts) config(*tls.ClientHelloInfo) (*tls.Config, error) {
	sc.maybeReload()
	return sc.cur.Load(), nil
}

func (sc *serverCerts) stampsNow() [3]fileStamp {
	var out [3]fileStamp
	for i, p := range []string{sc.cfg.ServerCertPath, sc.cfg.ServerKeyPath, sc.cfg.ServerTrustCertPath} {
		if p == "" {
			continue
		}
		if st, err := os.Stat(p); err == nil {
			out[i] = fileStamp{size: st.Size(), mtime: st.ModTime()}
		}
	}
	return out
}

func (sc *serverCerts) maybeReload() {
	if !sc.mu.TryLock() {
		return // another handshake is looking
	}
	defer sc.mu.Unlock()
	now := time.Now()
	if now.Sub(sc.checked) < sc.period {
		return
	}
	sc.checked = now
	stamps := sc.stampsNow()
	if stamps == sc.stamps {
		return
	}
	cfg, err := serverTLS(sc.cfg)
	if err != nil {
		sc.log.Warn().Err(err).Msg("tls files changed but do not load; the previous certificate stays")
		return
	}
	sc.cur.Store(cfg)
	sc.stamps = stamps
	sc.log.Info().Str("tls.server.certPath", sc.cfg.ServerCertPath).Msg("tls certificates reloaded")
}
