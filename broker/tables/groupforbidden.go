package tables

import (
	"errors"

	"github.com/rocketgo/rocketgo/remoting"
)

// The group forbidden table of Apache 5.x (SubscriptionGroupManager's
// forbiddenTable): per group and topic, bits of permissions taken away,
// set and read by UPDATE_AND_GET_GROUP_FORBIDDEN (353) and persisted in
// subscriptionGroup.json. A pull without its subscription (a push
// consumer's, the group known by heartbeat) of a topic whose read bit is
// taken away is refused NO_PERMISSION, as 5.3.3's PullMessageProcessor
// refuses it; a pull that brings its subscription is not checked, as in
// 5.3.3.

// forbidRead is PermName.INDEX_PERM_READ: the bit of PERM_READ (1 << 2).
const forbidRead = 2

// maxForbiddenEntries bounds the table (group, topic pairs): Apache has no
// bound; past it a new pair is refused rather than grow the file and the
// memory without end.
const maxForbiddenEntries = 100_000

// GroupForbidden is the answer of UPDATE_AND_GET_GROUP_FORBIDDEN.
type GroupForbidden struct {
	Group    string `json:"group"`
	Readable bool   `json:"readable"`
	Topic    string `json:"topic"`
}

// ForbiddenCopy copies the forbidden table (to persist it, to show it).
func (g *Groups) ForbiddenCopy() map[string]map[string]int32 {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if len(g.forbidden) == 0 {
		return nil
	}
	out := make(map[string]map[string]int32, len(g.forbidden))
	for group, topics := range g.forbidden {
		m := make(map[string]int32, len(topics))
		for t, v := range topics {
			m[t] = v
		}
		out[group] = m
	}
	return out
}

func (g *Groups) forbiddenEntriesLocked() int {
	n := 0
	for _, topics := range g.forbidden {
		n += len(topics)
	}
	return n
}

// readForbidden reports whether group may not read topic. The pull path
// asks it: an empty table is one atomic load.
func (g *Groups) ReadForbidden(group, topic string) bool {
	if !g.anyForbidden.Load() {
		return false
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.forbidden[group][topic]&(1<<forbidRead) != 0
}

// UpdateForbidden sets (readable false) or clears (true) the read bit of
// group on topic when readable is given, then reports it. As Apache,
// clearing the last bit of one topic drops the group's whole entry, and
// only a set bit bumps the data version. The table holds at most
// maxForbiddenEntries entries.
func (g *Groups) UpdateForbidden(group, topic string, readable *bool) (GroupForbidden, error) {
	g.mu.Lock()
	if readable != nil {
		v := g.forbidden[group][topic]
		if *readable {
			v &^= 1 << forbidRead
		} else {
			v |= 1 << forbidRead
		}
		if v <= 0 {
			delete(g.forbidden, group)
			g.dirty.Store(true)
		} else {
			if g.forbidden == nil {
				g.forbidden = map[string]map[string]int32{}
			}
			if _, ok := g.forbidden[group][topic]; !ok && g.forbiddenEntriesLocked() >= maxForbiddenEntries {
				g.mu.Unlock()
				return GroupForbidden{}, remoting.Refuse(remoting.SystemError, errors.New("broker: group forbidden table full"),
					"the group forbidden table is full")
			}
			if g.forbidden[group] == nil {
				g.forbidden[group] = map[string]int32{}
			}
			g.forbidden[group][topic] = v
			g.version.Next()
			g.dirty.Store(true)
		}
	}
	bits := g.forbidden[group][topic]
	g.anyForbidden.Store(len(g.forbidden) > 0)
	g.mu.Unlock()
	return GroupForbidden{Group: group, Readable: bits&(1<<forbidRead) == 0, Topic: topic}, nil
}
