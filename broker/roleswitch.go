package broker

// A role change in controller mode (Apache's ReplicasManager.changeToMaster
// and changeToSlave): the previous role's services stop, the configuration
// in force takes the new brokerId and brokerRole (what the send, pull and
// admin paths read), the new role's services start, and the name servers
// hear of it at once.
//
// Master: the AutoSwitch HA service serves slaves (autoswitch.go);
// brokerId 0; brokerRole SYNC_MASTER, as Apache sets it (the service
// drives its acknowledgements; ASYNC_MASTER in tests without one); the special services on: delay and timer delivery,
// transaction checks, pop revive (Apache's changeSpecialServiceStatus(true)),
// the pop checkpoints recovered the first time.
// Slave: the controller-assigned brokerId, brokerRole SLAVE (writes
// refused), the special services off, the AutoSwitch HA service following
// the master, the master's metadata copied from
// its remoting address (the controller's masterAddress), at once and then
// on Apache's controller-mode schedule (slaveSyncLoop).

import (
	"context"

	"github.com/rocketgo/rocketgo/ha"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/replicas"
)

// takeRole switches the broker to r; called under c.mu.
func (b *Broker) takeRole(c *controlled, r replicas.Role) error {
	if c.term != nil {
		close(c.term)
		c.termWG.Wait()
	}
	term := make(chan struct{})
	c.term = term
	// A role's services end with the role or with the broker.
	done := make(chan struct{})
	b.goRun(func() {
		defer close(done)
		select {
		case <-term:
		case <-b.quit:
		}
	})
	run := func(fn func(quit <-chan struct{})) {
		c.termWG.Add(1)
		b.goRun(func() {
			defer c.termWG.Done()
			fn(done)
		})
	}
	if r.Master {
		// The store takes Puts again before the broker does.
		if c.auto != nil {
			if err := c.auto.BecomeMaster(r.MasterEpoch, r.ControllerID, r.SyncStateSet, r.SyncStateSetEpoch); err != nil {
				return err
			}
		}
		b.timers.FenceAt(b.Store.MaxPhyOffset()) // before the broker takes sends
		role := c.masterRole()
		b.updateConfig(func(cfg *Config) {
			cfg.BrokerID = message.MasterID
			cfg.HA.BrokerRole = role
		})
		b.repl.masterAddr.Store(nil)
		if !c.popRecovered {
			if err := b.Pops.Recover(context.Background()); err != nil {
				// Not fatal: the revive log is read again from the revive
				// offset by the revive loop; what recover rebuilds is the
				// in-flight order state.
				c.log.Error().Err(err).Msg("recover pop checkpoints")
			}
			c.popRecovered = true
		}
		run(b.tx.RunChecks)
		run(b.Pops.RunRevive)
		for _, s := range b.schedulers() {
			run(s)
		}
	} else {
		b.updateConfig(func(cfg *Config) {
			cfg.BrokerID = r.ControllerID
			cfg.HA.BrokerRole = ha.Slave
		})
		addr := r.MasterAddr
		b.repl.masterAddr.Store(&addr)
		select {
		case b.repl.syncNow <- struct{}{}:
		default:
		}
		run(b.slaveSyncLoop)
		if c.auto != nil {
			if err := c.auto.BecomeSlave(b.masterHAAddr(addr, c.log), r.MasterEpoch, r.ControllerID); err != nil {
				return err
			}
		}
	}
	b.Topics.BumpVersion()
	if b.registrar.launched.CompareAndSwap(false, true) {
		b.goRun(func() { b.registrar.run(b.quit) })
	} else {
		b.registrar.pokeFull()
	}
	return nil
}
