package role

// A role change in controller mode (Apache's ReplicasManager.changeToMaster
// and changeToSlave): the previous role's services stop, the configuration
// in force takes the new brokerId and brokerRole (what the send, pull and
// admin paths read), the new role's services start, and the name servers
// hear of it at once.
//
// Master: the AutoSwitch HA service serves slaves (autoswitch.go);
// brokerId 0; brokerRole SYNC_MASTER, as Apache sets it (the service
// drives its acknowledgements; ASYNC_MASTER in tests without one); the
// broker's special services on (Deps.RunMaster: delay and timer delivery,
// transaction checks, pop revive, Apache's
// changeSpecialServiceStatus(true)), after its fence (Deps.BeforeMaster).
// Slave: the controller-assigned brokerId, brokerRole SLAVE (writes
// refused), the special services off, the AutoSwitch HA service following
// the master, the master's metadata copied from its remoting address (the
// controller's masterAddress), at once and then on Apache's controller-mode
// schedule (slaveSyncLoop).

import (
	"github.com/rocketgo/rocketgo/ha"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/replicas"
)

// takeRole switches the broker to r; called under c.mu.
func (c *controlled) takeRole(r replicas.Role) error {
	s := c.s
	if c.term != nil {
		close(c.term)
		c.termWG.Wait()
	}
	term := make(chan struct{})
	c.term = term
	// A role's services end with the role or with the broker.
	done := make(chan struct{})
	s.d.Go(func() {
		defer close(done)
		select {
		case <-term:
		case <-s.d.Quit:
		}
	})
	run := func(fn func(quit <-chan struct{})) {
		c.termWG.Add(1)
		s.d.Go(func() {
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
		s.d.BeforeMaster() // before the broker takes sends
		s.d.SetRole(message.MasterID, c.masterRole())
		s.repl.masterAddr.Store(nil)
		s.d.RunMaster(!c.mastered, run)
		c.mastered = true
	} else {
		s.d.SetRole(r.ControllerID, ha.Slave)
		addr := r.MasterAddr
		s.repl.masterAddr.Store(&addr)
		s.syncSoon()
		run(s.slaveSyncLoop)
		if c.auto != nil {
			if err := c.auto.BecomeSlave(s.masterHAAddr(addr, c.log), r.MasterEpoch, r.ControllerID); err != nil {
				return err
			}
		}
	}
	s.d.Topics.BumpVersion()
	if s.reg.launched.CompareAndSwap(false, true) {
		s.d.Go(func() { s.reg.run(s.d.Quit) })
	} else {
		s.reg.pokeFull()
	}
	return nil
}
