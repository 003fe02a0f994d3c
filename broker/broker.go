package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/admin"
	"github.com/rocketgo/rocketgo/broker/clients"
	"github.com/rocketgo/rocketgo/broker/lite"
	"github.com/rocketgo/rocketgo/broker/pop"
	"github.com/rocketgo/rocketgo/broker/pull"
	"github.com/rocketgo/rocketgo/broker/role"
	"github.com/rocketgo/rocketgo/broker/send"
	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/broker/timer"
	"github.com/rocketgo/rocketgo/broker/tx"
	"github.com/rocketgo/rocketgo/ha"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// Broker is one RocketMQ broker: it builds the store, the tables above it
// and the services in their own packages (send, clients, pull, pop, admin,
// tx, timer, role), serves the Remoting servers and starts and stops the
// background work, and what starts and stops with each role. The broker's
// own configuration and switches are its methods. The exported fields are
// what cmd/mqbroker wires: the services for the request handlers, the
// tables and counters for the metrics endpoint.
type Broker struct {
	Store   *store.Store
	Topics  *tables.Topics
	Groups  *tables.Groups
	Offsets *tables.Offsets
	Clients *tables.Clients
	// Stats counts messages in per topic and out per group and topic,
	// for the metrics endpoint and the admin codes' figures.
	Stats stats.Stats
	// Tx counts transactional messages by topic, for the metrics endpoint.
	Tx stats.TxStats
	// Timer is the timer service's figures, for the metrics endpoint.
	Timer stats.TimerStats
	// Revive counts the pop revive service's copies, for the metrics
	// endpoint.
	Revive stats.PopStats
	// LiteLag is the lite groups' lag latency sources, noted by the lite
	// pops, for the metrics endpoint.
	LiteLag stats.LiteLag
	// Pops is pop consumption; the broker runs its revive as a master.
	Pops *pop.Service
	// Lite is the lite-topic subscriptions and events (broker/lite).
	Lite       *lite.Service
	liteRoutes liteRoutes // the parents' routes for its sharding decision
	// Members serves heartbeats, the groups' member lists and their queue
	// locks.
	Members *clients.Service
	// Transactions ends transactions and checks half messages.
	Transactions *tx.Service
	// Sends stores sends, send-backs and recalls.
	Sends *send.Service
	// Admin serves the admin codes over the tables.
	Admin *admin.Service
	// Pulls serves pulls, their long polling and cold reads.
	Pulls *pull.Service
	// Role is the broker's role: name-server registration, replication,
	// a slave's copy of its master's metadata, controller mode.
	Role    *role.Service
	Locks   *tables.Locks
	Filters tables.Filters
	UniqIDs *message.UniqIDGen
	// StoreHost is brokerIP1:listenPort, written into every stored record.
	StoreHost netip.AddrPort

	// cfg is the configuration in force (Config): a snapshot never modified
	// once stored; a runtime change stores a whole new one.
	cfg atomic.Pointer[Config]
	// sendCfg is the send path's view of cfg (sendConfig), roleCfg the
	// role's (roleConfig).
	sendCfg atomic.Pointer[sendSnapshot]
	roleCfg atomic.Pointer[roleSnapshot]
	cfgMu   sync.Mutex // serialises updateConfig and UpdateConfig; guards cfgFile
	// cfgFile is the configuration as the config file holds it
	// (runtimeconfig.go); cfgDirty: it changed since last written.
	cfgFile  configFile
	cfgDirty atomic.Bool
	stats    *runtimeStats // GET_BROKER_RUNTIME_INFO's counters

	log      zerolog.Logger // component=broker
	sampled  zerolog.Logger // log, sampled: what clients cause (bad names in heartbeats, ...)
	root     zerolog.Logger // for parts that add their own component
	server   *remoting.Server
	fast     *remoting.Server // the VIP channel (fastListenPort), nil when off
	handler  remoting.Handler // what Start serves with; local connections use it too
	localIDs atomic.Uint64    // IDs of in-process connections (Local)
	delays   *timer.Delays
	timers   *timer.Timers
	// requestModes: each topic and group's PULL or POP.
	requestModes *tables.RequestModes
	// newHA makes the replication service in Start (role.NewHA); tests
	// replace it between New and Start.
	newHA func(cfg ha.Config, listen string, st *store.Store, log zerolog.Logger) (role.Replicator, error)
	// wait is Store.Wait; tests replace it to make a SYNC_FLUSH or
	// SYNC_MASTER wait fail, which a real disk or slave does not do on demand.
	wait func(end int64, need store.Durability, done func(error))

	quit       chan struct{}
	persistNow chan struct{} // a topic or the config changed: write topics.json and the config file now, not at the next tick
	wg         sync.WaitGroup
	started    atomic.Bool
	stopping   atomic.Bool
	stopOnce   sync.Once
	stopErr    error
}

// New opens the store and the config files; Start serves.
func New(cfg Config, log zerolog.Logger) (*Broker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// A slave's store takes only the master's bytes (replication). In
	// controller mode the role changes at runtime: the broker refuses a
	// slave's writes before they reach the store.
	cfg.Store.Replica = cfg.IsSlave() && !cfg.Controller.EnableControllerMode
	// Controller mode: consume queues dispatched only up to the confirm
	// offset (AutoSwitch HA), from Open on.
	cfg.Store.ConfirmGate = cfg.Controller.EnableControllerMode
	root := log.With().Str("brokerName", cfg.BrokerName).Logger()
	log = root.With().Str("component", "broker").Logger()
	dir := cfg.Store.StorePathRootDir
	b := &Broker{
		Offsets:    newOffsets(dir, &cfg),
		Clients:    tables.NewClients(time.Duration(cfg.ChannelExpiredTimeout)*time.Millisecond, log),
		Locks:      tables.NewLocks(tables.LockMaxLive),
		log:        log,
		sampled:    log.Sample(&zerolog.BurstSampler{Burst: 10, Period: time.Second}),
		root:       root,
		quit:       make(chan struct{}),
		persistNow: make(chan struct{}, 1),
		newHA:      role.NewHA,
	}
	b.cfg.Store(&cfg)
	b.cfgFile = newConfigFile(cfg) // the file keeps the brokerRole it holds
	if cfg.Controller.EnableControllerMode {
		// Slave until the controller names the role (broker/role).
		cfg.HA.BrokerRole = ha.Slave
		b.cfg.Store(&cfg)
	}
	// Read per use, so that UPDATE_BROKER_CONFIG changes them at once.
	b.Groups = tables.NewGroups(filepath.Join(dir, "config", "subscriptionGroup.json"), cfg.MaxTopicQueueNums,
		func() bool { return b.Config().AutoCreateSubscriptionGroup })
	b.Groups.PutSystem()
	b.Topics = tables.NewTopics(filepath.Join(dir, "config", "topics.json"), cfg.MaxTopicQueueNums, b.topicsChanged,
		func() bool { return b.Config().AutoCreateTopicEnable })
	for _, tc := range systemTopics(b.Config()) {
		b.Topics.PutSystem(tc)
	}
	for _, tc := range transTopics() { // created at start, as Apache 5.x does
		b.Topics.PutSystem(tc)
	}
	// The revive log of pop consumption, created at start as Apache 5.x does.
	b.Topics.PutSystem(tables.TopicConfig{TopicName: pop.ReviveTopic(cfg.BrokerClusterName), ReadQueueNums: pop.ReviveQueueNums,
		WriteQueueNums: pop.ReviveQueueNums, Perm: message.PermRead | message.PermWrite})
	if cfg.TimerWheelEnable {
		b.Topics.PutSystem(tables.TopicConfig{TopicName: message.TimerTopic, ReadQueueNums: 1, WriteQueueNums: 1, Perm: message.PermRead | message.PermWrite})
	}
	b.requestModes = tables.NewRequestModes(filepath.Join(dir, "config", "messageRequestMode.json"), b.persistSoon)
	for name, load := range map[string]func(zerolog.Logger) error{"topics": b.Topics.Load, "groups": b.Groups.Load,
		"offsets": b.Offsets.Load, "messageRequestMode": func(zerolog.Logger) error { return b.requestModes.Load() }} {
		if err := load(log); err != nil {
			return nil, fmt.Errorf("broker: load %s: %w", name, err)
		}
	}
	st, err := store.Open(cfg.Store, root)
	if err != nil {
		return nil, fmt.Errorf("broker: open store: %w", err)
	}
	b.Store = st
	b.wait = st.Wait
	b.StoreHost = cfg.StoreHost()
	b.UniqIDs = message.NewUniqIDGen(b.StoreHost.Addr(), os.Getpid(), int32(time.Now().UnixNano()))
	b.stats = newRuntimeStats(func() int64 { in, _, _, _ := b.Stats.Totals(); return in }, b.Stats.UserPuts)
	b.Lite = lite.New(b.liteDeps(st), root.With().Str("component", "lite").Logger())
	b.Admin = admin.New(admin.Deps{Config: b.adminConfig, Store: st, Topics: b.Topics, Groups: b.Groups, Offsets: b.Offsets,
		Clients: b.Clients, Modes: b.requestModes, Counts: &b.Stats, Go: b.Go, TopicDeleted: b.Lite.CleanByParent}, log)
	b.Pulls = pull.New(pull.Deps{Config: b.pullConfig, Store: st, Offsets: b.Offsets, Groups: b.Groups, Topics: b.Topics,
		Filters: &b.Filters, Clients: b.Clients, Counts: &b.Stats, Got: b.stats.got, StoreGot: b.stats.store.got,
		MaxParked: cfg.MaxParkedPulls, ColdThreads: cfg.PullMessageThreadPoolNums, ColdCapacity: cfg.PullThreadPoolQueueCapacity},
		root.With().Str("component", "pull").Logger())
	b.Sends = send.New(b.sendDeps(st), log)
	b.Members = clients.New(clients.Deps{Clients: b.Clients, Groups: b.Groups, Topics: b.Topics, Locks: b.Locks,
		Modes: b.requestModes, BrokerName: func() string { return b.Config().BrokerName },
		MaxTopicQueueNums: func() int32 { return b.Config().MaxTopicQueueNums }}, log)
	txLog := root.With().Str("component", "transaction").Logger()
	b.Transactions = tx.New(tx.Deps{Config: b.txConfig, Store: st, Offsets: b.Offsets, Topics: b.Topics, Producers: b.Clients,
		Commit: b.Sends.Put, CheckRealTopic: b.Sends.CheckRealTopic,
		Wait:   func(end int64, need store.Durability, done func(error)) { b.wait(end, need, done) },
		Counts: &b.Tx, StoreHost: b.StoreHost, QueueCapacity: cfg.EndTransactionPoolQueueCapacity, Quit: b.quit}, txLog)
	b.Filters.SetLimits(cfg.FilterCacheMaxBytes, cfg.FilterExpressionMaxLength)
	b.delays = timer.NewDelays(st, b.Sends.ReputReal, &b.Stats, filepath.Join(dir, "config", "delayOffset.json"), st.DelayLevels(),
		root.With().Str("component", "delay").Logger())
	if err := b.delays.Load(); err != nil {
		_ = st.Shutdown(context.Background()) // already failing; the load error is the one to report
		return nil, fmt.Errorf("broker: load delay offsets: %w", err)
	}
	b.timers = timer.NewTimers(st, b.Sends.ReputReal, &b.Timer, filepath.Join(dir, "config", "timerProgress.json"),
		root.With().Str("component", "timer").Logger())
	if err := b.timers.Load(); err != nil {
		_ = st.Shutdown(context.Background()) // already failing; the load error is the one to report
		return nil, fmt.Errorf("broker: load timer progress: %w", err)
	}
	b.Pops = pop.New(b.popDeps(filepath.Join(dir, "config", "consumerOrderInfo.json")), root.With().Str("component", "pop").Logger())
	if err := b.Pops.Load(); err != nil {
		_ = st.Shutdown(context.Background()) // already failing; the load error is the one to report
		return nil, fmt.Errorf("broker: load consumer order info: %w", err)
	}
	if b.Role, err = role.New(b.roleDeps(), root); err != nil {
		_ = st.Shutdown(context.Background()) // already failing; the epoch file's error is the one to report
		return nil, err
	}
	st.OnDispatch(func(topic string, queueID int32, _ int64) {
		switch topic {
		case message.ScheduleTopic:
			b.delays.Poke()
		case message.TimerTopic:
			b.timers.Poke()
		default:
			if message.IsLiteQueue(topic) {
				b.Lite.Arrived(topic)
			}
		}
	})
	return b, nil
}

// Start serves requests with h (the processor table), on listenPort and the
// VIP channel (fastListenPort), and starts the background work: store flush
// and dispatch, replication (after the store), long-poll holds,
// persistence, client expiry, name-server registration, and on a master the
// delay, timer and transaction-check services, on a slave the metadata sync.
func (b *Broker) Start(h remoting.Handler) error {
	if !b.started.CompareAndSwap(false, true) {
		return errors.New("broker: already started")
	}
	if err := b.Store.Start(); err != nil {
		return fmt.Errorf("broker: start store: %w", err)
	}
	if err := b.Role.StartHA(); err != nil {
		_ = b.Store.Shutdown(context.Background()) // already failing; the ha error is the one to report
		return err
	}
	if !b.Config().IsSlave() && !b.Role.ControllerMode() {
		if err := b.Pops.Recover(context.Background()); err != nil {
			_ = b.Role.ShutdownHA(context.Background())
			_ = b.Store.Shutdown(context.Background())
			return fmt.Errorf("broker: recover pop checkpoints: %w", err)
		}
	}
	b.timers.FenceAt(b.Store.MaxPhyOffset()) // before the broker takes sends
	b.handler = h
	b.server = remoting.NewServer(remoting.ServerConfig{
		Addr:         net.JoinHostPort(b.Config().BindAddress, strconv.Itoa(b.Config().ListenPort)),
		NumEventLoop: b.Config().ServerWorkerThreads,
		OnClose:      b.connClosed,
		Limits:       b.Config().Limits,
		TLS:          b.Config().TLS,
	}, h, b.root)
	if err := b.server.Start(); err != nil {
		_ = b.Role.ShutdownHA(context.Background())
		_ = b.Store.Shutdown(context.Background())
		return fmt.Errorf("broker: %w", err)
	}
	if port := b.Config().FastListenPort; port > 0 {
		b.fast = remoting.NewServer(remoting.ServerConfig{
			Addr:         net.JoinHostPort(b.Config().BindAddress, strconv.Itoa(port)),
			NumEventLoop: 1,
			OnClose:      b.connClosed,
			Limits:       b.Config().Limits,
			TLS:          b.Config().TLS,
			IDBase:       1 << 62, // apart from the main server's connection IDs (client registry, locks)
		}, h, b.root)
		if err := b.fast.Start(); err != nil {
			_ = b.server.Shutdown(context.Background())
			_ = b.Role.ShutdownHA(context.Background())
			_ = b.Store.Shutdown(context.Background())
			return fmt.Errorf("broker: vip channel: %w", err)
		}
	}
	b.goRun(func() { b.Pulls.Run(b.quit) })
	for range b.Config().EndTransactionThreadPoolNums {
		b.goRun(b.Transactions.Work)
	}
	b.goRun(b.persistLoop)
	// In controller mode a role's services start with the role
	// (roleswitch.go); a classic slave's are its metadata sync (Role.Run).
	// A slave delivers no delayed or timer messages and checks no
	// transactions: its master does, and the slave copies the result
	// (Apache's changeSpecialServiceStatus(brokerId == 0)).
	if !b.Role.ControllerMode() && !b.Config().IsSlave() {
		b.runMaster(false, func(fn func(quit <-chan struct{})) { b.goRun(func() { fn(b.quit) }) })
	}
	b.goRun(b.expireLoop)
	// Every role, as Apache's startBasicService: a slave expires its own
	// copies of lite topics from the same inputs.
	b.goRun(func() { b.Lite.Run(b.quit) })
	b.goRun(func() { b.stats.run(b.quit) })
	b.goRun(func() { b.Stats.RunRates(b.quit) })
	b.goRun(func() { b.Stats.RunItems(b.quit, func() string { return b.Config().BrokerClusterName }) })
	// Registration, and the role's loops: the controller's in controller
	// mode (registration once the role is known), a slave's sync.
	b.Role.Run()
	b.log.Info().Str("brokerAddr", b.Config().Addr()).Str("cluster", b.Config().BrokerClusterName).
		Str("namesrvAddr", b.Config().NamesrvAddr).Msg("broker started")
	return nil
}

// localIDBase keeps in-process connection IDs apart from both servers'.
const localIDBase = 1 << 61

// Local opens an in-process connection to the broker's handlers, for the
// gRPC proxy of the same process (mqbroker --enable-proxy): requests reach
// the same handlers as the network's, with the same checks, and what the
// broker registers on it is dropped when it closes. remote is the address
// the broker records for it. Valid after Start.
func (b *Broker) Local(remote string) *remoting.Local {
	return remoting.NewLocal(b.handler, localIDBase+b.localIDs.Add(1), remote, b.connClosed, b.root)
}

// Config is the configuration in force. It is a snapshot: never modify it;
// a caller that reads several keys reads them from one Config() call.
func (b *Broker) Config() *Config { return b.cfg.Load() }

// updateConfig stores a copy of the configuration in force changed by
// edit; readers see the old snapshot or the new one, never a mix.
func (b *Broker) updateConfig(edit func(*Config)) {
	b.cfgMu.Lock()
	defer b.cfgMu.Unlock()
	c := *b.Config()
	edit(&c)
	b.cfg.Store(&c)
}

// Done is closed when the network engine stops; Err says why (nil after Shutdown).
func (b *Broker) Done() <-chan struct{} { return b.server.Done() }

// Err is the network engine's exit error, valid once Done is closed.
func (b *Broker) Err() error { return b.server.Err() }

// Shutdown reverses Start: stop registering, unregister from the name
// servers, stop accepting, answer parked pulls, stop replication, persist
// the tables, flush and close the store. Idempotent.
func (b *Broker) Shutdown(ctx context.Context) error {
	b.stopOnce.Do(func() {
		b.stopping.Store(true)
		var errs []error
		if b.started.Load() {
			b.Role.Unregister(ctx) // no registration after the unregistration
			if err := b.server.Shutdown(ctx); err != nil {
				errs = append(errs, err)
			}
			if b.fast != nil {
				if err := b.fast.Shutdown(ctx); err != nil {
					errs = append(errs, fmt.Errorf("vip channel: %w", err))
				}
			}
		}
		close(b.quit)
		b.wg.Wait()
		// Replication stops before the store, as Apache's HAService: the
		// store's Shutdown then answers every SYNC_MASTER wait left.
		if err := b.Role.ShutdownHA(ctx); err != nil {
			errs = append(errs, err)
		}
		_ = b.Role.Close() // its connections only; nothing left to lose
		errs = append(errs, b.persistAll())
		if err := b.Store.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("store: %w", err))
		}
		b.stopErr = errors.Join(errs...)
		b.log.Info().Err(b.stopErr).Msg("broker stopped")
	})
	return b.stopErr
}

// goRun starts a goroutine owned by the broker; Shutdown waits for it.
func (b *Broker) goRun(fn func()) {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		fn()
	}()
}

// Go runs blocking work a handler must not do on its event loop (file
// deletion, for instance) on a broker-owned goroutine. Refused after Shutdown began.
func (b *Broker) Go(fn func()) bool {
	if b.stopping.Load() {
		return false
	}
	b.goRun(fn)
	return true
}

// topicsChanged runs after every change of the topic table (possibly on an
// event loop, so it only signals): register with the name servers and write
// topics.json now. Apache writes the file inside the request; a broker killed
// right after creating a topic must not forget it.
func (b *Broker) topicsChanged() {
	if b.Role != nil { // nil while New loads the table: registration starts later
		b.Role.RegisterSoon()
	}
	b.persistSoon()
}

// persistSoon wakes the persist loop; never blocks.
func (b *Broker) persistSoon() {
	select {
	case b.persistNow <- struct{}{}:
	default:
	}
}

// persistLoop writes the config files: topics.json and the broker's config
// file when they change, the others every second or at their intervals,
// read at every tick so that UPDATE_BROKER_CONFIG changes them at once.
func (b *Broker) persistLoop() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	lastOffsets, lastDelay := time.Now(), time.Now()
	for {
		select {
		case <-b.quit:
			return
		case <-b.persistNow:
			b.logPersist(b.Topics.PersistIfDirty())
			b.logPersist(b.persistConfigIfDirty())
			b.logPersist(b.requestModes.PersistIfDirty())
		case now := <-t.C:
			c := b.Config()
			b.logPersist(b.Topics.PersistIfDirty())
			b.logPersist(b.Groups.PersistIfDirty())
			b.logPersist(b.timers.PersistIfDirty())
			b.logPersist(b.Pops.PersistIfDirty())
			b.logPersist(b.persistConfigIfDirty())
			if now.Sub(lastOffsets) >= time.Duration(c.FlushConsumerOffsetInterval)*time.Millisecond {
				lastOffsets = now
				b.logPersist(b.Offsets.PersistIfDirty())
			}
			if now.Sub(lastDelay) >= time.Duration(c.FlushDelayOffsetInterval)*time.Millisecond {
				lastDelay = now
				b.logPersist(b.delays.PersistIfDirty())
			}
		}
	}
}

func (b *Broker) persistAll() error {
	return errors.Join(b.Topics.PersistIfDirty(), b.Groups.PersistIfDirty(), b.Offsets.PersistIfDirty(),
		b.delays.PersistIfDirty(), b.timers.PersistIfDirty(), b.persistConfigIfDirty(), b.requestModes.PersistIfDirty(),
		b.Pops.PersistIfDirty())
}

func (b *Broker) logPersist(err error) {
	if err != nil {
		b.log.Error().Err(err).Msg("persist config file")
	}
}

func (b *Broker) expireLoop() {
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-b.quit:
			return
		case now := <-t.C:
			b.Clients.Expire(now)
		}
	}
}

// schedulers are the delivery loops of delayed and timer messages.
func (b *Broker) schedulers() []func(quit <-chan struct{}) {
	return []func(<-chan struct{}){b.delays.Run, b.timers.Run}
}

// connClosed drops the connection's client registrations and orderly locks.
func (b *Broker) connClosed(c *remoting.Conn) {
	b.Clients.ConnClosed(c)
	b.Locks.ConnClosed(c.ID)
}

// newOffsets is the consumer offsets table and its file: with enableLmq
// Apache's LmqConsumerOffsetManager's, config/lmqConsumerOffset.json, which
// starts from consumerOffset.json when it does not exist yet (Apache starts
// empty: every group's offsets would be lost by turning LMQ on).
func newOffsets(dir string, cfg *Config) *tables.Offsets {
	if !cfg.Store.EnableLmq {
		return tables.NewOffsets(filepath.Join(dir, "config", "consumerOffset.json"), cfg.MaxTopicQueueNums)
	}
	o := tables.NewOffsets(filepath.Join(dir, "config", "lmqConsumerOffset.json"), cfg.MaxTopicQueueNums)
	o.LoadFallback(filepath.Join(dir, "config", "consumerOffset.json"))
	return o
}
