package lite

// The event dispatcher (Apache 5.5 LiteEventDispatcher): each client has a
// bounded set of LMQ names it should read, in arrival order, each at most
// once. An LMQ entry dispatched by the store, an ack that unblocks the
// group's next batch, an order block that expired, a registration of a
// lite topic with messages: each offers the LMQ to one client of each
// group subscribed to it (a random start, blacklisted clients last) and
// wakes that client's parked pop. A client whose set is full gets a full
// dispatch later: every lite topic of its set that the group has not
// consumed is offered again. A client that stopped popping loses its
// events to the group's others (scan).

import (
	"container/heap"
	"slices"
	"time"

	"github.com/rocketgo/rocketgo/message"
)

// eventSet is a client's events: a FIFO of LMQ names with a membership set.
type eventSet struct {
	q          []string
	in         map[string]struct{}
	big        bool // in held more than smallSet names since it was made
	cap        int
	lastAccess int64 // ms: its last pop
}

// smallSet is the size past which a drained set's map is made again: a Go
// map keeps the buckets of its peak, and a client's set may have held
// thousands of lite topics once.
const smallSet = 64

func newEventSet(capacity int, now int64) *eventSet {
	return &eventSet{in: map[string]struct{}{}, cap: capacity, lastAccess: now}
}

// offer adds q unless present; false when full.
func (e *eventSet) offer(q string) bool {
	if _, ok := e.in[q]; ok {
		return true
	}
	if len(e.q) >= e.cap {
		return false
	}
	e.in[q] = struct{}{}
	e.q = append(e.q, q)
	e.big = e.big || len(e.in) > smallSet
	return true
}

func (e *eventSet) poll() (q string, ok bool) {
	for len(e.q) > 0 && !ok {
		q = e.q[0]
		e.q[0] = ""
		e.q = e.q[1:]
		if _, ok = e.in[q]; ok {
			delete(e.in, q)
		}
	}
	if len(e.q) == 0 {
		e.q = nil // let the array go
		if e.big && len(e.in) == 0 {
			e.in, e.big = map[string]struct{}{}, false
		}
	}
	if !ok {
		q = ""
	}
	return q, ok
}

func (e *eventSet) remove(q string) { delete(e.in, q) }

func (e *eventSet) size() int { return len(e.in) }

func (e *eventSet) drain() []string {
	out := make([]string, 0, len(e.in))
	for {
		q, ok := e.poll()
		if !ok {
			return out
		}
		out = append(out, q)
	}
}

// dueQueue is a set of keys each due at a time: a heap with the latest
// due per key in a map; stale heap entries are skipped when they come up,
// and the heap is rebuilt when they outnumber the live ones.
type dueQueue struct {
	due map[string]int64
	h   dueHeap
}

type dueItem struct {
	at  int64
	key string
}

type dueHeap []dueItem

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(dueItem)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (d *dueQueue) init() { d.due = map[string]int64{} }

// set makes key due at at; an earlier due stays when keepEarlier.
func (d *dueQueue) set(key string, at int64, keepEarlier bool) {
	if old, ok := d.due[key]; ok && (old == at || (keepEarlier && old <= at)) {
		return
	}
	d.due[key] = at
	heap.Push(&d.h, dueItem{at, key})
	d.compact()
}

// remove drops key's due.
func (d *dueQueue) remove(key string) {
	if _, ok := d.due[key]; !ok {
		return
	}
	delete(d.due, key)
	if len(d.due) == 0 {
		d.due = map[string]int64{} // a map keeps the buckets of its peak
		d.h = nil
		return
	}
	d.compact()
}

// compact rebuilds the heap from the live dues once stale entries (and
// the keys they hold) outnumber them.
func (d *dueQueue) compact() {
	if len(d.h) <= 2*len(d.due)+1024 {
		return
	}
	h := make(dueHeap, 0, len(d.due))
	for k, t := range d.due {
		h = append(h, dueItem{t, k})
	}
	heap.Init(&h)
	d.h = h
}

// take returns the keys due by now, each once.
func (d *dueQueue) take(now int64) []string {
	var out []string
	for len(d.h) > 0 && d.h[0].at <= now {
		it := heap.Pop(&d.h).(dueItem)
		if at, ok := d.due[it.key]; ok && at == it.at {
			delete(d.due, it.key)
			out = append(out, it.key)
		}
	}
	if len(d.h) == 0 {
		d.h = nil
	}
	return out
}

// Arrived is the store's dispatch of an LMQ entry: every group subscribed
// to lmq (and the wildcard groups of its parent) gets the event.
func (s *Service) Arrived(lmq string) {
	if !message.IsLiteQueue(lmq) {
		return
	}
	var p pending
	s.mu.Lock()
	subs := s.byLMQ[lmq]
	var parent string
	wild := 0
	if len(s.wildcard) > 0 {
		parent, _, _ = message.ParseLiteQueue(lmq)
		wild = len(s.wildcard[parent])
	}
	if len(subs) == 0 && wild == 0 {
		s.mu.Unlock()
		return
	}
	// Most lite topics have one or a few groups: a linear dedup, no map,
	// on the store's dispatch goroutine.
	var buf [4]string
	groups := buf[:0]
	for _, c := range subs {
		if !slices.Contains(groups, c.group) {
			groups = append(groups, c.group)
		}
	}
	for g := range s.wildcard[parent] {
		if !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	for _, g := range groups {
		s.selectLocked(g, lmq, "", &p)
	}
	s.mu.Unlock()
	s.flush(&p)
}

// Dispatch offers lmq to one client of group (an ack moved the group's
// offset, or its order block expired) when the group has not consumed it.
func (s *Service) Dispatch(group, lmq string) {
	if !s.behind(group, lmq) {
		return
	}
	var p pending
	s.mu.Lock()
	s.selectLocked(group, lmq, "", &p)
	s.mu.Unlock()
	s.flush(&p)
}

// DispatchAt dispatches lmq to group at the time (ms) its popped batch
// becomes visible again, unless a later call moves it.
func (s *Service) DispatchAt(group, lmq string, at int64) {
	s.mu.Lock()
	s.blocks.set(group+"\x00"+lmq, at, false)
	s.mu.Unlock()
}

// CancelDispatchAt drops DispatchAt's dispatch: the batch was acked, and
// the ack dispatched what follows it.
func (s *Service) CancelDispatchAt(group, lmq string) {
	s.mu.Lock()
	s.blocks.remove(group + "\x00" + lmq)
	s.mu.Unlock()
}

// candidatesLocked are the clients of group that take lmq.
func (s *Service) candidatesLocked(group, lmq string) []*client {
	var out []*client
	for _, c := range s.byLMQ[lmq] {
		if c.group == group {
			out = append(out, c)
		}
	}
	if len(s.wildcard) > 0 {
		parent, _, _ := message.ParseLiteQueue(lmq)
		if s.wildcard[parent][group] > 0 {
			for _, c := range s.clients {
				if c.wildcard && c.group == group && c.topic == parent {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// selectLocked is selectAndDispatch: the first client of the group, from
// a random start, whose set takes lmq; exclude (a client found blocked)
// and blacklisted ones (not for a wildcard group) only when no other does.
func (s *Service) selectLocked(group, lmq, exclude string, p *pending) {
	cands := s.candidatesLocked(group, lmq)
	if len(cands) == 0 {
		return
	}
	now := s.now()
	start := randStart(len(cands))
	var fallback []*client
	wild := false
	for i := range cands {
		c := cands[(start+i)%len(cands)]
		wild = wild || c.wildcard
		if c.id == exclude {
			fallback = append(fallback, c)
			continue
		}
		if until, ok := s.blacklist[c.id]; ok {
			if until > now {
				if !c.wildcard {
					fallback = append(fallback, c)
				}
				continue
			}
			delete(s.blacklist, c.id)
		}
		if s.offerLocked(c, lmq, p) {
			return
		}
	}
	for _, c := range fallback {
		if s.offerLocked(c, lmq, p) {
			return
		}
	}
	if wild {
		cfg := s.d.Config()
		for _, c := range cands {
			if c.wildcard && c.id != exclude {
				s.scheduleFullLocked(c.id, cfg.LiteEventFullDispatchDelayTimeForWildcardGroup)
			}
		}
	}
}

// offerLocked is tryDispatchToClient: a full set schedules a full dispatch.
func (s *Service) offerLocked(c *client, lmq string, p *pending) bool {
	if c.ev == nil {
		c.ev = newEventSet(s.capacity(c.group), s.now())
	}
	if c.ev.offer(lmq) {
		p.wake = append(p.wake, c.id)
		return true
	}
	delay := s.d.Config().LiteEventFullDispatchDelayTime
	if until, ok := s.blacklist[c.id]; ok && until > s.now() {
		delay += jitter()
	}
	s.scheduleFullLocked(c.id, delay)
	return false
}

func jitter() int64 { return int64(randStart(int(rescheduleJitter.Milliseconds()))) }

// capacity is a client's event capacity: its group's
// lite.sub.client.max.event.cnt, else maxClientEventCount.
func (s *Service) capacity(group string) int {
	if gc, ok := s.d.Groups.Get(group); ok {
		if n := gc.LiteMaxEventCount(); n > 0 {
			return min(n, 1<<16)
		}
	}
	return max(1, s.d.Config().MaxClientEventCount)
}

func (s *Service) scheduleFullLocked(clientID string, delay int64) {
	s.full.set(clientID, s.now()+max(delay, minFullDelay.Milliseconds()), true)
}

// Next is the next lite topic queue the client's pop should read, and
// marks the client active; ok is false when it has no event.
func (s *Service) Next(clientID string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.clients[clientID]
	if c == nil || c.ev == nil {
		return "", false
	}
	c.ev.lastAccess = s.now()
	return c.ev.poll()
}

// Touch marks the client's pop (an access without an event).
func (s *Service) Touch(clientID string) {
	s.mu.Lock()
	if c := s.clients[clientID]; c != nil && c.ev != nil {
		c.ev.lastAccess = s.now()
	}
	s.mu.Unlock()
}

// HasEvents reports whether the client has events waiting.
func (s *Service) HasEvents(clientID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.clients[clientID]
	return c != nil && c.ev != nil && c.ev.size() > 0
}

// EventMode reports enableLiteEventMode.
func (s *Service) EventMode() bool { return s.d.Config().EnableLiteEventMode }

// TriggerDispatch is TRIGGER_LITE_DISPATCH: a full dispatch of one client
// of the group, or of all of them ("" clientID).
func (s *Service) TriggerDispatch(group, clientID string) {
	s.mu.Lock()
	var ids []string
	for _, c := range s.clients {
		if c.group == group && (clientID == "" || c.id == clientID) {
			ids = append(ids, c.id)
		}
	}
	s.mu.Unlock()
	for _, id := range ids {
		s.fullDispatch(id, true)
	}
}

// fullDispatch offers the client every lite topic of its set the group has
// not consumed; it waits (reschedules) while the client may be blocked or
// its set is above the low-water mark, and stops when the set is full.
func (s *Service) fullDispatch(clientID string, force bool) {
	cfg := s.d.Config()
	now := s.now()
	s.mu.Lock()
	c := s.clients[clientID]
	if c == nil {
		s.mu.Unlock()
		return
	}
	if !force && c.ev != nil {
		if s.mayBlock(c.ev, now) {
			s.scheduleFullLocked(clientID, cfg.LiteEventFullDispatchDelayTime+jitter())
			s.mu.Unlock()
			return
		}
		if c.ev.size()*lowWaterMark > c.ev.cap {
			s.scheduleFullLocked(clientID, cfg.LiteEventFullDispatchDelayTime)
			s.mu.Unlock()
			return
		}
	}
	group, topic, wild := c.group, c.topic, c.wildcard
	var set []string
	if !wild {
		set = make([]string, 0, len(c.set))
		for q := range c.set {
			set = append(set, q)
		}
	}
	s.mu.Unlock()
	if wild {
		s.d.Store.ForEachLMQ(func(name string, _ int64) bool {
			if message.LiteQueueOf(name, topic) {
				set = append(set, name)
			}
			return len(set) < int(cfg.MaxLiteSubscriptionCount)
		})
	}
	var todo []string
	for _, q := range set {
		if s.behind(group, q) {
			todo = append(todo, q)
		}
	}
	if len(todo) == 0 {
		return
	}
	var p pending
	s.mu.Lock()
	if c = s.clients[clientID]; c != nil {
		if c.ev == nil {
			c.ev = newEventSet(s.capacity(c.group), now)
		}
		for i, q := range todo {
			if !c.ev.offer(q) {
				s.scheduleFullLocked(clientID, cfg.LiteEventFullDispatchDelayTime)
				break
			}
			if (i+1)%wakeEvery == 0 {
				p.wake = append(p.wake, clientID)
			}
		}
		p.wake = append(p.wake, clientID)
	}
	s.mu.Unlock()
	s.flush(&p)
}

// mayBlock: the client has not popped for long, or has events it does not take.
func (s *Service) mayBlock(e *eventSet, now int64) bool {
	idle := now - e.lastAccess
	return idle > clientLongPolling.Milliseconds() || (e.size() > 0 && idle > clientInactive.Milliseconds())
}

// scan takes the events of clients that stopped popping, blacklists them
// for a while and gives their events to the group's others (to the same
// client, in a new set, when it has none).
func (s *Service) scan(now int64) {
	var p pending
	s.mu.Lock()
	for id, until := range s.blacklist {
		if until <= now {
			delete(s.blacklist, id)
		}
	}
	for _, c := range s.clients {
		if c.ev == nil || !s.mayBlock(c.ev, now) {
			continue
		}
		evs := c.ev.drain()
		c.ev = nil
		s.blacklist[c.id] = now + blacklistFor.Milliseconds()
		for _, q := range evs {
			s.selectLocked(c.group, q, c.id, &p) // back to it when no other client takes them
		}
	}
	s.mu.Unlock()
	s.flush(&p)
}

// tick runs what is due: expired order blocks and full dispatches.
func (s *Service) tick(now int64) {
	s.mu.Lock()
	blocks := s.blocks.take(now)
	fulls := s.full.take(now)
	s.mu.Unlock()
	for _, k := range blocks {
		for i := 0; i < len(k); i++ {
			if k[i] == 0 {
				s.Dispatch(k[:i], k[i+1:])
				break
			}
		}
	}
	for _, id := range fulls {
		s.fullDispatch(id, false)
	}
}

// tickEvery is the maintenance loop's period: order blocks end and full
// dispatches run within it.
const tickEvery = 100 * time.Millisecond

// Run is the maintenance loop, until quit closes.
func (s *Service) Run(quit <-chan struct{}) {
	t := time.NewTicker(tickEvery)
	defer t.Stop()
	var lastScan, lastExpire, lastTTL int64
	for {
		select {
		case <-quit:
			return
		case <-t.C:
		}
		now := s.now()
		cfg := s.d.Config()
		s.tick(now)
		if now-lastScan >= cfg.LiteEventCheckInterval {
			lastScan = now
			s.scan(now)
		}
		if now-lastExpire >= cfg.LiteSubscriptionCheckInterval {
			lastExpire = now
			s.expire(now)
		}
		if now-s.started >= cfg.MinLiteTTl && now-lastTTL >= cfg.LiteTtlCheckInterval {
			lastTTL = now
			s.cleanExpired(now, quit)
		}
	}
}
