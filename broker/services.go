package broker

import (
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/broker/admin"
	"github.com/rocketgo/rocketgo/broker/pop"
	"github.com/rocketgo/rocketgo/broker/pull"
	"github.com/rocketgo/rocketgo/broker/send"
	"github.com/rocketgo/rocketgo/ha"
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
		PutStatus: send.PutStatus, Go: b.Go, Counts: &b.Stats, Revive: &b.Revive, Got: b.stats.got,
		StoreHost: b.StoreHost, OrdersPath: ordersPath}
}

// popConfig is what pop consumption reads of the configuration in force.
func (b *Broker) popConfig() pop.Config {
	c := b.Config()
	return pop.Config{BrokerName: c.BrokerName, BrokerIP1: c.BrokerIP1, ClusterName: c.BrokerClusterName,
		Permission: c.BrokerPermission, TimerWheelEnable: c.TimerWheelEnable, EnablePropertyFilter: c.EnablePropertyFilter,
		MaxTransferBytes: c.MaxTransferBytesOnMessageInMemory, MaxTransferCount: c.MaxTransferCountOnMessageInMemory}
}

// pullConfig is what the pull service reads of the configuration in force.
func (b *Broker) pullConfig() pull.Config {
	c := b.Config()
	return pull.Config{BrokerIP1: c.BrokerIP1, Permission: c.BrokerPermission,
		MaxTransferCount: c.MaxTransferCountOnMessageInMemory, MaxTransferBytes: c.MaxTransferBytesOnMessageInMemory,
		SlaveReadEnable: c.SlaveReadEnable, EnablePropertyFilter: c.EnablePropertyFilter,
		LongPollingEnable: c.LongPollingEnable, ShortPollingTime: time.Duration(c.ShortPollingTimeMills) * time.Millisecond}
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
		Wait: func(end int64, need store.Durability, done func(error)) { b.wait(end, need, done) }}
	if b.ctrl != nil {
		d.ReplicaNeed = b.ctrl.replicaNeed
	}
	return d
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
		AllowRecallWhenBrokerNotWriteable: c.AllowRecallWhenBrokerNotWriteable, RejectTransactionMessage: c.RejectTransactionMessage}}
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
