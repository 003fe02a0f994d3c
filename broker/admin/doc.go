// Package admin is what mqadmin, the dashboard and the clients' admin
// calls ask of a broker's tables: topics and groups (create, update,
// delete, read), the group forbidden table, consume offsets (commit,
// query, search, reset, clone, correct), topic and consume statistics,
// client connections, messages by key, offset and queue position, the
// manual queue cleanups, and the operators' switches: the cold-data
// flow-control table and the commit log's read-ahead advice.
//
// Owns: the rules of those codes (Apache's checks, refusals and remarks),
// the cleanup passes' serialisation and the cold-data table. Never: reads the broker's
// configuration beyond Config, changes the broker's role or configuration
// (the broker does), or does file work on the caller's goroutine (Go).
package admin

import (
	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/store"
)

// Config is what the service reads of the broker's configuration in
// force, taken again for each request.
type Config struct {
	BrokerName string
	BrokerAddr string // brokerIP1:listenPort, as QUERY_TOPICS_BY_CONSUMER names it
	IsSlave    bool
	// MaxTopicQueueNums bounds the queue ids a request may name.
	MaxTopicQueueNums int32
	// DefaultQueryMaxNum bounds QUERY_MESSAGE's answer.
	DefaultQueryMaxNum int
	// UseServerSideResetOffset resets offsets on the broker rather than
	// telling the consumers.
	UseServerSideResetOffset bool
	// ValidateSystemTopicWhenUpdateTopic refuses changes to system topics.
	ValidateSystemTopicWhenUpdateTopic bool
}

// Deps are everything the service uses. The tables are the concrete
// ones: the service is their editor and uses most of each one's API.
type Deps struct {
	Config  func() Config
	Store   *store.Store
	Topics  *tables.Topics
	Groups  *tables.Groups
	Offsets *tables.Offsets
	Clients *tables.Clients
	Modes   *tables.RequestModes
	// Counts are the broker's message counters, for the statistics codes.
	Counts *stats.Stats
	// Go runs file work off the caller's goroutine; false once the broker
	// stops.
	Go func(fn func()) bool
	// TopicDeleted runs after a deleted topic's files are gone, off the
	// caller's goroutine (a LITE parent's lite topics go with it); may be nil.
	TopicDeleted func(topic string)
}

// Service serves the admin codes.
type Service struct {
	d        Deps
	log      zerolog.Logger
	cleanups cleanups
	coldCtr  coldData // the cold-data flow-control table (ops.go)
}

// New makes the service.
func New(d Deps, log zerolog.Logger) *Service { return &Service{d: d, log: log} }
