package tables

import (
	"sort"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/internal/logging"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// Subscription is one consumer group's filter for one topic, as the
// heartbeat announced it.
type Subscription struct {
	Topic          string
	SubString      string
	ExpressionType string // TAG or SQL92 (empty means TAG)
	Tags           []string
	// Codes are the tag hashes computed here from Tags (Java String.hashCode),
	// not the client's codeSet: the Go client hashes UTF-8 bytes instead.
	Codes      map[int64]struct{}
	SubVersion int64
}

// NewTagSubscription parses a TAG expression: "*" or "" means all; otherwise
// tags separated by "||".
func NewTagSubscription(topic, expr string, subVersion int64) *Subscription {
	s := &Subscription{Topic: topic, SubString: expr, ExpressionType: "TAG", SubVersion: subVersion}
	if expr == "" || expr == "*" {
		s.SubString = "*"
		return s
	}
	s.Tags = append(s.Tags, splitTags(expr)...)
	s.finish()
	return s
}

func (s *Subscription) finish() {
	s.Codes = make(map[int64]struct{}, len(s.Tags))
	for _, t := range s.Tags {
		s.Codes[message.TagsHash(t)] = struct{}{}
	}
}

// All reports whether the subscription matches every message.
func (s *Subscription) All() bool { return s.SubString == "*" || s.SubString == "" }

// MatchTagsCode is the ConsumeQueue-level tag filter.
func (s *Subscription) MatchTagsCode(code int64) bool {
	if s.All() {
		return true
	}
	_, ok := s.Codes[code]
	return ok
}

// MatchTag is the exact check behind MatchTagsCode: tag hashes collide
// ("Aa" and "BB"), tag strings do not. A message without TAGS matches only "*".
func (s *Subscription) MatchTag(tag []byte) bool {
	if s.All() {
		return true
	}
	for _, t := range s.Tags {
		if t == string(tag) {
			return true
		}
	}
	return false
}

func splitTags(expr string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(expr); i++ {
		if i == len(expr) || (expr[i] == '|' && i+1 < len(expr) && expr[i+1] == '|') {
			if t := trimSpace(expr[start:i]); t != "" {
				out = append(out, t)
			}
			if i < len(expr) {
				i++
			}
			start = i + 1
		}
	}
	return out
}

func trimSpace(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// ConsumerInfo is what one heartbeat says about one consumer group.
type ConsumerInfo struct {
	Group            string
	ConsumeType      string
	MessageModel     string
	ConsumeFromWhere string
	Subscriptions    []*Subscription
}

// clientChannel is one client connection in a group.
type clientChannel struct {
	conn       *remoting.Conn
	clientID   string
	language   remoting.LanguageCode
	version    int32
	lastUpdate time.Time
	// staleSub: a pull on this connection was refused as
	// SUBSCRIPTION_NOT_LATEST; its next lite heartbeat answers
	// IS_SUB_CHANGE=true (see MarkSubscriptionStale).
	staleSub bool
}

type consumerGroup struct {
	info     ConsumerInfo
	subs     map[string]*Subscription
	channels map[uint64]*clientChannel // by Conn.ID
}

// maxPrints bounds the fingerprints kept (group names come from clients).
const maxPrints = 100_000

// Clients is the registry of connected producers and consumers, by group.
// Registrations come from heartbeats and end on UNREGISTER_CLIENT, when the
// connection closes, or channelExpiredTimeout after the last heartbeat.
type Clients struct {
	log     zerolog.Logger
	expired time.Duration

	mu        sync.RWMutex
	consumers map[string]*consumerGroup
	producers map[string]map[uint64]*clientChannel
	// prints is each consumer group's last heartbeat fingerprint (0 for a
	// heartbeat without), as Apache's consumerGroupHeartbeatTable: it
	// outlives the group's connections (a client reconnecting with the same
	// fingerprint has not changed).
	prints map[string]int32
}

func NewClients(expired time.Duration, log zerolog.Logger) *Clients {
	return &Clients{
		log:       log,
		expired:   expired,
		consumers: make(map[string]*consumerGroup),
		producers: make(map[string]map[uint64]*clientChannel),
		prints:    make(map[string]int32),
	}
}

// RegisterConsumer records a heartbeat's consumer group. When the group's set
// of connections or its subscriptions changed, every member is told to
// rebalance (NOTIFY_CONSUMER_IDS_CHANGED), as Apache's registerConsumer does.
func (cs *Clients) RegisterConsumer(c *remoting.Conn, clientID string, lang remoting.LanguageCode, version int32,
	info ConsumerInfo, notify bool) {
	cs.RegisterConsumerV2(c, clientID, lang, version, info, notify, 0, false)
}

// RegisterConsumerV2 is RegisterConsumer for a heartbeat with a fingerprint
// (Apache's heartBeatV2): it reports whether the group's last fingerprint
// differed (IS_SUB_CHANGE), and withoutSub keeps the group's subscriptions
// (the client sent none: its fingerprint says they did not change).
func (cs *Clients) RegisterConsumerV2(c *remoting.Conn, clientID string, lang remoting.LanguageCode, version int32,
	info ConsumerInfo, notify bool, fingerprint int32, withoutSub bool) (subChange bool) {
	now := time.Now()
	cs.mu.Lock()
	g := cs.consumers[info.Group]
	if g == nil {
		g = &consumerGroup{subs: map[string]*Subscription{}, channels: map[uint64]*clientChannel{}}
		cs.consumers[info.Group] = g
	}
	old, printed := cs.prints[info.Group]
	subChange = printed && old != fingerprint
	if printed || len(cs.prints) < maxPrints {
		cs.prints[info.Group] = fingerprint
	}
	if withoutSub {
		info.Subscriptions = g.info.Subscriptions
	}
	changed := false
	ch := g.channels[c.ID]
	if ch == nil {
		ch = &clientChannel{conn: c}
		g.channels[c.ID] = ch
		changed = true
	}
	ch.clientID, ch.language, ch.version, ch.lastUpdate = clientID, lang, version, now
	if ch.staleSub && fingerprint != 0 {
		subChange = true
	}
	ch.staleSub = false
	g.info = info
	if withoutSub {
		// nothing to compare: the subscriptions stay
	} else if subsChanged(g.subs, info.Subscriptions) {
		changed = true
		g.subs = make(map[string]*Subscription, len(info.Subscriptions))
		for _, s := range info.Subscriptions {
			g.subs[s.Topic] = s
		}
	} else {
		// Same expressions: keep the newest subVersion (Java bumps it on
		// every rebalance and pulls with it), as Apache's updateSubscription.
		for _, s := range info.Subscriptions {
			if o := g.subs[s.Topic]; o != nil && s.SubVersion > o.SubVersion {
				g.subs[s.Topic] = s
			}
		}
	}
	var members []*remoting.Conn
	if changed && notify {
		members = groupConns(g)
	}
	cs.mu.Unlock()
	cs.notify(info.Group, members)
	return subChange
}

func subsChanged(old map[string]*Subscription, subs []*Subscription) bool {
	if len(old) != len(subs) {
		return true
	}
	for _, s := range subs {
		o, ok := old[s.Topic]
		if !ok || o.SubString != s.SubString || o.ExpressionType != s.ExpressionType {
			return true
		}
	}
	return false
}

// MarkSubscriptionStale records that a pull on connection connID was
// refused as SUBSCRIPTION_NOT_LATEST for group. The 5.x Java client's
// heartbeat V2 can lose the heartbeat that carries the subVersion it bumps
// on a rebalance (it only tries the heartbeat lock, and a periodic lite
// heartbeat may hold it); its later heartbeats are lite, since the
// fingerprint ignores subVersion, and the broker never learns the new
// version: pulls are refused until another member sends a newer one,
// against Apache as against rocketgo. Answering that connection's next V2
// heartbeat IS_SUB_CHANGE=true makes the client send its subscriptions
// again on the heartbeat after it.
func (cs *Clients) MarkSubscriptionStale(group string, connID uint64) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if g := cs.consumers[group]; g != nil {
		if ch := g.channels[connID]; ch != nil {
			ch.staleSub = true
		}
	}
}

// RegisterProducer records a heartbeat's producer group.
func (cs *Clients) RegisterProducer(c *remoting.Conn, clientID, group string, lang remoting.LanguageCode, version int32) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	m := cs.producers[group]
	if m == nil {
		m = make(map[uint64]*clientChannel)
		cs.producers[group] = m
	}
	m[c.ID] = &clientChannel{conn: c, clientID: clientID, language: lang, version: version, lastUpdate: time.Now()}
}

// UnregisterConsumer removes one connection from a consumer group.
func (cs *Clients) UnregisterConsumer(c *remoting.Conn, group string) {
	cs.mu.Lock()
	members := cs.removeConsumerLocked(group, c.ID)
	cs.mu.Unlock()
	cs.notify(group, members)
}

// UnregisterProducer removes one connection from a producer group.
func (cs *Clients) UnregisterProducer(c *remoting.Conn, group string) {
	cs.mu.Lock()
	if m := cs.producers[group]; m != nil {
		delete(m, c.ID)
		if len(m) == 0 {
			delete(cs.producers, group)
		}
	}
	cs.mu.Unlock()
}

// ConnClosed drops every registration made on c and notifies the groups it left.
func (cs *Clients) ConnClosed(c *remoting.Conn) {
	cs.dropWhere(func(id uint64, _ *clientChannel) bool { return id == c.ID })
}

// Expire drops registrations not refreshed within channelExpiredTimeout and
// closes their connections, as Apache's ClientHousekeepingService does.
func (cs *Clients) Expire(now time.Time) {
	cs.dropWhere(func(_ uint64, ch *clientChannel) bool {
		if now.Sub(ch.lastUpdate) > cs.expired {
			cs.log.Info().Str("clientId", ch.clientID).Str("remote", ch.conn.Remote).Msg("client heartbeat expired")
			ch.conn.Close()
			return true
		}
		return false
	})
}

func (cs *Clients) dropWhere(drop func(uint64, *clientChannel) bool) {
	type notice struct {
		group   string
		members []*remoting.Conn
	}
	var notices []notice
	cs.mu.Lock()
	for name, g := range cs.consumers {
		for id, ch := range g.channels {
			if drop(id, ch) {
				notices = append(notices, notice{name, cs.removeConsumerLocked(name, id)})
			}
		}
	}
	for name, m := range cs.producers {
		for id, ch := range m {
			if drop(id, ch) {
				delete(m, id)
			}
		}
		if len(m) == 0 {
			delete(cs.producers, name)
		}
	}
	cs.mu.Unlock()
	for _, n := range notices {
		cs.notify(n.group, n.members)
	}
}

// removeConsumerLocked removes a connection and returns the remaining members
// to notify (nil if nothing changed).
func (cs *Clients) removeConsumerLocked(group string, id uint64) []*remoting.Conn {
	g := cs.consumers[group]
	if g == nil {
		return nil
	}
	if _, ok := g.channels[id]; !ok {
		return nil
	}
	delete(g.channels, id)
	if len(g.channels) == 0 {
		delete(cs.consumers, group)
		return nil
	}
	return groupConns(g)
}

func groupConns(g *consumerGroup) []*remoting.Conn {
	out := make([]*remoting.Conn, 0, len(g.channels))
	for _, ch := range g.channels {
		out = append(out, ch.conn)
	}
	return out
}

// notify sends NOTIFY_CONSUMER_IDS_CHANGED (one-way) to each member.
func (cs *Clients) notify(group string, members []*remoting.Conn) {
	for _, c := range members {
		req := remoting.NewRequest(remoting.NotifyConsumerIDsChanged, map[string]string{"consumerGroup": group}, nil)
		if err := c.Send(req); err != nil {
			cs.log.Debug().Err(err).Str("consumerGroup", group).Str("remote", c.Remote).Msg("notify consumer ids changed")
		}
	}
}

// ConsumerIDs returns the sorted, de-duplicated client ids of a group's live members.
func (cs *Clients) ConsumerIDs(group string) []string {
	cs.mu.RLock()
	g := cs.consumers[group]
	var ids []string
	if g != nil {
		seen := make(map[string]struct{}, len(g.channels))
		for _, ch := range g.channels {
			if _, dup := seen[ch.clientID]; !dup {
				seen[ch.clientID] = struct{}{}
				ids = append(ids, ch.clientID)
			}
		}
	}
	cs.mu.RUnlock()
	sort.Strings(ids)
	return ids
}

// Subscription returns a group's subscription for a topic. groupKnown is false
// when the group has no live member at all.
func (cs *Clients) Subscription(group, topic string) (sub *Subscription, groupKnown bool) {
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	g := cs.consumers[group]
	if g == nil {
		return nil, false
	}
	return g.subs[topic], true
}

// ConsumerInfo returns a group's last heartbeat data.
func (cs *Clients) ConsumerInfo(group string) (ConsumerInfo, bool) {
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	g := cs.consumers[group]
	if g == nil {
		return ConsumerInfo{}, false
	}
	return g.info, true
}

// Heartbeat is HEART_BEAT's body (HeartbeatData) as the broker uses it, with
// the request's language and version.
type Heartbeat struct {
	ClientID  string
	Language  remoting.LanguageCode
	Version   int32
	Producers []string // producer group names
	Consumers []HeartbeatConsumer
	// Fingerprint and WithoutSub are a 5.x client's heartbeat V2
	// (heartbeatFingerprint, isWithoutSub); 0 and false for a full heartbeat.
	Fingerprint int32
	WithoutSub  bool
}

// HeartbeatConsumer is one consumer group of a heartbeat (ConsumerData).
type HeartbeatConsumer struct {
	Group            string
	ConsumeType      string
	MessageModel     string
	ConsumeFromWhere string
	Subscriptions    []SubscriptionData
}

// SubscriptionData is one subscription of a heartbeat's consumer group; the
// client's tagsSet and codeSet are not used: tags are parsed from SubString
// and hashed here (clients disagree on the hash).
type SubscriptionData struct {
	Topic          string
	SubString      string
	ExpressionType string // TAG (or empty) or SQL92
	SubVersion     int64
}

// HeartbeatResult says what a heartbeat registered and what it dropped.
type HeartbeatResult struct {
	Consumers, Producers int      // groups registered
	Dropped              int      // groups and subscriptions dropped for their names
	Named                []string // the first few dropped, for a log line
	// SubChange is IS_SUB_CHANGE: always true for a heartbeat without a
	// fingerprint; for one with, whether a group's fingerprint changed.
	SubChange bool
}

// DropInvalid removes the producer and consumer groups that break the group
// rule and the subscriptions whose topic breaks the topic rule. Apache skips
// a consumer group it cannot create the same way; rocketgo also drops the
// rest, which could only ever name groups and topics that cannot exist.
// dropped counts what went; the first few are named (shortened) for a log.
func (hb *Heartbeat) DropInvalid() (dropped int, named []string) {
	drop := func(what string) {
		if dropped++; len(named) < 4 {
			named = append(named, logging.Cut(what))
		}
	}
	producers := hb.Producers[:0]
	for _, g := range hb.Producers {
		if message.ValidGroupName(g) != nil {
			drop("producerGroup " + g)
			continue
		}
		producers = append(producers, g)
	}
	hb.Producers = producers
	consumers := hb.Consumers[:0]
	for _, cd := range hb.Consumers {
		if message.ValidGroupName(cd.Group) != nil {
			drop("consumerGroup " + cd.Group)
			continue
		}
		subs := cd.Subscriptions[:0]
		for _, sd := range cd.Subscriptions {
			if message.ValidTopicName(sd.Topic) != nil {
				drop("subscription topic " + sd.Topic)
				continue
			}
			subs = append(subs, sd)
		}
		cd.Subscriptions = subs
		consumers = append(consumers, cd)
	}
	hb.Consumers = consumers
	return dropped, named
}

// ConsumerConn is the connection of clientID in group (ConsumerManager.findChannel),
// for a request the broker relays to that client.
func (cs *Clients) ConsumerConn(group, clientID string) (*remoting.Conn, bool) {
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	if g := cs.consumers[group]; g != nil {
		for _, ch := range g.channels {
			if ch.clientID == clientID {
				return ch.conn, true
			}
		}
	}
	return nil, false
}

// ConsumerMembers returns the group's live connections with their client ids.
func (cs *Clients) ConsumerMembers(group string) []ConsumerMember {
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	g := cs.consumers[group]
	if g == nil {
		return nil
	}
	out := make([]ConsumerMember, 0, len(g.channels))
	for _, ch := range g.channels {
		out = append(out, ConsumerMember{ClientID: ch.clientID, Conn: ch.conn})
	}
	return out
}

// ConsumerMember is one live connection of a consumer group, for a request
// the broker relays to every member.
type ConsumerMember struct {
	ClientID string
	Conn     *remoting.Conn
}
