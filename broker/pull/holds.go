package pull

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// Holds parks long-polling pulls that found nothing, keyed by topic queue, and
// runs their answer from its own goroutine when a message for that queue is
// dispatched or when their hold time ends. Event loops never wait here.
// What answering means is the parker's (the pull service re-runs the pull
// and hands the result to the front end's completion); a hold whose
// requester is gone is dropped unanswered.
//
// At most maxParkedPulls are parked at once (each keeps a copy of its
// request): a pull that would be one more is answered at once, PULL_NOT_FOUND,
// as Apache answers a pull it does not suspend (DefaultPullMessageResultHandler
// without the suspend flag), and the event is logged, sampled.
type Holds struct {
	maxOffset func(topic string, queueID int32) int64
	max       int64
	n         atomic.Int64 // parked or reserved
	sampled   zerolog.Logger

	mu      sync.Mutex
	parked  map[queueKey][]*hold
	arrived map[queueKey]struct{} // queues with new messages since the last run
	wake    chan struct{}
}

// DefaultMaxParked is maxParkedPulls' default, taken for a bound of 0 or
// less.
const DefaultMaxParked = 100000

type queueKey struct {
	topic   string
	queueID int32
}

type hold struct {
	offset   int64
	deadline time.Time
	gone     func() bool // the requester went away; nil: never
	answer   func()
}

func newHolds(maxOffset func(string, int32) int64, maxParked int, log zerolog.Logger) *Holds {
	if maxParked <= 0 {
		maxParked = DefaultMaxParked
	}
	return &Holds{
		maxOffset: maxOffset,
		max:       int64(maxParked),
		sampled:   log.Sample(&zerolog.BurstSampler{Burst: 5, Period: time.Minute}),
		parked:    make(map[queueKey][]*hold),
		arrived:   make(map[queueKey]struct{}),
		wake:      make(chan struct{}, 1),
	}
}

// Reserve takes a place for one parked pull; false (logged, sampled) when
// maxParkedPulls are parked: the caller answers at once instead. A reserved
// place is used by Park.
func (h *Holds) Reserve(remote string) bool {
	if n := h.n.Add(1); n > h.max {
		h.n.Add(-1)
		h.sampled.Warn().Int64("maxParkedPulls", h.max).Str("remote", remote).
			Msg("parked pulls at the bound; pull answered at once")
		return false
	}
	return true
}

// Parked is the number of parked (or reserved) pulls.
func (h *Holds) Parked() int64 { return h.n.Load() }

// Park holds a pull of topic/queueID at offset until a message past offset
// arrives or timeout passes; then answer runs, on the holds goroutine. A
// hold whose gone (may be nil) reports true is dropped at the next tick,
// unanswered. The caller has a place from Reserve.
func (h *Holds) Park(topic string, queueID int32, offset int64, timeout time.Duration, gone func() bool, answer func()) {
	k := queueKey{topic, queueID}
	h.mu.Lock()
	h.parked[k] = append(h.parked[k], &hold{offset: offset, deadline: time.Now().Add(timeout), gone: gone, answer: answer})
	h.mu.Unlock()
	// A message dispatched between the pull's look and the park above would
	// otherwise wait for the timeout.
	if h.maxOffset(topic, queueID) > offset {
		h.Arrived(topic, queueID)
	}
}

// Arrived is called by the store's dispatcher after new entries for a queue.
func (h *Holds) Arrived(topic string, queueID int32) {
	k := queueKey{topic, queueID}
	h.mu.Lock()
	if _, ok := h.parked[k]; !ok {
		h.mu.Unlock()
		return
	}
	h.arrived[k] = struct{}{}
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// run answers holds until quit closes, then answers every remaining hold once.
func (h *Holds) run(quit <-chan struct{}) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-quit:
			h.release(func(*hold) bool { return true })
			return
		case <-h.wake:
			h.mu.Lock()
			keys := h.arrived
			h.arrived = make(map[queueKey]struct{})
			h.mu.Unlock()
			for k := range keys {
				max := h.maxOffset(k.topic, k.queueID)
				h.releaseQueue(k, func(x *hold) bool { return max > x.offset })
			}
		case now := <-tick.C:
			h.release(func(x *hold) bool { return x.isGone() || !now.Before(x.deadline) })
		}
	}
}

func (h *Holds) release(due func(*hold) bool) {
	h.mu.Lock()
	keys := make([]queueKey, 0, len(h.parked))
	for k := range h.parked {
		keys = append(keys, k)
	}
	h.mu.Unlock()
	for _, k := range keys {
		h.releaseQueue(k, due)
	}
}

// releaseQueue answers the holds of one queue that are due.
func (h *Holds) releaseQueue(k queueKey, due func(*hold) bool) {
	var ready []*hold
	h.mu.Lock()
	list := h.parked[k]
	keep := list[:0]
	for _, x := range list {
		if due(x) {
			ready = append(ready, x)
		} else {
			keep = append(keep, x)
		}
	}
	if len(keep) == 0 {
		delete(h.parked, k)
	} else {
		h.parked[k] = keep
	}
	h.mu.Unlock()
	h.n.Add(-int64(len(ready)))
	for _, x := range ready {
		if !x.isGone() {
			x.answer()
		}
	}
}

func (x *hold) isGone() bool { return x.gone != nil && x.gone() }
