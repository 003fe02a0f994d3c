package broker

import (
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/broker/admin"
	"github.com/rocketgo/rocketgo/broker/pop"
	"github.com/rocketgo/rocketgo/broker/pull"
)

// popDeps are what pop consumption is built from: the broker's store,
// tables and counters, its role, and the DLQ rule of the send-back path.
func (b *Broker) popDeps(ordersPath string) pop.Deps {
	return pop.Deps{Config: b.popConfig, Store: b.Store, Offsets: b.Offsets, Topics: b.Topics, Groups: b.Groups,
		Filters: &b.Filters,
		SlaveRefusal: func() error {
			if cfg := b.Config(); cfg.IsSlave() {
				return b.slaveRefusal(cfg)
			}
			return nil
		},
		CreateDLQ: func(topic string) (int32, error) { return dlqQueueNums, b.createDLQ(topic) },
		PutStatus: putStatus, Go: b.Go, Counts: &b.Stats, Revive: &b.Revive, Got: b.stats.got,
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
