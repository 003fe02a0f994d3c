package processor

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/broker/pop"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// popReq is POP_MESSAGE as the 5.x Java client sends it.
func popReq(queueID, maxNums int, invisible, poll time.Duration) *remoting.Command {
	req := &remoting.Command{Code: remoting.PopMessage, Language: remoting.LangJava, Version: 453}
	h := remoting.PopMessageRequestHeader{ConsumerGroup: "G", Topic: "T", QueueID: int32(queueID), MaxMsgNums: int32(maxNums),
		InvisibleTime: invisible.Milliseconds(), PollTime: poll.Milliseconds(), BornTime: time.Now().UnixMilli(),
		InitMode: 1, ExpType: "TAG", Exp: "*"}
	h.Encode(req)
	return req
}

// popped is one record of a pop answer with the handle the Java client
// builds for it (MQClientAPIImpl.processPopResponse).
type popped struct {
	topic     string
	queueID   int32
	offset    int64
	reconsume int32
	body      string
	handle    string
}

func decodePop(t *testing.T, resp *remoting.Command) []popped {
	t.Helper()
	var h remoting.PopMessageResponseHeader
	if err := h.Decode(resp); err != nil {
		t.Fatalf("pop response header: %v", err)
	}
	starts := map[string]string{}
	for _, one := range strings.Split(h.StartOffsetInfo, ";") {
		f := strings.Split(one, " ")
		if len(f) == 3 {
			starts[f[0]+"@"+f[1]] = f[2]
		}
	}
	var out []popped
	b := resp.Body
	for len(b) > 0 {
		v, rest, err := message.DecodeRecordView(b)
		if err != nil {
			t.Fatalf("record: %v", err)
		}
		b = rest
		p := popped{topic: string(v.Topic), queueID: v.QueueID, offset: v.QueueOffset, reconsume: v.ReconsumeTimes, body: string(v.Body)}
		p.handle = message.Property(string(v.Properties), message.PropPopCK)
		if p.handle == "" {
			p.handle = starts["0@"+strconv.Itoa(int(v.QueueID))] + " " + strconv.FormatInt(h.PopTime, 10) + " " +
				strconv.FormatInt(h.InvisibleTime, 10) + " " + strconv.Itoa(int(h.ReviveQid)) + " 0 b " +
				strconv.Itoa(int(v.QueueID)) + " " + strconv.FormatInt(v.QueueOffset, 10)
		}
		out = append(out, p)
	}
	return out
}

// ackReq is ACK_MESSAGE of a popped message as the Java client sends it:
// the real topic from the handle's retry flag, queue and offset from the handle.
func ackReq(t *testing.T, m popped) *remoting.Command {
	t.Helper()
	e, err := message.ParseExtraInfo(m.handle)
	if err != nil {
		t.Fatal(err)
	}
	req := &remoting.Command{Code: remoting.AckMessage, Language: remoting.LangJava, Version: 453}
	h := remoting.AckMessageRequestHeader{ConsumerGroup: "G", Topic: e.RealTopic("T", "G"), QueueID: e.QueueID,
		ExtraInfo: m.handle, Offset: e.MsgQueueOffset}
	h.Encode(req)
	return req
}

// Pop end to end over Remoting: all messages, acks, nothing more while
// invisible, the one not acked made visible sooner by
// CHANGE_MESSAGE_INVISIBLETIME and back from %RETRY%G_T with
// reconsumeTimes 1 and its own POP_CK at its new invisible time; a parked pop answered when
// a message arrives; a pop that waits in vain answered POLLING_TIMEOUT.
func TestPopAckRevive(t *testing.T) {
	t.Parallel() // mostly waiting on invisible times
	b, cl := svcBroker(t)
	putKeyed(t, b, 3)

	resp := invoke(t, cl, b, popReq(-1, 32, time.Hour, 0))
	expectAnswer(t, resp, remoting.Success, "FOUND")
	ms := decodePop(t, resp)
	if len(ms) != 3 || ms[0].topic != "T" || ms[2].offset != 2 {
		t.Fatalf("popped %+v", ms)
	}
	if got := resp.FieldMap()["msgOffsetInfo"]; got != "0 0 0,1,2" {
		t.Fatalf("msgOffsetInfo %q", got)
	}
	for _, m := range ms[:2] {
		expectAnswer(t, invoke(t, cl, b, ackReq(t, m)), remoting.Success, "")
	}
	expectAnswer(t, invoke(t, cl, b, popReq(-1, 32, time.Second, 0)), remoting.PollingTimeout, "NO_MESSAGE_IN_QUEUE")

	// The third becomes visible again in 600ms instead of an hour.
	ch := ackReq(t, ms[2])
	ch.Code = remoting.ChangeMessageInvisibleTime
	ch.SetInt64("invisibleTime", 600)
	began := time.Now()
	resp = invoke(t, cl, b, ch)
	expectCode(t, resp, remoting.Success)
	var chh remoting.ChangeInvisibleTimeResponseHeader
	if err := chh.Decode(resp); err != nil || chh.InvisibleTime != 600 || chh.PopTime < began.UnixMilli() {
		t.Fatalf("change invisible time answer %+v %v", chh, err)
	}
	// Parked until the revive of the third message lands in the retry topic.
	resp = invoke(t, cl, b, popReq(-1, 32, 30*time.Second, 5*time.Second))
	expectAnswer(t, resp, remoting.Success, "FOUND")
	if waited := time.Since(began); waited < 600*time.Millisecond {
		t.Fatalf("redelivered after %v, before the invisible time", waited)
	}
	ms = decodePop(t, resp)
	if len(ms) != 1 || ms[0].topic != "T" || ms[0].reconsume != 1 || ms[0].body != "body2" ||
		!strings.Contains(ms[0].handle, " 1 b 0 ") {
		t.Fatalf("revived %+v", ms)
	}
	expectAnswer(t, invoke(t, cl, b, ackReq(t, ms[0])), remoting.Success, "")

	// A parked pop answered by a new message.
	done := make(chan *remoting.Command, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r, err := cl.Invoke(ctx, b.Config().Addr(), popReq(0, 32, 30*time.Second, 5*time.Second))
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	time.Sleep(300 * time.Millisecond)
	expectCode(t, invoke(t, cl, b, sendV2("T", []byte("late"))), remoting.Success)
	if r := <-done; r == nil || r.Code != remoting.Success {
		t.Fatalf("parked pop: %+v", r)
	}
	resp = invoke(t, cl, b, popReq(1, 32, time.Second, 300*time.Millisecond))
	expectAnswer(t, resp, remoting.PollingTimeout, "NO_MESSAGE_IN_QUEUE")
}

// Hostile and wrong pop-family requests get Apache's codes.
func TestPopRefusals(t *testing.T) {
	b, cl := svcBroker(t)
	putKeyed(t, b, 1)
	expectCode(t, invoke(t, cl, b, popReq(0, 33, time.Second, 0)), remoting.InvalidParameter)
	expectCode(t, invoke(t, cl, b, popReq(7, 1, time.Second, 0)), remoting.InvalidParameter)
	req := popReq(0, 1, time.Second, 0)
	req.Set("topic", "Nope")
	expectCode(t, invoke(t, cl, b, req), remoting.TopicNotExist)
	req = popReq(0, 1, time.Second, 0)
	req.ExtFields = slicesDelete(req.ExtFields, "invisibleTime")
	expectCode(t, invoke(t, cl, b, req), remoting.SystemError)
	req = popReq(0, 1, time.Second, 0)
	req.Set("bornTime", strconv.FormatInt(time.Now().Add(-time.Hour).UnixMilli(), 10))
	expectCode(t, invoke(t, cl, b, req), remoting.PollingTimeout)
	req = popReq(0, 1, time.Second, 0)
	req.Set("consumerGroup", "bad/group") // never created: Apache's answer for a missing group
	expectCode(t, invoke(t, cl, b, req), remoting.SubscriptionGroupNotExist)
	req = popReq(0, 1, time.Second, 0)
	req.Set("maxMsgNums", "99999999999")
	expectCode(t, invoke(t, cl, b, req), remoting.SystemError) // not an int: the header decoder refuses it
	// Invisible times outside the proxy's bounds (Apache's broker takes any).
	for _, it := range []int64{1<<63 - 1, 1 << 62, 12*3600*1000 + 1, -5, -1 << 63} {
		req = popReq(0, 1, time.Second, 0)
		req.Set("invisibleTime", strconv.FormatInt(it, 10))
		expectCode(t, invoke(t, cl, b, req), remoting.InvalidParameter)
	}
	req = popReq(0, 1, time.Second, 0)
	req.Set("exp", "a ||| (")
	req.Set("expType", "SQL92")
	expectCode(t, invoke(t, cl, b, req), remoting.SubscriptionParseFailed)

	ack := func(ext map[string]string) *remoting.Command {
		base := map[string]string{"consumerGroup": "G", "topic": "T", "queueId": "0", "offset": "0",
			"extraInfo": "0 1 1000 0 0 b 0 0"}
		for k, v := range ext {
			base[k] = v
		}
		return remoting.NewRequest(remoting.AckMessage, base, nil)
	}
	expectCode(t, invoke(t, cl, b, ack(map[string]string{"queueId": "9"})), remoting.MessageIllegal)
	expectCode(t, invoke(t, cl, b, ack(map[string]string{"topic": "Nope"})), remoting.TopicNotExist)
	expectCode(t, invoke(t, cl, b, ack(map[string]string{"offset": "99"})), remoting.NoMessage)
	expectCode(t, invoke(t, cl, b, ack(map[string]string{"extraInfo": "x y"})), remoting.SystemError)
	expectCode(t, invoke(t, cl, b, ack(nil)), remoting.Success) // no such checkpoint: Apache answers SUCCESS too
	expectCode(t, invoke(t, cl, b, remoting.NewRequest(remoting.BatchAckMessage, nil, nil)), remoting.NoMessage)
	expectCode(t, invoke(t, cl, b, remoting.NewRequest(remoting.BatchAckMessage, nil, []byte(`{"acks":[{"b":"!!"}]}`))),
		remoting.SystemError)

	ch := remoting.NewRequest(remoting.ChangeMessageInvisibleTime, map[string]string{"consumerGroup": "G", "topic": "T",
		"queueId": "0", "offset": "1", "extraInfo": "0 1 1000 0 0 b 0 0", "invisibleTime": "1000"}, nil)
	expectCode(t, invoke(t, cl, b, ch), remoting.NoMessage) // offset 1 is the queue's end
	for _, it := range []string{"9223372036854775807", "-5", "43200001"} {
		ch.Set("invisibleTime", it)
		ch.Set("offset", "0")
		expectCode(t, invoke(t, cl, b, ch), remoting.InvalidParameter)
	}
}

func slicesDelete(fs []remoting.Field, key string) []remoting.Field {
	out := fs[:0]
	for _, f := range fs {
		if f.Key != key {
			out = append(out, f)
		}
	}
	return out
}

// Checkpoints survive a restart: a message popped and not acked before the
// broker stops is not delivered again before its invisible time, and is
// after it; an acked one never is, even when the offsets file was stale.
func TestPopRestart(t *testing.T) {
	t.Parallel() // mostly waiting on invisible times
	dir := t.TempDir()
	edit := func(c *broker.Config) { c.Store.StorePathRootDir = dir }
	b, cl := serveBroker(t, edit, nil)
	if err := b.Topics.Put(tables.TopicConfig{TopicName: "T", ReadQueueNums: 2, WriteQueueNums: 2,
		Perm: message.PermRead | message.PermWrite}); err != nil {
		t.Fatal(err)
	}
	if err := b.Groups.Put(tables.DefaultGroupConfig("G")); err != nil {
		t.Fatal(err)
	}
	for q, body := range []string{"acked", "not acked"} {
		req := sendV2("T", []byte(body))
		req.Set("e", strconv.Itoa(q)) // queueId
		expectCode(t, invoke(t, cl, b, req), remoting.Success)
		testutil.WaitFor(t, 10*time.Second, func() bool { return b.Store.MaxOffset("T", int32(q)) == 1 })
	}
	popTime := time.Now() // before the broker's pop time
	resp := invoke(t, cl, b, popReq(0, 32, 4*time.Second, 0))
	expectCode(t, resp, remoting.Success)
	expectCode(t, invoke(t, cl, b, ackReq(t, decodePop(t, resp)[0])), remoting.Success)
	expectCode(t, invoke(t, cl, b, popReq(1, 32, 4*time.Second, 0)), remoting.Success)
	// An offsets file older than the revive log, as kill -9 can leave it
	// (the group's offsets and the revive offset are flushed together):
	// recovery must move every offset past what was popped, acked or not.
	for q := int32(0); q < 2; q++ {
		b.Offsets.Commit("G", "T", q, 0)
	}
	b.Offsets.Commit(pop.ReviveGroup, pop.ReviveTopic(b.Config().BrokerClusterName), 0, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	b2, cl2 := serveBroker(t, edit, nil)
	expectCode(t, invoke(t, cl2, b2, popReq(-1, 32, 10*time.Second, 0)), remoting.PollingTimeout)
	testutil.WaitFor(t, 15*time.Second, func() bool {
		resp = invoke(t, cl2, b2, popReq(-1, 32, 10*time.Second, time.Second))
		return resp.Code == remoting.Success
	})
	if since := time.Since(popTime); since < 4*time.Second {
		t.Fatalf("redelivered %v after the pop, invisible time 4s", since)
	}
	ms := decodePop(t, resp)
	if len(ms) != 1 || ms[0].body != "not acked" || ms[0].reconsume != 1 {
		t.Fatalf("after restart %+v", ms)
	}
}

// PEEK_MESSAGE reads without moving anything; NOTIFICATION says whether
// there is something to pop, at once or when it arrives; POLLING_INFO
// counts the pops parked on a queue.
func TestPeekNotificationPollingInfo(t *testing.T) {
	b, cl := svcBroker(t)
	ext := func(kv ...string) map[string]string {
		m := map[string]string{"consumerGroup": "G", "topic": "T", "queueId": "0"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	// G2 notifies and peeks; G pops (and would take the message from a G notification).
	if err := b.Groups.Put(tables.DefaultGroupConfig("G2")); err != nil {
		t.Fatal(err)
	}
	notify := func(poll time.Duration) *remoting.Command {
		return remoting.NewRequest(remoting.Notification, ext("pollTime", strconv.FormatInt(poll.Milliseconds(), 10),
			"bornTime", strconv.FormatInt(time.Now().UnixMilli(), 10), "consumerGroup", "G2"), nil)
	}
	resp := invoke(t, cl, b, notify(0))
	expectCode(t, resp, remoting.Success)
	if resp.FieldMap()["hasMsg"] != "false" {
		t.Fatalf("empty queue: %v", resp.FieldMap())
	}
	expectCode(t, invoke(t, cl, b, remoting.NewRequest(remoting.PeekMessage, ext("maxMsgNums", "8"), nil)), remoting.PullNotFound)

	// A parked pop shows in POLLING_INFO; a parked notification is answered by a send.
	popped := make(chan *remoting.Command, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r, _ := cl.Invoke(ctx, b.Config().Addr(), popReq(0, 1, time.Minute, 2*time.Second))
		popped <- r
	}()
	testutil.WaitFor(t, 5*time.Second, func() bool {
		r := invoke(t, cl, b, remoting.NewRequest(remoting.PollingInfo, ext(), nil))
		return r.Code == remoting.Success && r.FieldMap()["pollingNum"] == "1"
	})
	done := make(chan *remoting.Command, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r, _ := cl.Invoke(ctx, b.Config().Addr(), notify(5*time.Second))
		done <- r
	}()
	time.Sleep(200 * time.Millisecond)
	expectCode(t, invoke(t, cl, b, sendV2("T", []byte("x"))), remoting.Success)
	if r := <-done; r == nil || r.FieldMap()["hasMsg"] != "true" {
		t.Fatalf("parked notification: %+v", r)
	}
	// The parked pop answers with the message before G peeks (seen under
	// -race on a loaded box: the peek ran first and found it).
	if r := <-popped; r == nil || r.Code != remoting.Success {
		t.Fatalf("parked pop: %+v", r)
	}
	// The parked pop took the message for G; G2 has popped nothing and peeks it, twice.
	for range 2 {
		r := invoke(t, cl, b, remoting.NewRequest(remoting.PeekMessage, ext("maxMsgNums", "8", "consumerGroup", "G2"), nil))
		expectAnswer(t, r, remoting.Success, "FOUND")
		if ms := decodePop(t, r); len(ms) != 1 || ms[0].body != "x" {
			t.Fatalf("peeked %+v", ms)
		}
	}
	expectCode(t, invoke(t, cl, b, remoting.NewRequest(remoting.PeekMessage, ext("maxMsgNums", "8"), nil)), remoting.PullNotFound)
	expectCode(t, invoke(t, cl, b, remoting.NewRequest(remoting.PollingInfo, ext("queueId", "5"), nil)), remoting.InvalidParameter)
	expectCode(t, invoke(t, cl, b, remoting.NewRequest(remoting.PeekMessage, ext("topic", "Nope", "maxMsgNums", "1"), nil)),
		remoting.TopicNotExist)
}

// SET_MESSAGE_REQUEST_MODE and QUERY_ASSIGNMENT: a group without a mode is
// assigned its queues to pull (AVG); with POP (mqadmin setConsumeMode) every
// client pops the whole topic (queue -1); the mode is persisted; refusals
// are Apache's.
func TestQueryAssignment(t *testing.T) {
	b, cl := svcBroker(t)
	expectCode(t, invoke(t, cl, b, remoting.NewRequest(remoting.HeartBeat, nil, heartbeatBody("c1", "G", "PG", "T"))), remoting.Success)
	cl2 := remoting.NewClient(testutil.Logger()) // a second connection: clients are told apart by theirs
	t.Cleanup(func() { _ = cl2.Close() })
	expectCode(t, invoke(t, cl2, b, remoting.NewRequest(remoting.HeartBeat, nil, heartbeatBody("c2", "G", "PG", "T"))), remoting.Success)
	query := func(client string) string {
		resp := invoke(t, cl, b, remoting.NewRequest(remoting.QueryAssignment, nil, []byte(
			`{"clientId":"`+client+`","consumerGroup":"G","messageModel":"CLUSTERING","strategyName":"AVG","topic":"T"}`)))
		expectCode(t, resp, remoting.Success)
		return string(resp.Body)
	}
	if got := query("c2"); got != `{"messageQueueAssignments":[{"messageQueue":{"brokerName":"b","queueId":1,"topic":"T"},"mode":"PULL"}]}` {
		t.Fatalf("pull assignment %s", got)
	}
	set := func(body string) *remoting.Command {
		return invoke(t, cl, b, remoting.NewRequest(remoting.SetMessageRequestMode, nil, []byte(body)))
	}
	expectAnswer(t, set(`{"topic":"%RETRY%G","consumerGroup":"G","mode":"POP"}`), remoting.NoPermission, "retry topic is not allowed to set mode")
	expectAnswer(t, set(`{"topic":"Nope","consumerGroup":"G","mode":"POP"}`), remoting.TopicNotExist, "topic[Nope] not exist")
	expectCode(t, set(`{"topic":"T","consumerGroup":"G","mode":"BOGUS"}`), remoting.SystemError)
	expectCode(t, set(`{"topic":"T","consumerGroup":"G","mode":"POP","popShareQueueNum":0}`), remoting.Success)
	if got := query("c1"); got != `{"messageQueueAssignments":[{"messageQueue":{"brokerName":"b","queueId":-1,"topic":"T"},"mode":"POP"}]}` {
		t.Fatalf("pop assignment %s", got)
	}
	// popShareQueueNum 1 with 3 clients and 2 queues: more clients than queues, one queue each, round robin.
	cl3 := remoting.NewClient(testutil.Logger())
	t.Cleanup(func() { _ = cl3.Close() })
	expectCode(t, invoke(t, cl3, b, remoting.NewRequest(remoting.HeartBeat, nil, heartbeatBody("c3", "G", "PG", "T"))), remoting.Success)
	expectCode(t, set(`{"topic":"T","consumerGroup":"G","mode":"POP","popShareQueueNum":1}`), remoting.Success)
	if got := query("c3"); got != `{"messageQueueAssignments":[{"messageQueue":{"brokerName":"b","queueId":0,"topic":"T"},"mode":"POP"}]}` {
		t.Fatalf("popShareQueueNum 1, 3 clients: %s", got)
	}
	resp := invoke(t, cl, b, remoting.NewRequest(remoting.GetAllMessageRequestMode, nil, nil))
	if !strings.Contains(string(resp.Body), `"T":{"G":{"consumerGroup":"G","mode":"POP","popShareQueueNum":1,"topic":"T"}}`) {
		t.Fatalf("request modes %s", resp.Body)
	}
	testutil.WaitFor(t, 5*time.Second, func() bool {
		raw, err := os.ReadFile(filepath.Join(b.Config().Store.StorePathRootDir, "config", "messageRequestMode.json"))
		return err == nil && strings.Contains(string(raw), `"mode":"POP"`)
	})
}

// Orderly pop (FIFO): a queue is locked while what was popped from it is
// neither acked nor visible again; acks move the offset to the first offset
// not acked; a message not acked comes back in order with its consume count
// in orderCountInfo; CHANGE_MESSAGE_INVISIBLETIME extends the lock.
func TestPopOrderly(t *testing.T) {
	t.Parallel() // mostly waiting on invisible times
	b, cl := svcBroker(t)
	putKeyed(t, b, 3)
	order := func(maxNums int, invisible time.Duration) *remoting.Command {
		req := popReq(-1, maxNums, invisible, 0)
		req.Set("order", "true")
		return req
	}
	resp := invoke(t, cl, b, order(2, time.Second))
	expectAnswer(t, resp, remoting.Success, "FOUND")
	f := resp.FieldMap()
	if f["reviveQid"] != "999" || f["orderCountInfo"] != "0 0 0" {
		t.Fatalf("orderly header %v", f)
	}
	ms := decodePop(t, resp)
	if len(ms) != 2 || ms[0].offset != 0 || ms[1].offset != 1 {
		t.Fatalf("orderly pop %+v", ms)
	}
	expectCode(t, invoke(t, cl, b, order(2, time.Second)), remoting.PollingTimeout) // locked
	expectCode(t, invoke(t, cl, b, ackReq(t, ms[0])), remoting.Success)
	if off, _ := b.Offsets.Query("G", "T", 0); off != 1 {
		t.Fatalf("offset after the first ack %d", off)
	}
	expectCode(t, invoke(t, cl, b, order(2, time.Second)), remoting.PollingTimeout) // offset 1 still out
	expectCode(t, invoke(t, cl, b, ackReq(t, ms[1])), remoting.Success)

	resp = invoke(t, cl, b, order(2, 300*time.Millisecond))
	expectAnswer(t, resp, remoting.Success, "FOUND")
	if ms = decodePop(t, resp); len(ms) != 1 || ms[0].offset != 2 {
		t.Fatalf("after the acks %+v", ms)
	}
	time.Sleep(400 * time.Millisecond) // not acked: visible again, in order
	resp = invoke(t, cl, b, order(2, 300*time.Millisecond))
	expectAnswer(t, resp, remoting.Success, "FOUND")
	if f := resp.FieldMap(); f["orderCountInfo"] != "0 qo0%2 1;0 0 1" {
		t.Fatalf("orderCountInfo %q", f["orderCountInfo"])
	}
	ms = decodePop(t, resp)
	ch := ackReq(t, ms[0])
	ch.Code = remoting.ChangeMessageInvisibleTime
	ch.SetInt64("invisibleTime", 5000)
	expectCode(t, invoke(t, cl, b, ch), remoting.Success)
	time.Sleep(400 * time.Millisecond)
	expectCode(t, invoke(t, cl, b, order(2, 300*time.Millisecond)), remoting.PollingTimeout) // lock extended
	expectCode(t, invoke(t, cl, b, ackReq(t, ms[0])), remoting.Success)
	if off, _ := b.Offsets.Query("G", "T", 0); off != 3 {
		t.Fatalf("offset after all acks %d", off)
	}
}

// BATCH_ACK_MESSAGE as the 5.x client sends it (BatchAckMessageRequestBody,
// the acked offsets as Java's BitSet.toByteArray in base64): the offsets
// acked never come back, the one left out does.
func TestPopBatchAck(t *testing.T) {
	t.Parallel() // mostly waiting on invisible times
	b, cl := svcBroker(t)
	putKeyed(t, b, 3)
	resp := invoke(t, cl, b, popReq(0, 32, 600*time.Millisecond, 0))
	expectCode(t, resp, remoting.Success)
	f := resp.FieldMap()
	body := `{"acks":[{"b":"BQ==","c":"G","it":600,"pt":` + f["popTime"] + `,"q":0,"r":"0","rq":0,"so":0,"t":"T"}],"brokerName":"b"}`
	expectCode(t, invoke(t, cl, b, remoting.NewRequest(remoting.BatchAckMessage, nil, []byte(body))), remoting.Success)
	var ms []popped
	testutil.WaitFor(t, 10*time.Second, func() bool {
		r := invoke(t, cl, b, popReq(-1, 32, time.Minute, 500*time.Millisecond))
		if r.Code != remoting.Success {
			return false
		}
		ms = append(ms, decodePop(t, r)...)
		return true
	})
	if len(ms) != 1 || ms[0].body != "body1" || ms[0].reconsume != 1 {
		t.Fatalf("after the batch ack of 0 and 2: %+v", ms)
	}
}

// The FIFO table survives a restart: a queue popped in order and not acked
// stays locked until its invisible time, then gives the same message back
// with its consume count.
func TestPopOrderlyRestart(t *testing.T) {
	t.Parallel() // mostly waiting on invisible times
	dir := t.TempDir()
	edit := func(c *broker.Config) { c.Store.StorePathRootDir = dir }
	b, cl := serveBroker(t, edit, nil)
	if err := b.Topics.Put(tables.TopicConfig{TopicName: "T", ReadQueueNums: 1, WriteQueueNums: 1,
		Perm: message.PermRead | message.PermWrite}); err != nil {
		t.Fatal(err)
	}
	if err := b.Groups.Put(tables.DefaultGroupConfig("G")); err != nil {
		t.Fatal(err)
	}
	putKeyed(t, b, 2)
	order := func(invisible time.Duration) *remoting.Command {
		req := popReq(0, 1, invisible, 0)
		req.Set("order", "true")
		return req
	}
	popped := time.Now() // before the broker's pop time
	expectCode(t, invoke(t, cl, b, order(3*time.Second)), remoting.Success)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	b2, cl2 := serveBroker(t, edit, nil)
	expectCode(t, invoke(t, cl2, b2, order(3*time.Second)), remoting.PollingTimeout) // still locked
	var resp *remoting.Command
	testutil.WaitFor(t, 10*time.Second, func() bool {
		resp = invoke(t, cl2, b2, order(3*time.Second))
		return resp.Code == remoting.Success
	})
	if since := time.Since(popped); since < 3*time.Second {
		t.Fatalf("popped again %v after the first pop, invisible time 3s", since)
	}
	ms := decodePop(t, resp)
	if len(ms) != 1 || ms[0].offset != 0 || resp.FieldMap()["orderCountInfo"] != "0 qo0%0 1;0 0 1" {
		t.Fatalf("after the restart %+v %q", ms, resp.FieldMap()["orderCountInfo"])
	}
}
