package role

// Waiting for a registration: a send that auto-created its topic is answered
// only once the name servers were offered the topic, as Apache's
// createTopicInSendMessageMethod registers before the send goes on. A
// producer that sends and then starts a consumer, or a second producer,
// finds the route at once instead of "route info not found" until the next
// registration.
//
// Invariants:
//   - every waiter's done is called exactly once: when each name server in
//     force was offered a registration made after the change the waiter
//     follows (accepted or not: a refusing name server holds no send back),
//     after registerBrokerTimeoutMills, or when registration stops;
//   - done is never called with r.mu held.

import (
	"slices"
	"sync/atomic"
	"time"
)

// regWaiter is one send waiting for the registration of the table as of
// change number target.
type regWaiter struct {
	target int64
	done   func()
	fired  atomic.Bool
	timer  *time.Timer // set under r.mu before the waiter is listed
}

func (w *regWaiter) fire() {
	if w.fired.CompareAndSwap(false, true) {
		w.timer.Stop()
		w.done()
	}
}

// AfterRegistration calls done once every name server in force has been
// offered a registration holding the topic table as it is now, or after
// registerBrokerTimeoutMills; at once when the broker registers with no
// name server (none configured, or registration not started or stopped).
// It never blocks: done may run on the caller's goroutine or later on
// another.
func (s *Service) AfterRegistration(done func()) { s.reg.after(done) }

func (r *registrar) after(done func()) {
	c := r.s.d.Config()
	if !r.launched.Load() || len(c.NamesrvAddrs) == 0 {
		done()
		return
	}
	w := &regWaiter{target: r.changes.Load(), done: done}
	r.mu.Lock()
	// stop closes halt before it settles every waiter under r.mu: checked
	// here, a waiter is either answered now or listed before that.
	if isClosed(r.halt) || r.offeredAll(w.target, c.NamesrvAddrs) {
		r.mu.Unlock()
		done()
		return
	}
	w.timer = time.AfterFunc(c.RegisterTimeout, func() {
		r.mu.Lock()
		r.waiters = slices.DeleteFunc(r.waiters, func(o *regWaiter) bool { return o == w })
		r.mu.Unlock()
		w.fire()
	})
	r.waiters = append(r.waiters, w)
	r.mu.Unlock()
}

// offeredAll reports whether every name server at addrs was offered the
// table as of change target. Called with r.mu held.
func (r *registrar) offeredAll(target int64, addrs []string) bool {
	for _, addr := range addrs {
		p := r.peers[addr]
		if p == nil || p.offered.Load() < target {
			return false
		}
	}
	return true
}

// settle calls the waiters whose registrations were offered everywhere
// (after each registration attempt), or all of them (stopped).
func (r *registrar) settle(all bool) {
	addrs := r.s.d.Config().NamesrvAddrs
	var ready []*regWaiter
	r.mu.Lock()
	r.waiters = slices.DeleteFunc(r.waiters, func(w *regWaiter) bool {
		if all || r.offeredAll(w.target, addrs) {
			ready = append(ready, w)
			return true
		}
		return false
	})
	r.mu.Unlock()
	for _, w := range ready {
		w.fire()
	}
}
