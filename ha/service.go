package ha

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/store"
)

// Service is one broker's replication: as a master, the HA listener and its
// slaves; as a slave, the connection to the master.
//
// Goroutines (all started through goRun, refused after Shutdown began, and
// awaited by Shutdown): master: the accept loop, and per slave a reader
// and a writer; slave: the connect loop, and per connection a reporter.
// Lock order: Service.mu, then nothing (no I/O under it).
type Service struct {
	cfg     Config
	st      *store.Store
	log     zerolog.Logger
	sampled zerolog.Logger // per-connection warnings: a burst, then quiet
	// connLog: connects and disconnects, which a peer (or a flapping link)
	// can repeat at will; sampled apart from the warnings.
	connLog    zerolog.Logger
	listenAddr string

	quit chan struct{}
	wg   sync.WaitGroup
	// run is cancelled by Shutdown: a slave's dial in progress ends with it.
	run    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	started bool
	shut    bool
	ln      net.Listener
	conns   map[*slaveConn]struct{} // master: connected slaves
	// slave side, guarded by mu
	masterAddr string
	link       net.Conn // the slave's live connection to its master, or nil

	// master: usable slaves (reported at least once), for SYNC_MASTER;
	// usableMu orders the changes with the store's limit they set.
	usableMu sync.Mutex
	usable   atomic.Int32
	// slave side
	addrCh    chan struct{} // the master address changed
	connected atomic.Bool
	lastRead  atomic.Int64 // unix ms
	shutOnce  sync.Once
}

// Status is what the broker reports about replication (runtime info, the
// slave-read decision).
type Status struct {
	Role Role
	// Master side.
	MasterMaxOffset int64         // the store's max commit log offset
	Slaves          []SlaveStatus // connected slaves, oldest first (Apache lists them in connection order)
	// Slave side.
	MasterHAAddr     string // where the slave connects ("" = unknown yet)
	Connected        bool   // the slave has a live connection to its master
	LastReadUnixMill int64  // when the slave last read from its master
	// SlaveMaxOffset is the slave's commit log end (what it reports).
	SlaveMaxOffset int64
}

// SlaveStatus is one connected slave as the master sees it.
type SlaveStatus struct {
	Addr      string
	AckOffset int64 // the slave's last reported max offset (-1: no report yet)
}

// maxSlaves bounds the HA connections a master keeps (a replica set has one
// or two slaves; anything beyond this is refused with a log line).
const maxSlaves = 16

// Validate checks the values the service depends on.
func (c *Config) Validate() error {
	switch {
	case c.BrokerRole < AsyncMaster || c.BrokerRole > Slave:
		return fmt.Errorf("ha config: brokerRole %v", c.BrokerRole)
	case c.HASendHeartbeatInterval <= 0:
		return fmt.Errorf("ha config: haSendHeartbeatInterval %d must be > 0", c.HASendHeartbeatInterval)
	case c.HAHousekeepingInterval <= 0:
		return fmt.Errorf("ha config: haHousekeepingInterval %d must be > 0", c.HAHousekeepingInterval)
	case c.HATransferBatchSize <= 0 || c.HATransferBatchSize > slaveReadBuffer-headerSize:
		return fmt.Errorf("ha config: haTransferBatchSize %d out of (0, %d]", c.HATransferBatchSize, slaveReadBuffer-headerSize)
	case c.SlaveTimeout <= 0:
		return fmt.Errorf("ha config: slaveTimeout %d must be > 0", c.SlaveTimeout)
	case c.HASlaveFallbehindMax < 0:
		return fmt.Errorf("ha config: haSlaveFallbehindMax %d must be >= 0", c.HASlaveFallbehindMax)
	case c.HAMaxGapNotInSync < 0:
		return fmt.Errorf("ha config: haMaxGapNotInSync %d must be >= 0", c.HAMaxGapNotInSync)
	}
	return nil
}

// New makes the service for cfg.BrokerRole over st. listenAddr is the
// master's HA listener ("ip:port", port 0 picks one); ignored for a slave.
// A slave's store is switched to refuse Put (store.BecomeReplica).
func New(cfg Config, listenAddr string, st *store.Store, log zerolog.Logger) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if st == nil {
		return nil, errors.New("ha: no store")
	}
	l := log.With().Str("component", "ha").Str("brokerRole", cfg.BrokerRole.String()).Logger()
	s := &Service{
		cfg:        cfg,
		st:         st,
		log:        l,
		sampled:    l.Sample(&zerolog.BurstSampler{Burst: 5, Period: 10 * time.Second}),
		connLog:    l.Sample(&zerolog.BurstSampler{Burst: 10, Period: 10 * time.Second}),
		listenAddr: listenAddr,
		quit:       make(chan struct{}),
		conns:      make(map[*slaveConn]struct{}),
		addrCh:     make(chan struct{}, 1),
		masterAddr: cfg.HAMasterAddress,
	}
	s.run, s.cancel = context.WithCancel(context.Background())
	if cfg.BrokerRole == Slave {
		st.BecomeReplica()
	}
	return s, nil
}

// Start listens (master) or starts connecting (slave, once it knows its
// master). A SYNC_MASTER enables store.Replicated here: until a slave
// reports, a SYNC_MASTER send is answered SLAVE_NOT_AVAILABLE at once.
func (s *Service) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shut {
		return errors.New("ha: start after shutdown")
	}
	if s.started {
		return nil
	}
	if s.cfg.BrokerRole == Slave {
		s.started = true
		s.goRunLocked(s.slaveLoop)
		s.log.Info().Str("masterHAAddr", s.masterAddr).Msg("ha slave started")
		return nil
	}
	ln, err := net.Listen("tcp", s.listenAddr)
	if err != nil {
		return fmt.Errorf("ha: listen %s: %w", s.listenAddr, err)
	}
	s.ln = ln
	s.started = true
	if s.cfg.BrokerRole == SyncMaster {
		s.st.EnableSource(store.Replicated, ms(s.cfg.SlaveTimeout), 0)
		s.st.LimitSource(store.Replicated, false, s.cfg.FallbehindMax())
	}
	gate := &Gate{Listener: ln, Secret: s.cfg.AuthSecret, Admit: s.admit, Go: s.goRun, Quit: s.quit, Log: &s.sampled, Name: "ha"}
	s.goRunLocked(gate.Run)
	s.log.Info().Str("haListen", ln.Addr().String()).Msg("ha master listening")
	return nil
}

// goRunLocked starts fn under the wait group unless shutdown began.
// Caller holds mu.
func (s *Service) goRunLocked(fn func()) bool {
	if s.shut {
		return false
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		fn()
	}()
	return true
}

func (s *Service) goRun(fn func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.goRunLocked(fn)
}

// Shutdown closes the listener and every connection and waits for the
// goroutines (bounded by ctx). Idempotent.
func (s *Service) Shutdown(ctx context.Context) error {
	s.shutOnce.Do(func() {
		s.mu.Lock()
		s.shut = true
		if s.ln != nil {
			_ = s.ln.Close() // the accept loop sees the error and ends
		}
		conns := make([]*slaveConn, 0, len(s.conns))
		for c := range s.conns {
			conns = append(conns, c)
		}
		link := s.link
		s.mu.Unlock()
		close(s.quit)
		s.cancel()
		for _, c := range conns {
			c.close("shutdown")
		}
		if link != nil {
			_ = link.Close() // the slave loop ends on the error
		}
	})
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		s.log.Info().Msg("ha stopped")
		return nil
	case <-ctx.Done():
		return fmt.Errorf("ha: shutdown: %w", ctx.Err())
	}
}

// Addr is the master's bound HA listener address (tests listen on port 0);
// "" for a slave or before Start.
func (s *Service) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// UpdateMasterAddress is the slave's master HA address from a name server's
// registration answer (haServerAddr); ignored when HAMasterAddress is set,
// for a master, or when the address is unchanged; "" disconnects. A new
// address closes the current connection: the slave connects to the new one.
func (s *Service) UpdateMasterAddress(addr string) {
	if s.cfg.BrokerRole != Slave || s.cfg.HAMasterAddress != "" {
		return
	}
	s.mu.Lock()
	if addr == s.masterAddr {
		s.mu.Unlock()
		return
	}
	old := s.masterAddr
	s.masterAddr = addr
	link := s.link
	s.mu.Unlock()
	s.log.Info().Str("masterHAAddr", addr).Str("previous", old).Msg("ha master address updated")
	if link != nil {
		_ = link.Close() // the slave loop reconnects to the new address
	}
	select {
	case s.addrCh <- struct{}{}:
	default:
	}
}

// Status is a snapshot of the replication state.
func (s *Service) Status() Status {
	st := Status{Role: s.cfg.BrokerRole}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.BrokerRole == Slave {
		st.MasterHAAddr = s.masterAddr
		st.Connected = s.connected.Load()
		st.LastReadUnixMill = s.lastRead.Load()
		st.SlaveMaxOffset = s.st.MaxPhyOffset()
		return st
	}
	st.MasterMaxOffset = s.st.MaxPhyOffset()
	conns := make([]*slaveConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	slices.SortFunc(conns, func(a, b *slaveConn) int { return a.since.Compare(b.since) })
	for _, c := range conns {
		st.Slaves = append(st.Slaves, SlaveStatus{Addr: c.addr, AckOffset: c.ack.Load()})
	}
	return st
}
