package pull

import (
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/store"
)

// DefaultMaxParked is maxParkedPulls' default, taken for a bound of 0 or
// less.
const DefaultMaxParked = 100000

// places bounds the parked pulls: each keeps a copy of its request, so at
// most maxParkedPulls are parked at once. A pull that would be one more is
// answered at once, PULL_NOT_FOUND, as Apache answers a pull it does not
// suspend (DefaultPullMessageResultHandler without the suspend flag), and
// the event is logged, sampled.
type places struct {
	max     int64
	n       atomic.Int64 // parked or reserved
	sampled zerolog.Logger
}

func newPlaces(maxParked int, log zerolog.Logger) *places {
	if maxParked <= 0 {
		maxParked = DefaultMaxParked
	}
	return &places{max: int64(maxParked), sampled: log.Sample(&zerolog.BurstSampler{Burst: 5, Period: time.Minute})}
}

// reserve takes a place for one parked pull; false (logged, sampled) at
// the bound: the caller answers at once instead.
func (p *places) reserve(remote string) bool {
	if n := p.n.Add(1); n > p.max {
		p.n.Add(-1)
		p.sampled.Warn().Int64("maxParkedPulls", p.max).Str("remote", remote).
			Msg("parked pulls at the bound; pull answered at once")
		return false
	}
	return true
}

func (p *places) free() { p.n.Add(-1) }

// park parks a pull that found nothing on the store's arrival waiter,
// unless maxParkedPulls are parked (then it is answered at once, as a pull
// not suspended). It runs again, on the store's arrival goroutine, when a
// message past its offset is dispatched to its queue or its suspend time
// ends; a pull whose requester went away is dropped unanswered.
func (s *Service) park(cfg *Config, r *Request, later func() Completion) bool {
	timeout := time.Duration(r.SuspendTimeoutMillis) * time.Millisecond
	if !cfg.LongPollingEnable {
		timeout = cfg.ShortPollingTime
	}
	if !s.places.reserve(r.Remote) {
		return false
	}
	w := &parkedPull{s: s, r: *r}
	w.done = later()
	w.p = store.Parked{
		On:       [2]store.Position{{Topic: r.storeTopic(), QueueID: r.QueueID, Offset: r.QueueOffset}},
		Deadline: time.Now().Add(timeout),
		Gone:     w.done.Gone,
		Wake:     w.wake,
	}
	if !s.d.Store.Park(&w.p) {
		// The store is shutting down: the pull is answered now, with
		// what it found.
		s.places.free()
		return false
	}
	return true
}

// parkedPull is a parked pull: a copy of its request (the front end's is
// reused once the handler returns) and its completion.
type parkedPull struct {
	s    *Service
	r    Request
	done Completion
	p    store.Parked
}

// wake runs a woken pull and answers it, or hands it to a cold-pull
// worker, which does.
func (w *parkedPull) wake(why store.Woken) {
	w.s.places.free()
	if why == store.Abandoned || w.done.gone() {
		return
	}
	res, err := w.s.pull(&w.r, runAgain, func() Completion { return w.done })
	if err != nil || res.Status != Later {
		w.done.Done(res, err)
	}
}
