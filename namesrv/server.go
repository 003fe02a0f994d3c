package namesrv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/remoting"
)

// Server is a name server: the tables, a Remoting server answering from
// them, and a housekeeping goroutine that expires silent brokers and
// persists the KV config.
type Server struct {
	Config Config
	Routes *Routes
	KV     *KV

	log  zerolog.Logger
	root zerolog.Logger // for the remoting server, which adds its own component

	mu       sync.Mutex
	rs       *remoting.Server
	addr     string
	started  bool
	shutdown bool
	quit     chan struct{}
	wg       sync.WaitGroup
	// work feeds the worker goroutine (Offload).
	work chan func()
	// live is the config in force for the handlers: Config, then
	// UPDATE_NAMESRV_CONFIG's changes (config_admin.go).
	live atomic.Pointer[Config]
	// users sign the writes with authenticationEnabled (auth.go); nil
	// when it is off.
	users users
}

// workQueue bounds the requests waiting for the worker; past it Offload
// refuses, and the request is answered SYSTEM_BUSY.
const workQueue = 256

// New validates cfg and loads the KV config; nothing listens until Start.
func New(cfg Config, log zerolog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var us users
	if cfg.AuthenticationEnabled {
		var err error
		if us, err = loadUsers(cfg); err != nil {
			return nil, err
		}
	}
	kv := NewKV(cfg.KvConfigPath)
	if err := kv.Load(); err != nil {
		return nil, err
	}
	s := &Server{
		Config: cfg,
		Routes: NewRoutes(cfg),
		KV:     kv,
		log:    log.With().Str("component", "namesrv").Logger(),
		root:   log,
		quit:   make(chan struct{}),
		work:   make(chan func(), workQueue),
		users:  us,
	}
	s.live.Store(&cfg)
	return s, nil
}

// Start listens on bindAddress:listenPort and serves requests with h: the
// table from Handlers, or a wrapper of it (interceptors). Port 0 picks a free
// port. Start may be called once.
func (s *Server) Start(h remoting.Handler) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.shutdown {
		return errors.New("namesrv: already started")
	}
	addr := net.JoinHostPort(s.Config.BindAddress, strconv.Itoa(s.Config.ListenPort))
	rs := remoting.NewServer(remoting.ServerConfig{
		Addr:         addr,
		NumEventLoop: s.Config.ServerSelectorThreads,
		OnClose:      s.connClosed,
		Limits:       s.Config.Limits,
		TLS:          s.Config.TLS,
	}, h, s.root)
	if err := rs.Start(); err != nil {
		return fmt.Errorf("namesrv: start: %w", err)
	}
	s.rs, s.addr, s.started = rs, rs.Addr(), true
	s.wg.Add(2)
	go s.housekeep()
	go s.worker()
	s.log.Info().Str("addr", addr).Str("kvConfigPath", s.Config.KvConfigPath).
		Bool("authenticationEnabled", s.users != nil).Int("users", len(s.users)).Msg("name server started")
	return nil
}

// Addr is the bound "host:port"; "" before Start.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Done is closed when the Remoting engine stops; nil before Start.
func (s *Server) Done() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rs == nil {
		return nil
	}
	return s.rs.Done()
}

// Err is the engine's exit error (nil after Shutdown), valid once Done is closed.
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rs == nil {
		return nil
	}
	return s.rs.Err()
}

// Shutdown stops listening, stops housekeeping and persists the KV config.
// Idempotent.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.shutdown {
		s.mu.Unlock()
		return nil
	}
	s.shutdown = true
	rs := s.rs
	close(s.quit)
	s.mu.Unlock()

	var errs []error
	if rs != nil {
		if err := rs.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("namesrv: wait for housekeeping: %w", ctx.Err()))
	}
	if err := s.persistIfDirty(); err != nil {
		errs = append(errs, err)
	}
	s.log.Info().Msg("name server stopped")
	return errors.Join(errs...)
}

// connClosed runs on the connection's event loop: brokers registered over it
// are gone at once, unless the name server itself cut the connection (a
// frame it could not read, a limit): that broker may be alive, so it stays
// until it re-registers or expires.
func (s *Server) connClosed(c *remoting.Conn) {
	if why := c.ClosedByServer(); why != nil {
		// Logged only for brokers: a flood of cut client connections is
		// already logged, sampled, by the remoting server.
		for _, b := range s.Routes.OnConn(c.ID) {
			s.log.Warn().Err(why).Str("clusterName", b.Cluster).Str("brokerAddr", b.Addr).Str("remote", c.Remote).
				Msg("cut a broker's connection; it stays registered until it re-registers or expires")
		}
		return
	}
	for _, b := range s.Routes.ConnClosed(c.ID) {
		s.log.Info().Str("clusterName", b.Cluster).Str("brokerAddr", b.Addr).
			Str("remote", c.Remote).Msg("broker connection closed; broker removed")
	}
}

// Offload runs fn on the name server's worker goroutine, after the work
// offloaded before it: for requests whose handling an event loop cannot
// afford (decoding a broker's registration of 100,000 topics takes 130–250
// ms). It reports false, without running fn, when the queue is full.
func (s *Server) Offload(fn func()) bool {
	select {
	case s.work <- fn:
		return true
	default:
		return false
	}
}

func (s *Server) worker() {
	defer s.wg.Done()
	for {
		select {
		case <-s.quit:
			return
		case fn := <-s.work:
			fn()
		}
	}
}

func (s *Server) housekeep() {
	defer s.wg.Done()
	t := time.NewTicker(s.Config.scanInterval())
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case now := <-t.C:
			for _, b := range s.Routes.Expire(now) {
				s.log.Warn().Str("clusterName", b.Cluster).Str("brokerAddr", b.Addr).Msg("broker expired")
			}
		case <-s.KV.dirty:
			if err := s.KV.Persist(); err != nil {
				s.log.Error().Err(err).Msg("kv config not persisted")
			}
		}
	}
}

func (s *Server) persistIfDirty() error {
	select {
	case <-s.KV.dirty:
		return s.KV.Persist()
	default:
		return nil
	}
}
