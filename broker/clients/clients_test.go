package clients

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

func newTestService(t *testing.T) *Service {
	t.Helper()
	dir := t.TempDir()
	return New(Deps{Clients: tables.NewClients(time.Minute, zerolog.Nop()),
		Groups:            tables.NewGroups(filepath.Join(dir, "subscriptionGroup.json"), 8, func() bool { return true }),
		Topics:            tables.NewTopics(filepath.Join(dir, "topics.json"), 8, func() {}, func() bool { return false }),
		Locks:             tables.NewLocks(tables.LockMaxLive),
		MaxTopicQueueNums: func() int32 { return 8 }}, zerolog.Nop())
}

// A heartbeat registers its consumer group and creates the group's retry
// topic; a name no group may have is dropped, not registered.
func TestHeartbeat(t *testing.T) {
	s := newTestService(t)
	gc := tables.DefaultGroupConfig("CG")
	gc.NotifyConsumerIdsChangedEnable = false // a bare Conn has no server to notify through
	if err := s.d.Groups.Put(gc); err != nil {
		t.Fatal(err)
	}
	c := &remoting.Conn{ID: 1, Remote: "10.0.0.1:5"}
	res := s.Heartbeat(c, tables.Heartbeat{ClientID: "c1", Language: remoting.LangJava, Version: 317, Producers: []string{"PG"},
		Consumers: []tables.HeartbeatConsumer{{Group: "CG", MessageModel: "CLUSTERING",
			Subscriptions: []tables.SubscriptionData{{Topic: "T", SubString: "*"}}}, {Group: "../x"}}})
	if res.Consumers != 1 || res.Producers != 1 || res.Dropped != 1 {
		t.Fatalf("heartbeat %+v", res)
	}
	if _, ok := s.d.Topics.Get(message.RetryGroupPrefix + "CG"); !ok {
		t.Fatal("no retry topic for CG")
	}
	if ids, err := s.ConsumerIDs("CG"); err != nil || len(ids) != 1 || ids[0] != "c1" {
		t.Fatalf("members of CG: %v %v", ids, err)
	}
	if _, err := s.ConsumerIDs("../x"); err == nil {
		t.Fatal("a dropped group has members")
	}
}

// Only queues that could exist are locked: a group or topic breaking the
// name rules and queue ids outside [0, maxTopicQueueNums) never enter the
// table; the rest are locked and released.
func TestLockBatchLocksOnlyRealQueues(t *testing.T) {
	s := newTestService(t)
	now := time.Now()
	qs := []tables.MessageQueue{{Topic: "T", BrokerName: "b", QueueID: 0}, {Topic: "T", BrokerName: "b", QueueID: 8},
		{Topic: "T", BrokerName: "b", QueueID: -1}, {Topic: strings.Repeat("t", 200), BrokerName: "b", QueueID: 1}}
	if got := s.LockBatch(tables.LockBatchRequest{Group: "../g", ClientID: "c1", Queues: qs, Now: now}); len(got) != 0 {
		t.Fatalf("locked for a bad group: %v", got)
	}
	got := s.LockBatch(tables.LockBatchRequest{Group: "G", ClientID: "c1", ConnID: 1, Queues: qs, Now: now})
	if len(got) != 1 || got[0].QueueID != 0 {
		t.Fatalf("locked %v, want T/0 only", got)
	}
	if got := s.LockBatch(tables.LockBatchRequest{Group: "G", ClientID: "c2", Queues: qs[:1], Now: now}); len(got) != 0 {
		t.Fatalf("c2 got c1's lock: %v", got)
	}
	s.UnlockBatch(tables.LockBatchRequest{Group: "G", ClientID: "c1", Queues: qs[:1]})
	if got := s.LockBatch(tables.LockBatchRequest{Group: "G", ClientID: "c2", Queues: qs[:1], Now: now}); len(got) != 1 {
		t.Fatalf("c2 after c1 unlocked: %v", got)
	}
}
