// Package send stores what producers and consumers send: SEND_MESSAGE and
// its variants (single and batch), the consumers' send-backs into retry
// and dead-letter topics, timer recalls, and the hooks on the way to the
// store: the retry rule, the prepared send of transactions and the
// staging of delay-level and timer messages.
//
// Owns: Apache's send checks, refusals and remarks, the stored properties
// built in the request's scratch space, the answers' message ids, the wait
// for SYNC_FLUSH / SYNC_MASTER through the caller's completion. Never:
// keeps a request's memory past the call, waits on the caller's goroutine,
// or reads the broker's configuration beyond Config.
package send

import (
	"net/netip"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/store"
)

// Config is what the service reads of the broker's configuration in force,
// a snapshot the broker replaces whole when the configuration changes.
type Config struct {
	BrokerName, BrokerIP1, ClusterName, RegionID string
	TraceOn                                      bool
	// Permission is brokerPermission: a send needs PermWrite.
	Permission int32
	// Slave: the broker takes no writes.
	Slave bool
	// MaxMessageSize limits a message's body.
	MaxMessageSize int
	// Durability is what a send waits for before it is answered.
	Durability store.Durability
	// MaxTopicQueueNums bounds REAL_QID of a staged message.
	MaxTopicQueueNums int32
	TimerWheelEnable  bool
	TimerMaxDelaySec  int64
	// RecallMessageEnable and AllowRecallWhenBrokerNotWriteable gate
	// RECALL_MESSAGE.
	RecallMessageEnable               bool
	AllowRecallWhenBrokerNotWriteable bool
	// RejectTransactionMessage refuses prepared sends.
	RejectTransactionMessage bool
	// LmqQuota: enableLmqQuota, enableLmq and enableMultiDispatch are all
	// on; a message naming an LMQ the store lacks is refused once it has
	// MaxLmqConsumeQueueNum of them (lite.go).
	LmqQuota              bool
	MaxLmqConsumeQueueNum int
}

// Locks say whether a group holds orderly locks (its retries go to the DLQ).
type Locks interface {
	Held(group string, now time.Time) bool
}

// Deps are everything the service uses.
type Deps struct {
	Config func() *Config
	// Store is the store itself, not an interface: the message a send
	// hands it would move to the heap on every send through one.
	Store  *store.Store
	Topics *tables.Topics
	Groups *tables.Groups
	Locks  Locks
	// UniqIDs makes the UNIQ_KEY of a message that carries none.
	UniqIDs *message.UniqIDGen
	// StoreHost is brokerIP1:listenPort, written into every stored record.
	StoreHost netip.AddrPort
	// DelayLevels are the delay levels' delays in ms, level 1 first.
	DelayLevels []int64
	// Counts and Tx are the message counters; StorePut the runtime info's
	// put latencies.
	Counts   *stats.Stats
	Tx       *stats.TxStats
	StorePut func(took time.Duration, failed bool)
	// Wait calls done once the commit log holds end as need asks.
	Wait func(end int64, need store.Durability, done func(error))
	// Registered calls done once the name servers were offered the topic
	// table as it is now (a send that created its topic is answered then);
	// nil answers at once.
	Registered func(done func())
	// ReplicaNeed, in controller mode, is what a SYNC_MASTER send waits
	// for given its properties and the in-sync replicas (nil: need as is).
	ReplicaNeed func(need store.Durability, props string) (store.Durability, error)
}

// Service is the send path.
type Service struct {
	d       Deps
	log     zerolog.Logger
	sampled zerolog.Logger // what clients cause
}

// New makes the service.
func New(d Deps, log zerolog.Logger) *Service {
	return &Service{d: d, log: log, sampled: log.Sample(&zerolog.BurstSampler{Burst: 10, Period: time.Second})}
}
