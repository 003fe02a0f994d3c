package processor

import (
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/remoting"
)

// brokerProcs serves a broker's request codes.
type brokerProcs struct {
	b   *broker.Broker
	log zerolog.Logger
	// refused logs what a client sent that was dropped or refused (a bad
	// name in a heartbeat, ...): sampled, so a client cannot flood the log.
	refused zerolog.Logger
	// rolePending counts NOTIFY_BROKER_ROLE_CHANGED pushes waiting for or
	// in a role change (controllermode.go), bounded against a flood.
	rolePending atomic.Int32
}

// BrokerTable returns the broker's request table. Each request family
// registers its codes from its own file.
func BrokerTable(b *broker.Broker, log zerolog.Logger) remoting.Table {
	plog := log.With().Str("component", "processor").Logger()
	p := &brokerProcs{b: b, log: plog, refused: plog.Sample(&zerolog.BurstSampler{Burst: 10, Period: time.Second})}
	t := remoting.Table{}
	p.registerSend(t)
	p.registerPull(t)
	p.registerClients(t)
	p.registerOffsets(t)
	p.registerTopics(t)
	p.registerQuery(t)
	p.registerSendBack(t)
	p.registerLocks(t)
	p.registerFilter(t)
	p.registerAdmin(t)
	p.registerOps(t) // opsadmin.go
	p.registerTransactions(t)
	p.registerReplication(t)
	p.registerPop(t)
	p.registerControllerMode(t)
	return t
}

func (p *brokerProcs) fail(req *remoting.Command, err error) *remoting.Command {
	return errorResponse(&p.log, req, err)
}
