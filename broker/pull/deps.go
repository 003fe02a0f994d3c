package pull

import (
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/filter"
	"github.com/rocketgo/rocketgo/store"
)

// Config is what the service reads of the broker's configuration in
// force, taken again for each pull, so that a runtime change applies at
// once.
type Config struct {
	BrokerIP1 string // named in remarks, as Apache's
	// Permission is brokerPermission: a pull needs PermRead.
	Permission int32
	// MaxTransferCount and MaxTransferBytes bound one answer
	// (maxTransferCountOnMessageInMemory, maxTransferBytesOnMessageInMemory).
	MaxTransferCount int
	MaxTransferBytes int
	// SlaveReadEnable lets an answer suggest a slave for a consumer far
	// behind.
	SlaveReadEnable      bool
	EnablePropertyFilter bool
	// LongPollingEnable: a suspended pull waits its own suspend time;
	// without it, ShortPollingTime.
	LongPollingEnable bool
	ShortPollingTime  time.Duration
	// EnableLmq: a pull of an LMQ by its name (%LMQ%…, queue 0) is served
	// though no topic of that name exists (Apache's LmqTopicConfigManager).
	EnableLmq bool
}

// Offsets are the groups' consume offsets and the operators' resets.
type Offsets interface {
	TakeReset(group, topic string, queueID int32) (int64, bool)
	Commit(group, topic string, queueID int32, offset int64)
}

// Groups give a group's configuration and its forbidden topics.
type Groups interface {
	Get(name string) (*tables.GroupConfig, bool)
	ReadForbidden(group, topic string) bool
}

// Topics give a topic's queues and permission.
type Topics interface {
	Get(name string) (*tables.TopicConfig, bool)
}

// Filters compile the consumers' tag and SQL92 expressions.
type Filters interface {
	Tags(expression string) (*tables.Subscription, error)
	Compile(expression string) (*filter.Expr, error)
}

// Clients are the consumers' registered subscriptions.
type Clients interface {
	Subscription(group, topic string) (sub *tables.Subscription, groupKnown bool)
	ConsumerInfo(group string) (tables.ConsumerInfo, bool)
	MarkSubscriptionStale(group string, connID uint64)
}

// Deps are everything the service uses.
type Deps struct {
	Config func() Config
	// Store is the store itself, not an interface: a pull's record filter
	// is a closure, which a call through an interface would move to the
	// heap on every filtered pull.
	Store   *store.Store
	Offsets Offsets
	Groups  Groups
	Topics  Topics
	Filters Filters
	Clients Clients
	// Counts are messages out per group and topic; Got and StoreGot the
	// runtime info's get counters and store read latencies.
	Counts   *stats.Stats
	Got      func(found bool, msgs int)
	StoreGot func(took time.Duration)
	// MaxParked bounds the parked pulls (maxParkedPulls).
	MaxParked int
	// ColdThreads read pulls whose pages are not in memory
	// (pullMessageThreadPoolNums; 0 reads every pull where it runs), behind
	// a queue of ColdCapacity (pullThreadPoolQueueCapacity).
	ColdThreads  int
	ColdCapacity int
}

// Service serves pulls: it reads queues, parks the pulls that find
// nothing on the store's arrival waiter (park.go) and hands those whose
// pages are not in memory to its cold-pull workers.
type Service struct {
	d       Deps
	places  *places
	cold    *coldPulls
	sampled zerolog.Logger // what consumers cause
}

// New makes the service; Run runs its workers.
func New(d Deps, log zerolog.Logger) *Service {
	return &Service{d: d, places: newPlaces(d.MaxParked, log),
		cold:    newColdPulls(d.ColdThreads, d.ColdCapacity, log),
		sampled: log.Sample(&zerolog.BurstSampler{Burst: 10, Period: time.Second})}
}

// Run reads cold pulls until quit closes; it returns once its workers
// stopped. Parked pulls are woken by the store, whose Shutdown abandons
// those left.
func (s *Service) Run(quit <-chan struct{}) {
	var wg sync.WaitGroup
	for range s.cold.threads {
		wg.Go(func() { s.runColdPulls(quit) })
	}
	wg.Wait()
}

// Parked is the number of parked (or reserved) pulls.
func (s *Service) Parked() int64 { return s.places.n.Load() }
