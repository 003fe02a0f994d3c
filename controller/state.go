package controller

import (
	"fmt"
	"slices"
	"sync"

	"github.com/rocketgo/rocketgo/auth"
)

// firstBrokerID is MixAll.FIRST_BROKER_CONTROLLER_ID: ids start at 1.
const firstBrokerID = 1

// replica is one broker of a set: its address and the check code it
// applied for its id with ("ip;timestamp").
type replica struct {
	Addr      string `json:"addr"`
	CheckCode string `json:"checkCode"`
}

// replicaInfo is Apache's BrokerReplicaInfo: the ids of one broker set.
type replicaInfo struct {
	Cluster    string            `json:"cluster"`
	BrokerName string            `json:"brokerName"`
	NextID     int64             `json:"nextId"` // nextAssignBrokerId
	Brokers    map[int64]replica `json:"brokers"`
}

func (r *replicaInfo) exists(id int64) bool { _, ok := r.Brokers[id]; return ok }

// addr is the address of id, "" when unknown (Apache's null).
func (r *replicaInfo) addr(id int64) string { return r.Brokers[id].Addr }

// ids lists the broker ids ascending: the order Java's HashSet<Long> walks
// small ids in, which the election policy's ties depend on.
func (r *replicaInfo) ids() []int64 {
	out := make([]int64, 0, len(r.Brokers))
	for id := range r.Brokers {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// syncInfo is Apache's SyncStateInfo: the master and SyncStateSet of one set.
type syncInfo struct {
	Cluster      string         `json:"cluster"`
	BrokerName   string         `json:"brokerName"`
	MasterEpoch  int32          `json:"masterEpoch"`
	SyncEpoch    int32          `json:"syncStateSetEpoch"`
	SyncStateSet map[int64]bool `json:"syncStateSet"`
	Master       *int64         `json:"master,omitempty"` // nil: no master (Apache's null)
}

func (s *syncInfo) set() []int64 {
	out := make([]int64, 0, len(s.SyncStateSet))
	for id := range s.SyncStateSet {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// State is the replicated metadata: Apache's ReplicasInfoManager tables.
// It changes only through apply (the raft FSM).
type State struct {
	mu       sync.RWMutex
	replicas map[string]*replicaInfo // by brokerName
	syncs    map[string]*syncInfo    // by brokerName
	users    map[string]*user        // by username (auth.go)
	acls     map[string]*auth.Acl    // by username (acls.go)
}

// NewState returns an empty state.
func NewState() *State {
	return &State{replicas: map[string]*replicaInfo{}, syncs: map[string]*syncInfo{}, users: map[string]*user{},
		acls: map[string]*auth.Acl{}}
}

// containsLocked is Apache's isContainsBroker: both tables know the set.
func (st *State) containsLocked(brokerName string) bool {
	_, a := st.replicas[brokerName]
	_, b := st.syncs[brokerName]
	return a && b
}

// Event types, Apache's EventType.
const (
	evAlterSyncStateSet = "ALTER_SYNC_STATE_SET_EVENT"
	evApplyBrokerID     = "APPLY_BROKER_ID_EVENT"
	evElectMaster       = "ELECT_MASTER_EVENT"
	evCleanBrokerData   = "CLEAN_BROKER_DATA_EVENT"
	evUpdateBrokerAddr  = "UPDATE_BROKER_ADDRESS"
	evAddUser           = "ADD_USER"    // rocketgo's: a user of the controllers, added or replaced
	evDeleteUser        = "DELETE_USER" // rocketgo's
	evPutAcl            = "PUT_ACL"     // rocketgo's: a user's whole ACL, added or replaced
	evDeleteAcl         = "DELETE_ACL"  // rocketgo's: a user's ACL removed
)

// event is one state change in the raft log (JSON; the log is rocketgo's
// own, not DLedger's).
type event struct {
	Type       string  `json:"type"`
	Cluster    string  `json:"cluster,omitempty"`
	BrokerName string  `json:"brokerName"`
	BrokerID   int64   `json:"brokerId,omitempty"`
	Addr       string  `json:"addr,omitempty"`
	CheckCode  string  `json:"checkCode,omitempty"`
	Set        []int64 `json:"set,omitempty"`
	// Elected: a new master (BrokerID) was elected; false with
	// ELECT_MASTER_EVENT means the master is gone and none was elected.
	Elected bool `json:"elected,omitempty"`
	// IDs: CLEAN_BROKER_DATA_EVENT's ids; nil cleans the whole set.
	IDs []int64 `json:"ids,omitempty"`
	// User: ADD_USER's user; DELETE_USER's names the user.
	User *user `json:"user,omitempty"`
	// Acl: PUT_ACL's ACL; DELETE_ACL's names its subject.
	Acl *auth.AclInfo `json:"acl,omitempty"`
}

// applyEvents applies a batch in order (ReplicasInfoManager.applyEvent).
func (st *State) applyEvents(evs []event) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, e := range evs {
		st.applyLocked(e)
	}
}

func (st *State) applyLocked(e event) {
	switch e.Type {
	case evAlterSyncStateSet:
		if st.containsLocked(e.BrokerName) {
			s := st.syncs[e.BrokerName]
			s.SyncStateSet = toSet(e.Set)
			s.SyncEpoch++
		}
	case evApplyBrokerID:
		if st.containsLocked(e.BrokerName) {
			r := st.replicas[e.BrokerName]
			if !r.exists(e.BrokerID) {
				r.Brokers[e.BrokerID] = replica{Addr: e.Addr, CheckCode: e.CheckCode}
				r.NextID++
			}
			return
		}
		st.replicas[e.BrokerName] = &replicaInfo{Cluster: e.Cluster, BrokerName: e.BrokerName, NextID: firstBrokerID + 1,
			Brokers: map[int64]replica{e.BrokerID: {Addr: e.Addr, CheckCode: e.CheckCode}}}
		st.syncs[e.BrokerName] = &syncInfo{Cluster: e.Cluster, BrokerName: e.BrokerName, SyncStateSet: map[int64]bool{}}
	case evElectMaster:
		if !st.containsLocked(e.BrokerName) {
			return
		}
		s := st.syncs[e.BrokerName]
		s.MasterEpoch++
		if e.Elected {
			id := e.BrokerID
			s.Master = &id
			s.SyncStateSet = map[int64]bool{id: true}
			s.SyncEpoch++
		} else {
			s.Master = nil
		}
	case evCleanBrokerData:
		if len(e.IDs) == 0 {
			delete(st.replicas, e.BrokerName)
			delete(st.syncs, e.BrokerName)
			return
		}
		if !st.containsLocked(e.BrokerName) {
			return
		}
		r, s := st.replicas[e.BrokerName], st.syncs[e.BrokerName]
		for _, id := range e.IDs {
			delete(r.Brokers, id)
			delete(s.SyncStateSet, id)
		}
		if len(r.Brokers) == 0 {
			delete(st.replicas, e.BrokerName)
		}
		if len(s.SyncStateSet) == 0 {
			delete(st.syncs, e.BrokerName)
		}
	case evAddUser:
		if e.User != nil && e.User.Username != "" {
			st.users[e.User.Username] = e.User.withKey()
		}
	case evDeleteUser:
		if e.User != nil {
			delete(st.users, e.User.Username)
			delete(st.acls, e.User.Username) // Apache's deleteUser drops the ACL too
		}
	case evPutAcl:
		// Checked when proposed; a log entry that does not parse (written
		// by another version) changes nothing.
		if e.Acl != nil {
			if a, err := auth.ParseAcl(*e.Acl, ""); err == nil {
				st.acls[a.Username] = a
			}
		}
	case evDeleteAcl:
		if e.Acl != nil {
			if name, ok := auth.ParseSubject(e.Acl.Subject); ok {
				delete(st.acls, name)
			}
		}
	case evUpdateBrokerAddr:
		if r := st.replicas[e.BrokerName]; r != nil {
			if old, ok := r.Brokers[e.BrokerID]; ok {
				r.Brokers[e.BrokerID] = replica{Addr: e.Addr, CheckCode: old.CheckCode}
			}
		}
	}
}

func toSet(ids []int64) map[int64]bool {
	m := make(map[int64]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// snapshot is the state as written to a raft snapshot.
type snapshot struct {
	Replicas map[string]*replicaInfo `json:"replicas"`
	Syncs    map[string]*syncInfo    `json:"syncs"`
	Users    map[string]*user        `json:"users,omitempty"`
	Acls     []auth.AclInfo          `json:"acls,omitempty"`
}

// marshal encodes the whole state (for a raft snapshot).
func (st *State) marshal() ([]byte, error) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return json.Marshal(snapshot{Replicas: st.replicas, Syncs: st.syncs, Users: st.users,
		Acls: auth.FilterAcls(st.acls, "", "")})
}

// restore replaces the state with a snapshot's.
func (st *State) restore(b []byte) error {
	var s snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("controller: decode snapshot: %w", err)
	}
	if s.Replicas == nil {
		s.Replicas = map[string]*replicaInfo{}
	}
	if s.Syncs == nil {
		s.Syncs = map[string]*syncInfo{}
	}
	for _, r := range s.Replicas {
		if r.Brokers == nil {
			r.Brokers = map[int64]replica{}
		}
	}
	for _, x := range s.Syncs {
		if x.SyncStateSet == nil {
			x.SyncStateSet = map[int64]bool{}
		}
	}
	users := make(map[string]*user, len(s.Users))
	for name, u := range s.Users {
		if u != nil {
			users[name] = u.withKey()
		}
	}
	acls := make(map[string]*auth.Acl, len(s.Acls))
	for _, i := range s.Acls {
		if a, err := auth.ParseAcl(i, ""); err == nil {
			acls[a.Username] = a
		}
	}
	st.mu.Lock()
	st.replicas, st.syncs, st.users, st.acls = s.Replicas, s.Syncs, users, acls
	st.mu.Unlock()
	return nil
}
