package pop

// Parked pops (Apache's PopLongPollingService): a pop that found nothing
// waits, at most until bornTime + pollTime, for a message dispatched to its
// topic or to its pop retry topic; then it runs again on a broker
// goroutine. At its end it runs once more and answers whatever it finds
// (POLLING_TIMEOUT when nothing). At most popPollingSize pops wait per
// topic and maxPopPollingSize in all; past that a pop is answered
// POLLING_FULL. The waiting is the store's arrival waiter's (store.Park):
// this file keeps the bounds and the counts POLLING_INFO reads.

import (
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/store"
)

type parkResult uint8

const (
	notParked parkResult = iota
	parked
	parkFull
)

// popWaits counts the parked pops and notifications.
type popWaits struct {
	mu      sync.Mutex
	byTopic map[string]int    // under mu
	byQueue map[waitKey]int32 // under mu: POLLING_INFO's count
	n       int               // under mu
}

type waitKey struct {
	topic, group string
	queueID      int32
}

func (w *popWaits) init() {
	w.byTopic = make(map[string]int)
	w.byQueue = make(map[waitKey]int32)
}

// park parks a pop (or notification) that found nothing, until
// bornTime+pollTime: rerun runs again then, on a broker goroutine, parking
// anew only if mayPark (it was woken early, before its end). gone (may be
// nil) reports that the requester went away: the pop is then dropped.
func (p *Service) park(topic, group string, queueID int32, bornTime, pollTime int64, gone func() bool, rerun func(mayPark bool)) parkResult {
	on := [2]store.Position{{Topic: topic, QueueID: store.AnyQueue},
		{Topic: message.PopRetryTopic(topic, group), QueueID: store.AnyQueue}}
	return p.parkAt(waitKey{topic, group, queueID}, on, bornTime, pollTime, gone, rerun)
}

// parkOn parks a lite pop on key alone (its client's events), counted
// under key as a topic's pops are.
func (p *Service) parkOn(key, group string, bornTime, pollTime int64, gone func() bool, rerun func(mayPark bool)) parkResult {
	on := [2]store.Position{{Topic: key, QueueID: store.AnyQueue}}
	return p.parkAt(waitKey{key, group, 0}, on, bornTime, pollTime, gone, rerun)
}

func (p *Service) parkAt(k waitKey, on [2]store.Position, bornTime, pollTime int64, gone func() bool, rerun func(mayPark bool)) parkResult {
	now := time.Now().UnixMilli()
	deadline := satAdd(bornTime, pollTime)
	if deadline <= now {
		return notParked
	}
	ws := &p.waits
	ws.mu.Lock()
	if ws.n >= maxPopPollingSize || ws.byTopic[k.topic] >= popPollingSize {
		ws.mu.Unlock()
		return parkFull
	}
	ws.count(k, 1)
	ws.mu.Unlock()
	w := &store.Parked{
		On:       on,
		Deadline: time.UnixMilli(deadline),
		Gone:     gone,
	}
	w.Wake = func(why store.Woken) {
		ws.mu.Lock()
		ws.count(k, -1)
		ws.mu.Unlock()
		if why == store.Abandoned {
			return // the requester or the broker is gone
		}
		mayPark := why == store.Arrived && time.Now().UnixMilli() < deadline
		p.d.Go(func() { rerun(mayPark) }) // refused while shutting down: the connection goes with the broker
	}
	if !p.d.Store.Park(w) {
		ws.mu.Lock()
		ws.count(k, -1)
		ws.mu.Unlock()
		return notParked
	}
	return parked
}

// count adds d to the parked pops of k; ws.mu held.
func (ws *popWaits) count(k waitKey, d int) {
	ws.n += d
	if n := ws.byTopic[k.topic] + d; n > 0 {
		ws.byTopic[k.topic] = n
	} else {
		delete(ws.byTopic, k.topic)
	}
	if n := ws.byQueue[k] + int32(d); n > 0 {
		ws.byQueue[k] = n
	} else {
		delete(ws.byQueue, k)
	}
}

// pollingNum is how many pops of group wait on topic/queueID (POLLING_INFO).
func (p *Service) pollingNum(topic, group string, queueID int32) int32 {
	ws := &p.waits
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.byQueue[waitKey{topic, group, queueID}]
}
