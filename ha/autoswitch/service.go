package autoswitch

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

	"github.com/rocketgo/rocketgo/ha"
	"github.com/rocketgo/rocketgo/store"
)

// Config is the AutoSwitch part of Apache's MessageStoreConfig (keys in
// the comments) and the broker's hooks. DefaultConfig holds Apache's
// defaults.
type Config struct {
	HAMaxTimeSlaveNotCatchup time.Duration // haMaxTimeSlaveNotCatchup, 15 s
	AllAckInSyncStateSet     bool          // allAckInSyncStateSet
	MinInSyncReplicas        int           // minInSyncReplicas, 1
	// InSyncReplicas is how many replicas, the master included, hold a
	// SYNC_MASTER send before it is answered (inSyncReplicas, 1: the
	// master alone, so nobody waits); -1 is every member of the
	// SyncStateSet, as allAckInSyncStateSet, which overrides it.
	InSyncReplicas          int
	HASendHeartbeatInterval time.Duration // haSendHeartbeatInterval, 5 s
	HAHousekeepingInterval  time.Duration // haHousekeepingInterval, 20 s
	// CheckSyncStateSetPeriod is how often a master looks for members to
	// drop from the SyncStateSet when no ack wakes it (checkSyncStateSetPeriod,
	// 5 s); acks and disconnects wake it at once. A refused proposal is
	// tried again at the next look.
	CheckSyncStateSetPeriod time.Duration
	HATransferBatchSize     int           // haTransferBatchSize, 32 KiB
	SlaveTimeout            time.Duration // slaveTimeout, 3 s: a SYNC_MASTER send's wait
	SyncFromLastFile        bool          // syncFromLastFile: an empty slave starts at the master's last file
	AsyncLearner            bool          // asyncLearner: never joins the SyncStateSet
	// HAFlowControlEnable bounds what a master sends each slave per second
	// to MaxHATransferByteInSecond (haFlowControlEnable, off;
	// maxHaTransferByteInSecond, 100 MiB), as Apache's FlowMonitor.
	HAFlowControlEnable       bool
	MaxHATransferByteInSecond int64
	// AuthSecret, when set, is the secret a slave proves it holds before a
	// master serves it, and a slave answers its master with (ha.Challenge);
	// the broker's haAuthSecret.
	AuthSecret []byte

	// AlterSyncStateSet asks the controller to change the SyncStateSet
	// (the broker: replicas.Client.AlterSyncStateSet, 1001): newSet as the
	// successor of the set of epoch setEpoch; it returns the set and epoch
	// the controller accepted. nil: the master never proposes (tests of
	// the data path).
	AlterSyncStateSet func(masterID int64, masterEpoch int32, newSet []int64, setEpoch int32) (accepted []int64, newSetEpoch int32, err error)
}

// DefaultConfig is Apache's defaults.
func DefaultConfig() Config {
	return Config{
		HAMaxTimeSlaveNotCatchup: 15 * time.Second,
		MinInSyncReplicas:        1,
		InSyncReplicas:           1,
		HASendHeartbeatInterval:  5 * time.Second,
		HAHousekeepingInterval:   20 * time.Second,
		CheckSyncStateSetPeriod:  5 * time.Second,
		HATransferBatchSize:      32 << 10,
		SlaveTimeout:             3 * time.Second,

		MaxHATransferByteInSecond: 100 << 20,
	}
}

// Validate checks the values the service depends on.
func (c *Config) Validate() error {
	switch {
	case c.HAMaxTimeSlaveNotCatchup <= 0:
		return fmt.Errorf("autoswitch config: haMaxTimeSlaveNotCatchup %v must be > 0", c.HAMaxTimeSlaveNotCatchup)
	case c.MinInSyncReplicas < 1:
		return fmt.Errorf("autoswitch config: minInSyncReplicas %d must be >= 1", c.MinInSyncReplicas)
	case c.HASendHeartbeatInterval <= 0 || c.HAHousekeepingInterval <= 0 || c.SlaveTimeout <= 0 || c.CheckSyncStateSetPeriod <= 0:
		return errors.New("autoswitch config: haSendHeartbeatInterval, haHousekeepingInterval, slaveTimeout and checkSyncStateSetPeriod must be > 0")
	case c.HAFlowControlEnable && c.MaxHATransferByteInSecond <= 0:
		return fmt.Errorf("autoswitch config: maxHaTransferByteInSecond %d must be > 0", c.MaxHATransferByteInSecond)
	case c.HATransferBatchSize <= 0 || c.HATransferBatchSize > slaveReadBuffer-MasterTransferHeaderLen:
		return fmt.Errorf("autoswitch config: haTransferBatchSize %d out of (0, %d]", c.HATransferBatchSize, slaveReadBuffer-MasterTransferHeaderLen)
	}
	return nil
}

// Service is one controller-mode broker's replication: the HA listener
// (always open; slaves are served only while this broker is master) and,
// as a slave, the client of the master the controller named.
//
// Goroutines (started through goRun, refused after Shutdown began, awaited
// by Shutdown): the accept loop; as master the housekeeper and per slave
// a reader and a writer; as slave the client loop. A role change stops the
// previous role's goroutines (term.stop) before it returns.
// Lock order: mu, then SyncSet's; no I/O under mu.
type Service struct {
	cfg        Config
	st         *store.Store
	epochs     *store.EpochCache
	log        zerolog.Logger
	sampled    zerolog.Logger
	listenAddr string
	// retryRefused: a slave's wait after a refusal (tests shorten it).
	retryRefused time.Duration

	wg       sync.WaitGroup
	quit     chan struct{}
	shutOnce sync.Once

	// inSync is the master's SyncStateSet size (accepted and proposed
	// members, Apache's inSyncReplicasNums); 0 while not master. Read on
	// every SYNC_MASTER send, written under mu.
	inSync atomic.Int32

	mu      sync.Mutex
	started bool
	shut    bool
	ln      net.Listener
	term    *term // the current role's, nil before the first role
}

// term is one role's lifetime: BecomeMaster or BecomeSlave starts one and
// stops the previous.
type term struct {
	master bool
	epoch  int32
	self   int64
	done   chan struct{}
	wg     sync.WaitGroup

	// master
	sync     *SyncSet
	setEpoch int32
	conns    map[*masterConn]struct{} // guarded by Service.mu
	kick     chan struct{}            // the housekeeper: an ack or a set change
	// altering: a proposal is at the controller; alterFailed: when the
	// controller last refused one (unix ms).
	altering    atomic.Bool
	alterFailed atomic.Int64
	// slave
	masterAddr string
	client     *client
}

// maxSlaves bounds the slave connections a master keeps.
const maxSlaves = 16

// New makes the service over st and its epoch file.
func New(cfg Config, listenAddr string, st *store.Store, epochs *store.EpochCache, log zerolog.Logger) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if st == nil || epochs == nil {
		return nil, errors.New("autoswitch: no store or epoch file")
	}
	l := log.With().Str("component", "autoswitch").Logger()
	return &Service{
		cfg: cfg, st: st, epochs: epochs, log: l, listenAddr: listenAddr,
		sampled: l.Sample(&zerolog.BurstSampler{Burst: 5, Period: 10 * time.Second}),
		quit:    make(chan struct{}), retryRefused: retryRefused,
	}, nil
}

// Start listens on the HA address. Slaves are refused until BecomeMaster.
func (s *Service) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shut {
		return errors.New("autoswitch: start after shutdown")
	}
	if s.started {
		return nil
	}
	ln, err := net.Listen("tcp", s.listenAddr)
	if err != nil {
		return fmt.Errorf("autoswitch: listen %s: %w", s.listenAddr, err)
	}
	s.ln, s.started = ln, true
	gate := &ha.Gate{Listener: ln, Secret: s.cfg.AuthSecret, Admit: s.admit, Quit: s.quit, Log: &s.sampled, Name: "autoswitch",
		Go: func(fn func()) bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.goRunLocked(nil, fn)
		}}
	s.goRunLocked(nil, gate.Run)
	s.log.Info().Str("haListen", ln.Addr().String()).Msg("autoswitch ha listening")
	return nil
}

// goRunLocked starts fn under the service's wait group (and t's, when
// given) unless shutdown began. Caller holds mu.
func (s *Service) goRunLocked(t *term, fn func()) bool {
	if s.shut {
		return false
	}
	s.wg.Add(1)
	if t != nil {
		t.wg.Add(1)
	}
	go func() {
		defer s.wg.Done()
		if t != nil {
			defer t.wg.Done()
		}
		fn()
	}()
	return true
}

// Shutdown closes the listener and every connection and waits for the
// goroutines (bounded by ctx). Idempotent.
func (s *Service) Shutdown(ctx context.Context) error {
	s.shutOnce.Do(func() {
		s.mu.Lock()
		s.shut = true
		if s.ln != nil {
			_ = s.ln.Close() // the accept loop ends on the error
		}
		t := s.term
		s.mu.Unlock()
		close(s.quit)
		if t != nil {
			s.stopTerm(t)
		}
	})
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		s.log.Info().Msg("autoswitch ha stopped")
		return nil
	case <-ctx.Done():
		return fmt.Errorf("autoswitch: shutdown: %w", ctx.Err())
	}
}

// stopTerm ends a role: its connections close, its goroutines end.
func (s *Service) stopTerm(t *term) {
	close(t.done)
	s.mu.Lock()
	conns := make([]*masterConn, 0, len(t.conns))
	for c := range t.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.close("role change")
	}
	if t.client != nil {
		t.client.closeLink()
	}
	t.wg.Wait()
}

// Addr is the bound HA listener address ("" before Start).
func (s *Service) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// UpdateMasterAddress is a no-op: in controller mode the master's HA
// address comes with BecomeSlave, not from the name server.
func (s *Service) UpdateMasterAddress(string) {}

// BecomeMaster stops following, drops slave connections of a previous term
// and serves slaves under epoch. A replica store is switched to take Puts
// first (a record the last frame split is cut), and the term's epoch entry
// is set at the commit log end found then: the caller's entry
// (replicas.Roles.Apply) was taken while the old master's frames could
// still arrive, and bytes of the old term must not be labelled with the
// new one, nor the cut record's offset kept.
func (s *Service) BecomeMaster(epoch int32, selfID int64, syncStateSet []int64, setEpoch int32) error {
	t := &term{master: true, epoch: epoch, self: selfID, done: make(chan struct{}), setEpoch: setEpoch,
		sync:  NewSyncSet(selfID, syncStateSet, s.cfg.HAMaxTimeSlaveNotCatchup),
		conns: map[*masterConn]struct{}{}, kick: make(chan struct{}, 1)}
	if err := s.swapTerm(t, func() error {
		end, err := s.st.LeaveReplica()
		if err != nil {
			return err
		}
		if err := s.epochs.BeginTerm(epoch, end); err != nil {
			return err
		}
		s.st.EnableSource(store.Replicated, s.cfg.SlaveTimeout, 0)
		s.applySetLocked(t)
		return nil
	}); err != nil {
		return fmt.Errorf("autoswitch: become master epoch %d: %w", epoch, err)
	}
	s.mu.Lock()
	s.goRunLocked(t, func() { s.housekeep(t) })
	s.mu.Unlock()
	s.log.Info().Int32("masterEpoch", epoch).Int64("brokerId", selfID).Ints64("syncStateSet", syncStateSet).
		Int64("maxPhyOffset", s.st.MaxPhyOffset()).Msg("autoswitch ha is master")
	return nil
}

// BecomeSlave drops slave connections and follows masterHAAddr: handshake,
// truncation to the consistent point, then receiving.
func (s *Service) BecomeSlave(masterHAAddr string, masterEpoch int32, selfID int64) error {
	t := &term{epoch: masterEpoch, self: selfID, done: make(chan struct{}), masterAddr: masterHAAddr}
	t.client = &client{s: s, t: t}
	if err := s.swapTerm(t, func() error {
		s.inSync.Store(0)
		// A send still waiting for the slaves' acks gets none here any
		// more: answered now with what Apache answers once its wait times
		// out, not slaveTimeout later. (A truncation answers waits on the
		// records it cuts in any case: store.TruncateReplica.)
		s.st.FailWaits(store.Replicated, fmt.Errorf("no longer master (epoch %d): %w", masterEpoch, store.ErrReplicaTimeout))
		s.st.BecomeReplica()
		s.st.SetConfirmGate(true)
		return nil
	}); err != nil {
		return fmt.Errorf("autoswitch: become slave of %s: %w", masterHAAddr, err)
	}
	s.mu.Lock()
	s.goRunLocked(t, t.client.loop)
	s.mu.Unlock()
	s.log.Info().Int32("masterEpoch", masterEpoch).Str("masterHAAddr", masterHAAddr).Int64("brokerId", selfID).
		Msg("autoswitch ha is slave")
	return nil
}

// swapTerm stops the current term, runs prepare, installs t.
func (s *Service) swapTerm(t *term, prepare func() error) error {
	s.mu.Lock()
	if s.shut {
		s.mu.Unlock()
		return errors.New("shut down")
	}
	old := s.term
	s.term = nil
	s.mu.Unlock()
	if old != nil {
		s.stopTerm(old)
	}
	if err := prepare(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shut {
		return errors.New("shut down")
	}
	s.term = t
	return nil
}

// SyncStateSetChanged installs the controller's set (1001 reply, 1004
// poll, 1008 push) when this broker is master and the epoch is newer.
func (s *Service) SyncStateSetChanged(set []int64, setEpoch int32) {
	s.mu.Lock()
	t := s.term
	s.mu.Unlock()
	s.setChanged(t, set, setEpoch)
}

// setChanged installs set in term t if t is still the current term (an
// answer to a proposal of an ended term is dropped).
func (s *Service) setChanged(t *term, set []int64, setEpoch int32) {
	s.mu.Lock()
	if t == nil || t != s.term || !t.master || setEpoch <= t.setEpoch {
		s.mu.Unlock()
		return
	}
	t.setEpoch = setEpoch
	t.sync.Accepted(set)
	s.applySetLocked(t)
	s.mu.Unlock()
	s.log.Info().Ints64("syncStateSet", set).Int32("syncStateSetEpoch", setEpoch).Msg("autoswitch syncStateSet changed")
	t.wake()
}

func (t *term) wake() {
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

// ConfirmOffset is the store's confirm offset (master: what every member
// of the set holds; slave: the master's, capped by the local end).
func (s *Service) ConfirmOffset() int64 {
	s.mu.Lock()
	t := s.term
	s.mu.Unlock()
	if t != nil && t.master && !s.st.ConfirmGated() {
		return s.st.MaxPhyOffset()
	}
	return s.st.ConfirmOffset()
}

// SyncStateSet is the master's current set (the accepted one and a pending
// proposal); nil for a slave.
func (s *Service) SyncStateSet() []int64 {
	s.mu.Lock()
	t := s.term
	s.mu.Unlock()
	if t == nil || !t.master {
		return nil
	}
	return t.sync.Current()
}

// Status reports as the classic service does (role SLAVE or SYNC_MASTER:
// a controller-mode master is always SYNC_MASTER, as Apache sets it).
func (s *Service) Status() ha.Status {
	s.mu.Lock()
	t := s.term
	var conns []*masterConn
	if t != nil {
		for c := range t.conns {
			conns = append(conns, c)
		}
	}
	s.mu.Unlock()
	if t == nil || !t.master {
		st := ha.Status{Role: ha.Slave, SlaveMaxOffset: s.st.MaxPhyOffset()}
		if t != nil {
			st.MasterHAAddr = t.masterAddr
			st.Connected = t.client.connected.Load()
			st.LastReadUnixMill = t.client.lastRead.Load()
		}
		return st
	}
	st := ha.Status{Role: ha.SyncMaster, MasterMaxOffset: s.st.MaxPhyOffset()}
	slices.SortFunc(conns, func(a, b *masterConn) int { return a.since.Compare(b.since) })
	for _, c := range conns {
		st.Slaves = append(st.Slaves, ha.SlaveStatus{Addr: c.addr, AckOffset: c.ack.Load()})
	}
	return st
}
