package autoswitch

// A master's SyncStateSet (AutoSwitchHAService): the set the controller
// accepted, the proposal being synchronized (CONTROLLER_ALTER_SYNC_STATE_SET
// sent, no answer yet) — the union of both counts meanwhile — and, per
// connected slave, its last caught-up time and acknowledged offset. The
// confirm offset (the bytes every member holds; consume queues are
// dispatched up to it) is computed from them.

import (
	"slices"
	"sync"
	"time"
)

// SyncSet is safe for concurrent use.
type SyncSet struct {
	mu            sync.Mutex
	self          int64
	maxNotCatchup time.Duration // haMaxTimeSlaveNotCatchup
	set           map[int64]bool
	proposed      map[int64]bool // nil: nothing being synchronized
	caughtUp      map[int64]time.Time
	acks          map[int64]int64
}

// NewSyncSet starts a master's view with the set the controller named.
func NewSyncSet(self int64, accepted []int64, maxNotCatchup time.Duration) *SyncSet {
	s := &SyncSet{self: self, maxNotCatchup: maxNotCatchup, caughtUp: map[int64]time.Time{}, acks: map[int64]int64{}}
	s.set = toSet(accepted)
	return s
}

func toSet(ids []int64) map[int64]bool {
	m := make(map[int64]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

func sorted(m map[int64]bool) []int64 {
	out := make([]int64, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// Accepted installs the set the controller answered and ends the proposal.
func (s *SyncSet) Accepted(ids []int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.set, s.proposed = toSet(ids), nil
}

// Current is the union of the accepted set and the pending proposal,
// ascending.
func (s *SyncSet) Current() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sorted(s.unionLocked())
}

func (s *SyncSet) unionLocked() map[int64]bool {
	u := make(map[int64]bool, len(s.set)+len(s.proposed))
	for id := range s.set {
		u[id] = true
	}
	for id := range s.proposed {
		u[id] = true
	}
	return u
}

// CaughtUp records that slave id had everything the master had at t (a
// transfer found nothing new to send); times only move forward.
func (s *SyncSet) CaughtUp(id int64, t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.After(s.caughtUp[id]) {
		s.caughtUp[id] = t
	}
}

// Connected records a slave's new connection (no ack yet).
func (s *SyncSet) Connected(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.acks[id]; !ok {
		s.acks[id] = 0
	}
	if _, ok := s.caughtUp[id]; !ok {
		s.caughtUp[id] = time.Time{}
	}
}

// Ack records a connected slave's reported max offset.
func (s *SyncSet) Ack(id, offset int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.acks[id] = offset
	if _, ok := s.caughtUp[id]; !ok {
		s.caughtUp[id] = time.Time{}
	}
}

// Disconnected forgets a slave whose connection closed.
func (s *SyncSet) Disconnected(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.acks, id)
	delete(s.caughtUp, id)
}

// MaybeExpand returns the set to propose when slave id, not yet a member,
// has caught up: its max offset reaches both the confirm offset and the
// start of the master's current epoch.
func (s *SyncSet) MaybeExpand(id, slaveMax, confirm, epochStart int64) ([]int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set[id] || slaveMax < confirm || slaveMax < epochStart {
		return nil, false
	}
	next := toSet(sorted(s.set))
	next[id] = true
	s.proposed = next
	return sorted(next), true
}

// MaybeShrink returns the set to propose when members fell behind for
// longer than haMaxTimeSlaveNotCatchup or have no connection (the master
// itself stays).
func (s *SyncSet) MaybeShrink(now time.Time) ([]int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := toSet(sorted(s.set))
	changed := false
	for id := range s.set {
		if id == s.self {
			continue
		}
		t, connected := s.caughtUp[id]
		if !connected || now.Sub(t) > s.maxNotCatchup {
			delete(next, id)
			changed = true
		}
	}
	if !changed {
		return nil, false
	}
	s.proposed = next
	return sorted(next), true
}

// ConfirmOffset is the offset every member holds: the master's max, lowered
// to each connected member's positive ack. While a member other than the
// master has no connection nothing can be computed and previous stands
// (Apache's fix for apache/rocketmq#6662).
func (s *SyncSet) ConfirmOffset(localMax, previous int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	members := s.unionLocked()
	confirm := localMax
	for id := range members {
		if id == s.self {
			continue
		}
		ack, connected := s.acks[id]
		if !connected {
			return previous
		}
		if ack > 0 {
			confirm = min(confirm, ack)
		}
	}
	return confirm
}
