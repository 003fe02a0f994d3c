package pop

// Parked pops (Apache's PopLongPollingService): a pop that found nothing
// waits, at most until bornTime + pollTime, for a message dispatched to its
// topic or to its pop retry topic; then it runs again on a broker
// goroutine. At its end it runs once more and answers whatever it finds
// (POLLING_TIMEOUT when nothing). At most popPollingSize pops wait per
// topic and maxPopPollingSize in all; past that a pop is answered
// POLLING_FULL.

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/message"
)

type parkResult uint8

const (
	notParked parkResult = iota
	parked
	parkFull
)

type popWaits struct {
	mu      sync.Mutex
	byTopic map[string][]*popWait // under mu; a wait is listed under its topic and its retry topic
	n       int                   // under mu
	any     atomic.Int32          // n, read without the lock by the dispatch hook
}

// popWait is a parked pop or NOTIFICATION; rerun runs it again (on a
// broker goroutine), parking it anew only if mayPark.
type popWait struct {
	topic    string
	group    string
	queueID  int32
	deadline int64
	rerun    func(mayPark bool)
	fired    atomic.Bool
	timer    *time.Timer
}

func (w *popWaits) init() { w.byTopic = make(map[string][]*popWait) }

// park parks a pop (or notification) that found nothing, until bornTime+pollTime.
func (p *Service) park(topic, group string, queueID int32, bornTime, pollTime int64, rerun func(mayPark bool)) parkResult {
	now := time.Now().UnixMilli()
	deadline := satAdd(bornTime, pollTime)
	if deadline <= now {
		return notParked
	}
	w := &popWait{topic: topic, group: group, queueID: queueID, deadline: deadline, rerun: rerun}
	retry := message.PopRetryTopic(topic, group)
	ws := &p.waits
	ws.mu.Lock()
	if ws.n >= maxPopPollingSize || len(ws.byTopic[topic]) >= popPollingSize {
		ws.mu.Unlock()
		return parkFull
	}
	ws.byTopic[topic] = append(ws.byTopic[topic], w)
	ws.byTopic[retry] = append(ws.byTopic[retry], w)
	ws.n++
	ws.any.Store(int32(ws.n))
	w.timer = time.AfterFunc(time.Duration(deadline-now)*time.Millisecond, func() { p.wake(w, false) })
	ws.mu.Unlock()
	return parked
}

// Arrived wakes the pops parked on topic (the dispatch hook: one atomic load when none waits).
func (p *Service) Arrived(topic string) {
	ws := &p.waits
	if ws.any.Load() == 0 {
		return
	}
	ws.mu.Lock()
	list := ws.byTopic[topic]
	ws.mu.Unlock()
	for _, w := range list {
		p.wake(w, true)
	}
}

// wake runs a parked pop again, once: early (a message arrived; it may
// park again) or at its deadline (it answers whatever it finds).
func (p *Service) wake(w *popWait, early bool) {
	if !w.fired.CompareAndSwap(false, true) {
		return
	}
	if early {
		w.timer.Stop()
	}
	p.unlist(w)
	mayPark := early && time.Now().UnixMilli() < w.deadline
	if !p.d.Go(func() { w.rerun(mayPark) }) {
		return // shutting down: the connection goes with the broker
	}
}

func (p *Service) unlist(w *popWait) {
	ws := &p.waits
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, t := range [2]string{w.topic, message.PopRetryTopic(w.topic, w.group)} {
		list := ws.byTopic[t]
		for i, x := range list {
			if x == w {
				list = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(ws.byTopic, t)
		} else {
			ws.byTopic[t] = list
		}
	}
	ws.n--
	ws.any.Store(int32(ws.n))
}

// pollingNum is how many pops of group wait on topic/queueID (POLLING_INFO).
func (p *Service) pollingNum(topic, group string, queueID int32) int32 {
	ws := &p.waits
	ws.mu.Lock()
	defer ws.mu.Unlock()
	var n int32
	for _, w := range ws.byTopic[topic] {
		if w.topic == topic && w.group == group && w.queueID == queueID {
			n++
		}
	}
	return n
}
