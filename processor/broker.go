package processor

import (
	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/remoting"
)

// brokerProcs serves a broker's request codes.
type brokerProcs struct {
	b   *broker.Broker
	log zerolog.Logger
}

// BrokerTable returns the broker's request table. Each request family
// registers its codes from its own file.
func BrokerTable(b *broker.Broker, log zerolog.Logger) Table {
	p := &brokerProcs{b: b, log: log.With().Str("component", "processor").Logger()}
	t := Table{}
	p.registerSend(t)
	p.completeSendReplies(t)
	p.registerPull(t)
	p.registerClients(t)
	p.registerOffsets(t)
	p.registerTopics(t)
	p.registerQuery(t)
	p.registerSendBack(t)
	p.registerLocks(t)
	p.registerFilter(t)
	p.registerAdmin(t)
	return t
}

func (p *brokerProcs) fail(req *remoting.Command, err error) *remoting.Command {
	return errorResponse(&p.log, req, err)
}
