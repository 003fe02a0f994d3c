package broker

import (
	"net"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/admin"
	"github.com/rocketgo/rocketgo/broker/lite"
	"github.com/rocketgo/rocketgo/broker/pop"
	"github.com/rocketgo/rocketgo/broker/pull"
	"github.com/rocketgo/rocketgo/broker/role"
	"github.com/rocketgo/rocketgo/broker/send"
	"github.com/rocketgo/rocketgo/ha"
	"github.com/rocketgo/rocketgo/ha/autoswitch"
	"github.com/rocketgo/rocketgo/store"
)

// popDeps are what pop consumption is built from: the broker's store,
// tables and counters, its role, and the DLQ rule of the send-back path.
func (b *Broker) popDeps(ordersPath string) pop.Deps {
	return pop.Deps{Config: b.popConfig, Store: b.Store, Offsets: b.Offsets, Topics: b.Topics, Groups: b.Groups,
		Filters: &b.Filters,
		SlaveRefusal: func() error {
			if b.Config().IsSlave() {
				return b.Sends.SlaveRefusal()
			}
			return nil
		},
		CreateDLQ: func(topic string) (int32, error) { return send.DLQQueueNums, b.Sends.CreateDLQ(topic) },
		PutStatus: send.PutStatus, Go: b.Go, Counts: &b.Stats, Revive: &b.Revive, LiteLag: &b.LiteLag, Got: b.stats.got,
		StoreHost: b.StoreHost, OrdersPath: ordersPath, Lite: b.Lite}
}

// liteDeps are the lite service's: the pop side is reached through b.Pops
// when called (it is made after the lite service).
func (b *Broker) liteDeps(st *store.Store) lite.Deps {
	b.liteRoutes.b = b
	return lite.Deps{Config: b.liteConfig, Store: st, Offsets: b.Offsets, Topics: b.Topics, Groups: b.Groups,
		Orders: liteOrders{b}, Wake: func(clientID string) { b.Pops.WakeLite(clientID) }, Owner: b.liteRoutes.owner,
		Meta: func() (int, int, map[string]int64) {
			ttl := map[string]int64{}
			m, _ := b.Topics.Snapshot()
			for name, tc := range m {
				if tc.Lite() {
					ttl[name] = tc.LiteExpiration()
				}
			}
			return b.Offsets.Len(), len(st.Topics()) + int(st.LmqNum()), ttl
		}}
}

// liteOrders is the pop service's lite order table, for broker/lite.
type liteOrders struct{ b *Broker }

func (o liteOrders) ForgetLite(group, lmq string) { o.b.Pops.ForgetLite(group, lmq) }
func (o liteOrders) LiteOrderCount() int          { return o.b.Pops.LiteOrderCount() }

// liteConfig is what the lite service reads of the configuration in force.
func (b *Broker) liteConfig() lite.Config {
	c := b.Config()
	return lite.Config{BrokerName: c.BrokerName, EnableLiteEventMode: c.EnableLiteEventMode,
		LiteEventCheckInterval: c.LiteEventCheckInterval, LiteTtlCheckInterval: c.LiteTtlCheckInterval,
		MinLiteTTl: c.MinLiteTTl, LiteSubscriptionCheckInterval: c.LiteSubscriptionCheckInterval,
		LiteSubscriptionCheckTimeoutMills:              c.LiteSubscriptionCheckTimeoutMills,
		LiteEventFullDispatchDelayTime:                 c.LiteEventFullDispatchDelayTime,
		LiteEventFullDispatchDelayTimeForWildcardGroup: c.LiteEventFullDispatchDelayTimeForWildcardGroup,
		MaxLiteSubscriptionCount:                       c.MaxLiteSubscriptionCount, MaxClientEventCount: c.MaxClientEventCount,
		MaxLmqConsumeQueueNum: int64(c.Store.MaxLmqConsumeQueueNum)}
}

// popConfig is what pop consumption reads of the configuration in force.
func (b *Broker) popConfig() pop.Config {
	c := b.Config()
	return pop.Config{BrokerName: c.BrokerName, BrokerIP1: c.BrokerIP1, ClusterName: c.BrokerClusterName,
		Permission: c.BrokerPermission, TimerWheelEnable: c.TimerWheelEnable, EnablePropertyFilter: c.EnablePropertyFilter,
		MaxTransferBytes: c.MaxTransferBytesOnMessageInMemory, MaxTransferCount: c.MaxTransferCountOnMessageInMemory,
		PopFromRetryProbabilityForPriority: c.PopFromRetryProbabilityForPriority, PriorityOrderAsc: c.PriorityOrderAsc,
		LiteLagLatencyCollectEnable: c.LiteLagLatencyCollectEnable, LiteLagLatencyTopK: c.LiteLagLatencyTopK}
}

// pullConfig is what the pull service reads of the configuration in force.
func (b *Broker) pullConfig() pull.Config {
	c := b.Config()
	return pull.Config{BrokerIP1: c.BrokerIP1, Permission: c.BrokerPermission,
		MaxTransferCount: c.MaxTransferCountOnMessageInMemory, MaxTransferBytes: c.MaxTransferBytesOnMessageInMemory,
		SlaveReadEnable: c.SlaveReadEnable, EnablePropertyFilter: c.EnablePropertyFilter,
		LongPollingEnable: c.LongPollingEnable, ShortPollingTime: time.Duration(c.ShortPollingTimeMills) * time.Millisecond,
		EnableLmq: c.Store.EnableLmq}
}

// adminConfig is what the admin service reads of the configuration in force.
func (b *Broker) adminConfig() admin.Config {
	c := b.Config()
	return admin.Config{BrokerName: c.BrokerName, BrokerAddr: c.BrokerIP1 + ":" + strconv.Itoa(c.ListenPort),
		IsSlave: c.IsSlave(), MaxTopicQueueNums: c.MaxTopicQueueNums, DefaultQueryMaxNum: c.Store.DefaultQueryMaxNum,
		UseServerSideResetOffset:           c.UseServerSideResetOffset,
		ValidateSystemTopicWhenUpdateTopic: c.ValidateSystemTopicWhenUpdateTopic}
}

// sendDeps are what the send path is built from.
func (b *Broker) sendDeps(st *store.Store) send.Deps {
	d := send.Deps{Config: b.sendConfig, Store: st, Topics: b.Topics, Groups: b.Groups, Locks: b.Locks, UniqIDs: b.UniqIDs,
		StoreHost: b.StoreHost, DelayLevels: st.DelayLevels(), Counts: &b.Stats, Tx: &b.Tx, StorePut: b.stats.store.put,
		Wait: func(end int64, need store.Durability, done func(error)) { b.wait(end, need, done) },
		// The role is built after the send path.
		Registered: func(done func()) { b.Role.AfterRegistration(done) }}
	if b.Config().Controller.EnableControllerMode {
		// The role is built after the send path (it copies the timer's
		// progress, which reputs through the send path): read when a send
		// comes, after New.
		d.ReplicaNeed = func(need store.Durability, props string) (store.Durability, error) {
			return b.Role.ReplicaNeed(need, props)
		}
	}
	return d
}

// roleDeps are what the role is built from: the store, the tables it
// serves to slaves and replaces from a master, the timer's and delay
// levels' progress, the broker's goroutines, and what starts and stops
// with a role (roleswitch.go).
func (b *Broker) roleDeps() role.Deps {
	c := b.Config()
	return role.Deps{Config: b.roleConfig,
		SetRole: func(id int64, r ha.Role) {
			b.updateConfig(func(c *Config) {
				c.BrokerID = id
				c.HA.BrokerRole = r
			})
		},
		ControllerMode: c.Controller.EnableControllerMode, StoreRoot: c.Store.StorePathRootDir, TLS: c.TLS,
		Store: b.Store, Topics: b.Topics, Groups: b.Groups, Offsets: b.Offsets, Modes: b.requestModes,
		Delays: b.delays, Timers: b.timers, TimerCounts: &b.Timer,
		NewHA: func(cfg ha.Config, listen string, st *store.Store, log zerolog.Logger) (role.Replicator, error) {
			return b.newHA(cfg, listen, st, log)
		},
		Go: b.goRun, Quit: b.quit, BeforeMaster: b.fenceTimer, RunMaster: b.runMaster}
}

// roleSnapshot is the role's view of one configuration snapshot.
type roleSnapshot struct {
	from *Config
	cfg  role.Config
}

// roleConfig is what the role reads of the configuration in force: made
// once per configuration snapshot, as sendConfig, since every send and
// pull asks the role whether it refuses them.
func (b *Broker) roleConfig() *role.Config {
	c := b.Config()
	if s := b.roleCfg.Load(); s != nil && s.from == c {
		return &s.cfg
	}
	hc := c.HA
	hc.AuthSecret = []byte(c.HAAuthSecret)
	cc := c.Controller
	s := &roleSnapshot{from: c, cfg: role.Config{ClusterName: c.BrokerClusterName, BrokerName: c.BrokerName,
		BrokerID: c.BrokerID, Addr: c.Addr(), HAServerAddr: c.HAServerAddr(),
		HAListen: net.JoinHostPort(c.BindAddress, strconv.Itoa(c.HA.HAListenPort)), HA: hc,
		NamesrvAddrs: c.NamesrvAddrs(), Permission: c.BrokerPermission,
		RegisterPeriod:     time.Duration(c.RegisterNameServerPeriod) * time.Millisecond,
		RegisterTimeout:    time.Duration(c.RegisterBrokerTimeoutMills) * time.Millisecond,
		CompressedRegister: c.CompressedRegister, SplitRegistration: c.EnableSplitRegistration,
		SplitRegistrationSize: c.SplitRegistrationSize, SlaveReadEnable: c.SlaveReadEnable,
		SlaveSyncPeriod:  time.Duration(c.SlaveSynchronizePeriod) * time.Millisecond,
		TimerWheelEnable: c.TimerWheelEnable,
		Controller: role.Controller{Addr: cc.ControllerAddr, SyncBrokerMetadataPeriod: ms(cc.SyncBrokerMetadataPeriod),
			SyncControllerMetadataPeriod: ms(cc.SyncControllerMetadataPeriod), HeartbeatInterval: ms(cc.BrokerHeartbeatInterval),
			HeartbeatTimeoutMillis: cc.ControllerHeartBeatTimeoutMills, ElectionPriority: cc.BrokerElectionPriority,
			SendHeartbeatTimeout: ms(cc.SendHeartbeatTimeoutMillis), AutoSwitch: c.autoswitchConfig()}}}
	b.roleCfg.Store(s)
	return &s.cfg
}

// autoswitchConfig is the AutoSwitch HA service's configuration from the
// broker's keys (its AlterSyncStateSet is the role's).
func (c *Config) autoswitchConfig() autoswitch.Config {
	ac := autoswitch.DefaultConfig()
	ac.HAMaxTimeSlaveNotCatchup = ms(c.Controller.HAMaxTimeSlaveNotCatchup)
	ac.AllAckInSyncStateSet = c.Controller.AllAckInSyncStateSet
	ac.MinInSyncReplicas = c.Controller.MinInSyncReplicas
	ac.InSyncReplicas = c.Controller.InSyncReplicas
	ac.HASendHeartbeatInterval = ms(int64(c.HA.HASendHeartbeatInterval))
	ac.HAHousekeepingInterval = ms(int64(c.HA.HAHousekeepingInterval))
	ac.CheckSyncStateSetPeriod = ms(c.Controller.CheckSyncStateSetPeriod)
	ac.HATransferBatchSize = c.HA.HATransferBatchSize
	ac.SlaveTimeout = ms(int64(c.HA.SlaveTimeout))
	ac.SyncFromLastFile = c.Controller.SyncFromLastFile
	ac.AsyncLearner = c.Controller.AsyncLearner
	ac.HAFlowControlEnable = c.Controller.HAFlowControlEnable
	ac.MaxHATransferByteInSecond = c.Controller.MaxHATransferByteInSecond
	ac.AuthSecret = []byte(c.HAAuthSecret)
	return ac
}

// sendSnapshot is the send path's view of one configuration snapshot.
type sendSnapshot struct {
	from *Config
	cfg  send.Config
}

// sendConfig is what the send path reads of the configuration in force:
// made once per configuration snapshot, so that a send pays one atomic
// load and a comparison.
func (b *Broker) sendConfig() *send.Config {
	c := b.Config()
	if s := b.sendCfg.Load(); s != nil && s.from == c {
		return &s.cfg
	}
	s := &sendSnapshot{from: c, cfg: send.Config{BrokerName: c.BrokerName, BrokerIP1: c.BrokerIP1, ClusterName: c.BrokerClusterName,
		RegionID: c.RegionID, TraceOn: c.TraceOn, Permission: c.BrokerPermission, Slave: c.IsSlave(),
		MaxMessageSize: c.Store.MaxMessageSize, Durability: c.durability(), MaxTopicQueueNums: c.MaxTopicQueueNums,
		TimerWheelEnable: c.TimerWheelEnable, TimerMaxDelaySec: c.TimerMaxDelaySec, RecallMessageEnable: c.RecallMessageEnable,
		AllowRecallWhenBrokerNotWriteable: c.AllowRecallWhenBrokerNotWriteable, RejectTransactionMessage: c.RejectTransactionMessage,
		LmqQuota:              c.Store.EnableLmqQuota && c.Store.EnableLmq && c.Store.EnableMultiDispatch,
		MaxLmqConsumeQueueNum: c.Store.MaxLmqConsumeQueueNum}}
	b.sendCfg.Store(s)
	return &s.cfg
}

// durability is what a send waits for before it is answered: the flush
// under SYNC_FLUSH, a slave's acknowledgement on a SYNC_MASTER. Zero for
// ASYNC_FLUSH on an ASYNC_MASTER: two field reads, no more.
func (c *Config) durability() store.Durability {
	var need store.Durability
	if c.Store.FlushDiskType == store.SyncFlush {
		need |= store.Flushed
	}
	if c.HA.BrokerRole == ha.SyncMaster {
		need |= store.Replicated
	}
	return need
}
