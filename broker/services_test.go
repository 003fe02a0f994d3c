package broker

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker/admin"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/remoting/remotingtest"
)

// The consumer-offset services: commit refusals (Apache's codes and
// remarks) and effect, the query's answers with and without a committed
// offset, and the queue offsets and times.
func TestOffsetServices(t *testing.T) {
	b := pullBroker(t, nil)
	before := time.Now().UnixMilli()
	putT(t, b, "A", "B", "C")

	req := tables.QueueOffsetRequest{Group: "G", Topic: "T", QueueID: 0, Offset: 2}
	for _, tc := range []struct {
		edit   func(*tables.QueueOffsetRequest)
		code   int32
		remark string
	}{
		{func(r *tables.QueueOffsetRequest) { r.Group = "Nope" }, remoting.SubscriptionGroupNotExist, "Group Nope not exist!"},
		{func(r *tables.QueueOffsetRequest) { r.Topic = "Nope" }, remoting.TopicNotExist, "Topic Nope not exist!"},
		{func(r *tables.QueueOffsetRequest) { r.QueueID = 1024 }, remoting.InvalidParameter,
			"queueId[1024] is illegal, topic:[T] maxTopicQueueNums:[1024]"},
		{func(r *tables.QueueOffsetRequest) { r.QueueID = -1 }, remoting.InvalidParameter,
			"queueId[-1] is illegal, topic:[T] maxTopicQueueNums:[1024]"},
	} {
		r := req
		tc.edit(&r)
		remotingtest.WantRefusal(t, b.Admin.CommitOffset(r), tc.code, tc.remark)
	}
	if _, ok := b.Offsets.Query("Nope", "T", 0); ok {
		t.Fatal("a refused commit was stored")
	}
	if err := b.Admin.CommitOffset(req); err != nil {
		t.Fatal(err)
	}
	if off, err := b.Admin.QueryConsumerOffset(req); err != nil || off != 2 {
		t.Fatalf("committed: %d %v", off, err)
	}

	// None committed: 0 while the queue starts at 0, unless told not to.
	fresh := tables.QueueOffsetRequest{Group: "G2", Topic: "T", QueueID: 0}
	if off, err := b.Admin.QueryConsumerOffset(fresh); err != nil || off != 0 {
		t.Fatalf("young queue: %d %v", off, err)
	}
	no, yes := false, true
	fresh.SetZeroIfNotFound = &no
	_, err := b.Admin.QueryConsumerOffset(fresh)
	remotingtest.WantRefusal(t, err, remoting.QueryNotFound, "Not found, do not set to zero, maybe this group boot first")
	if !errors.Is(err, tables.ErrOffsetNotFound) {
		t.Fatalf("%v is not tables.ErrOffsetNotFound", err)
	}
	fresh.SetZeroIfNotFound = &yes
	if off, err := b.Admin.QueryConsumerOffset(fresh); err != nil || off != 0 {
		t.Fatalf("setZeroIfNotFound: %d %v", off, err)
	}

	if b.Admin.QueueMaxOffset("T", 0) != 3 || b.Admin.QueueMinOffset("T", 0) != 0 || b.Admin.QueueMaxOffset("Nope", 0) != 0 {
		t.Fatalf("queue offsets [%d, %d)", b.Admin.QueueMinOffset("T", 0), b.Admin.QueueMaxOffset("T", 0))
	}
	future := time.Now().Add(time.Hour).UnixMilli()
	last, _ := b.Store.EarliestMessageTime("T", 0)
	for _, c := range []struct {
		ts    int64
		upper bool
		want  int64
	}{
		{before - 1000, false, 0}, {future, false, 3}, // lower: the first at or after
		{before - 1000, true, 0}, {future, true, 2}, // upper: the last at or before (0 if none)
		{last, true, -1}, // all three may share a millisecond: checked below
	} {
		got := b.Admin.SearchOffset("T", 0, c.ts, c.upper)
		if c.want >= 0 && got != c.want {
			t.Errorf("offset by time %d (upper %v) = %d, want %d", c.ts, c.upper, got, c.want)
		}
		if c.want < 0 && (got < 0 || got > 2 || b.Admin.SearchOffset("T", 0, c.ts, false) != 0) {
			t.Errorf("offset by the first store time %d: upper %d, lower %d", c.ts, got, b.Admin.SearchOffset("T", 0, c.ts, false))
		}
	}
	spans, err := b.Admin.ConsumeTimeSpan("T", "CG_span")
	if err != nil || len(spans) == 0 {
		t.Fatalf("ConsumeTimeSpan: %v %v", spans, err)
	}
	if s := spans[0]; s.MinTime < before || s.MaxTime < s.MinTime || s.ConsumeTime != s.MinTime || s.Lag <= before {
		t.Errorf("span without a consumer offset: %+v (Apache's lag is now+1)", s)
	}
	b.Offsets.Commit("CG_span", "T", 0, 1)
	if s, _ := b.Admin.ConsumeTimeSpan("T", "CG_span"); s[0].ConsumeTime != s[0].MinTime || s[0].Lag < 0 || s[0].Lag > time.Now().UnixMilli()-before+1000 {
		t.Errorf("span after consuming one: %+v", s[0])
	}
	if v, err := b.Admin.QueryConsumeQueue("T", 0, 1, 5); err != nil || v.Min != 0 || v.Max != 3 || len(v.Entries) != 2 ||
		v.Entries[0].QueueOffset != 1 || v.Entries[1].PhyOffset <= v.Entries[0].PhyOffset {
		t.Errorf("QueryConsumeQueue(T-0, 1, 5) = %+v, %v", v, err)
	}
	if v, err := b.Admin.QueryConsumeQueue("T", 0, 3, 5); err != nil || v.Entries != nil {
		t.Errorf("QueryConsumeQueue past the end = %+v, %v", v, err)
	}
	_, err = b.Admin.QueryConsumeQueue("Nope", 0, 0, 1)
	remotingtest.WantRefusal(t, err, remoting.SystemError, "0@Nope is not exist!")
	if _, err := b.Admin.ConsumeTimeSpan("Nope", "CG_span"); err == nil {
		t.Error("time span of an unknown topic")
	}
	if got := b.Admin.EarliestMsgStoreTime("T", 0); got < before || got > time.Now().UnixMilli() {
		t.Fatalf("earliest store time %d, stored after %d", got, before)
	}
	if got := b.Admin.EarliestMsgStoreTime("T", 1); got != -1 {
		t.Fatalf("earliest store time of an empty queue %d", got)
	}
}

// LockBatch and UnlockBatch: one client per queue, renewal by the holder,
// unlock by the holder only, never a name that could not exist.
func TestLockServices(t *testing.T) {
	b := pullBroker(t, nil)
	now := time.Now()
	mqs := []tables.MessageQueue{{Topic: "T", BrokerName: "b", QueueID: 0}, {Topic: "T", BrokerName: "b", QueueID: 1}, {Topic: "bad topic!", BrokerName: "b", QueueID: 0}, {Topic: "T", BrokerName: "b", QueueID: 1024}}
	lock := func(client string, conn uint64, at time.Time) []tables.MessageQueue {
		return b.Members.LockBatch(tables.LockBatchRequest{Group: "G", ClientID: client, ConnID: conn, Queues: mqs, Now: at})
	}
	if got := lock("A", 1, now); len(got) != 2 {
		t.Fatalf("A locked %v", got)
	}
	if got := lock("A", 1, now.Add(time.Second)); len(got) != 2 {
		t.Fatalf("A's renewal %v", got)
	}
	if got := lock("B", 2, now.Add(time.Second)); len(got) != 0 {
		t.Fatalf("B locked %v", got)
	}
	b.Members.UnlockBatch(tables.LockBatchRequest{Group: "G", ClientID: "B", Queues: mqs})
	if !b.Locks.Held("G", time.Now()) {
		t.Fatal("B's unlock released A's locks")
	}
	b.Members.UnlockBatch(tables.LockBatchRequest{Group: "G", ClientID: "A", Queues: mqs[:1]})
	if got := lock("B", 2, now.Add(time.Second)); len(got) != 1 || got[0].QueueID != 0 {
		t.Fatalf("B after A's unlock of queue 0: %v", got)
	}
	// The lock of A's renewal expires lockMaxLiveTime later.
	if got := lock("B", 2, now.Add(time.Second+tables.LockMaxLive+time.Millisecond)); len(got) != 2 {
		t.Fatalf("B after A's lock expired: %v", got)
	}
	if got := b.Members.LockBatch(tables.LockBatchRequest{Group: "bad group!", ClientID: "A", Queues: mqs, Now: now}); got == nil || len(got) != 0 {
		t.Fatalf("bad group locked %v", got)
	}
}

// QueryMessage: the records under a key, QUERY_NOT_FOUND with the index
// values otherwise; a unique-key query takes defaultQueryMaxNum.
func TestQueryMessageService(t *testing.T) {
	b := pullBroker(t, nil)
	for i, key := range []string{"k0", "k1", "k1"} {
		m := testMsg("T", props("KEYS", key))
		m.Body = []byte{byte('0' + i)}
		if _, err := b.Store.Put(m); err != nil {
			t.Fatal(err)
		}
	}
	end := time.Now().Add(time.Hour).UnixMilli()
	var res admin.QueryMessageResult
	testutil.WaitFor(t, 10*time.Second, func() bool {
		var err error
		res, err = b.Admin.QueryMessage(admin.QueryMessageRequest{Topic: "T", Key: "k1", MaxNum: 32, End: end})
		return err == nil
	})
	if strings.Count(string(res.Body), "KEYS\x01k1\x02") != 2 || res.IndexLastUpdateTimestamp == 0 {
		t.Fatalf("k1: %d bytes, index time %d", len(res.Body), res.IndexLastUpdateTimestamp)
	}
	if res, _ = b.Admin.QueryMessage(admin.QueryMessageRequest{Topic: "T", Key: "k1", MaxNum: 1, End: end}); strings.Count(string(res.Body), "KEYS") != 1 {
		t.Fatalf("maxNum 1: %d bytes", len(res.Body))
	}
	if res, _ = b.Admin.QueryMessage(admin.QueryMessageRequest{Topic: "T", Key: "k1", MaxNum: 0, End: end, UniqKey: true}); strings.Count(string(res.Body), "KEYS") != 2 {
		t.Fatalf("unique key query (defaultQueryMaxNum): %d bytes", len(res.Body))
	}
	_, err := b.Admin.QueryMessage(admin.QueryMessageRequest{Topic: "T", Key: "nokey", MaxNum: 32, End: end})
	remotingtest.WantRefusal(t, err, remoting.QueryNotFound, "can not find message, maybe time range not correct")
	if !errors.Is(err, admin.ErrMessageNotFound) {
		t.Fatalf("%v is not ErrMessageNotFound", err)
	}
}

// CheckFilter: TAG always; SQL92 only with enablePropertyFilter and an
// expression that compiles; any other type never.
func TestCheckFilter(t *testing.T) {
	b := pullBroker(t, nil)
	if err := b.Pulls.CheckFilter("TAG", "a || b"); err != nil {
		t.Fatal(err)
	}
	remotingtest.WantRefusal(t, b.Pulls.CheckFilter("SQL92", "a > 1"), remoting.SystemError,
		"The broker does not support consumer to filter message by SQL92")
	b.updateConfig(func(c *Config) { c.EnablePropertyFilter = true })
	if err := b.Pulls.CheckFilter("SQL92", "a > 1"); err != nil {
		t.Fatal(err)
	}
	var r *remoting.Refusal
	if err := b.Pulls.CheckFilter("SQL92", "a >"); !errors.As(err, &r) || r.Code != remoting.SubscriptionParseFailed || r.Remark == "" {
		t.Fatalf("bad SQL92: %v", err)
	}
	remotingtest.WantRefusal(t, b.Pulls.CheckFilter("CLASS", "x"), remoting.SystemError,
		"The broker does not support consumer to filter message by CLASS")
}

// Offsets.Groups lists the groups with offsets of a topic; DeleteTopic
// drops them all and no other topic's, even one whose name the topic's
// prefixes.
func TestOffsetsOfTopic(t *testing.T) {
	o := tables.NewOffsets(t.TempDir()+"/consumerOffset.json", 1024)
	o.Commit("G2", "T", 0, 1)
	o.Commit("G1", "T", 1, 2)
	o.Commit("G1", "TX", 0, 3)
	if got := o.Groups("T"); len(got) != 2 || got[0] != "G1" || got[1] != "G2" {
		t.Fatalf("groups of T %v", got)
	}
	o.DeleteTopic("T")
	if got := o.Groups("T"); len(got) != 0 {
		t.Fatalf("groups of T after delete %v", got)
	}
	if off, ok := o.Query("G1", "TX", 0); !ok || off != 3 {
		t.Fatalf("TX lost: %d %v", off, ok)
	}
}
