package controller

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rocketgo/rocketgo/remoting"
)

// result is what one rule decided: the answer (code, remark, header fields,
// body) and the events that must be committed before it is sent
// (Apache's ControllerResult).
type result struct {
	code   int32
	remark string
	header []remoting.Field
	body   []byte
	events []event
	// elected, on a successful election, is what NOTIFY_BROKER_ROLE_CHANGED
	// tells the set's brokers.
	elected *roleChange
}

// roleChange is Apache's RoleChangeNotifyEntry.
type roleChange struct {
	group       memberGroup
	master      int64
	masterAddr  string
	masterEpoch int32
	syncEpoch   int32
	syncSet     []int64
}

func (r *result) fail(code int32, remark string) *result {
	r.code, r.remark = code, remark
	return r
}

func (r *result) set(key, value string) {
	r.header = append(r.header, remoting.Field{Key: key, Value: value})
}

func (r *result) setInt(key string, v int64) { r.set(key, strconv.FormatInt(v, 10)) }

// rules are ReplicasInfoManager's methods: they read the state (the caller
// holds the proposal lock) and return a result with events; they never
// change the state.
type rules struct {
	st      *State
	hb      *Heartbeats
	unclean func() bool // enableElectUncleanMaster, as it is now; nil: false
	// maxSets and maxReplicas bound what APPLY_BROKER_ID may add
	// (controllerMaxBrokerSets, controllerMaxReplicasPerSet); 0: no bound.
	maxSets, maxReplicas int
}

func (ru rules) alive(cluster, brokerName string, id int64) bool {
	return ru.hb.active(cluster, brokerName, id)
}

// alterSyncStateSet is CONTROLLER_ALTER_SYNC_STATE_SET.
func (ru rules) alterSyncStateSet(brokerName string, masterID *int64, masterEpoch *int32, body syncStateSetBody) *result {
	st := ru.st
	st.mu.RLock()
	defer st.mu.RUnlock()
	r := &result{}
	// AlterSyncStateSetResponseHeader's field is a primitive int: Apache
	// writes it (0) on refusals too.
	r.header = []remoting.Field{{Key: "newSyncStateSetEpoch", Value: "0"}}
	if !st.containsLocked(brokerName) {
		return r.fail(remoting.ControllerAlterSyncFailed, "Broker metadata is not existed")
	}
	s, info := st.syncs[brokerName], st.replicas[brokerName]
	newSet := toSet(body.SyncStateSet)
	if len(newSet) == len(s.SyncStateSet) && containsAll(s.SyncStateSet, newSet) {
		return r.fail(remoting.ControllerAlterSyncFailed, "The newSyncStateSet is equal with oldSyncStateSet, no needed to update syncStateSet")
	}
	if s.Master == nil || masterID == nil || *s.Master != *masterID {
		return r.fail(remoting.ControllerInvalidMaster, fmt.Sprintf("Rejecting alter syncStateSet request because the current leader is:{%s}, not {%s}",
			javaLong(s.Master), javaLong(masterID)))
	}
	if masterEpoch == nil || *masterEpoch != s.MasterEpoch {
		// Apache unboxes a null masterEpoch here: a NullPointerException.
		if masterEpoch == nil {
			return &result{code: remoting.SystemError, remark: "java.lang.NullPointerException"}
		}
		return r.fail(remoting.ControllerFencedMasterEpoch, fmt.Sprintf("Rejecting alter syncStateSet request because the current master epoch is:{%d}, not {%d}",
			s.MasterEpoch, *masterEpoch))
	}
	if body.SyncStateSetEpoch != s.SyncEpoch {
		return r.fail(remoting.ControllerFencedSyncStateSet, fmt.Sprintf("Rejecting alter syncStateSet request because the current syncStateSet epoch is:{%d}, not {%d}",
			s.SyncEpoch, body.SyncStateSetEpoch))
	}
	ids := sortedIDs(newSet)
	for _, id := range ids {
		if !info.exists(id) {
			return r.fail(remoting.ControllerInvalidReplicas, fmt.Sprintf("Rejecting alter syncStateSet request because the replicas {%d} don't exist", id))
		}
		if !ru.alive(info.Cluster, info.BrokerName, id) {
			return r.fail(remoting.ControllerBrokerNotAlive, fmt.Sprintf("Rejecting alter syncStateSet request because the replicas {%d} don't alive", id))
		}
	}
	if !newSet[*s.Master] {
		return r.fail(remoting.ControllerAlterSyncFailed, fmt.Sprintf("Rejecting alter syncStateSet request because the newSyncStateSet don't contains origin leader {%d}", *s.Master))
	}
	epoch := s.SyncEpoch + 1
	r.header[0].Value = strconv.FormatInt(int64(epoch), 10)
	r.body = encodeSyncStateSet(ids, epoch)
	r.events = []event{{Type: evAlterSyncStateSet, BrokerName: brokerName, Set: ids}}
	return r
}

// electRequest is CONTROLLER_ELECT_MASTER's header (ElectMasterRequestHeader).
type electRequest struct {
	Cluster, BrokerName string
	BrokerID            int64 // -1: triggered by the controller
	Designate           bool  // admin's electMaster: elect BrokerID or nobody
}

// electMaster is CONTROLLER_ELECT_MASTER and the controller's own elections.
func (ru rules) electMaster(req electRequest) *result {
	st := ru.st
	st.mu.RLock()
	defer st.mu.RUnlock()
	r := &result{}
	if !st.containsLocked(req.BrokerName) {
		return r.fail(remoting.ControllerNeedToBeRegistered, "Broker hasn't been registered")
	}
	s, info := st.syncs[req.BrokerName], st.replicas[req.BrokerName]
	syncSet := s.set()
	var all []int64
	if ru.unclean != nil && ru.unclean() {
		all = info.ids()
	}
	var newMaster *int64
	if s.MasterEpoch == 0 { // isFirstTimeForElect
		id := req.BrokerID
		newMaster = &id
	}
	if newMaster == nil || *newMaster == -1 {
		var prefer *int64
		if req.Designate {
			id := req.BrokerID
			prefer = &id
		}
		newMaster = electPolicy(ru.hb, info.Cluster, info.BrokerName, syncSet, all, s.Master, prefer)
	}
	if newMaster != nil && s.Master != nil && *newMaster == *s.Master {
		r.fail(remoting.ControllerMasterStillExist, fmt.Sprintf("The old master %d is still alive, not need to elect new master for broker %s", *s.Master, info.BrokerName))
		r.setInt("masterEpoch", int64(s.MasterEpoch))
		r.setInt("syncStateSetEpoch", int64(s.SyncEpoch))
		r.setInt("masterBrokerId", *s.Master)
		if a := info.addr(*s.Master); a != "" {
			r.set("masterAddress", a)
		}
		r.body = encodeElectBody(nil, syncSet)
		return r
	}
	if newMaster != nil {
		g := memberGroup{cluster: info.Cluster, brokerName: info.BrokerName, ids: info.ids(), addrs: map[int64]string{}}
		for id, b := range info.Brokers {
			g.addrs[id] = b.Addr
		}
		rc := &roleChange{group: g, master: *newMaster, masterAddr: info.addr(*newMaster),
			masterEpoch: s.MasterEpoch + 1, syncEpoch: s.SyncEpoch + 1, syncSet: []int64{*newMaster}}
		r.setInt("masterBrokerId", rc.master)
		if rc.masterAddr != "" {
			r.set("masterAddress", rc.masterAddr)
		}
		r.setInt("masterEpoch", int64(rc.masterEpoch))
		r.setInt("syncStateSetEpoch", int64(rc.syncEpoch))
		r.body = encodeElectBody(&g, rc.syncSet)
		r.events = []event{{Type: evElectMaster, BrokerName: req.BrokerName, BrokerID: *newMaster, Elected: true}}
		r.elected = rc
		return r
	}
	if req.BrokerID == -1 {
		r.events = []event{{Type: evElectMaster, BrokerName: req.BrokerName}}
		return r.fail(remoting.ControllerMasterNotAvailable, "Old master has down and failed to elect a new broker master")
	}
	return r.fail(remoting.ControllerElectMasterFailed, "Failed to elect a new master")
}

// nextBrokerID is CONTROLLER_GET_NEXT_BROKER_ID.
func (ru rules) nextBrokerID(cluster, brokerName string) *result {
	st := ru.st
	st.mu.RLock()
	defer st.mu.RUnlock()
	r := &result{}
	next := int64(firstBrokerID)
	if info := st.replicas[brokerName]; info != nil {
		next = info.NextID
	}
	setOpt(r, "clusterName", cluster)
	setOpt(r, "brokerName", brokerName)
	r.setInt("nextBrokerId", next)
	return r
}

// applyBrokerID is CONTROLLER_APPLY_BROKER_ID.
func (ru rules) applyBrokerID(cluster, brokerName string, id int64, checkCode string) *result {
	st := ru.st
	st.mu.RLock()
	defer st.mu.RUnlock()
	r := &result{}
	setOpt(r, "clusterName", cluster)
	setOpt(r, "brokerName", brokerName)
	addr, _, _ := strings.Cut(checkCode, ";")
	ev := event{Type: evApplyBrokerID, Cluster: cluster, BrokerName: brokerName, BrokerID: id, Addr: addr, CheckCode: checkCode}
	info := st.replicas[brokerName]
	if info == nil {
		if ru.maxSets > 0 && len(st.replicas) >= ru.maxSets && id == firstBrokerID {
			return r.fail(remoting.ControllerBrokerIDInvalid, fmt.Sprintf("Broker-set: %s refused: controllerMaxBrokerSets (%d) reached", brokerName, ru.maxSets))
		}
		if id == firstBrokerID {
			r.events = []event{ev}
			return r
		}
		return r.fail(remoting.ControllerBrokerIDInvalid, fmt.Sprintf("Broker-set: %s hasn't been registered in controller, but broker try to apply brokerId: %d", brokerName, id))
	}
	if b, ok := info.Brokers[id]; !ok || b.CheckCode == checkCode {
		if !ok && ru.maxReplicas > 0 && len(info.Brokers) >= ru.maxReplicas {
			return r.fail(remoting.ControllerBrokerIDInvalid, fmt.Sprintf("Fail to apply brokerId: %d in broker-set: %s: controllerMaxReplicasPerSet (%d) reached", id, brokerName, ru.maxReplicas))
		}
		r.events = []event{ev}
		return r
	}
	return r.fail(remoting.ControllerBrokerIDInvalid, fmt.Sprintf("Fail to apply brokerId: %d in broker-set: %s", id, brokerName))
}

// registerBroker is CONTROLLER_REGISTER_BROKER. A nil id or address is
// Apache's null: SYSTEM_ERROR where its handler dereferences it.
func (ru rules) registerBroker(cluster, brokerName string, idp *int64, addrp *string) *result {
	st := ru.st
	st.mu.RLock()
	defer st.mu.RUnlock()
	r := &result{}
	setOpt(r, "clusterName", cluster)
	setOpt(r, "brokerName", brokerName)
	if !st.containsLocked(brokerName) {
		return r.fail(remoting.ControllerNeedToBeRegistered, fmt.Sprintf("Broker-set: %s hasn't been registered in controller", brokerName))
	}
	info, s := st.replicas[brokerName], st.syncs[brokerName]
	if idp == nil {
		return &result{code: remoting.SystemError, remark: "java.lang.NullPointerException"}
	}
	id := *idp
	if !info.exists(id) {
		return r.fail(remoting.ControllerNeedToBeRegistered, fmt.Sprintf("BrokerId: %d hasn't been registered in broker-set: %s", id, brokerName))
	}
	if s.Master != nil && ru.alive(cluster, brokerName, *s.Master) {
		r.setInt("masterBrokerId", *s.Master)
		if a := info.addr(*s.Master); a != "" {
			r.set("masterAddress", a)
		}
		r.setInt("masterEpoch", int64(s.MasterEpoch))
		r.setInt("syncStateSetEpoch", int64(s.SyncEpoch))
	}
	r.body = encodeSyncStateSet(s.set(), s.SyncEpoch)
	if addrp == nil {
		return &result{code: remoting.SystemError, remark: "java.lang.NullPointerException"}
	}
	if *addrp != info.addr(id) {
		r.events = []event{{Type: evUpdateBrokerAddr, Cluster: cluster, BrokerName: brokerName, BrokerID: id, Addr: *addrp}}
	}
	return r
}

// replicaInfo is CONTROLLER_GET_REPLICA_INFO.
func (ru rules) replicaInfo(brokerName string) *result {
	st := ru.st
	st.mu.RLock()
	defer st.mu.RUnlock()
	r := &result{}
	if !st.containsLocked(brokerName) {
		return r.fail(remoting.ControllerMetadataNotExist, "Broker metadata is not existed")
	}
	s, info := st.syncs[brokerName], st.replicas[brokerName]
	if s.Master != nil {
		r.setInt("masterBrokerId", *s.Master)
		if a := info.addr(*s.Master); a != "" {
			r.set("masterAddress", a)
		}
	}
	r.setInt("masterEpoch", int64(s.MasterEpoch))
	r.body = encodeSyncStateSet(s.set(), s.SyncEpoch)
	return r
}

// masterOf returns the master id of a set, for the inactive-broker check.
func (ru rules) masterOf(brokerName string) (int64, bool) {
	st := ru.st
	st.mu.RLock()
	defer st.mu.RUnlock()
	if !st.containsLocked(brokerName) {
		return 0, false
	}
	if m := st.syncs[brokerName].Master; m != nil {
		return *m, true
	}
	return 0, false
}

// syncStateData is CONTROLLER_GET_SYNC_STATE_DATA.
func (ru rules) syncStateData(names []string) *result {
	st := ru.st
	st.mu.RLock()
	defer st.mu.RUnlock()
	var sets []replicasInfo
	seen := map[string]bool{}
	for _, name := range names {
		if !st.containsLocked(name) || seen[name] {
			continue
		}
		seen[name] = true
		s, info := st.syncs[name], st.replicas[name]
		ri := replicasInfo{brokerName: name, master: s.Master, masterEpoch: s.MasterEpoch, syncEpoch: s.SyncEpoch,
			inSync: []replicaIdentity{}, notInSync: []replicaIdentity{}}
		if s.Master != nil {
			ri.masterAddr = info.addr(*s.Master)
		}
		for _, id := range info.ids() {
			ident := replicaIdentity{brokerName: name, id: id, addr: info.addr(id), alive: ru.alive(info.Cluster, name, id)}
			if s.SyncStateSet[id] {
				ri.inSync = append(ri.inSync, ident)
			} else {
				ri.notInSync = append(ri.notInSync, ident)
			}
		}
		sets = append(sets, ri)
	}
	return &result{body: encodeReplicasInfo(sets)}
}

// cleanRequest is CLEAN_BROKER_DATA's header.
type cleanRequest struct {
	Cluster, BrokerName string
	IDsToClean          string // "1;2"
	CleanLiving         bool
}

// cleanBrokerData is CLEAN_BROKER_DATA.
func (ru rules) cleanBrokerData(req cleanRequest) *result {
	st := ru.st
	st.mu.RLock()
	defer st.mu.RUnlock()
	r := &result{}
	var ids []int64
	// Cleaning living brokers leaves Apache's id set null: the whole set goes.
	if !req.CleanLiving {
		s := st.syncs[req.BrokerName]
		blank := strings.TrimSpace(req.IDsToClean) == ""
		if blank && s != nil && s.Master != nil {
			return r.fail(remoting.ControllerInvalidCleanData, fmt.Sprintf("Broker %s is still alive, clean up failure", req.BrokerName))
		}
		if !blank {
			// Java's split drops trailing empty parts.
			for _, part := range strings.Split(strings.TrimRight(req.IDsToClean, ";"), ";") {
				id, err := strconv.ParseInt(part, 10, 64)
				if err != nil {
					return r.fail(remoting.ControllerInvalidCleanData, fmt.Sprintf("Please set the option <brokerControllerIdsToClean> according to the format, exception: java.lang.NumberFormatException: For input string: \"%s\"", part))
				}
				ids = append(ids, id)
			}
			for _, id := range ids {
				if ru.alive(req.Cluster, req.BrokerName, id) {
					return r.fail(remoting.ControllerInvalidCleanData, fmt.Sprintf("Broker [%s,  %d] is still alive, clean up failure", req.BrokerName, id))
				}
			}
		}
	}
	if st.containsLocked(req.BrokerName) {
		r.events = []event{{Type: evCleanBrokerData, BrokerName: req.BrokerName, IDs: ids}}
		return r
	}
	return r.fail(remoting.ControllerInvalidCleanData, fmt.Sprintf("Broker %s is not existed,clean broker data failure.", req.BrokerName))
}

// setAlive reports whether any broker of the set sends heartbeats (under
// the cluster the metadata holds, whatever a request names).
func (ru rules) setAlive(brokerName string) bool {
	st := ru.st
	st.mu.RLock()
	defer st.mu.RUnlock()
	r := st.replicas[brokerName]
	if r == nil {
		return false
	}
	for id := range r.Brokers {
		if ru.alive(r.Cluster, brokerName, id) {
			return true
		}
	}
	return false
}

// needReelect is scanNeedReelectBrokerSets: sets whose master is inactive
// while some replica is alive.
func (ru rules) needReelect() []string {
	st := ru.st
	st.mu.RLock()
	defer st.mu.RUnlock()
	var out []string
	for name, s := range st.syncs {
		if s.Master == nil || ru.alive(s.Cluster, name, *s.Master) {
			continue
		}
		info := st.replicas[name]
		if info == nil {
			continue
		}
		for id := range info.Brokers {
			if ru.alive(s.Cluster, name, id) {
				out = append(out, name)
				break
			}
		}
	}
	return out
}

func setOpt(r *result, key, v string) {
	if v != "" {
		r.set(key, v)
	}
}

func containsAll(have, want map[int64]bool) bool {
	for id := range want {
		if !have[id] {
			return false
		}
	}
	return true
}

func sortedIDs(m map[int64]bool) []int64 {
	s := &syncInfo{SyncStateSet: m}
	return s.set()
}

// javaLong prints a Long as Java's String.format does ("null" for null).
func javaLong(p *int64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatInt(*p, 10)
}
