package controller

import (
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/remoting"
)

// setOf builds a state with one registered set "b" of ids 1..n, master 1,
// the given SyncStateSet, and heartbeats for the alive ids.
func setOf(t *testing.T, n int, master int64, syncSet []int64, unclean bool, alive map[int64]liveInfo) rules {
	t.Helper()
	st := NewState()
	for id := int64(1); id <= int64(n); id++ {
		st.applyEvents([]event{{Type: evApplyBrokerID, Cluster: "c", BrokerName: "b", BrokerID: id, Addr: "10.0.0." + string(rune('0'+id)) + ":10911", CheckCode: "x"}})
	}
	st.applyEvents([]event{{Type: evElectMaster, BrokerName: "b", BrokerID: master, Elected: true}})
	st.applyEvents([]event{{Type: evAlterSyncStateSet, BrokerName: "b", Set: syncSet}})
	hb := NewHeartbeats(0)
	for id, li := range alive {
		e, m, p := li.epoch, li.maxOffset, li.priority
		to := int64(10000)
		hb.onHeartbeat(heartbeat{Cluster: "c", BrokerName: "b", BrokerAddr: "x", BrokerID: id, Epoch: &e, MaxOffset: &m, ElectionPriority: &p, TimeoutMillis: &to}, nil)
	}
	return rules{st: st, hb: hb, unclean: func() bool { return unclean }}
}

func TestElectPolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		syncSet  []int64
		alive    map[int64]liveInfo
		unclean  bool
		req      electRequest
		code     int32
		master   string
		eventNew bool
	}{
		{name: "old master alive stays", syncSet: []int64{1, 2}, alive: map[int64]liveInfo{1: {}, 2: {maxOffset: 9}},
			req: electRequest{BrokerName: "b", BrokerID: -1}, code: remoting.ControllerMasterStillExist, master: "1"},
		{name: "highest epoch wins over offset", syncSet: []int64{1, 2, 3}, alive: map[int64]liveInfo{2: {epoch: 2, maxOffset: 1}, 3: {epoch: 1, maxOffset: 99}},
			req: electRequest{BrokerName: "b", BrokerID: -1}, code: remoting.Success, master: "2", eventNew: true},
		{name: "same epoch: highest offset", syncSet: []int64{1, 2, 3}, alive: map[int64]liveInfo{2: {epoch: 1, maxOffset: 10}, 3: {epoch: 1, maxOffset: 20}},
			req: electRequest{BrokerName: "b", BrokerID: -1}, code: remoting.Success, master: "3", eventNew: true},
		{name: "same offset: lowest priority value", syncSet: []int64{1, 2, 3}, alive: map[int64]liveInfo{2: {epoch: 1, maxOffset: 10, priority: 5}, 3: {epoch: 1, maxOffset: 10, priority: 1}},
			req: electRequest{BrokerName: "b", BrokerID: -1}, code: remoting.Success, master: "3", eventNew: true},
		{name: "outside the set refused when clean", syncSet: []int64{1}, alive: map[int64]liveInfo{2: {}},
			req: electRequest{BrokerName: "b", BrokerID: -1}, code: remoting.ControllerMasterNotAvailable},
		{name: "broker asked, nobody eligible", syncSet: []int64{1}, alive: map[int64]liveInfo{2: {}},
			req: electRequest{BrokerName: "b", BrokerID: 2}, code: remoting.ControllerElectMasterFailed},
		{name: "unclean elects outside the set", syncSet: []int64{1}, alive: map[int64]liveInfo{2: {}}, unclean: true,
			req: electRequest{BrokerName: "b", BrokerID: -1}, code: remoting.Success, master: "2", eventNew: true},
		{name: "designated alive", syncSet: []int64{1, 2, 3}, alive: map[int64]liveInfo{1: {}, 3: {}},
			req: electRequest{BrokerName: "b", BrokerID: 3, Designate: true}, code: remoting.Success, master: "3", eventNew: true},
		{name: "designated dead", syncSet: []int64{1, 2, 3}, alive: map[int64]liveInfo{1: {}},
			req: electRequest{BrokerName: "b", BrokerID: 3, Designate: true}, code: remoting.ControllerElectMasterFailed},
		{name: "unknown set", syncSet: []int64{1}, req: electRequest{BrokerName: "nope", BrokerID: -1}, code: remoting.ControllerNeedToBeRegistered},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ru := setOf(t, 3, 1, tt.syncSet, tt.unclean, tt.alive)
			r := ru.electMaster(tt.req)
			if r.code != tt.code {
				t.Fatalf("code %d (%s), want %d", r.code, r.remark, tt.code)
			}
			got := ""
			for _, f := range r.header {
				if f.Key == "masterBrokerId" {
					got = f.Value
				}
			}
			if got != tt.master {
				t.Fatalf("master %q, want %q", got, tt.master)
			}
			if (r.elected != nil) != tt.eventNew {
				t.Fatalf("elected %v", r.elected)
			}
		})
	}
}

func TestAlterSyncStateSetRefusals(t *testing.T) {
	t.Parallel()
	alive := map[int64]liveInfo{1: {}, 2: {}}
	one, two := int64(1), int64(2)
	e2, e9 := int32(2), int32(9)
	tests := []struct {
		name   string
		broker string
		master *int64
		epoch  *int32
		body   syncStateSetBody
		code   int32
	}{
		{"unknown set", "x", &one, &e2, syncStateSetBody{[]int64{1, 2}, 2}, remoting.ControllerAlterSyncFailed},
		{"unchanged", "b", &one, &e2, syncStateSetBody{[]int64{1}, 2}, remoting.ControllerAlterSyncFailed},
		{"not the master", "b", &two, &e2, syncStateSetBody{[]int64{1, 2}, 2}, remoting.ControllerInvalidMaster},
		{"no master id", "b", nil, &e2, syncStateSetBody{[]int64{1, 2}, 2}, remoting.ControllerInvalidMaster},
		{"stale master epoch", "b", &one, &e9, syncStateSetBody{[]int64{1, 2}, 2}, remoting.ControllerFencedMasterEpoch},
		{"stale set epoch", "b", &one, &e2, syncStateSetBody{[]int64{1, 2}, 1}, remoting.ControllerFencedSyncStateSet},
		{"future set epoch", "b", &one, &e2, syncStateSetBody{[]int64{1, 1 << 62}, 3}, remoting.ControllerFencedSyncStateSet},
		{"huge id", "b", &one, &e2, syncStateSetBody{[]int64{1, 1 << 62}, 2}, remoting.ControllerInvalidReplicas},
		{"dead replica", "b", &one, &e2, syncStateSetBody{[]int64{1, 3}, 2}, remoting.ControllerBrokerNotAlive},
		{"drops the master", "b", &one, &e2, syncStateSetBody{[]int64{2}, 2}, remoting.ControllerAlterSyncFailed},
		{"ok", "b", &one, &e2, syncStateSetBody{[]int64{1, 2}, 2}, remoting.Success},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Master 1 was elected twice: master epoch 2, set epoch 2 after
			// the initial alter to {1}.
			ru := setOf(t, 3, 1, []int64{1}, false, alive)
			ru.st.applyEvents([]event{{Type: evElectMaster, BrokerName: "b", BrokerID: 1, Elected: true}})
			ru.st.syncs["b"].SyncEpoch = 2
			r := ru.alterSyncStateSet(tt.broker, tt.master, tt.epoch, tt.body)
			if r.code != tt.code {
				t.Fatalf("code %d (%s), want %d", r.code, r.remark, tt.code)
			}
			if tt.code == remoting.Success && string(r.body) != `{"syncStateSet":[1,2],"syncStateSetEpoch":3}` {
				t.Fatalf("body %s", r.body)
			}
		})
	}
}

func TestRegistrationAndClean(t *testing.T) {
	t.Parallel()
	st := NewState()
	ru := rules{st: st, hb: NewHeartbeats(0)}
	commit := func(r *result) *result { st.applyEvents(r.events); return r }
	if r := ru.applyBrokerID("c", "b", 2, "a;1"); r.code != remoting.ControllerBrokerIDInvalid {
		t.Fatalf("first id not 1: %d", r.code)
	}
	commit(ru.applyBrokerID("c", "b", 1, "10.0.0.1:10911;1"))
	if r := ru.nextBrokerID("c", "b"); r.header[2].Value != "2" {
		t.Fatalf("next id %v", r.header)
	}
	if r := ru.applyBrokerID("c", "b", 1, "other;2"); r.code != remoting.ControllerBrokerIDInvalid {
		t.Fatalf("taken id: %d", r.code)
	}
	if r := commit(ru.applyBrokerID("c", "b", 1, "10.0.0.1:10911;1")); r.code != remoting.Success {
		t.Fatalf("same check code re-applies: %d", r.code)
	}
	// A huge id is accepted as Apache accepts it; the next id only counts.
	commit(ru.applyBrokerID("c", "b", 1<<62, "10.0.0.2:10911;1"))
	if r := ru.nextBrokerID("c", "b"); r.header[2].Value != "3" {
		t.Fatalf("next id %v", r.header)
	}
	seven, one, x, nine := int64(7), int64(1), "x", "10.0.0.9:10911"
	if r := ru.registerBroker("c", "b", &seven, &x); r.code != remoting.ControllerNeedToBeRegistered {
		t.Fatalf("register unknown id: %d", r.code)
	}
	if r := ru.registerBroker("c", "b", &one, nil); r.code != remoting.SystemError {
		t.Fatalf("register without address: %d", r.code)
	}
	if r := commit(ru.registerBroker("c", "b", &one, &nine)); r.code != remoting.Success || len(r.events) != 1 {
		t.Fatalf("register with new address: %d %v", r.code, r.events)
	}
	if st.replicas["b"].addr(1) != "10.0.0.9:10911" {
		t.Fatal("address not updated")
	}
	if r := ru.replicaInfo("nope"); r.code != remoting.ControllerMetadataNotExist {
		t.Fatalf("replica info unknown: %d", r.code)
	}
	if r := ru.cleanBrokerData(cleanRequest{BrokerName: "b", IDsToClean: "1;x"}); r.code != remoting.ControllerInvalidCleanData {
		t.Fatalf("bad ids: %d", r.code)
	}
	ru.hb.now = func() time.Time { return time.Now() }
	commit(ru.cleanBrokerData(cleanRequest{BrokerName: "b", IDsToClean: "4611686018427387904;"}))
	if st.replicas["b"].exists(1<<62) || !st.replicas["b"].exists(1) {
		t.Fatalf("clean by id: %v", st.replicas["b"].Brokers)
	}
	// With no SyncStateSet the sync table entry is gone after a partial
	// clean, as Apache's: the set reads as unknown.
	if r := ru.cleanBrokerData(cleanRequest{BrokerName: "b"}); r.code != remoting.ControllerInvalidCleanData {
		t.Fatalf("clean of an unknown set: %d", r.code)
	}
}

func TestSyncStateDataBody(t *testing.T) {
	t.Parallel()
	ru := setOf(t, 2, 1, []int64{1}, false, map[int64]liveInfo{1: {}})
	got := string(ru.syncStateData([]string{"b", "nope"}).body)
	want := `{"replicasInfoTable":{"b":{"inSyncReplicas":[{"alive":true,"brokerAddress":"10.0.0.1:10911","brokerId":1,"brokerName":"b"}],` +
		`"masterAddress":"10.0.0.1:10911","masterBrokerId":1,"masterEpoch":1,"notInSyncReplicas":[{"alive":false,"brokerAddress":"10.0.0.2:10911","brokerId":2,"brokerName":"b"}],"syncStateSetEpoch":2}}}`
	if got != want {
		t.Fatalf("body\n got %s\nwant %s", got, want)
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	t.Parallel()
	ru := setOf(t, 3, 2, []int64{2, 3}, false, nil)
	b, err := ru.st.marshal()
	if err != nil {
		t.Fatal(err)
	}
	st := NewState()
	if err := st.restore(b); err != nil {
		t.Fatal(err)
	}
	b2, _ := st.marshal()
	if string(b) != string(b2) {
		t.Fatalf("snapshot changed:\n%s\n%s", b, b2)
	}
	if err := st.restore([]byte("{")); err == nil {
		t.Fatal("bad snapshot accepted")
	}
}

func TestBounds(t *testing.T) {
	t.Parallel()
	st := NewState()
	ru := rules{st: st, hb: NewHeartbeats(2), maxSets: 1, maxReplicas: 2}
	commit := func(r *result) *result { st.applyEvents(r.events); return r }
	if r := commit(ru.applyBrokerID("c", "a", 1, "x;1")); r.code != remoting.Success {
		t.Fatalf("first set: %d", r.code)
	}
	if r := ru.applyBrokerID("c", "b", 1, "x;1"); r.code != remoting.ControllerBrokerIDInvalid {
		t.Fatalf("set over controllerMaxBrokerSets: %d %s", r.code, r.remark)
	}
	commit(ru.applyBrokerID("c", "a", 2, "y;1"))
	if r := ru.applyBrokerID("c", "a", 3, "z;1"); r.code != remoting.ControllerBrokerIDInvalid {
		t.Fatalf("replica over controllerMaxReplicasPerSet: %d %s", r.code, r.remark)
	}
	if r := ru.applyBrokerID("c", "a", 2, "y;1"); r.code != remoting.Success {
		t.Fatalf("re-apply at the bound: %d", r.code)
	}
	for id, want := range []bool{true, true, false} {
		if got := ru.hb.onHeartbeat(heartbeat{Cluster: "c", BrokerName: "a", BrokerID: int64(id)}, nil); got != want {
			t.Fatalf("heartbeat %d: %v", id, got)
		}
	}
	if !ru.hb.onHeartbeat(heartbeat{Cluster: "c", BrokerName: "a", BrokerID: 0}, nil) {
		t.Fatal("a known broker's heartbeat refused at the bound")
	}
}
