package processor

import (
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/remoting"
)

// brokerProcs serves a broker's request codes. Each family's handlers use
// only their own service.
type brokerProcs struct {
	sends Sender
	pulls Puller
	reads Reader
	pops  Popper
	// lite and litePops serve the lite-topic codes; nil: not registered.
	lite     Lite
	litePops LitePopper
	txs      Transactions
	offsets  Offsets
	clients  Clients
	admin    Admin
	ops      Ops
	sw       Switches
	repl     Replication
	roles    Roles
	host     Host
	log      zerolog.Logger
	// refused logs what a client sent that was dropped or refused (a bad
	// name in a heartbeat, ...): sampled, so a client cannot flood the log.
	refused zerolog.Logger
	// rolePending counts NOTIFY_BROKER_ROLE_CHANGED pushes waiting for or
	// in a role change (controllermode.go), bounded against a flood.
	rolePending atomic.Int32
	// ctlPending counts LITE_SUBSCRIPTION_CTL requests handed to a broker
	// goroutine and not yet answered (maxCtlPending).
	ctlPending atomic.Int32
}

// BrokerTable returns the broker's request table. Each request family
// registers its codes from its own file.
func BrokerTable(s Services, log zerolog.Logger) remoting.Table {
	p := procsOf(s, log)
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
	p.registerLite(t)
	p.registerControllerMode(t)
	return t
}

func (p *brokerProcs) fail(req *remoting.Command, err error) *remoting.Command {
	return errorResponse(&p.log, req, err)
}

func procsOf(s Services, log zerolog.Logger) *brokerProcs {
	plog := log.With().Str("component", "processor").Logger()
	b := s.Broker
	p := &brokerProcs{sends: s.Sends, pulls: s.Pulls, reads: s.Admin, pops: s.Pops, offsets: s.Admin,
		clients: s.Members, admin: s.Admin, txs: s.Txs, ops: b, sw: s.Admin, repl: s.Role, roles: s.Role, host: b,
		log: plog, refused: plog.Sample(&zerolog.BurstSampler{Burst: 10, Period: time.Second})}
	if lp, ok := s.Pops.(LitePopper); ok && s.Lite != nil {
		p.lite, p.litePops = s.Lite, lp
	}
	return p
}
