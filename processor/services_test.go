package processor

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// svcCall sends one request as the Java client does (which waits for every
// answer, UPDATE_CONSUMER_OFFSET's included) and returns the answer.
func svcCall(t *testing.T, b *broker.Broker, cl *remoting.Client, code int32, ext map[string]string, body []byte) *remoting.Command {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := remoting.NewRequest(code, ext, body)
	req.Language, req.Version = remoting.LangJava, 453
	resp, err := cl.Invoke(ctx, b.Config().Addr(), req)
	if err != nil {
		t.Fatalf("invoke code %d: %v", code, err)
	}
	return resp
}

func expectAnswer(t *testing.T, resp *remoting.Command, code int32, remark string) {
	t.Helper()
	if resp.Code != code || resp.Remark != remark {
		t.Fatalf("answer %d %q, want %d %q", resp.Code, resp.Remark, code, remark)
	}
}

// svcBroker is startBroker with topic T (2 queues) and group G.
func svcBroker(t *testing.T) (*broker.Broker, *remoting.Client) {
	t.Helper()
	b, cl := startBroker(t)
	if err := b.Topics.Put(tables.TopicConfig{TopicName: "T", ReadQueueNums: 2, WriteQueueNums: 2,
		Perm: message.PermRead | message.PermWrite}); err != nil {
		t.Fatal(err)
	}
	if err := b.Groups.Put(tables.DefaultGroupConfig("G")); err != nil {
		t.Fatal(err)
	}
	return b, cl
}

// putKeyed stores n messages in T/0 with KEYS k<i>, stored now.
func putKeyed(t *testing.T, b *broker.Broker, n int) {
	t.Helper()
	h := netip.MustParseAddrPort("127.0.0.1:1234")
	for i := 0; i < n; i++ {
		props := message.AppendProperty(nil, message.PropKeys, "k"+strconv.Itoa(i))
		props = message.AppendProperty(props, message.PropTags, "TagA")
		if _, err := b.Store.Put(&store.PutMessage{Topic: "T", Body: []byte("body" + strconv.Itoa(i)), BornHost: h,
			StoreHost: h, Properties: string(props), BornTimestamp: time.Now().UnixMilli()}); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return b.Store.MaxOffset("T", 0) == int64(n) })
}

// The pull handler encodes the service's answers: a refusal's code and
// remark, a missing field, the response header of an answer, and a long
// poll that times out is answered PULL_NOT_FOUND through the connection.
func TestPullHandlerAnswers(t *testing.T) {
	b, cl := svcBroker(t)
	putBig(t, b, "T", 0, 3)

	resp := svcCall(t, b, cl, remoting.PullMessage, map[string]string{"consumerGroup": "G", "topic": "T"}, nil)
	if resp.Code != remoting.SystemError || !strings.Contains(resp.Remark, "queueId") {
		t.Fatalf("missing queueId: %d %q", resp.Code, resp.Remark)
	}
	req := pullReq("Nope", 0, pullSubscription, "*")
	resp = svcCall(t, b, cl, req.Code, req.FieldMap(), nil)
	expectAnswer(t, resp, remoting.TopicNotExist, "topic[Nope] not exist, apply first please! "+remoting.FAQGroupNotExist)

	req = pullReq("T", 1, pullSubscription|pullCommitOffset, "*")
	req.Set("commitOffset", "1")
	resp = svcCall(t, b, cl, req.Code, req.FieldMap(), nil)
	expectCode(t, resp, remoting.Success)
	for k, want := range map[string]string{"nextBeginOffset": "3", "minOffset": "0", "maxOffset": "3", "suggestWhichBrokerId": "0"} {
		if got := resp.Str(k); got != want {
			t.Fatalf("%s %q, want %q", k, got, want)
		}
	}
	if n := strings.Count(string(resp.Body), "TagA"); n != 2 {
		t.Fatalf("%d records, want 2", n)
	}
	if off, ok := b.Offsets.Query("G", "T", 0); !ok || off != 1 {
		t.Fatalf("commit carried by the pull: %d %v", off, ok)
	}

	req = pullReq("T", 3, pullSubscription|pullSuspend, "*")
	req.Set("suspendTimeoutMillis", "50")
	resp = svcCall(t, b, cl, req.Code, req.FieldMap(), nil)
	expectCode(t, resp, remoting.PullNotFound)
	if resp.Str("nextBeginOffset") != "3" {
		t.Fatalf("timed out: next %q", resp.Str("nextBeginOffset"))
	}
	req = pullReq("T", 30, pullSubscription, "*")
	expectCode(t, svcCall(t, b, cl, req.Code, req.FieldMap(), nil), remoting.PullOffsetMoved)
	testutil.WaitFor(t, 5*time.Second, func() bool { return b.Store.HeldCommitLogFiles() == 0 })
}

// A pull whose pages are not in memory is answered through the connection
// by a cold-pull worker, with the same records the store holds.
func TestPullColdPagesAnswered(t *testing.T) {
	b, cl := svcBroker(t)
	putBig(t, b, "T", 0, 20)
	end := b.Store.MaxPhyOffset()
	filler := make([]store.PutMessage, 64)
	h := netip.MustParseAddrPort("127.0.0.1:1234")
	for i := range filler {
		filler[i] = store.PutMessage{Topic: "F", Body: make([]byte, 8<<10), BornHost: h, StoreHost: h}
	}
	for written := 0; written < 17<<20; written += 64 * 8 << 10 {
		if _, err := b.Store.PutBatch(filler, nil); err != nil {
			t.Fatal(err)
		}
	}
	out, err := b.Store.PageOut(0, end)
	if err != nil || !out {
		t.Skipf("page out: %v %v", out, err)
	}
	req := pullReq("T", 0, pullSubscription, "*")
	resp := svcCall(t, b, cl, req.Code, req.FieldMap(), nil)
	checkRecords(t, b, resp, "T", 0, 20)
	testutil.WaitFor(t, 5*time.Second, func() bool { return b.Store.HeldCommitLogFiles() == 0 })
}

// CHECK_CLIENT_CONFIG: TAG always, SQL92 only with enablePropertyFilter
// and a valid expression.
func TestCheckClientConfig(t *testing.T) {
	b, cl := svcBroker(t)
	body := func(typ, expr string) []byte {
		return []byte(`{"group":"G","subscriptionData":{"topic":"T","expressionType":"` + typ + `","subString":"` + expr + `"}}`)
	}
	expectCode(t, svcCall(t, b, cl, remoting.CheckClientConfig, nil, body("TAG", "a || b")), remoting.Success)
	expectAnswer(t, svcCall(t, b, cl, remoting.CheckClientConfig, nil, body("SQL92", "a > 1")), remoting.SystemError,
		"The broker does not support consumer to filter message by SQL92")
	expectCode(t, svcCall(t, b, cl, remoting.CheckClientConfig, nil, []byte("{")), remoting.SystemError)
}

// The consumer-offset requests: UPDATE_CONSUMER_OFFSET's refusals and
// effect, QUERY_CONSUMER_OFFSET with and without a committed offset and
// setZeroIfNotFound, and the queue offsets and times.
func TestOffsetRequests(t *testing.T) {
	b, cl := svcBroker(t)
	before := time.Now().UnixMilli()
	putKeyed(t, b, 3)
	q := func(group, topic, queue string, kv ...string) map[string]string {
		m := map[string]string{"consumerGroup": group, "topic": topic, "queueId": queue}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	upd := func(group, topic, queue, off string) *remoting.Command {
		return svcCall(t, b, cl, remoting.UpdateConsumerOffset, q(group, topic, queue, "commitOffset", off), nil)
	}
	expectAnswer(t, upd("Nope", "T", "0", "1"), remoting.SubscriptionGroupNotExist, "Group Nope not exist!")
	expectAnswer(t, upd("G", "Nope", "0", "1"), remoting.TopicNotExist, "Topic Nope not exist!")
	expectAnswer(t, upd("G", "T", "1024", "1"), remoting.InvalidParameter,
		"queueId[1024] is illegal, topic:[T] maxTopicQueueNums:[1024]")
	expectCode(t, svcCall(t, b, cl, remoting.UpdateConsumerOffset, q("G", "T", "0"), nil), remoting.SystemError)
	expectCode(t, upd("G", "T", "0", "2"), remoting.Success)
	if off, ok := b.Offsets.Query("G", "T", 0); !ok || off != 2 {
		t.Fatalf("committed %d %v", off, ok)
	}

	query := func(ext map[string]string) *remoting.Command {
		return svcCall(t, b, cl, remoting.QueryConsumerOffset, ext, nil)
	}
	if resp := query(q("G", "T", "0")); resp.Code != remoting.Success || resp.Str("offset") != "2" {
		t.Fatalf("committed: %d %v", resp.Code, resp.FieldMap())
	}
	// None committed, the queue starts at 0: 0, unless told not to.
	if resp := query(q("G2", "T", "1")); resp.Code != remoting.Success || resp.Str("offset") != "0" {
		t.Fatalf("young queue: %d %v", resp.Code, resp.FieldMap())
	}
	expectAnswer(t, query(q("G2", "T", "1", "setZeroIfNotFound", "false")), remoting.QueryNotFound,
		"Not found, do not set to zero, maybe this group boot first")
	expectCode(t, query(map[string]string{"consumerGroup": "G2", "topic": "T"}), remoting.SystemError)

	off := func(code int32, ext map[string]string, field string) string {
		t.Helper()
		resp := svcCall(t, b, cl, code, ext, nil)
		expectCode(t, resp, remoting.Success)
		return resp.Str(field)
	}
	if got := off(remoting.GetMaxOffset, q("", "T", "0"), "offset"); got != "3" {
		t.Fatalf("max offset %s", got)
	}
	if got := off(remoting.GetMinOffset, q("", "T", "0"), "offset"); got != "0" {
		t.Fatalf("min offset %s", got)
	}
	if got := off(remoting.SearchOffsetByTimestamp, q("", "T", "0", "timestamp", strconv.FormatInt(before-1000, 10)), "offset"); got != "0" {
		t.Fatalf("offset by an early time %s", got)
	}
	if got := off(remoting.SearchOffsetByTimestamp, q("", "T", "0", "timestamp", strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)), "offset"); got != "3" {
		t.Fatalf("offset by a future time %s", got)
	}
	if got := off(remoting.GetEarliestMsgStoreTime, q("", "T", "0"), "timestamp"); got < strconv.FormatInt(before-1, 10) || len(got) != len(strconv.FormatInt(before, 10)) {
		t.Fatalf("earliest store time %s, stored after %d", got, before)
	}
	if got := off(remoting.GetEarliestMsgStoreTime, q("", "T", "1"), "timestamp"); got != "-1" {
		t.Fatalf("earliest store time of an empty queue %s", got)
	}
	for _, code := range []int32{remoting.GetMaxOffset, remoting.GetMinOffset, remoting.SearchOffsetByTimestamp,
		remoting.GetEarliestMsgStoreTime} {
		expectCode(t, svcCall(t, b, cl, code, map[string]string{"topic": "T"}, nil), remoting.SystemError)
	}
	expectCode(t, svcCall(t, b, cl, remoting.SearchOffsetByTimestamp, q("", "T", "0"), nil), remoting.SystemError)
}

// LOCK_BATCH_MQ / UNLOCK_BATCH_MQ: a queue is one client's until it
// unlocks it; another client's unlock leaves it; names that could not
// exist are never locked.
func TestLockRequests(t *testing.T) {
	b, cl := svcBroker(t)
	mqs := []tables.MessageQueue{{Topic: "T", BrokerName: "b", QueueID: 0}, {Topic: "T", BrokerName: "b", QueueID: 1},
		{Topic: "bad topic!", BrokerName: "b", QueueID: 0}}
	body := func(client string, mqs []tables.MessageQueue) []byte {
		b, err := json.Marshal(map[string]any{"consumerGroup": "G", "clientId": client, "mqSet": mqs})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	lock := func(client string, mqs []tables.MessageQueue) []tables.MessageQueue {
		t.Helper()
		resp := svcCall(t, b, cl, remoting.LockBatchMQ, nil, body(client, mqs))
		expectCode(t, resp, remoting.Success)
		var out struct {
			LockOKMQSet []tables.MessageQueue `json:"lockOKMQSet"`
		}
		if err := json.Unmarshal(resp.Body, &out); err != nil {
			t.Fatal(err)
		}
		return out.LockOKMQSet
	}
	if got := lock("A", mqs); len(got) != 2 {
		t.Fatalf("A locked %v", got)
	}
	if got := lock("B", mqs); len(got) != 0 {
		t.Fatalf("B locked %v while A holds them", got)
	}
	expectCode(t, svcCall(t, b, cl, remoting.UnlockBatchMQ, nil, body("B", mqs[:1])), remoting.Success)
	if got := lock("B", mqs); len(got) != 0 {
		t.Fatalf("B's unlock released A's lock: %v", got)
	}
	expectCode(t, svcCall(t, b, cl, remoting.UnlockBatchMQ, nil, body("A", mqs[:1])), remoting.Success)
	if got := lock("B", mqs); len(got) != 1 || got[0].QueueID != 0 {
		t.Fatalf("after A's unlock of queue 0 B locked %v", got)
	}
	expectCode(t, svcCall(t, b, cl, remoting.LockBatchMQ, nil, []byte("[")), remoting.SystemError)
	expectCode(t, svcCall(t, b, cl, remoting.UnlockBatchMQ, nil, []byte("[")), remoting.SystemError)
}

// QUERY_MESSAGE: the records indexed under a key, the index values in the
// answer, and QUERY_NOT_FOUND with Apache's remark.
func TestQueryMessageRequest(t *testing.T) {
	b, cl := svcBroker(t)
	putKeyed(t, b, 3)
	ext := func(key string, uniq bool) map[string]string {
		m := map[string]string{"topic": "T", "key": key, "maxNum": "32", "beginTimestamp": "0",
			"endTimestamp": strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)}
		if uniq {
			m[uniqueKeyQueryFlag] = "true"
		}
		return m
	}
	var resp *remoting.Command
	testutil.WaitFor(t, 10*time.Second, func() bool {
		resp = svcCall(t, b, cl, remoting.QueryMessage, ext("k1", false), nil)
		return resp.Code == remoting.Success
	})
	r, _, err := message.DecodeRecord(resp.Body)
	if err != nil || string(r.Body) != "body1" {
		t.Fatalf("k1: %q %v", r.Body, err)
	}
	if resp.Str("indexLastUpdateTimestamp") == "" || resp.Str("indexLastUpdatePhyoffset") == "" {
		t.Fatalf("index values missing: %v", resp.FieldMap())
	}
	resp = svcCall(t, b, cl, remoting.QueryMessage, ext("nokey", true), nil)
	expectAnswer(t, resp, remoting.QueryNotFound, "can not find message, maybe time range not correct")
	if _, ok := resp.Lookup("indexLastUpdateTimestamp"); !ok {
		t.Fatalf("index values missing from QUERY_NOT_FOUND: %v", resp.FieldMap())
	}
	for _, drop := range []string{"topic", "key", "maxNum", "beginTimestamp", "endTimestamp"} {
		m := ext("k1", false)
		delete(m, drop)
		expectCode(t, svcCall(t, b, cl, remoting.QueryMessage, m, nil), remoting.SystemError)
	}
}

// A Go client's UPDATE_CONSUMER_OFFSET is not answered (oneWayForGo): the
// first answer on the connection is that of the request sent behind it,
// and the commit is stored.
func TestUpdateOffsetGoUnanswered(t *testing.T) {
	b, _ := svcBroker(t)
	conn, err := net.Dial("tcp", b.Config().Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	upd := remoting.NewRequest(remoting.UpdateConsumerOffset, map[string]string{"consumerGroup": "G", "topic": "T",
		"queueId": "1", "commitOffset": "7"}, nil)
	upd.Language, upd.Version, upd.Opaque = remoting.LangGo, 317, 1
	probe := remoting.NewRequest(9999, nil, nil)
	probe.Opaque = 2
	if _, err := conn.Write(remoting.AppendFrame(remoting.AppendFrame(nil, upd), probe)); err != nil {
		t.Fatal(err)
	}
	if r := readFrame(t, conn); r.Opaque != 2 {
		t.Fatalf("first answer opaque %d code %d: the Go client's commit was answered", r.Opaque, r.Code)
	}
	if off, ok := b.Offsets.Query("G", "T", 1); !ok || off != 7 {
		t.Fatalf("committed %d %v", off, ok)
	}
}
