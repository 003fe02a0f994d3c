package broker

import (
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/remoting"
)

// Holds parks long-polling pulls that found nothing, keyed by topic queue, and
// answers them from its own goroutine when a message for that queue is
// dispatched or when their hold time ends. Event loops never wait here.
type Holds struct {
	maxOffset func(topic string, queueID int32) int64

	mu      sync.Mutex
	parked  map[queueKey][]*hold
	arrived map[queueKey]struct{} // queues with new messages since the last run
	wake    chan struct{}
}

type queueKey struct {
	topic   string
	queueID int32
}

type hold struct {
	conn     *remoting.Conn
	offset   int64
	deadline time.Time
	// answer re-runs the pull without suspension; nil means no answer.
	answer func() *remoting.Command
}

func newHolds(maxOffset func(string, int32) int64) *Holds {
	return &Holds{
		maxOffset: maxOffset,
		parked:    make(map[queueKey][]*hold),
		arrived:   make(map[queueKey]struct{}),
		wake:      make(chan struct{}, 1),
	}
}

// Park holds a pull of topic/queueID at offset until a message past offset
// arrives or timeout passes; then answer's result is written to c.
func (h *Holds) Park(c *remoting.Conn, topic string, queueID int32, offset int64, timeout time.Duration, answer func() *remoting.Command) {
	k := queueKey{topic, queueID}
	h.mu.Lock()
	h.parked[k] = append(h.parked[k], &hold{conn: c, offset: offset, deadline: time.Now().Add(timeout), answer: answer})
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
			h.release(func(x *hold) bool { return x.conn.Closed() || !now.Before(x.deadline) })
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
	for _, x := range ready {
		if x.conn.Closed() {
			continue
		}
		if resp := x.answer(); resp != nil {
			x.conn.Reply(resp)
		}
	}
}
