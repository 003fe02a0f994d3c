package lite

import (
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/remoting"
)

// Config is what the service reads of the broker's configuration in force
// (Apache 5.5 BrokerConfig's lite keys), taken again on each use.
type Config struct {
	BrokerName string
	// EnableLiteEventMode: pops read the lite topics their client's events
	// name; off, they read every lite topic the client subscribes.
	EnableLiteEventMode bool
	// Intervals and ages in milliseconds.
	LiteEventCheckInterval                         int64
	LiteTtlCheckInterval                           int64
	MinLiteTTl                                     int64
	LiteSubscriptionCheckInterval                  int64
	LiteSubscriptionCheckTimeoutMills              int64
	LiteEventFullDispatchDelayTime                 int64
	LiteEventFullDispatchDelayTimeForWildcardGroup int64
	// MaxLiteSubscriptionCount bounds the (client, lite topic) pairs of the
	// broker, and the clients too.
	MaxLiteSubscriptionCount int64
	// MaxClientEventCount is a client's event capacity unless its group sets
	// lite.sub.client.max.event.cnt.
	MaxClientEventCount int
	// MaxLmqConsumeQueueNum and StoreType are reported by GET_BROKER_LITE_INFO.
	MaxLmqConsumeQueueNum int64
}

// Store is what the service reads of the store, and the LMQ deletion.
type Store interface {
	MaxOffset(topic string, queueID int32) int64
	MinOffset(topic string, queueID int32) int64
	StoreTimeAt(topic string, queueID int32, offset int64) (int64, bool)
	LmqNum() int64
	LmqExists(name string) bool
	ForEachLMQ(fn func(name string, maxOffset int64) bool)
	DeleteTopic(topic string) error
}

// Offsets are the groups' consume offsets of the LMQs (queue 0).
type Offsets interface {
	Query(group, topic string, queueID int32) (int64, bool)
	Commit(group, topic string, queueID int32, offset int64)
	DeleteTopic(topic string)
}

// Topics give the parent topics.
type Topics interface {
	Get(name string) (*tables.TopicConfig, bool)
}

// Groups give the lite groups.
type Groups interface {
	Get(name string) (*tables.GroupConfig, bool)
	Snapshot() tables.GroupTable
}

// Orders is the pop side's in-flight batches of lite topics.
type Orders interface {
	// ForgetLite drops what the group has in flight on lmq ("" group: every group).
	ForgetLite(group, lmq string)
	// LiteOrderCount is the number of (group, lmq) batches in flight.
	LiteOrderCount() int
}

// Conn is the connection a client's last ADD came on: where its
// NOTIFY_UNSUBSCRIBE_LITE goes (a *remoting.Conn).
type Conn interface {
	Send(req *remoting.Command) error
}

// Deps are everything the service uses.
type Deps struct {
	Config  func() Config
	Store   Store
	Offsets Offsets
	Topics  Topics
	Groups  Groups
	Orders  Orders
	// Wake tells the client's parked POP_LITE_MESSAGE that it has events.
	Wake func(clientID string)
	// Owner reports whether this broker is the lite topic's sharding
	// broker (ConsistentHash over the parent's route); nil: always, Apache's
	// answer when the parent has no route.
	Owner func(parent, lite string) bool
	// Meta are GET_BROKER_LITE_INFO's figures from the tables and the
	// store: the offset table's and the consume queue table's sizes, and
	// each LITE topic's lite.topic.expiration.
	Meta func() (offsetTableSize, cqTableSize int, ttl map[string]int64)
	// Now is the clock in milliseconds (nil: time.Now).
	Now func() int64
}
