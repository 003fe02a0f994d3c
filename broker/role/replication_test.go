package role

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/ha"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/namesrv/namesrvtest"
	"github.com/rocketgo/rocketgo/remoting"
)

// A master answering the metadata requests with garbage (bad JSON, a topic
// name breaking the rules, a delay level out of range) changes nothing on
// the slave: each part fails on its own, with an error naming it.
func TestSlaveSyncHostileMaster(t *testing.T) {
	bodies := map[int32]string{
		remoting.GetAllTopicConfig:             `{"topicConfigTable":{"a/../b":{"topicName":"a/../b","readQueueNums":1,"writeQueueNums":1,"perm":6}},"dataVersion":{"counter":9}}`,
		remoting.GetAllConsumerOffset:          `{"offsetTable":{"T@G":{0:`,
		remoting.GetAllDelayOffset:             `{"offsetTable":{99999:1}}`,
		remoting.GetAllSubscriptionGroupConfig: `[1,2,3]`,
	}
	tbl := remoting.Table{}
	for code, body := range bodies {
		tbl[code] = func(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
			resp := remoting.NewResponse(req, remoting.Success, "")
			resp.Body = []byte(body)
			return resp
		}
	}
	srv := remoting.NewServer(remoting.ServerConfig{Addr: "127.0.0.1:0", NumEventLoop: 1, Limits: remoting.DefaultLimits()},
		tbl, zerolog.Nop())
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	s := newHarness(t, func(c *Config) { c.BrokerID, c.HA.BrokerRole = 1, ha.Slave }, nil)
	if err := s.groups.Put(tables.DefaultGroupConfig("G")); err != nil {
		t.Fatal(err)
	}
	topics, topicsVersion := s.topics.Snapshot()
	groups := s.groups.Snapshot()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.SyncFromMaster(ctx, srv.Addr())
	for _, part := range []string{"consumer offsets", "delay offsets", "subscription groups"} {
		if err == nil || !strings.Contains(err.Error(), "sync "+part) {
			t.Errorf("sync error %v does not name %s", err, part)
		}
	}
	if _, ok := s.topics.Get("a/../b"); ok {
		t.Error("a topic breaking the rules was taken")
	}
	if got := s.groups.Snapshot(); len(got.Groups) != len(groups.Groups) || got.DataVersion != groups.DataVersion {
		t.Errorf("groups changed: %+v", got)
	}
	if got, v := s.topics.Snapshot(); len(got) > len(topics) {
		t.Errorf("topics grew: %d -> %d (version %+v -> %+v)", len(topics), len(got), topicsVersion, v)
	}
}

// A slave's timer counts are its master's as of the last sync (Apache's
// syncTimerMetrics), checked as a hostile answer is; a broker whose timer
// delivers keeps its own.
func TestSlaveTakesTimerMetrics(t *testing.T) {
	timerOn := func(c *Config) { c.TimerWheelEnable = true }
	m := newHarness(t, timerOn, nil)
	m.timers.running.Store(true)
	m.counts.Enqueued("Real")
	m.counts.Enqueued("Real")
	if got := m.TimerTiming(); len(got) != 1 || got["Real"] != 2 {
		t.Fatalf("master's counts: %v", got)
	}
	fromMaster, err := m.TimerMetrics()
	if err != nil {
		t.Fatal(err)
	}
	s := newHarness(t, timerOn, nil)
	if got := s.TimerTiming(); len(got) != 0 {
		t.Fatalf("slave before the sync: %v", got)
	}
	if err := s.takeTimerMetrics(fromMaster); err != nil {
		t.Fatal(err)
	}
	if got := s.TimerTiming(); len(got) != 1 || got["Real"] != 2 {
		t.Fatalf("slave after the sync: %v", got)
	}
	body, err := s.TimerMetrics()
	if err != nil {
		t.Fatal(err)
	}
	var answer timerMetricsBody
	if err := json.Unmarshal(body, &answer); err != nil || answer.TimingCount["Real"].Count != 2 {
		t.Fatalf("the slave's GET_TIMER_METRICS: %+v %v", answer, err)
	}
	for _, bad := range []string{`{"timingCount":`, `[1]`} {
		if err := s.takeTimerMetrics([]byte(bad)); err == nil {
			t.Errorf("%s taken", bad)
		}
	}
	// Names and counts no topic can have are left out; the rest is taken.
	if err := s.takeTimerMetrics([]byte(`{"timingCount":{"../x":{"count":1},"Neg":{"count":-5},"Ok":{"count":3}}}`)); err != nil {
		t.Fatal(err)
	}
	if got := s.TimerTiming(); len(got) != 1 || got["Ok"] != 3 {
		t.Fatalf("slave after a hostile answer: %v", got)
	}
	if err := m.takeTimerMetrics([]byte(`{"timingCount":{"Other":{"count":9}}}`)); err != nil {
		t.Fatal(err)
	}
	if got := m.TimerTiming(); got["Other"] != 0 || got["Real"] != 2 {
		t.Fatalf("a delivering broker reported a copy: %v", got)
	}
	// Without the timer there is nothing to serve: Apache's remark.
	off := newHarness(t, nil, nil)
	if _, err := off.TimerMetrics(); err == nil || !strings.Contains(err.Error(), "The timer message store is null") {
		t.Fatalf("GET_TIMER_METRICS without the timer: %v", err)
	}
}

// masterAt and slaveAt are brokers b's master and slave registering with
// the name server at ns. Nothing listens on their addresses: the slave's
// metadata syncs fail at once, which these tests do not look at.
func masterAt(ns string) func(*Config) {
	return func(c *Config) {
		c.NamesrvAddrs, c.Addr, c.HAServerAddr = []string{ns}, "127.0.0.1:1", "127.0.0.2:2"
	}
}

func slaveAt(ns string) func(*Config) {
	return func(c *Config) {
		c.NamesrvAddrs, c.Addr, c.HAServerAddr = []string{ns}, "127.0.0.1:3", "127.0.0.1:4"
		c.BrokerID, c.HA.BrokerRole = 1, ha.Slave
	}
}

// A master and its slave register with a name server: the route holds
// both (brokerAddrs {0: master, 1: slave}); the slave learns the master's
// remoting address and HA address (brokerIP2:haListenPort) from the
// answer and hands the latter to its replication service, which is shut
// down with the role.
func TestSlaveLearnsMaster(t *testing.T) {
	ns := namesrvtest.Run(t)
	m := newHarness(t, masterAt(ns.Addr()), withFakeHA(&fakeHA{}))
	m.start(t)
	if err := m.topics.Put(tables.TopicConfig{TopicName: "T", ReadQueueNums: 1, WriteQueueNums: 1, Perm: message.PermRead | message.PermWrite}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { _, err := ns.Routes.Route("T"); return err == nil })
	fake := &fakeHA{}
	s := newHarness(t, slaveAt(ns.Addr()), withFakeHA(fake))
	s.start(t)
	testutil.WaitFor(t, 10*time.Second, func() bool { return s.MasterAddr() != "" && len(fake.learned()) > 0 })
	if s.MasterAddr() != "127.0.0.1:1" {
		t.Errorf("slave's master %q, want 127.0.0.1:1", s.MasterAddr())
	}
	if got := fake.learned()[0]; got != "127.0.0.2:2" {
		t.Errorf("slave's master HA address %q, want 127.0.0.2:2", got)
	}
	rd, err := ns.Routes.Route("T")
	if err != nil || len(rd.BrokerDatas) != 1 {
		t.Fatalf("route: %+v %v", rd, err)
	}
	if addrs := rd.BrokerDatas[0].BrokerAddrs; addrs[0] != "127.0.0.1:1" || addrs[1] != "127.0.0.1:3" {
		t.Errorf("brokerAddrs %v", addrs)
	}
	s.stop()
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if !fake.stopped {
		t.Error("replication service not shut down")
	}
}

// A fixed haMasterAddress is not replaced by the name servers' answers
// (Apache: updateMasterHAServerAddrPeriodically false).
func TestFixedHAMasterAddress(t *testing.T) {
	ns := namesrvtest.Run(t)
	newHarness(t, masterAt(ns.Addr()), withFakeHA(&fakeHA{})).start(t)
	// The slave's first answer names the master only once the master is
	// registered; the next comes registerNameServerPeriod later.
	testutil.WaitFor(t, 10*time.Second, func() bool { return len(ns.Routes.ClusterInfo().BrokerAddrTable) == 1 })
	fake := &fakeHA{}
	s := newHarness(t, func(c *Config) {
		slaveAt(ns.Addr())(c)
		c.HA.HAMasterAddress = "10.9.9.9:10912"
	}, withFakeHA(fake))
	s.start(t)
	testutil.WaitFor(t, 10*time.Second, func() bool { return s.MasterAddr() != "" })
	if got := fake.learned(); len(got) != 0 {
		t.Errorf("fixed master HA address replaced by %v", got)
	}
}
