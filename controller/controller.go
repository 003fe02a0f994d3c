package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/remoting"
)

// proposeTimeout is how long a request waits for its events to commit
// (Apache's handlers wait 5 s for their future).
const proposeTimeout = 5 * time.Second

// notifyQueue bounds the role-change notifications waiting to be sent.
const notifyQueue = 1024

// Controller is one controller of the group: the raft member, the Remoting
// server answering brokers and mqadmin, and the heartbeat table.
type Controller struct {
	// cfg is the configuration the controller started with; live is the
	// one UPDATE_CONTROLLER_CONFIG replaces whole, read where Apache reads
	// its config at run time (elections, notifications, retries, the
	// heartbeat scan period).
	cfg   Config
	live  atomic.Pointer[Config]
	cfgMu sync.Mutex // serialises updates of live and their files
	log   zerolog.Logger
	warn  zerolog.Logger // sampled, for refusals a client can repeat
	root  zerolog.Logger
	peers []Peer
	self  Peer

	st *State
	hb *Heartbeats
	ru rules

	node   *node
	rs     *remoting.Server
	client *remoting.Client

	// propose serialises rule → commit, as Apache's single event thread does.
	propose sync.Mutex
	// ready: this controller leads and has applied everything committed
	// before it did (a barrier passed).
	ready atomic.Bool
	// stopping: Shutdown began; leadership is never claimed again.
	stopping atomic.Bool
	// readySince is when ready was last set (UnixNano): the inactive-master
	// scan waits one interval after it, as Apache schedules that scan with
	// its interval as initial delay when a controller becomes leader — the
	// brokers' heartbeats reach a new leader first.
	readySince atomic.Int64

	work   chan func()
	notify chan notifyTask

	mu       sync.Mutex
	started  bool
	shutdown bool
	quit     chan struct{}
	wg       sync.WaitGroup
}

// notifyTask is one NOTIFY_BROKER_ROLE_CHANGED to send.
type notifyTask struct {
	addr string
	rc   *roleChange
}

// New validates cfg; nothing listens until Start.
func New(cfg Config, log zerolog.Logger) (*Controller, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	peers, _ := cfg.Peers() // validated
	c := &Controller{
		cfg:    cfg,
		log:    log.With().Str("component", "controller").Str("selfId", cfg.ControllerDLegerSelfID).Logger(),
		root:   log,
		peers:  peers,
		st:     NewState(),
		hb:     NewHeartbeats(cfg.ControllerMaxHeartbeats),
		work:   make(chan func(), cfg.ControllerRequestThreadPoolQueueCapacity),
		notify: make(chan notifyTask, notifyQueue),
		quit:   make(chan struct{}),
	}
	for _, p := range peers {
		if p.ID == cfg.ControllerDLegerSelfID {
			c.self = p
		}
	}
	c.live.Store(&cfg)
	c.ru = rules{st: c.st, hb: c.hb, unclean: func() bool { return c.live.Load().EnableElectUncleanMaster },
		maxSets: cfg.ControllerMaxBrokerSets, maxReplicas: cfg.ControllerMaxReplicasPerSet}
	c.warn = c.log.Sample(&zerolog.BurstSampler{Burst: 10, Period: time.Second})
	return c, nil
}

// Start opens the raft member and serves the Remoting port of this
// controller's peer address.
func (c *Controller) Start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started || c.shutdown {
		return errors.New("controller: already started")
	}
	n, err := startNode(c.cfg, c.peers, c.self, &fsm{st: c.st}, c.root.With().Str("component", "raft").Logger())
	if err != nil {
		return err
	}
	c.node = n
	c.client = remoting.NewClient(c.root)
	c.client.SetCloseOnTimeout() // a broker that moved is dialled again by name
	c.client.SetTLS(c.cfg.TLS)
	if sign := c.cfg.signer(); sign != nil {
		c.client.SetSigner(sign)
	}
	rs := remoting.NewServer(remoting.ServerConfig{
		Addr:    c.cfg.listenAddr(c.self),
		OnClose: c.connClosed,
		Limits:  c.cfg.Limits,
		TLS:     c.cfg.TLS,
	}, c.Handlers(), c.root)
	if err := rs.Start(); err != nil {
		_ = n.close() // the start error is the one to report
		_ = c.client.Close()
		return fmt.Errorf("controller: start remoting on %s: %w", c.cfg.listenAddr(c.self), err)
	}
	c.rs = rs
	c.started = true
	for range c.cfg.ControllerThreadPoolNums {
		c.goLocked(c.worker)
	}
	c.goLocked(c.watchLeadership)
	c.goLocked(c.scanHeartbeats)
	c.goLocked(c.scanInactiveMasters)
	c.goLocked(c.notifier)
	c.log.Info().Str("addr", c.self.Addr).Str("listen", c.cfg.listenAddr(c.self)).Str("raft", c.self.Raft).
		Bool("authenticationEnabled", c.cfg.AuthenticationEnabled).Bool("authorizationEnabled", c.cfg.AuthorizationEnabled).Msg("controller started")
	return nil
}

func (c *Controller) goLocked(fn func()) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		fn()
	}()
}

// Addr is the Remoting address brokers use (controllerAddr).
func (c *Controller) Addr() string { return c.self.Addr }

// Done is closed when the Remoting engine stops.
func (c *Controller) Done() <-chan struct{} { return c.rs.Done() }

// Err is why the Remoting engine stopped.
func (c *Controller) Err() error { return c.rs.Err() }

// IsLeader reports whether this controller leads and serves.
func (c *Controller) IsLeader() bool {
	return c.ready.Load() && c.node.r.State() == raft.Leader
}

// Shutdown stops serving, raft and the goroutines; it may be called more
// than once.
func (c *Controller) Shutdown(ctx context.Context) error {
	c.mu.Lock()
	if c.shutdown {
		c.mu.Unlock()
		return nil
	}
	c.shutdown = true
	started := c.started
	c.mu.Unlock()
	if !started {
		return nil
	}
	// Stop deciding first: closing the brokers' connections below must not
	// read as brokers dying (Apache stops its heartbeat manager first).
	// Taking propose waits for a decision in flight while raft still runs
	// to answer it: hashicorp/raft never answers a future whose entry is
	// still queued for its FSM when it shuts down, so none may be pending
	// then (a worker left waiting kept Shutdown past its deadline).
	c.propose.Lock()
	c.stopping.Store(true)
	c.ready.Store(false)
	c.propose.Unlock()
	var errs []error
	if err := c.rs.Shutdown(ctx); err != nil {
		errs = append(errs, err)
	}
	close(c.quit)
	if err := c.node.close(); err != nil {
		errs = append(errs, fmt.Errorf("controller: stop raft: %w", err))
	}
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		errs = append(errs, ctx.Err())
	}
	if err := c.client.Close(); err != nil {
		errs = append(errs, err)
	}
	c.log.Info().Msg("controller stopped")
	return errors.Join(errs...)
}

// offload queues fn for a worker; false when the queue is full.
func (c *Controller) offload(fn func()) bool {
	select {
	case c.work <- fn:
		return true
	default:
		return false
	}
}

func (c *Controller) worker() {
	for {
		select {
		case <-c.quit:
			return
		case fn := <-c.work:
			fn()
		}
	}
}

// errNotLeader answers requests reaching a controller that does not lead.
var errNotLeader = errors.New("controller: not leader")

// run decides with fn and commits its events (DLedgerController's
// appendEvent + ControllerEventHandler). Only the leader decides.
func (c *Controller) run(fn func() *result) *result {
	c.propose.Lock()
	defer c.propose.Unlock()
	if !c.IsLeader() {
		return &result{code: remoting.ControllerNotLeader, remark: "The controller is not in leader state"}
	}
	r := fn()
	if len(r.events) == 0 {
		return r
	}
	if err := c.commit(r.events); err != nil {
		if errors.Is(err, errNotLeader) {
			return &result{code: remoting.ControllerNotLeader, remark: "The controller is not in leader state"}
		}
		c.log.Error().Err(err).Msg("events not committed")
		return &result{code: remoting.SystemError, remark: err.Error()}
	}
	return r
}

func (c *Controller) commit(evs []event) error {
	data, err := json.Marshal(evs)
	if err != nil {
		return fmt.Errorf("controller: encode events: %w", err)
	}
	f := c.node.r.Apply(data, proposeTimeout)
	if err := f.Error(); err != nil {
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) || errors.Is(err, raft.ErrLeadershipTransferInProgress) {
			return fmt.Errorf("%w: %w", errNotLeader, err)
		}
		return fmt.Errorf("controller: commit events: %w", err)
	}
	if err, ok := f.Response().(error); ok && err != nil {
		return err
	}
	return nil
}

// watchLeadership marks the controller ready once it leads and a barrier
// has applied everything committed before (Apache appends an empty entry
// and waits for it before scheduling).
func (c *Controller) watchLeadership() {
	ch := c.node.r.LeaderCh()
	for {
		select {
		case <-c.quit:
			return
		case leads := <-ch:
			// Not ready until a barrier of this term: a "false" between two
			// "true"s may have been dropped (raft keeps only the latest),
			// and another leader may have committed entries meanwhile.
			c.ready.Store(false)
			if !leads {
				c.log.Info().Msg("controller lost leadership")
				continue
			}
			for c.node.r.State() == raft.Leader && !c.becomeReady() {
				select {
				case <-c.quit:
					return
				default:
				}
			}
			if c.IsLeader() {
				c.ensureUsers()
			}
		}
	}
}

// becomeReady waits for a barrier of this term and marks the controller
// ready; it reports false when the barrier failed. It holds propose, as run
// does, so that Shutdown finds no raft future pending, and a stopping
// controller never becomes ready.
func (c *Controller) becomeReady() bool {
	c.propose.Lock()
	defer c.propose.Unlock()
	if c.stopping.Load() {
		return true
	}
	if err := c.node.r.Barrier(proposeTimeout).Error(); err != nil {
		return false
	}
	c.readySince.Store(time.Now().UnixNano())
	c.ready.Store(true)
	c.log.Info().Msg("controller leads")
	return true
}

// scanHeartbeats expires silent brokers (scanNotActiveBroker): first after
// 2 s, then every scanNotActiveBrokerInterval.
func (c *Controller) scanHeartbeats() {
	t := time.NewTimer(2 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-c.quit:
			return
		case <-t.C:
			for _, e := range c.hb.expire() {
				if e.conn != nil {
					e.conn.Close()
				}
				c.log.Warn().Str("brokerName", e.key.brokerName).Int64("brokerId", e.key.id).Msg("broker heartbeat expired")
				c.brokerInactive(e.key.cluster, e.key.brokerName, &e.key.id)
			}
			t.Reset(millis(c.live.Load().ScanNotActiveBrokerInterval))
		}
	}
}

// scanInactiveMasters re-elects for sets whose master is inactive while a
// replica lives (scanInactiveMasterAndTriggerReelect), on the leader only.
func (c *Controller) scanInactiveMasters() {
	t := time.NewTicker(millis(c.cfg.ScanInactiveMasterInterval))
	defer t.Stop()
	for {
		select {
		case <-c.quit:
			return
		case now := <-t.C:
			if !c.IsLeader() || now.UnixNano()-c.readySince.Load() < int64(millis(c.cfg.ScanInactiveMasterInterval)) {
				continue
			}
			for _, name := range c.ru.needReelect() {
				c.brokerInactive("", name, nil)
			}
		}
	}
}

// connClosed runs on the event loop when a connection closes: a broker
// whose heartbeats came on it is inactive at once (onBrokerChannelClose).
func (c *Controller) connClosed(conn *remoting.Conn) {
	if k, ok := c.hb.connClosed(conn); ok {
		c.brokerInactive(k.cluster, k.brokerName, &k.id)
	}
}

// brokerInactive is ControllerManager.onBrokerInactive: when the leader
// learns a broker is gone and it was its set's master, it elects. id nil
// forces an election. The work runs on a worker.
func (c *Controller) brokerInactive(cluster, brokerName string, id *int64) {
	if !c.IsLeader() {
		return
	}
	ok := c.offload(func() {
		if id != nil {
			m, has := c.ru.masterOf(brokerName)
			if !has || m != *id {
				c.log.Warn().Str("brokerName", brokerName).Int64("brokerId", *id).Msg("broker inactive")
				return
			}
		}
		c.triggerElect(brokerName)
	})
	if !ok {
		c.log.Warn().Str("brokerName", brokerName).Msg("inactive broker not handled: request queue full")
	}
}

// triggerElect elects for a set whose master is gone, retrying up to
// electMasterMaxRetryCount times, and notifies the brokers.
func (c *Controller) triggerElect(brokerName string) {
	for i := 0; i < max(1, c.live.Load().ElectMasterMaxRetryCount); i++ {
		r := c.run(func() *result { return c.ru.electMaster(electRequest{BrokerName: brokerName, BrokerID: -1}) })
		if r.code == remoting.Success {
			c.log.Info().Str("brokerName", brokerName).Int64("masterBrokerId", r.elected.master).
				Int32("masterEpoch", r.elected.masterEpoch).Msg("new master elected")
			c.notifyRoleChanged(r.elected)
			return
		}
		c.log.Warn().Str("brokerName", brokerName).Int32("code", r.code).Str("remark", r.remark).Int("retry", i).Msg("elect master failed")
	}
}

// notifyRoleChanged queues NOTIFY_BROKER_ROLE_CHANGED for the set's active
// brokers (ControllerManager.notifyBrokerRoleChanged).
func (c *Controller) notifyRoleChanged(rc *roleChange) {
	if rc == nil || !c.live.Load().NotifyBrokerRoleChanged {
		return
	}
	for _, id := range rc.group.ids {
		if !c.hb.active(rc.group.cluster, rc.group.brokerName, id) {
			continue
		}
		select {
		case c.notify <- notifyTask{addr: rc.group.addrs[id], rc: rc}:
		default:
			c.log.Warn().Str("brokerAddr", rc.group.addrs[id]).Msg("role change not notified: queue full")
		}
	}
}

func (c *Controller) notifier() {
	for {
		select {
		case <-c.quit:
			return
		case t := <-c.notify:
			if t.addr == "" {
				continue
			}
			ext := map[string]string{
				"masterBrokerId":    fmt.Sprint(t.rc.master),
				"masterEpoch":       fmt.Sprint(t.rc.masterEpoch),
				"syncStateSetEpoch": fmt.Sprint(t.rc.syncEpoch),
			}
			if t.rc.masterAddr != "" {
				ext["masterAddress"] = t.rc.masterAddr
			}
			req := remoting.NewRequest(remoting.NotifyBrokerRoleChanged, ext, encodeSyncStateSet(t.rc.syncSet, t.rc.syncEpoch))
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			err := c.client.InvokeOneway(ctx, t.addr, req)
			cancel()
			if err != nil {
				c.log.Error().Err(err).Str("brokerAddr", t.addr).Msg("role change not notified")
				continue
			}
			c.log.Info().Str("brokerAddr", t.addr).Int64("masterBrokerId", t.rc.master).Int32("masterEpoch", t.rc.masterEpoch).Msg("role change notified")
		}
	}
}
