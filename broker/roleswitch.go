package broker

// What starts and stops with the broker's role. broker/role decides when
// (a classic broker's role is its configuration's; in controller mode the
// controller's answers change it at runtime); the broker says what: on a
// master the special services run — delay and timer delivery, transaction
// checks, pop revive (Apache's changeSpecialServiceStatus(true)) — and on a
// slave none of them.

import (
	"context"
)

// fenceTimer has the timer deliver nothing the commit log held before now
// from its old progress: called before the broker takes sends as master.
func (b *Broker) fenceTimer() { b.timers.FenceAt(b.Store.MaxPhyOffset()) }

// runMaster starts a master's special services with run, which ends them
// with the role or the broker. recoverPops: rebuild the pop checkpoints
// first (a controller-mode broker's first time as master; a classic
// master recovers them in Start, where a failure stops it).
func (b *Broker) runMaster(recoverPops bool, run func(fn func(quit <-chan struct{}))) {
	if recoverPops {
		if err := b.Pops.Recover(context.Background()); err != nil {
			// Not fatal: the revive log is read again from the revive
			// offset by the revive loop; what recover rebuilds is the
			// in-flight order state.
			b.log.Error().Err(err).Msg("recover pop checkpoints")
		}
	}
	run(b.Transactions.RunChecks)
	run(b.Pops.RunRevive)
	for _, s := range b.schedulers() {
		run(s)
	}
}
