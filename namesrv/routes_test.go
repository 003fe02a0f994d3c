package namesrv

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func topicTable(names ...string) map[string]TopicConfig {
	m := make(map[string]TopicConfig, len(names))
	for _, n := range names {
		m[n] = TopicConfig{TopicName: n, ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}
	}
	return m
}

func masterReg(name, addr string, conn uint64, topics ...string) Registration {
	return Registration{
		ClusterName:  "DefaultCluster",
		BrokerAddr:   addr,
		BrokerName:   name,
		BrokerID:     0,
		HAServerAddr: "127.0.0.1:10912",
		Topics:       topicTable(topics...),
		DataVersion:  DataVersion{Counter: 1, Timestamp: 1700000000000},
		ConnID:       conn,
	}
}

func mustRegister(t *testing.T, r *Routes, reg Registration, now time.Time) RegisterResult {
	t.Helper()
	res, err := r.Register(reg, now)
	if err != nil {
		t.Fatalf("register %s: %v", reg.BrokerAddr, err)
	}
	return res
}

func routeJSON(t *testing.T, r *Routes, topic string) []byte {
	t.Helper()
	rd, err := r.Route(topic)
	if err != nil {
		t.Fatalf("route %s: %v", topic, err)
	}
	return rd.AppendJSON(nil)
}

func TestRouteGolden(t *testing.T) {
	r := NewRoutes(DefaultConfig())
	mustRegister(t, r, masterReg("broker-a", "127.0.0.1:10911", 1, "T", "TBW102"), t0)
	testutil.Golden(t, "testdata/route-T.json", routeJSON(t, r, "T"))

	// A second broker group and a slave: sorted by name, ids ascending.
	mustRegister(t, r, masterReg("broker-b", "127.0.0.2:10911", 2, "T", "TBW102"), t0)
	slave := masterReg("broker-a", "127.0.0.3:10911", 3, "T", "TBW102")
	slave.BrokerID = 1
	res := mustRegister(t, r, slave, t0)
	if res.MasterAddr != "127.0.0.1:10911" || res.HAServerAddr != "127.0.0.1:10912" {
		t.Fatalf("slave result %+v", res)
	}
	testutil.Golden(t, "testdata/route-T-two-groups.json", routeJSON(t, r, "T"))
	testutil.Golden(t, "testdata/cluster-two-groups.json", r.ClusterInfo().AppendJSON(nil))
}

func TestRouteOrderTopicConfAndEscaping(t *testing.T) {
	rd := TopicRouteData{
		OrderTopicConf:    "broker-a:4",
		QueueDatas:        []QueueData{{BrokerName: `b"\`, Perm: 6}},
		BrokerDatas:       []BrokerData{{Cluster: "c\n", BrokerName: "é", BrokerAddrs: map[int64]string{}, ZoneName: "z"}},
		FilterServerTable: map[string][]string{"a": {"f1"}},
	}
	testutil.Golden(t, "testdata/route-escaping.json", rd.AppendJSON(nil))
}

func TestRegisterDataVersion(t *testing.T) {
	r := NewRoutes(DefaultConfig())
	reg := masterReg("broker-a", "127.0.0.1:10911", 1, "T")
	reg.Topics = topicTable("T", "U")
	mustRegister(t, r, reg, t0)

	// Same data version: queue data of known topics is not rewritten.
	reg.Topics = map[string]TopicConfig{"T": {TopicName: "T", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6}}
	mustRegister(t, r, reg, t0)
	if rd, _ := r.Route("T"); rd.QueueDatas[0].WriteQueueNums != 4 {
		t.Fatalf("unchanged version rewrote queue data: %+v", rd.QueueDatas)
	}
	// New data version: rewritten; topics the body omits stay (Apache's default).
	reg.DataVersion.Counter++
	mustRegister(t, r, reg, t0)
	if rd, _ := r.Route("T"); rd.QueueDatas[0].WriteQueueNums != 8 {
		t.Fatalf("changed version did not rewrite: %+v", rd.QueueDatas)
	}
	if _, err := r.Route("U"); err != nil {
		t.Fatalf("omitted topic dropped: %v", err)
	}

	changed, have := r.QueryDataVersion(BrokerAddr{"DefaultCluster", "127.0.0.1:10911"}, reg.DataVersion, t0)
	if changed || have == nil || *have != reg.DataVersion {
		t.Fatalf("query data version: changed=%v have=%v", changed, have)
	}
	if changed, _ := r.QueryDataVersion(BrokerAddr{"DefaultCluster", "127.0.0.1:10911"}, DataVersion{}, t0); !changed {
		t.Fatal("different version reported unchanged")
	}
	if changed, have := r.QueryDataVersion(BrokerAddr{"DefaultCluster", "10.9.9.9:1"}, DataVersion{}, t0); !changed || have != nil {
		t.Fatal("unknown broker reported known")
	}
}

func TestRegisterDeleteUnlisted(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DeleteTopicWithBrokerRegistration = true
	r := NewRoutes(cfg)
	mustRegister(t, r, masterReg("broker-a", "127.0.0.1:10911", 1, "T", "U"), t0)
	reg := masterReg("broker-a", "127.0.0.1:10911", 1, "T", "V")
	reg.DataVersion.Counter++
	mustRegister(t, r, reg, t0)
	if got := r.Topics().Topics; !slices.Equal(got, []string{"T", "V"}) {
		t.Fatalf("topics %v", got)
	}
}

func TestRegisterSingleTopicBeforeFullRejected(t *testing.T) {
	r := NewRoutes(DefaultConfig())
	if _, err := r.Register(masterReg("broker-a", "127.0.0.1:10911", 1, "T"), t0); !errors.Is(err, ErrRegisterRejected) {
		t.Fatalf("err = %v", err)
	}
	if ci := r.ClusterInfo(); len(ci.BrokerAddrTable) != 0 || len(ci.ClusterAddrTable) != 0 {
		t.Fatalf("rejected registration left %+v", ci)
	}
}

func TestExpiry(t *testing.T) {
	r := NewRoutes(DefaultConfig())
	mustRegister(t, r, masterReg("broker-a", "127.0.0.1:10911", 1, "T", "U"), t0)
	short := masterReg("broker-b", "127.0.0.2:10911", 2, "T", "U")
	short.HeartbeatTimeout = 10 * time.Second
	mustRegister(t, r, short, t0)

	if gone := r.Expire(t0.Add(DefaultBrokerChannelExpiredTime)); len(gone) != 1 || gone[0].Addr != "127.0.0.2:10911" {
		t.Fatalf("expired %v", gone)
	}
	rd, err := r.Route("T")
	if err != nil || len(rd.QueueDatas) != 1 || rd.QueueDatas[0].BrokerName != "broker-a" {
		t.Fatalf("route after expiry %+v %v", rd, err)
	}
	// A QUERY_DATA_VERSION counts as a heartbeat.
	r.QueryDataVersion(BrokerAddr{"DefaultCluster", "127.0.0.1:10911"}, DataVersion{}, t0.Add(time.Minute))
	if gone := r.Expire(t0.Add(DefaultBrokerChannelExpiredTime + time.Millisecond)); len(gone) != 0 {
		t.Fatalf("refreshed broker expired: %v", gone)
	}
	if gone := r.Expire(t0.Add(time.Minute + DefaultBrokerChannelExpiredTime + time.Millisecond)); len(gone) != 1 {
		t.Fatalf("expired %v", gone)
	}
	if _, err := r.Route("T"); !errors.Is(err, ErrTopicNotExist) {
		t.Fatalf("route after all expired: %v", err)
	}
	if ci := r.ClusterInfo(); len(ci.BrokerAddrTable) != 0 || len(ci.ClusterAddrTable) != 0 {
		t.Fatalf("tables not empty: %+v", ci)
	}
}

func TestConnClosed(t *testing.T) {
	r := NewRoutes(DefaultConfig())
	mustRegister(t, r, masterReg("broker-a", "127.0.0.1:10911", 7, "T", "U"), t0)
	slave := masterReg("broker-a", "127.0.0.3:10911", 8, "T", "U")
	slave.BrokerID = 1
	mustRegister(t, r, slave, t0)

	if gone := r.ConnClosed(99); len(gone) != 0 {
		t.Fatalf("unrelated conn removed %v", gone)
	}
	if gone := r.ConnClosed(7); len(gone) != 1 || gone[0].Addr != "127.0.0.1:10911" {
		t.Fatalf("removed %v", gone)
	}
	// The slave keeps the brokerName's route alive, without a master.
	rd, err := r.Route("T")
	if err != nil {
		t.Fatal(err)
	}
	if got := rd.BrokerDatas[0].BrokerAddrs; len(got) != 1 || got[1] != "127.0.0.3:10911" {
		t.Fatalf("addrs %v", got)
	}
	r.ConnClosed(8)
	if _, err := r.Route("T"); !errors.Is(err, ErrTopicNotExist) {
		t.Fatalf("route: %v", err)
	}
}

func TestUnregisterAndDeleteTopic(t *testing.T) {
	r := NewRoutes(DefaultConfig())
	mustRegister(t, r, masterReg("broker-a", "127.0.0.1:10911", 1, "T", "U"), t0)
	other := masterReg("broker-c", "127.0.0.4:10911", 2, "T", "U")
	other.ClusterName = "Other"
	mustRegister(t, r, other, t0)

	if got := r.TopicsByCluster("Other").Topics; !slices.Equal(got, []string{"T", "U"}) {
		t.Fatalf("topics by cluster %v", got)
	}
	r.DeleteTopic("T", "Other")
	if rd, _ := r.Route("T"); len(rd.QueueDatas) != 1 || rd.QueueDatas[0].BrokerName != "broker-a" {
		t.Fatalf("delete in cluster: %+v", rd.QueueDatas)
	}
	r.DeleteTopic("U", "")
	if got := r.Topics().Topics; !slices.Equal(got, []string{"T"}) {
		t.Fatalf("topics %v", got)
	}
	r.Unregister(BrokerAddr{"DefaultCluster", "127.0.0.1:10911"}, "broker-a")
	if got := r.Topics().Topics; len(got) != 0 {
		t.Fatalf("topics after unregister %v", got)
	}
	if got := r.SystemTopics(); !slices.Equal(got.Topics, []string{"Other", "broker-c"}) || got.BrokerAddr != "127.0.0.4:10911" {
		t.Fatalf("system topics %+v", got)
	}
}

func TestWritePerm(t *testing.T) {
	r := NewRoutes(DefaultConfig())
	mustRegister(t, r, masterReg("broker-a", "127.0.0.1:10911", 1, "T", "U"), t0)
	if n := r.WipeWritePerm("broker-a"); n != 2 {
		t.Fatalf("wiped %d", n)
	}
	if rd, _ := r.Route("T"); rd.QueueDatas[0].Perm != PermRead {
		t.Fatalf("perm %d", rd.QueueDatas[0].Perm)
	}
	if n := r.AddWritePerm("broker-a"); n != 2 {
		t.Fatalf("added %d", n)
	}
	if rd, _ := r.Route("T"); rd.QueueDatas[0].Perm != PermRead|PermWrite {
		t.Fatalf("perm %d", rd.QueueDatas[0].Perm)
	}
}

func TestActingMaster(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SupportActingMaster = true
	r := NewRoutes(cfg)
	on := true
	m := masterReg("broker-a", "127.0.0.1:10911", 1, "T", "U")
	m.EnableActingMaster = &on
	mustRegister(t, r, m, t0)
	s := masterReg("broker-a", "127.0.0.3:10911", 2, "T", "U")
	s.BrokerID, s.EnableActingMaster = 2, &on
	mustRegister(t, r, s, t0)
	r.ConnClosed(1)
	rd, err := r.Route("T")
	if err != nil {
		t.Fatal(err)
	}
	if got := rd.BrokerDatas[0].BrokerAddrs; len(got) != 1 || got[0] != "127.0.0.3:10911" || rd.QueueDatas[0].Perm&PermWrite != 0 {
		t.Fatalf("acting master route %+v", rd)
	}
}

// Master and slave as Apache's RouteInfoManager handles them:
// a slave of a 5.x broker (enableActingMaster sent, false) registering
// before its master gets its topics routed (the prime slave) and no master
// in its answer; the master's registration then answers the slave's next
// one with masterAddr and haServerAddr; a master re-registering at a new
// address replaces the old one under id 0 (the slave learns it at its next
// registration); with the master gone, the slave's entry and the topic's
// queues stay.
func TestMasterSlaveRegistration(t *testing.T) {
	r := NewRoutes(DefaultConfig())
	off := false
	slave := masterReg("broker-a", "127.0.0.3:10911", 3, "T", "TBW102")
	slave.BrokerID, slave.EnableActingMaster = 1, &off
	if res := mustRegister(t, r, slave, t0); res.MasterAddr != "" || res.HAServerAddr != "" {
		t.Fatalf("slave before its master: %+v", res)
	}
	if rd, err := r.Route("T"); err != nil || rd.BrokerDatas[0].BrokerAddrs[1] != "127.0.0.3:10911" {
		t.Fatalf("route with the slave alone: %+v %v", rd, err)
	}
	m := masterReg("broker-a", "127.0.0.1:10911", 1, "T", "TBW102")
	m.EnableActingMaster = &off
	mustRegister(t, r, m, t0)
	if res := mustRegister(t, r, slave, t0); res.MasterAddr != "127.0.0.1:10911" || res.HAServerAddr != "127.0.0.1:10912" {
		t.Fatalf("slave after its master: %+v", res)
	}
	// The master moves (a new host, same broker name and id).
	moved := m
	moved.BrokerAddr, moved.HAServerAddr, moved.ConnID = "127.0.0.9:10911", "127.0.0.9:10912", 9
	moved.DataVersion.Counter++
	mustRegister(t, r, moved, t0.Add(time.Second))
	if res := mustRegister(t, r, slave, t0.Add(time.Second)); res.MasterAddr != "127.0.0.9:10911" || res.HAServerAddr != "127.0.0.9:10912" {
		t.Fatalf("slave after the master moved: %+v", res)
	}
	rd, err := r.Route("T")
	if err != nil || len(rd.BrokerDatas[0].BrokerAddrs) != 2 || rd.BrokerDatas[0].BrokerAddrs[0] != "127.0.0.9:10911" {
		t.Fatalf("route after the master moved: %+v %v", rd, err)
	}
	// The master goes (its connection closes): the slave stays routable.
	r.ConnClosed(9)
	rd, err = r.Route("T")
	if err != nil || len(rd.BrokerDatas[0].BrokerAddrs) != 1 || rd.BrokerDatas[0].BrokerAddrs[1] != "127.0.0.3:10911" ||
		len(rd.QueueDatas) != 1 {
		t.Fatalf("route with the master gone: %+v %v", rd, err)
	}
	if res := mustRegister(t, r, slave, t0.Add(2*time.Second)); res.MasterAddr != "" {
		t.Fatalf("slave with the master gone: %+v", res)
	}
}
