package pop

import (
	"net/netip"

	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/filter"
	"github.com/rocketgo/rocketgo/store"
)

// Config is what the service reads of the broker's configuration in
// force, taken again for each request, so that a runtime change applies
// at once.
type Config struct {
	BrokerName  string
	BrokerIP1   string // named in remarks, as Apache's
	ClusterName string // names the revive topic
	// Permission is brokerPermission: a pop needs PermRead.
	Permission int32
	// TimerWheelEnable: Apache refuses pops without the timer wheel.
	TimerWheelEnable bool
	// EnablePropertyFilter allows SQL92 filters.
	EnablePropertyFilter bool
	// MaxTransferBytes and MaxTransferCount bound one answer
	// (maxTransferBytesOnMessageInMemory, maxTransferCountOnMessageInMemory).
	MaxTransferBytes int
	MaxTransferCount int
	// PopFromRetryProbabilityForPriority is the percent of a PRIORITY
	// topic's pops by priority that read the retry topic first (Apache's
	// popFromRetryProbabilityForPriority); PriorityOrderAsc
	// (priorityOrderAsc) makes queue 0 the lowest priority, so that pops
	// read the highest queue first.
	PopFromRetryProbabilityForPriority int
	PriorityOrderAsc                   bool
	// LiteLagLatencyCollectEnable: a lite pop that fills its batch notes,
	// in Deps.LiteLag, the store time of the first message it left behind
	// in a lite topic, keeping LiteLagLatencyTopK per group.
	LiteLagLatencyCollectEnable bool
	LiteLagLatencyTopK          int
}

// Store is what the service reads and appends.
type Store interface {
	Put(m *store.PutMessage) (store.PutResult, error)
	GetMessageViews(topic string, queueID int32, offset int64, maxMsgs, maxBytes int,
		match func(tagsCode int64, record []byte) bool, pages store.Residency) store.GetResult
	ReadQueue(topic string, queueID int32, from int64, max int) []store.QueueEntry
	RecordAt(phyOffset int64, size int32) ([]byte, error)
	MinOffset(topic string, queueID int32) int64
	MaxOffset(topic string, queueID int32) int64
	StoreTimeAt(topic string, queueID int32, offset int64) (int64, bool)
	// Park and WakeTopic are the store's arrival waiter, where pops
	// that found nothing wait.
	Park(w *store.Parked) bool
	WakeTopic(topic string)
}

// Offsets are the groups' consume offsets and the revive offset.
type Offsets interface {
	Query(group, topic string, queueID int32) (int64, bool)
	Commit(group, topic string, queueID int32, offset int64)
}

// Topics give the queues of a topic and create the pop retry topics.
type Topics interface {
	Get(name string) (*tables.TopicConfig, bool)
	CreateIfAbsent(tc tables.TopicConfig) (cfg *tables.TopicConfig, created bool, err error)
}

// Groups give a subscription group's configuration.
type Groups interface {
	Get(name string) (*tables.GroupConfig, bool)
}

// Filters compile the consumers' tag and SQL92 expressions.
type Filters interface {
	Tags(expression string) (*tables.Subscription, error)
	Compile(expression string) (*filter.Expr, error)
}

// Deps are everything the service uses.
type Deps struct {
	Config  func() Config
	Store   Store
	Offsets Offsets
	Topics  Topics
	Groups  Groups
	Filters Filters
	// SlaveRefusal is the answer to a pop on a slave; nil on a master.
	SlaveRefusal func() error
	// CreateDLQ creates %DLQ%<group> as the send-back path does and
	// returns its write queues.
	CreateDLQ func(topic string) (queues int32, err error)
	// PutStatus names Apache's PutMessageStatus of a store error, for the
	// revive figures.
	PutStatus func(error) string
	// Go runs a pop off the event loop; false once the broker stops.
	Go func(fn func()) bool
	// Counts, Revive and Got are the figures: messages out per group and
	// topic, the revive's copies, the runtime info's get counters.
	Counts *stats.Stats
	Revive *stats.PopStats
	Got    func(found bool, msgs int)
	// LiteLag is where lite pops note what they leave behind
	// (LiteLagLatencyCollectEnable): the lite groups' lag latency.
	LiteLag *stats.LiteLag
	// StoreHost is brokerIP1:listenPort, written into every stored record.
	StoreHost netip.AddrPort
	// Lite are the clients' lite subscriptions and events; nil: lite
	// pops are refused.
	Lite LiteEvents
	// OrdersPath is consumerOrderInfo.json, the orderly pops' state.
	OrdersPath string
}
