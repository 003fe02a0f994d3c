// Package clients serves what clients ask about themselves (Apache's
// ClientManageProcessor and RebalanceLockManager): heartbeats, which
// register producers and consumers and create their groups' retry topics,
// unregistering, the members of a group, the orderly consumers' queue
// locks, and the queues a 5.x consumer is assigned (QUERY_ASSIGNMENT).
//
// Owns: the rules of those codes. Never: keeps a connection's state itself
// (tables.Clients and tables.Locks do) or reads the broker's configuration
// beyond Deps.
//
// Invariant: a lock's owner is (group, clientId, connection); a lock held by
// another live, unexpired owner is never granted.
package clients

import (
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/tables"
)

// Deps are everything the service uses.
type Deps struct {
	Clients *tables.Clients
	Groups  *tables.Groups
	Topics  *tables.Topics
	Locks   *tables.Locks
	Modes   *tables.RequestModes
	// BrokerName names this broker's queues in an assignment.
	BrokerName func() string
	// MaxTopicQueueNums bounds the queue ids a lock may name, read per
	// request (UPDATE_BROKER_CONFIG changes it).
	MaxTopicQueueNums func() int32
}

// Service serves the clients' own codes.
type Service struct {
	d       Deps
	sampled zerolog.Logger // what clients cause: bad names in heartbeats
}

// New makes the service.
func New(d Deps, log zerolog.Logger) *Service {
	return &Service{d: d, sampled: log.Sample(&zerolog.BurstSampler{Burst: 10, Period: time.Second})}
}
