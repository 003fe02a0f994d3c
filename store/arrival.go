package store

import (
	"container/heap"
	"sync"
	"sync/atomic"
	"time"
)

// The arrival waiter: long polling, keyed by consume queue. A reader that
// found nothing (a pull, a pop, a notification) parks on the queues it
// reads until the dispatcher builds an entry past what it read there, or
// its deadline passes. It is the offset waiter's (wait.go) other half: the
// same contract — a parked waiter is told exactly once, by the goroutine
// that reports progress, and never blocks the one that parks it — keyed by
// a queue position instead of a commit log offset.
//
// Wakes run on the store's arrival goroutine, one at a time, in the order
// the dispatcher or the clock made them due: a Wake must not block (a
// re-read of a queue is fine; anything slower goes to a goroutine of its
// own). The dispatcher only marks waiters due, under the waiter's lock, and
// when nobody is parked pays one atomic load per touched queue.

// AnyQueue, as a Position's QueueID, waits for an entry in any queue of
// the topic, whatever its offset.
const AnyQueue int32 = -1

// Position is where a parked reader read up to: an entry of Topic's queue
// QueueID at Offset or beyond wakes it.
type Position struct {
	Topic   string
	QueueID int32 // AnyQueue: every queue of Topic, Offset unused
	Offset  int64
}

// Woken says why a Parked reader is woken.
type Woken uint8

const (
	// Arrived: an entry past the reader's position was dispatched.
	Arrived Woken = iota
	// Expired: the deadline passed first.
	Expired
	// Abandoned: Gone reported true, or the store shut down. The reader
	// is not answered (its requester is gone); the waker frees what it
	// held.
	Abandoned
)

func (w Woken) String() string {
	switch w {
	case Arrived:
		return "arrived"
	case Expired:
		return "expired"
	}
	return "abandoned"
}

// Parked is a reader waiting for messages. The caller fills the exported
// fields and hands it to Park; it belongs to the waiter until Wake runs.
type Parked struct {
	// On are the queues it waits on: On[0] always, On[1] when its Topic is
	// not empty (a pop waits on its topic and its pop retry topic).
	On       [2]Position
	Deadline time.Time
	// Gone reports that the requester went away; checked about once a
	// second (nil: never). A gone reader is woken Abandoned.
	Gone func() bool
	// Wake is called exactly once, with why.
	Wake func(Woken)

	idx int // in arrivals.byTime; -1 once unlisted
}

func (p *Parked) positions() []Position {
	if p.On[1].Topic == "" {
		return p.On[:1]
	}
	return p.On[:2]
}

// goneSweep is how often Gone is asked of every parked reader: a requester
// that closed its connection frees its place within this time.
const goneSweep = time.Second

// arrivals is the arrival waiter's state.
type arrivals struct {
	n       atomic.Int64 // parked: the dispatcher's check without the lock
	mu      sync.Mutex
	byQueue map[queueKey][]*Parked // a reader is listed under each of its positions
	byTime  parkedHeap
	due     []dueWake // woken, waiting for the arrival goroutine
	closed  bool
	wake    chan struct{} // due grew, or the earliest deadline moved ahead
}

type dueWake struct {
	p   *Parked
	why Woken
}

func (a *arrivals) init() {
	a.byQueue = make(map[queueKey][]*Parked)
	a.wake = make(chan struct{}, 1)
}

func (a *arrivals) signal() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// Park parks p until an entry past one of its positions is dispatched, its
// deadline passes or its requester goes; then p.Wake runs on the arrival
// goroutine. False once the store is shutting down: p is not parked and
// the caller answers at once. An entry dispatched between the reader's
// look and Park wakes it at once (positions in one queue; AnyQueue
// positions are not checked).
func (s *Store) Park(p *Parked) bool {
	a := &s.arrivals
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return false
	}
	for _, pos := range p.positions() {
		k := queueKey{pos.Topic, pos.QueueID}
		a.byQueue[k] = append(a.byQueue[k], p)
	}
	heap.Push(&a.byTime, p)
	a.n.Add(1)
	early := a.byTime[0] == p
	for _, pos := range p.positions() {
		if pos.QueueID != AnyQueue && s.MaxOffset(pos.Topic, pos.QueueID) > pos.Offset {
			a.dueLocked(p, Arrived)
			early = true
			break
		}
	}
	a.mu.Unlock()
	if early {
		a.signal()
	}
	return true
}

// arrived is the dispatcher's: queue topic/queueID holds entries up to
// maxOffset (exclusive). It wakes the readers parked past their position
// in that queue and those waiting on any queue of topic.
func (a *arrivals) arrived(topic string, queueID int32, maxOffset int64) {
	if a.n.Load() == 0 {
		return
	}
	a.mu.Lock()
	before := len(a.due)
	k := queueKey{topic, queueID}
	if list, ok := a.byQueue[k]; ok {
		keep := list[:0]
		for _, x := range list {
			if x.past(k, maxOffset) {
				a.due = append(a.due, dueWake{x, Arrived})
				a.unlistLocked(x, k)
			} else {
				keep = append(keep, x)
			}
		}
		clear(list[len(keep):])
		if len(keep) == 0 {
			delete(a.byQueue, k)
		} else {
			a.byQueue[k] = keep
		}
	}
	k.queueID = AnyQueue
	a.wakeAllLocked(k)
	woke := len(a.due) > before
	a.mu.Unlock()
	if woke {
		a.signal()
	}
}

// past: an entry at maxOffset-1 in queue k is past p's position there.
func (p *Parked) past(k queueKey, maxOffset int64) bool {
	for _, pos := range p.positions() {
		if pos.Topic == k.topic && pos.QueueID == k.queueID && maxOffset > pos.Offset {
			return true
		}
	}
	return false
}

// dueLocked unlists p and queues its wake; a.mu held.
func (a *arrivals) dueLocked(p *Parked, why Woken) {
	a.unlistLocked(p, queueKey{})
	a.due = append(a.due, dueWake{p, why})
}

// unlistLocked takes p off its queues' lists (but the list of skip, which
// the caller is rewriting) and off the deadline heap; a.mu held.
func (a *arrivals) unlistLocked(p *Parked, skip queueKey) {
	for _, pos := range p.positions() {
		k := queueKey{pos.Topic, pos.QueueID}
		if k == skip {
			continue
		}
		list := a.byQueue[k]
		for i, x := range list {
			if x == p {
				copy(list[i:], list[i+1:])
				list[len(list)-1] = nil
				list = list[:len(list)-1]
				break
			}
		}
		if len(list) == 0 {
			delete(a.byQueue, k)
		} else {
			a.byQueue[k] = list
		}
	}
	heap.Remove(&a.byTime, p.idx)
	p.idx = -1
	a.n.Add(-1)
}

// arrivalLoop wakes parked readers until the store shuts down; Shutdown
// then abandons those left (abandonAll).
func (s *Store) arrivalLoop() {
	a := &s.arrivals
	deadline := time.NewTimer(time.Hour)
	defer deadline.Stop()
	sweep := time.NewTicker(goneSweep)
	defer sweep.Stop()
	var run []dueWake
	for {
		a.mu.Lock()
		run, a.due = a.due, run[:0]
		next := time.Hour
		if len(a.byTime) > 0 {
			next = time.Until(a.byTime[0].Deadline)
		}
		a.mu.Unlock()
		for i, d := range run {
			d.p.Wake(d.why)
			run[i] = dueWake{}
		}
		// Wakes that came due meanwhile left a token in a.wake: the select
		// takes them in turn with the deadlines and quit, so a steady flow
		// of arrivals starves neither.
		deadline.Reset(max(next, 0))
		select {
		case <-s.quit:
			return
		case <-a.wake:
		case now := <-deadline.C:
			a.mu.Lock()
			for len(a.byTime) > 0 && !now.Before(a.byTime[0].Deadline) {
				a.dueLocked(a.byTime[0], Expired)
			}
			a.mu.Unlock()
		case <-sweep.C:
			a.mu.Lock()
			from := len(a.due)
			for _, p := range a.byTime {
				if p.Gone != nil && p.Gone() {
					a.due = append(a.due, dueWake{p, Abandoned})
				}
			}
			for _, d := range a.due[from:] {
				a.unlistLocked(d.p, queueKey{})
			}
			a.mu.Unlock()
		}
	}
}

// abandonAll refuses further parks and wakes every parked reader
// Abandoned, on the caller's goroutine (Shutdown, once the arrival
// goroutine stopped).
func (a *arrivals) abandonAll() {
	a.mu.Lock()
	a.closed = true
	for len(a.byTime) > 0 {
		a.dueLocked(a.byTime[0], Abandoned)
	}
	run := a.due
	a.due = nil
	a.mu.Unlock()
	for _, d := range run {
		d.p.Wake(d.why)
	}
}

// parkedHeap orders parked readers by deadline (container/heap).
type parkedHeap []*Parked

func (h parkedHeap) Len() int           { return len(h) }
func (h parkedHeap) Less(i, j int) bool { return h[i].Deadline.Before(h[j].Deadline) }
func (h parkedHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}
func (h *parkedHeap) Push(x any) {
	p := x.(*Parked)
	p.idx = len(*h)
	*h = append(*h, p)
}
func (h *parkedHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return p
}

// WakeTopic wakes the readers waiting on any queue of topic (AnyQueue),
// as if an entry had been dispatched there: a service that made messages
// readable without a new entry (an orderly pop's queue unblocked by an
// ack) tells the pops waiting on it.
func (s *Store) WakeTopic(topic string) {
	a := &s.arrivals
	if a.n.Load() == 0 {
		return
	}
	a.mu.Lock()
	woke := a.wakeAllLocked(queueKey{topic, AnyQueue})
	a.mu.Unlock()
	if woke {
		a.signal()
	}
}

// wakeAllLocked wakes every reader listed under k, Arrived; a.mu held.
func (a *arrivals) wakeAllLocked(k queueKey) bool {
	list, ok := a.byQueue[k]
	if !ok {
		return false
	}
	delete(a.byQueue, k)
	for _, x := range list {
		a.due = append(a.due, dueWake{x, Arrived})
		a.unlistLocked(x, k)
	}
	return true
}
