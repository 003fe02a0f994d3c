package tables

import (
	"cmp"
	"slices"
	"sort"

	"github.com/rocketgo/rocketgo/remoting"
)

// Connection is one client connection of a group, as mqadmin shows it
// (Apache's Connection: clientId, clientAddr, language, version).
type Connection struct {
	ClientID   string `json:"clientId"`
	ClientAddr string `json:"clientAddr"`
	Language   string `json:"language"`
	Version    int32  `json:"version"`
}

func (ch *clientChannel) connection() Connection {
	return Connection{ClientID: ch.clientID, ClientAddr: ch.conn.Remote, Language: ch.language.String(), Version: ch.version}
}

func sortConnections(cs []Connection) {
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].ClientID != cs[j].ClientID {
			return cs[i].ClientID < cs[j].ClientID
		}
		return cs[i].ClientAddr < cs[j].ClientAddr
	})
}

// ConsumerGroupState is a consumer group's live connections, its last
// heartbeat data and its subscriptions by topic.
type ConsumerGroupState struct {
	Connections   []Connection
	Info          ConsumerInfo
	Subscriptions map[string]*Subscription
}

// ConsumerGroup returns the group's state; false when no member is connected.
func (cs *Clients) ConsumerGroup(group string) (ConsumerGroupState, bool) {
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	g := cs.consumers[group]
	if g == nil || len(g.channels) == 0 {
		return ConsumerGroupState{}, false
	}
	st := ConsumerGroupState{Info: g.info, Subscriptions: make(map[string]*Subscription, len(g.subs))}
	for _, ch := range g.channels {
		st.Connections = append(st.Connections, ch.connection())
	}
	for t, s := range g.subs {
		st.Subscriptions[t] = s
	}
	sortConnections(st.Connections)
	return st, true
}

// ConsumerConns returns the connections of a group's live members.
func (cs *Clients) ConsumerConns(group string) []*remoting.Conn {
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	g := cs.consumers[group]
	if g == nil {
		return nil
	}
	return groupConns(g)
}

// ProducerConns returns the connections of a producer group's members, in
// connection order (a stable order for round robin over them).
func (cs *Clients) ProducerConns(group string) []*remoting.Conn {
	cs.mu.RLock()
	out := make([]*remoting.Conn, 0, len(cs.producers[group]))
	for _, ch := range cs.producers[group] {
		out = append(out, ch.conn)
	}
	cs.mu.RUnlock()
	slices.SortFunc(out, func(a, b *remoting.Conn) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// ProducerConnections returns a producer group's live connections.
func (cs *Clients) ProducerConnections(group string) []Connection {
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	var out []Connection
	for _, ch := range cs.producers[group] {
		out = append(out, ch.connection())
	}
	sortConnections(out)
	return out
}

// GroupsSubscribing returns the online consumer groups subscribed to topic.
func (cs *Clients) GroupsSubscribing(topic string) []string {
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	var out []string
	for name, g := range cs.consumers {
		if _, ok := g.subs[topic]; ok && len(g.channels) > 0 {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// TopicsOf returns the topics a group has committed offsets for.
func (o *Offsets) TopicsOf(group string) []string {
	o.mu.RLock()
	defer o.mu.RUnlock()
	var out []string
	for k := range o.table {
		for i := len(k) - 1; i >= 0; i-- {
			if k[i] == '@' {
				if k[i+1:] == group {
					out = append(out, k[:i])
				}
				break
			}
		}
	}
	o.lmqEachLocked(func(topic, g string, _ int64) {
		if g == group {
			out = append(out, topic)
		}
	})
	sort.Strings(out)
	return slices.Compact(out)
}

// deleteGroup drops a group's offsets for every topic (Apache's
// ConsumerOffsetManager.removeOffset).
func (o *Offsets) DeleteGroup(group string) {
	o.mu.Lock()
	for k := range o.table {
		if _, g, ok := cutOffsetKey(k); ok && g == group {
			delete(o.table, k)
			o.dirty.Store(true)
		}
	}
	for t, e := range o.lmq {
		if _, ok := e.more[group]; !ok && e.group != group {
			continue
		}
		if rest, ok := lmqDeleteGroup(e, group); ok {
			o.lmq[t] = rest
		} else {
			delete(o.lmq, t)
		}
		o.dirty.Store(true)
	}
	for k := range o.resets {
		if _, g, ok := cutOffsetKey(k); ok && g == group {
			delete(o.resets, k)
		}
	}
	o.anyResets.Store(len(o.resets) > 0)
	o.mu.Unlock()
}
