package role

import (
	"context"
	"net/netip"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/ha"
	"github.com/rocketgo/rocketgo/ha/autoswitch"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// Config is what the role reads of the broker's configuration in force:
// a view of one snapshot, made by the broker once per snapshot, so that
// the checks made per request (RejectsSends, RejectsPulls) cost a load.
// Never modified once handed out.
type Config struct {
	ClusterName string // brokerClusterName
	BrokerName  string
	// BrokerID is brokerId: 0 on a master; in controller mode a slave's is
	// the controller's id for it.
	BrokerID int64
	// Addr is brokerIP1:listenPort, what name servers and controllers
	// route clients to.
	Addr string
	// HAServerAddr is brokerIP2:haListenPort, what slaves copy from.
	HAServerAddr string
	// HAListen is bindAddress:haListenPort, where the HA service listens.
	HAListen string
	// HA is the classic HA service's configuration, brokerRole among it
	// and haAuthSecret set.
	HA ha.Config
	// NamesrvAddrs are the name servers registered with (namesrvAddr).
	NamesrvAddrs []string
	// Permission is brokerPermission: the name servers get each topic's
	// perm less what the broker refuses.
	Permission int32
	// RegisterPeriod is registerNameServerPeriod, read when the registrar
	// starts; RegisterTimeout is registerBrokerTimeoutMills.
	RegisterPeriod, RegisterTimeout time.Duration
	// CompressedRegister, SplitRegistration (enableSplitRegistration) and
	// SplitRegistrationSize choose the registration bodies
	// (registration.go).
	CompressedRegister    bool
	SplitRegistration     bool
	SplitRegistrationSize int
	// SlaveReadEnable: a slave serves pulls.
	SlaveReadEnable bool
	// SlaveSyncPeriod is slaveSynchronizePeriod: a classic slave's metadata
	// sync, read before each wait.
	SlaveSyncPeriod time.Duration
	// TimerWheelEnable: the timer runs, so its checkpoint and metrics are
	// served and copied.
	TimerWheelEnable bool
	// Controller is controller mode's keys; read only in controller mode.
	Controller Controller
}

// Controller is what controller mode reads of the configuration.
type Controller struct {
	// Addr is controllerAddr: the controllers, ';'-separated. Read at New.
	Addr string
	// SyncBrokerMetadataPeriod is the replica info poll (1004);
	// SyncControllerMetadataPeriod the leader lookup (1005).
	SyncBrokerMetadataPeriod, SyncControllerMetadataPeriod time.Duration
	// HeartbeatInterval is brokerHeartbeatInterval (904).
	HeartbeatInterval time.Duration
	// HeartbeatTimeoutMillis is controllerHeartBeatTimeoutMills, sent in
	// every heartbeat.
	HeartbeatTimeoutMillis int64
	// ElectionPriority is brokerElectionPriority, sent in every heartbeat.
	ElectionPriority int32
	// SendHeartbeatTimeout is sendHeartbeatTimeoutMillis. Read at New.
	SendHeartbeatTimeout time.Duration
	// AutoSwitch is the AutoSwitch HA service's configuration from the
	// broker's keys; the role sets its AlterSyncStateSet. Read at StartHA.
	AutoSwitch autoswitch.Config
}

// IsSlave reports brokerRole SLAVE.
func (c *Config) IsSlave() bool { return c.HA.BrokerRole == ha.Slave }

// Topics is the topic table: registered with the name servers, replaced
// by a master's on a slave.
type Topics interface {
	Snapshot() (map[string]*tables.TopicConfig, remoting.DataVersion)
	ReplaceWith(body []byte, log zerolog.Logger) error
	// BumpVersion makes the next registration a change for the name
	// servers (a role change).
	BumpVersion()
}

// Groups is the subscription group table, replaced by a master's on a
// slave.
type Groups interface {
	ReplaceWith(body []byte, log zerolog.Logger) error
}

// Offsets are the consumer offsets: served to slaves, merged from a master.
type Offsets interface {
	Marshal() []byte
	MergeWith(body []byte, log zerolog.Logger) error
}

// Modes are the message request modes, served to slaves.
type Modes interface {
	Marshal() ([]byte, error)
}

// Delays are the delay levels' progress (broker/timer): served to slaves,
// replaced by a master's.
type Delays interface {
	Marshal() []byte
	Take(body []byte) error
}

// Timers is the timer's progress (broker/timer): served to slaves, copied
// from a master's; Running tells a timer delivering here.
type Timers interface {
	Checkpoint() (body []byte, lowOffset int64)
	TakeCheckpoint(resp *remoting.Command) error
	Running() bool
}

// Deps are everything the role uses.
type Deps struct {
	// Config is the view of the configuration in force.
	Config func() *Config
	// SetRole stores a new configuration snapshot with brokerId and
	// brokerRole changed (controller mode's role changes), which the send,
	// pull and admin paths read from then on.
	SetRole func(brokerID int64, r ha.Role)
	// ControllerMode is enableControllerMode: the controller names the
	// role. StoreRoot holds the epoch and identity files then.
	ControllerMode bool
	StoreRoot      string
	// TLS is how the role's client dials name servers, controllers and
	// the master (nil: plain).
	TLS *remoting.TLS
	// Store is the message store: the HA services copy its commit log.
	Store   *store.Store
	Topics  Topics
	Groups  Groups
	Offsets Offsets
	Modes   Modes
	Delays  Delays
	Timers  Timers
	// TimerCounts are the timer's figures: a slave's hold its master's
	// counts (SetMirror).
	TimerCounts *stats.TimerStats
	// NewHA makes the classic HA service; nil is NewHA.
	NewHA func(cfg ha.Config, listen string, st *store.Store, log zerolog.Logger) (Replicator, error)
	// Go runs fn on a goroutine the broker's Shutdown awaits; Quit closes
	// when the broker stops.
	Go   func(fn func())
	Quit <-chan struct{}
	// BeforeMaster runs when a controller-mode broker becomes master,
	// after the HA service takes writes and before the configuration says
	// master (the broker takes sends from then on): the timer's fence.
	BeforeMaster func()
	// RunMaster starts a master's special services with run, after the
	// configuration says master; they end when run's quit closes (the
	// next role change, or Quit). first: the first time this broker is
	// master since it started.
	RunMaster func(first bool, run func(fn func(quit <-chan struct{})))
}

// Service is the broker's role: its registration with the name servers,
// the classic or AutoSwitch HA service, a slave's copy of its master's
// metadata and, in controller mode, the controller's role changes.
type Service struct {
	d       Deps
	log     zerolog.Logger // component=role
	sampled zerolog.Logger // log, sampled: what masters and name servers cause
	root    zerolog.Logger // for the parts that add their own component
	// client reaches name servers, controllers and the master.
	client *remoting.Client
	reg    *registrar
	repl   replication
	ctrl   *controlled // controller mode (controllermode.go); nil outside it
}

// New makes the role; in controller mode it opens the epoch file. The
// broker starts the HA service (StartHA) after the store, then the role's
// goroutines (Run). log is the broker's root logger.
func New(d Deps, log zerolog.Logger) (*Service, error) {
	if d.NewHA == nil {
		d.NewHA = NewHA
	}
	s := &Service{d: d, root: log, log: log.With().Str("component", "role").Logger(),
		client: remoting.NewClient(log)}
	s.sampled = s.log.Sample(&zerolog.BurstSampler{Burst: 10, Period: time.Second})
	// Name servers, controllers and masters that moved (a restarted pod's
	// new IP under its name) are dialled again once a call times out.
	s.client.SetCloseOnTimeout()
	s.client.SetTLS(d.TLS)
	s.repl.syncNow = make(chan struct{}, 1)
	s.reg = newRegistrar(s)
	if d.ControllerMode {
		ctrl, err := newControlled(s)
		if err != nil {
			return nil, err
		}
		s.ctrl = ctrl
	}
	return s, nil
}

// Run starts the role's goroutines through Deps.Go: in controller mode
// the controller's lifecycle (which starts the registrar once the role is
// known); otherwise the registrar and, on a slave, the metadata sync. A
// classic master's special services are the broker's to start.
func (s *Service) Run() {
	switch {
	case s.ctrl != nil:
		s.d.Go(func() { s.ctrl.run(s.d.Quit) })
		return
	case s.IsSlave():
		// A slave delivers no delayed or timer messages and checks no
		// transactions: its master does, and the slave copies the result
		// (Apache's changeSpecialServiceStatus(brokerId == 0)).
		s.d.Go(func() { s.slaveSyncLoop(s.d.Quit) })
	}
	s.reg.launched.Store(true)
	s.d.Go(func() { s.reg.run(s.d.Quit) })
}

// Unregister stops the registrations, waits until none is in flight, and
// tells every name server the broker is leaving (Shutdown, before the
// broker stops accepting). Once.
func (s *Service) Unregister(ctx context.Context) {
	s.reg.stop(ctx) // no registration after the unregistration
	s.reg.unregisterAll(ctx)
}

// Close closes the role's client (Shutdown, after ShutdownHA).
func (s *Service) Close() error { return s.client.Close() }

// SignOutgoing has fn add credentials to every request the role sends to
// name servers, controllers and the master (registration, a slave's
// metadata sync): ACL 2.0's innerClientAuthenticationCredentials. Call it
// before Run.
func (s *Service) SignOutgoing(fn func(req *remoting.Command)) { s.client.SetSigner(fn) }

// RegisterSoon asks for a registration with every name server soon (the
// topic table changed); never blocks, so an event loop may call it.
func (s *Service) RegisterSoon() { s.reg.poke() }

// RegisterAllSoon asks for a full registration soon (brokerPermission
// changed); never blocks.
func (s *Service) RegisterAllSoon() { s.reg.pokeFull() }

// RejectsSends reports a broker that refuses sends and send backs before
// reading them (Apache 5.x SendMessageProcessor.rejectRequest: a slave).
func (s *Service) RejectsSends() bool { return s.d.Config().IsSlave() }

// RejectsPulls reports a broker that refuses pulls before reading them
// (Apache 5.x PullMessageProcessor.rejectRequest: a slave without
// slaveReadEnable).
func (s *Service) RejectsPulls() bool {
	c := s.d.Config()
	return c.IsSlave() && !c.SlaveReadEnable
}

// IsSlave reports brokerRole SLAVE.
func (s *Service) IsSlave() bool { return s.d.Config().IsSlave() }

// ControllerMode reports enableControllerMode.
func (s *Service) ControllerMode() bool { return s.ctrl != nil }

// ControllerBrokerID is the id the controller assigned this broker; -1
// before registration or outside controller mode.
func (s *Service) ControllerBrokerID() int64 {
	if s.ctrl == nil {
		return -1
	}
	return s.ctrl.id.Load()
}

// RoleChangeAllowed reports whether NOTIFY_BROKER_ROLE_CHANGED from ip
// is considered: ip must be a controller host's (controllerAddr).
// Outside controller mode the push is ignored whoever sends it. It does
// not block (event loop).
func (s *Service) RoleChangeAllowed(ip netip.Addr) bool {
	return s.ctrl == nil || s.ctrl.ips.Allowed(ip)
}
