package lite

// The subscription registry (Apache 5.5 LiteSubscriptionRegistryImpl):
// which client of which group wants which lite topics of a parent, kept in
// memory only; the proxy pushes it with LITE_SUBSCRIPTION_CTL and the SDK
// refreshes it every 30 s with COMPLETE_ADD, so a restart loses nothing a
// client does not send again.

import (
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// Action is a LITE_SUBSCRIPTION_CTL entry's action (LiteSubscriptionAction).
type Action uint8

const (
	PartialAdd Action = iota
	PartialRemove
	CompleteAdd
	CompleteRemove
)

func (a Action) String() string {
	switch a {
	case PartialAdd:
		return "PARTIAL_ADD"
	case PartialRemove:
		return "PARTIAL_REMOVE"
	case CompleteAdd:
		return "COMPLETE_ADD"
	case CompleteRemove:
		return "COMPLETE_REMOVE"
	}
	return "UNKNOWN"
}

// OffsetType is an OffsetOption's type.
type OffsetType uint8

const (
	OffsetPolicy OffsetType = iota + 1
	OffsetValue
	OffsetTailN
	OffsetTimestamp
)

// Policies of an OffsetPolicy option.
const (
	PolicyLast = 0
	PolicyMin  = 1
	PolicyMax  = 2
)

// OffsetOption is where a PARTIAL_ADD starts its lite topics.
type OffsetOption struct {
	Type  OffsetType
	Value int64
}

// Entry is one subscription change (LiteSubscriptionDTO).
type Entry struct {
	Action   Action
	ClientID string
	Group    string
	Topic    string // the parent topic
	Lite     []string
	Offset   *OffsetOption
	Version  int64
}

// Errors of the registry.
var (
	ErrQuota = errors.New("lite: subscription quota exceeded")
	// maxLMQLen bounds a lite topic's queue name a client may make the
	// registry hold (the store's topic bound).
	maxLMQLen = 255
)

// Sizes and times of the dispatcher, Apache's constants (LiteEventDispatcher).
const (
	clientInactive    = 10 * time.Second
	clientLongPolling = 35 * time.Second
	blacklistFor      = 10 * time.Second
	lowWaterMark      = 5 // a full dispatch waits while a set is above 1/5 full
	wakeEvery         = 10
	minFullDelay      = 50 * time.Millisecond
	rescheduleJitter  = 15 * time.Second
)

// client is one client's subscription (LiteSubscription) and events.
type client struct {
	id, group, topic string
	set              map[string]struct{} // lmq names
	updated          int64               // ms: the last time its set was touched
	conn             Conn                // where its last ADD came from
	wildcard         bool
	ev               *eventSet // nil until its first event
}

// Service is the registry and the dispatcher.
type Service struct {
	d   Deps
	log zerolog.Logger

	mu        sync.Mutex
	clients   map[string]*client        // clientID →
	byLMQ     map[string][]*client      // lmq → subscribers: a slice, as most have one or few
	wildcard  map[string]map[string]int // parent → wildcard group → clients
	active    int64                     // Σ |client sets|
	blacklist map[string]int64          // clientID → until (ms)
	full      dueQueue                  // clientIDs due a full dispatch
	blocks    dueQueue                  // "group\x00lmq" due a dispatch (order block expiry)
	empty     map[string]int            // lmq → TTL scans seen empty in a row
	started   int64                     // ms: the TTL waits minLiteTTl from here
}

// New makes the service.
func New(d Deps, log zerolog.Logger) *Service {
	s := &Service{d: d, log: log, clients: map[string]*client{}, byLMQ: map[string][]*client{},
		wildcard: map[string]map[string]int{}, blacklist: map[string]int64{}, empty: map[string]int{}}
	s.full.init()
	s.blocks.init()
	s.started = s.now()
	return s
}

func (s *Service) now() int64 {
	if s.d.Now != nil {
		return s.d.Now()
	}
	return time.Now().UnixMilli()
}

// pending are what a change sends and wakes once the mutex is released.
type pending struct {
	notify []notice
	wake   []string
	resets []reset
	forget [][2]string // group, lmq
}

type notice struct {
	conn                Conn
	lite, group, client string
}

type reset struct {
	group, lmq string
	offset     int64
}

// Ctl applies a LITE_SUBSCRIPTION_CTL body (LiteSubscriptionCtlProcessor):
// entries with a blank client, group or topic are skipped; the first
// refusal ends the request (the entries before it stay applied, as
// Apache's). conn is where the request came from.
func (s *Service) Ctl(conn Conn, entries []Entry) error {
	if len(entries) == 0 {
		return remoting.Refuse(remoting.IllegalOperation, nil, "LiteSubscriptionCtlRequestBody is empty.")
	}
	for i := range entries {
		e := &entries[i]
		if isBlank(e.ClientID) || isBlank(e.Group) || isBlank(e.Topic) {
			continue
		}
		var err error
		switch e.Action {
		case PartialAdd:
			err = s.partialAdd(conn, e)
		case PartialRemove:
			s.partialRemove(e)
		case CompleteAdd:
			err = s.completeAdd(conn, e)
		case CompleteRemove:
			s.RemoveClient(e.ClientID)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
		default:
			return false
		}
	}
	return true
}

var errNotAllowed = remoting.Refuse(remoting.IllegalOperation, nil,
	"java.lang.IllegalStateException: Consumer group is not allowed to consume.")

// consumable refuses an ADD for a group that is missing or may not consume.
func (s *Service) consumable(group string) (wildcard bool, err error) {
	gc, ok := s.d.Groups.Get(group)
	if !ok || !gc.ConsumeEnable {
		return false, errNotAllowed
	}
	return gc.LiteWildcard(), nil
}

// lmqsOf are the LMQ names of e's lite topics that may be held: non-empty,
// no '$', within the name bound; duplicates once.
func lmqsOf(e *Entry) []string {
	out := make([]string, 0, len(e.Lite))
	seen := make(map[string]struct{}, len(e.Lite))
	for _, l := range e.Lite {
		q := message.LiteQueue(e.Topic, l)
		if q == "" || len(q) > maxLMQLen {
			continue
		}
		if _, _, ok := message.ParseLiteQueue(q); !ok {
			continue
		}
		if _, dup := seen[q]; dup {
			continue
		}
		seen[q] = struct{}{}
		out = append(out, q)
	}
	return out
}

// activeHere is isSubscriptionActive: this broker owns the lite topic, or
// its LMQ holds messages here.
func (s *Service) activeHere(topic, lmq string) bool {
	if s.d.Store.MaxOffset(lmq, 0) > 0 {
		return true
	}
	if s.d.Owner == nil {
		return true
	}
	_, l, _ := message.ParseLiteQueue(lmq)
	return s.d.Owner(topic, l)
}

func quotaRefusal(max int64) error {
	return remoting.Refuse(remoting.LiteSubscriptionQuotaExceeded, ErrQuota,
		"org.apache.rocketmq.broker.lite.LiteQuotaException: lite subscription quota exceeded %d", max)
}

// clientLocked is c's subscription, made when absent (its group and topic
// are the first seen, as Apache's); nil when the broker holds as many
// clients as pairs allowed. s.mu held.
func (s *Service) clientLocked(e *Entry, conn Conn, max int64) *client {
	c := s.clients[e.ClientID]
	if c == nil {
		if int64(len(s.clients)) >= max {
			return nil
		}
		c = &client{id: e.ClientID, group: e.Group, topic: e.Topic, set: map[string]struct{}{}, updated: s.now()}
		s.clients[e.ClientID] = c
	}
	if conn != nil {
		c.conn = conn
	}
	return c
}

func (s *Service) partialAdd(conn Conn, e *Entry) error {
	wild, err := s.consumable(e.Group)
	if err != nil {
		return err
	}
	if wild {
		return remoting.Refuse(remoting.IllegalOperation, nil,
			"java.lang.IllegalStateException: subscribe lite operation is not supported for this group")
	}
	cfg := s.d.Config()
	lmqs := lmqsOf(e)
	act := lmqs[:0]
	for _, q := range lmqs {
		if s.activeHere(e.Topic, q) {
			act = append(act, q)
		}
	}
	gc, _ := s.d.Groups.Get(e.Group)
	exclusive, resetOnEvict := gc != nil && gc.LiteExclusive(), gc != nil && gc.LiteResetOnExclusive()
	var p pending
	s.mu.Lock()
	// Apache checks the count before the request only; a request may not
	// take the broker past it either, so a forged body cannot.
	if s.active >= cfg.MaxLiteSubscriptionCount || s.active+int64(len(act)) > cfg.MaxLiteSubscriptionCount {
		s.mu.Unlock()
		return quotaRefusal(cfg.MaxLiteSubscriptionCount)
	}
	c := s.clientLocked(e, conn, cfg.MaxLiteSubscriptionCount)
	if c == nil {
		s.mu.Unlock()
		return quotaRefusal(cfg.MaxLiteSubscriptionCount)
	}
	for _, q := range act {
		s.addLocked(c, q)
		if exclusive {
			s.evictOthersLocked(c, q, resetOnEvict, &p)
		}
		if e.Offset != nil {
			if off, ok := s.resetTarget(e.Group, q, e.Offset); ok {
				p.resets = append(p.resets, reset{e.Group, q, off})
			}
		}
		s.registeredLocked(c, q, &p)
	}
	s.mu.Unlock()
	s.flush(&p)
	return nil
}

// evictOthersLocked drops q from every other client of c's group
// (Exclusive): Apache also evicts c itself when it re-adds a topic it
// holds, which leaves its registry inconsistent; rocketgo does not.
func (s *Service) evictOthersLocked(c *client, q string, resetOff bool, p *pending) {
	_, lite, _ := message.ParseLiteQueue(q)
	for _, o := range slices.Clone(s.byLMQ[q]) { // removeLocked reorders the list
		if o.group != c.group || o == c {
			continue
		}
		s.removeLocked(o, q)
		if len(o.set) == 0 {
			s.dropLocked(o, p)
		}
		if o.conn != nil {
			p.notify = append(p.notify, notice{o.conn, lite, o.group, o.id})
		}
		if resetOff {
			p.resets = append(p.resets, reset{c.group, q, 0})
		}
	}
}

// resetTarget is where an offset option moves the group's offset of q
// (resetOffset); ok false: nowhere.
func (s *Service) resetTarget(group, q string, o *OffsetOption) (int64, bool) {
	cur, has := s.d.Offsets.Query(group, q, 0)
	if !has {
		cur = -1
	}
	var to int64
	switch o.Type {
	case OffsetPolicy:
		switch o.Value {
		case PolicyMin:
			to = 0
		case PolicyMax:
			to = s.d.Store.MaxOffset(q, 0)
		default:
			return 0, false
		}
	case OffsetValue:
		to = o.Value
	case OffsetTailN:
		if cur < 0 {
			return 0, false
		}
		to = max(0, cur-max(0, o.Value))
	default:
		return 0, false
	}
	return to, to != cur
}

func (s *Service) partialRemove(e *Entry) {
	gc, _ := s.d.Groups.Get(e.Group)
	resetOff := gc != nil && gc.LiteResetOnUnsubscribe()
	var p pending
	s.mu.Lock()
	if c := s.clients[e.ClientID]; c != nil {
		for _, q := range lmqsOf(e) {
			if _, ok := c.set[q]; !ok {
				continue
			}
			s.removeLocked(c, q)
			c.updated = s.now()
			if resetOff {
				p.resets = append(p.resets, reset{e.Group, q, 0})
			}
		}
	}
	s.mu.Unlock()
	s.flush(&p)
}

// completeAdd makes the client's set exactly the entry's active lite
// topics: no exclusivity, no offset option. The pairs it adds count
// against the quota (Apache does not check here; a forged body must not
// grow the registry without bound).
func (s *Service) completeAdd(conn Conn, e *Entry) error {
	wild, err := s.consumable(e.Group)
	if err != nil {
		return err
	}
	cfg := s.d.Config()
	var p pending
	if wild {
		s.mu.Lock()
		c := s.clientLocked(e, conn, cfg.MaxLiteSubscriptionCount)
		if c == nil {
			s.mu.Unlock()
			return quotaRefusal(cfg.MaxLiteSubscriptionCount)
		}
		if !c.wildcard {
			c.wildcard = true
			gs := s.wildcard[c.topic]
			if gs == nil {
				gs = map[string]int{}
				s.wildcard[c.topic] = gs
			}
			gs[c.group]++
			s.scheduleFullLocked(c.id, cfg.LiteEventFullDispatchDelayTimeForWildcardGroup)
		}
		c.updated = s.now()
		s.mu.Unlock()
		return nil
	}
	want := map[string]struct{}{}
	for _, q := range lmqsOf(e) {
		if s.activeHere(e.Topic, q) {
			want[q] = struct{}{}
		}
	}
	s.mu.Lock()
	c := s.clients[e.ClientID]
	grow := int64(len(want))
	if c != nil {
		for q := range want {
			if _, ok := c.set[q]; ok {
				grow--
			}
		}
	}
	if grow > 0 && s.active+grow > cfg.MaxLiteSubscriptionCount {
		s.mu.Unlock()
		return quotaRefusal(cfg.MaxLiteSubscriptionCount)
	}
	if c = s.clientLocked(e, conn, cfg.MaxLiteSubscriptionCount); c == nil {
		s.mu.Unlock()
		return quotaRefusal(cfg.MaxLiteSubscriptionCount)
	}
	for q := range c.set {
		if _, ok := want[q]; !ok {
			s.removeLocked(c, q)
		}
	}
	for q := range want {
		if _, ok := c.set[q]; !ok {
			s.addLocked(c, q)
			s.registeredLocked(c, q, &p)
		}
	}
	s.mu.Unlock()
	s.flush(&p)
	return nil
}

// RemoveClient is COMPLETE_REMOVE: the client's subscription and events
// go; its pending events go to the group's other clients.
func (s *Service) RemoveClient(clientID string) {
	var p pending
	s.mu.Lock()
	if c := s.clients[clientID]; c != nil {
		s.dropLocked(c, &p)
	}
	s.mu.Unlock()
	s.flush(&p)
}

// addLocked puts q into c's set.
func (s *Service) addLocked(c *client, q string) {
	c.updated = s.now()
	if _, ok := c.set[q]; ok {
		return
	}
	c.set[q] = struct{}{}
	s.byLMQ[q] = append(s.byLMQ[q], c)
	s.active++
}

// removeLocked takes q out of c's set.
func (s *Service) removeLocked(c *client, q string) {
	if _, ok := c.set[q]; !ok {
		return
	}
	delete(c.set, q)
	s.active--
	subs := s.byLMQ[q]
	for i, o := range subs {
		if o == c {
			subs[i] = subs[len(subs)-1]
			subs = subs[:len(subs)-1]
			break
		}
	}
	if len(subs) == 0 {
		delete(s.byLMQ, q)
	} else {
		s.byLMQ[q] = subs
	}
}

// dropLocked removes c entirely and hands its events to the group's others.
func (s *Service) dropLocked(c *client, p *pending) {
	for q := range c.set {
		s.removeLocked(c, q)
	}
	if c.wildcard {
		if gs := s.wildcard[c.topic]; gs != nil {
			if gs[c.group]--; gs[c.group] <= 0 {
				delete(gs, c.group)
			}
			if len(gs) == 0 {
				delete(s.wildcard, c.topic)
			}
		}
	}
	delete(s.clients, c.id)
	delete(s.blacklist, c.id)
	s.full.remove(c.id)
	if c.ev != nil {
		evs := c.ev.drain()
		c.ev = nil
		for _, q := range evs {
			s.selectLocked(c.group, q, c.id, p)
		}
	}
}

// registeredLocked is onRegister: an LMQ with messages the group has not
// consumed yet is offered to the group at once.
func (s *Service) registeredLocked(c *client, q string, p *pending) {
	if s.behind(c.group, q) {
		s.selectLocked(c.group, q, "", p)
	}
}

// behind reports whether group has not consumed all of q.
func (s *Service) behind(group, q string) bool {
	max := s.d.Store.MaxOffset(q, 0)
	if max <= 0 {
		return false
	}
	off, ok := s.d.Offsets.Query(group, q, 0)
	return !ok || off < max
}

// flush does what a change left to do once the mutex is released.
func (s *Service) flush(p *pending) {
	for _, r := range p.resets {
		s.d.Offsets.Commit(r.group, r.lmq, 0, r.offset)
		if s.d.Orders != nil {
			s.d.Orders.ForgetLite(r.group, r.lmq)
		}
	}
	for _, f := range p.forget {
		if s.d.Orders != nil {
			s.d.Orders.ForgetLite(f[0], f[1])
		}
	}
	for _, n := range p.notify {
		req := &remoting.Command{Code: remoting.NotifyUnsubscribeLite, Language: remoting.LangJava,
			Version: remoting.ServerVersion(), ExtFields: []remoting.Field{
				{Key: "liteTopic", Value: n.lite}, {Key: "consumerGroup", Value: n.group}, {Key: "clientId", Value: n.client}}}
		if err := n.conn.Send(req); err != nil {
			s.log.Debug().Err(err).Str("clientId", n.client).Msg("notify unsubscribe lite not sent")
		}
	}
	if s.d.Wake != nil {
		for _, id := range p.wake {
			s.d.Wake(id)
		}
	}
}

// expireLocked drops the clients whose sets were not touched within
// liteSubscriptionCheckTimeoutMills.
func (s *Service) expire(now int64) {
	timeout := s.d.Config().LiteSubscriptionCheckTimeoutMills
	var p pending
	s.mu.Lock()
	for _, c := range s.clients {
		if now-c.updated > timeout {
			s.log.Info().Str("clientId", c.id).Str("consumerGroup", c.group).Msg("lite subscription expired")
			s.dropLocked(c, &p)
		}
	}
	s.mu.Unlock()
	s.flush(&p)
}

// CleanLMQ forgets every subscription of lmq, unnotified (a deleted lite topic).
func (s *Service) CleanLMQ(lmq string) {
	s.mu.Lock()
	for _, c := range slices.Clone(s.byLMQ[lmq]) { // removeLocked reorders the list
		s.removeLocked(c, lmq)
		if c.ev != nil {
			c.ev.remove(lmq)
		}
	}
	delete(s.empty, lmq)
	s.mu.Unlock()
}

// ClientSet is the client's lite topic queue names (event mode off), at
// most limit; ok is false for an unknown client.
func (s *Service) ClientSet(clientID string, limit int) (set []string, group, topic string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.clients[clientID]
	if c == nil {
		return nil, "", "", false
	}
	for q := range c.set {
		if len(set) >= limit {
			break
		}
		set = append(set, q)
	}
	return set, c.group, c.topic, true
}

// Counts are the registry's sizes (GET_BROKER_LITE_INFO).
func (s *Service) Counts() (subscriptions int64, events int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.clients {
		if c.ev != nil {
			events++
		}
	}
	return s.active, events
}

// randStart is where a round over n candidates starts.
func randStart(n int) int {
	if n <= 1 {
		return 0
	}
	return rand.IntN(n)
}
