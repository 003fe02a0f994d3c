// Package tx ends and checks transactions, as Apache 5.3.3's
// broker/transaction package does:
//
//	end.go    END_TRANSACTION: commit re-publishes the half message to its
//	          REAL_TOPIC/REAL_QID, rollback does not; both write an op
//	          record (EndTransactionProcessor)
//	op.go     op records in RMQ_SYS_TRANS_OP_HALF_TOPIC: tags "d", body =
//	          half queue offsets
//	check.go  the check service: half messages without an op record are
//	          re-appended and their producer asked (CHECK_TRANSACTION_STATE)
//	          every transactionCheckInterval
//	          (TransactionalMessageServiceImpl.check)
//	resume.go RESUME_CHECK_HALF_MESSAGE: a half message parked after too
//	          many checks goes back to the half queue
//
// The prepared send that stores a half message in RMQ_SYS_TRANS_HALF_TOPIC
// queue 0 is the broker's send path (broker/send, prepared.go). A slave
// ends no transaction (EndTransaction refuses it, Config.Slave) and runs no
// check (the broker runs RunChecks on a master only).
//
// State lives in the commit log and in the consume offsets only: the half
// and op queues, and the check progress as offsets of group
// CID_RMQ_SYS_TRANS on both topics (Apache's layout, so either broker opens
// the other's store). Nothing is kept in memory across a restart.
//
// Owns: the END_TRANSACTION workers and their queue, the check loop, the
// op records. Never: reads the broker's configuration beyond Config, stores
// a committed message except through Deps.Commit, or answers a client
// itself (its callers' completions do).
package tx

import (
	"net/netip"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// Config is what the service reads of the broker's configuration in
// force, taken again for each request and each check run, so that a
// runtime change applies at once.
type Config struct {
	BrokerName string
	// TimeOut (transactionTimeOut, ms): a half message younger than this
	// is not checked yet.
	TimeOut int64
	// CheckMax (transactionCheckMax): checks before a half message is
	// moved to TRANS_CHECK_MAX_TIME_TOPIC.
	CheckMax int
	// CheckInterval (transactionCheckInterval): between check runs.
	CheckInterval time.Duration
	// FileReservedTime (hours): a half message born longer ago is moved
	// to TRANS_CHECK_MAX_TIME_TOPIC unchecked.
	FileReservedTime int
	// MaxMessageSize is named in the remark of an illegal commit.
	MaxMessageSize int
	// Durability is what a commit waits for before it is answered.
	Durability store.Durability
	// Slave: the broker is a slave (brokerRole SLAVE), which refuses
	// END_TRANSACTION.
	Slave bool
}

// Store is what the service reads and appends.
type Store interface {
	Put(m *store.PutMessage) (store.PutResult, error)
	MessageAt(phyOffset int64) ([]byte, error)
	RecordAt(phyOffset int64, size int32) ([]byte, error)
	ReadQueue(topic string, queueID int32, from int64, max int) []store.QueueEntry
	MinOffset(topic string, queueID int32) int64
	MaxOffset(topic string, queueID int32) int64
	MinPhyOffset() int64
	MaxPhyOffset() int64
	DispatchedPhyOffset() int64
}

// Offsets keep the check progress (group CID_RMQ_SYS_TRANS).
type Offsets interface {
	Query(group, topic string, queueID int32) (int64, bool)
	Commit(group, topic string, queueID int32, offset int64)
}

// Topics give the half topic's queues and create TRANS_CHECK_MAX_TIME_TOPIC.
type Topics interface {
	Get(name string) (*tables.TopicConfig, bool)
	CreateIfAbsent(tc tables.TopicConfig) (cfg *tables.TopicConfig, created bool, err error)
}

// Producers are the connections of a producer group, asked about its
// transactions.
type Producers interface {
	ProducerConns(group string) []*remoting.Conn
}

// Deps are everything the service uses.
type Deps struct {
	Config    func() Config
	Store     Store
	Offsets   Offsets
	Topics    Topics
	Producers Producers
	// Commit stores a committed message through the broker's send hooks
	// (a DELAY it carries applies now).
	Commit func(m *store.PutMessage) (store.PutResult, error)
	// CheckRealTopic refuses a REAL_TOPIC or REAL_QID a client may not
	// send to.
	CheckRealTopic func(topic string, queueID int) error
	// Wait calls done once the commit log holds end as need asks.
	Wait func(end int64, need store.Durability, done func(error))
	// Counts are the transactional figures of the metrics endpoint.
	Counts *stats.TxStats
	// StoreHost is brokerIP1:listenPort, written into every stored record.
	StoreHost netip.AddrPort
	// QueueCapacity bounds the END_TRANSACTION requests waiting for a
	// worker (endTransactionPoolQueueCapacity).
	QueueCapacity int
	// Quit closes when the broker stops.
	Quit <-chan struct{}
}

// Service ends transactions and checks the half messages nobody ended.
type Service struct {
	d        Deps
	jobs     chan *endJob
	resolved resolvedTxs
	check    *checker
	log      zerolog.Logger // component=transaction
	sampled  zerolog.Logger // what producers cause
}

// New makes the service; the broker runs its workers (Work) and, as a
// master, its check loop (RunChecks).
func New(d Deps, log zerolog.Logger) *Service {
	s := &Service{d: d, jobs: make(chan *endJob, d.QueueCapacity), log: log,
		resolved: resolvedTxs{set: make(map[uint64]bool)},
		sampled:  log.Sample(&zerolog.BurstSampler{Burst: 10, Period: time.Minute})}
	s.check = newChecker(s, log)
	return s
}
