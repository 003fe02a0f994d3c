package processor

import (
	"net/netip"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/broker/admin"
	"github.com/rocketgo/rocketgo/broker/pop"
	"github.com/rocketgo/rocketgo/broker/pull"
	"github.com/rocketgo/rocketgo/broker/send"
	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/broker/tx"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/replicas"
)

// The handlers reach the broker only through these interfaces, one per
// request family: a handler can be tested with a fake of the one it uses,
// and a service can move without its callers changing. They are declared
// here, by their consumer, and list only what the handlers call.

// Sender stores messages: sends, consumers' send-backs, timer recalls.
type Sender interface {
	Send(r *send.Request, res *send.Result, later func() func(send.Status)) error
	SendBack(r send.BackRequest) error
	Recall(r send.RecallRequest) (send.Request, string, error)
}

// Puller serves pulls and says whether a consumer's subscription can be
// filtered here (CHECK_CLIENT_CONFIG).
type Puller interface {
	Pull(r *pull.Request, later func() pull.Completion) (pull.Result, error)
	CheckFilter(expressionType, expression string) error
}

// Reader reads stored messages for the query and view codes.
type Reader interface {
	QueryMessage(r admin.QueryMessageRequest) (admin.QueryMessageResult, error)
	ViewMessage(offset int64) ([]byte, error)
	QueryConsumeQueue(topic string, queueID int32, index int64, count int) (admin.ConsumeQueueView, error)
	ConsumeTimeSpan(topic, group string) ([]admin.QueueTimeSpan, error)
}

// Popper is pop consumption: pops, peeks, acks, invisibility changes and
// notifications.
type Popper interface {
	Pop(r *pop.Request, later func() pop.Completion) (pop.Result, error)
	Peek(group, topic string, queueID, maxMsgNums int32, remote string, done func(pop.Result)) error
	Ack(r *pop.AckRequest) error
	BatchAckMessages(acks []pop.BatchAck) error
	ChangeInvisibleTime(r *pop.AckRequest) (pop.ChangeInvisibleResult, error)
	Notification(r *pop.NotificationRequest, done func(pop.NotificationResult)) (pop.NotificationResult, bool, error)
	PollingInfo(group, topic string, queueID int32, remote string) (int32, error)
}

// Transactions ends half messages and resumes their checks.
type Transactions interface {
	EndTransaction(r *tx.EndRequest, done func(error)) (queued bool, err error)
	ResumeCheckHalfMessage(msgID string) error
}

// Offsets are the queues' offsets and the groups' consume offsets.
type Offsets interface {
	CommitOffset(r tables.QueueOffsetRequest) error
	QueryConsumerOffset(r tables.QueueOffsetRequest) (int64, error)
	QueueMinOffset(topic string, queueID int32) int64
	QueueMaxOffset(topic string, queueID int32) int64
	SearchOffset(topic string, queueID int32, ts int64, upper bool) int64
	EarliestMsgStoreTime(topic string, queueID int32) int64
	ResetOffset(r admin.ResetOffsetRequest) (admin.ResetOffsetResult, error)
	CloneGroupOffset(src, dst, topic string, offline bool) error
	CorrectionOffsets(topic, compareGroup, filterGroups string) (map[int32]int64, error)
}

// Clients are the connected producers and consumers, their filters and
// the queue locks they hold.
type Clients interface {
	Heartbeat(c *remoting.Conn, hb tables.Heartbeat) tables.HeartbeatResult
	UnregisterClient(c *remoting.Conn, producerGroup, consumerGroup string)
	LockBatch(r tables.LockBatchRequest) []tables.MessageQueue
	UnlockBatch(r tables.LockBatchRequest)
	ConsumerIDs(group string) ([]string, error)
	ConsumerConn(group, clientID string) (*remoting.Conn, error)
	ConsumerMembers(group string) []tables.ConsumerMember
	Subscription(group, topic string) (*tables.Subscription, bool)
	ProducerTable() map[string][]tables.ProducerInfo
	QueryAssignment(body []byte) ([]byte, error)
}

// Admin is topics, groups, their statistics, the clients' connections as
// the tools see them, and the manual cleanups.
type Admin interface {
	TopicConfig(topic string) (*tables.TopicConfig, error)
	UpdateTopic(tc tables.TopicConfig) error
	DeleteTopic(topic string) error
	AllTopicConfig() tables.TopicTable
	SystemTopics() []string
	GroupConfig(group string) (*tables.GroupConfig, error)
	UpdateGroup(gc tables.GroupConfig) error
	DeleteGroup(group string, cleanOffset bool) error
	AllGroupConfig() tables.GroupTable
	UpdateGroupForbidden(group, topic string, readable *bool) (tables.GroupForbidden, error)

	TopicStats(topic string) ([]admin.QueueStats, error)
	ConsumeStats(r admin.ConsumeStatsRequest) []admin.QueueConsumeStats
	BrokerConsumeStats(orderOnly bool) []admin.GroupConsumeStats
	StatsData(name, key string) (stats.StatsData, error)
	TopicPutTps(topic string) float64
	ConsumeTps(group, topic string) float64
	ConsumerConnections(group string) (tables.ConsumerGroupState, error)
	ProducerConnections(group string) ([]tables.Connection, error)
	ConsumerTopics(group string) admin.ConsumerTopics
	TopicConsumers(topic string) []string

	DeleteExpiredCommitLog()
	CleanExpiredConsumeQueues()
	CleanUnusedTopics() []string
	SetMessageRequestMode(body []byte) error
}

// AdminService is the admin, offsets and read codes' service.
type AdminService interface {
	Admin
	Offsets
	Reader
	Switches
}

// Ops are the broker's own configuration and figures.
type Ops interface {
	UpdateConfig(body []byte) (broker.ConfigChange, error)
	ConfigProperties() ([]byte, remoting.DataVersion)
	RuntimeInfo() map[string]string
}

// Switches are the operators' switches: the cold-data flow-control table
// and the commit log's read-ahead advice.
type Switches interface {
	ColdDataFlowCtrInfo() []byte
	UpdateColdDataFlowCtr(body []byte, log zerolog.Logger) error
	RemoveColdDataFlowCtr(body []byte)
	SetCommitLogReadMode(fields map[string]string) (string, error)
}

// Replication is what a slave asks its master for, and whether this broker
// takes sends and pulls in its role.
type Replication interface {
	AllConsumerOffsets() []byte
	AllDelayOffsets() []byte
	AllMessageRequestModes() []byte
	TimerCheckpoint() (body []byte, lowOffset int64, err error)
	TimerMetrics() ([]byte, error)
	HARuntimeInfo() ([]byte, error)
	RejectsSends() bool
	RejectsPulls() bool
	IsSlave() bool
}

// Roles are the controller's pushes: role changes and the epoch cache.
type Roles interface {
	RoleChangeAllowed(ip netip.Addr) bool
	RoleChanged(pushed replicas.ReplicaState) error
	EpochCacheBody() ([]byte, error)
}

// Host is what every family's handlers share: the configuration in force
// (a snapshot a runtime change replaces whole) and a place to run work
// off the event loop, which refuses once the broker stops.
type Host interface {
	Config() *broker.Config
	Go(fn func()) bool
}

// RoleService is the replication and role codes' service.
type RoleService interface {
	Replication
	Roles
}

// Broker is what the broker itself serves: its configuration and runtime
// figures, and a place to run work.
type Broker interface {
	Ops
	Host
}

// Services are the broker's services as the handlers use them:
// BrokerTable hands each request family only its own part.
type Services struct {
	Broker  Broker
	Sends   Sender
	Members Clients
	Pulls   Puller
	Pops    Popper
	Admin   AdminService
	Role    RoleService
	Txs     Transactions
	// Lite is the lite subscription registry; nil leaves the lite codes
	// unregistered.
	Lite Lite
}

// ServicesOf are a broker's services, each family's its own.
func ServicesOf(b *broker.Broker) Services {
	return Services{Broker: b, Sends: b.Sends, Members: b.Members, Pulls: b.Pulls, Pops: b.Pops, Admin: b.Admin,
		Role: b.Role, Txs: b.Transactions, Lite: b.Lite}
}
