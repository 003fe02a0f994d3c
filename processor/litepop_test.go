package processor

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// liteBroker is a broker with lite topics on (enableLmq,
// enableMultiDispatch), parent topic P (LITE, 1 queue) and lite group G.
func liteBroker(t *testing.T, edits ...func(*broker.Config)) (*broker.Broker, *remoting.Client) {
	t.Helper()
	b, cl := serveBroker(t, func(c *broker.Config) {
		c.Store.EnableLmq, c.Store.EnableMultiDispatch = true, true
		for _, e := range edits {
			e(c)
		}
	}, nil)
	if err := b.Topics.Put(tables.TopicConfig{TopicName: "P", ReadQueueNums: 1, WriteQueueNums: 1,
		Perm: message.PermRead | message.PermWrite, Attributes: map[string]string{tables.AttrMessageType: "LITE"}}); err != nil {
		t.Fatal(err)
	}
	gc := tables.DefaultGroupConfig("G")
	gc.Attributes = map[string]string{"+" + tables.AttrLiteBindTopic: "P"}
	if err := b.Groups.Put(gc); err != nil {
		t.Fatal(err)
	}
	return b, cl
}

// sendLite sends one message of P for lite topic l, as a producer through
// the proxy does (__LITE_TOPIC).
func sendLite(t *testing.T, b *broker.Broker, cl *remoting.Client, l, body string) {
	t.Helper()
	req := sendV2("P", []byte(body))
	req.Set("i", message.SetProperties("", "__LITE_TOPIC", l))
	expectCode(t, invoke(t, cl, b, req), remoting.Success)
}

func ctlReq(body string) *remoting.Command {
	return remoting.NewRequest(remoting.LiteSubscriptionCtl, map[string]string{}, []byte(body))
}

func ctlBodyOf(action, client string, lites ...string) string {
	q := make([]string, len(lites))
	for i, l := range lites {
		q[i] = strconv.Quote(l)
	}
	return `{"subscriptionSet":[{"action":"` + action + `","clientId":"` + client + `","group":"G","topic":"P","liteTopicSet":[` +
		strings.Join(q, ",") + `],"version":1}]}`
}

func popLiteReq(client string, max int, invisible, poll time.Duration) *remoting.Command {
	return remoting.NewRequest(remoting.PopLiteMessage, map[string]string{"clientId": client, "consumerGroup": "G",
		"topic": "P", "maxMsgNum": strconv.Itoa(max), "invisibleTime": strconv.FormatInt(invisible.Milliseconds(), 10),
		"pollTime": strconv.FormatInt(poll.Milliseconds(), 10), "bornTime": strconv.FormatInt(time.Now().UnixMilli(), 10),
		"attemptId": "a-" + strconv.FormatInt(time.Now().UnixNano(), 10)}, nil)
}

// litePopped is one message of a POP_LITE_MESSAGE answer: its lite topic,
// LMQ offset, body and the handle the proxy builds for it.
type litePopped struct {
	lite, body, handle string
	offset             int64
}

func decodePopLiteAnswer(t testing.TB, resp *remoting.Command) ([]litePopped, []string) {
	t.Helper()
	popTime, inv := resp.Str("popTime"), resp.Str("invisibleTime")
	if resp.Str("reviveQid") != "999" {
		t.Fatalf("reviveQid %q", resp.Str("reviveQid"))
	}
	var out []litePopped
	for b := resp.Body; len(b) > 0; {
		v, rest, err := message.DecodeRecordView(b)
		if err != nil {
			t.Fatal(err)
		}
		b = rest
		props := string(v.Properties)
		off, _ := strconv.ParseInt(message.Property(props, message.PropInnerMultiQueueOffset), 10, 64)
		out = append(out, litePopped{lite: message.Property(props, "__LITE_TOPIC"), body: string(v.Body), offset: off,
			handle: "0 " + popTime + " " + inv + " 999 0 b 0 " + strconv.FormatInt(off, 10)})
	}
	var counts []string
	if s := resp.Str("orderCountInfo"); s != "" {
		counts = strings.Split(s, ";")
	}
	return out, counts
}

func ackLiteReq(m litePopped) *remoting.Command {
	return remoting.NewRequest(remoting.AckMessage, map[string]string{"consumerGroup": "G", "topic": "P", "queueId": "0",
		"extraInfo": m.handle, "offset": strconv.FormatInt(m.offset, 10), "liteTopic": m.lite}, nil)
}

// The core path over the wire: subscribe, pop across lite topics, FIFO
// block until acked, ack with Apache's answers, the next batch after the
// ack; a suspended change keeps the consume count; a parked pop woken by
// a send.
func TestLitePopAckOverTheWire(t *testing.T) {
	b, cl := liteBroker(t)
	expectCode(t, invoke(t, cl, b, ctlReq(ctlBodyOf("PARTIAL_ADD", "c1", "a", "b"))), remoting.Success)
	for i := 0; i < 3; i++ {
		sendLite(t, b, cl, "a", "a"+strconv.Itoa(i))
		sendLite(t, b, cl, "b", "b"+strconv.Itoa(i))
	}
	sendLite(t, b, cl, "z", "z0") // not subscribed
	// Each lite topic is popped as one batch, which blocks the topic until
	// acked: a pop that came before a1 and a2 were dispatched would leave
	// them behind a0's invisible time.
	waitForT(t, 10*time.Second, func() bool {
		return b.Store.MaxOffset(message.LiteQueue("P", "a"), 0) == 3 && b.Store.MaxOffset(message.LiteQueue("P", "b"), 0) == 3
	})
	var got []litePopped
	waitForT(t, 10*time.Second, func() bool {
		resp := invoke(t, cl, b, popLiteReq("c1", 32, 10*time.Second, 0))
		if resp.Code == remoting.Success {
			ms, counts := decodePopLiteAnswer(t, resp)
			if len(counts) != len(ms) {
				t.Fatalf("orderCountInfo %v for %d messages", counts, len(ms))
			}
			got = append(got, ms...)
		}
		return len(got) == 6
	})
	for _, m := range got {
		if m.lite == "z" {
			t.Fatal("unsubscribed lite topic popped")
		}
	}
	// Un-acked: both lite topics are blocked.
	expectCode(t, invoke(t, cl, b, popLiteReq("c1", 32, 10*time.Second, 0)), remoting.PollingTimeout)
	var a []litePopped
	for _, m := range got {
		if m.lite == "a" {
			a = append(a, m)
		}
	}
	bad := a[0]
	bad.offset = 99
	expectAnswer(t, invoke(t, cl, b, ackLiteReq(bad)), remoting.NoMessage, "ack offset illegal.")
	wrongQ := ackLiteReq(a[0])
	wrongQ.Set("extraInfo", strings.Replace(a[0].handle, " 999 ", " 3 ", 1))
	expectAnswer(t, invoke(t, cl, b, wrongQ), remoting.InvalidParameter, "ack queue illegal.")
	for _, m := range a {
		expectCode(t, invoke(t, cl, b, ackLiteReq(m)), remoting.Success)
	}
	if off, _ := b.Offsets.Query("G", message.LiteQueue("P", "a"), 0); off != 3 {
		t.Fatalf("lite offset %d after the acks, want 3", off)
	}
	// A parked pop is woken by the next message of a.
	start := time.Now()
	go func() {
		time.Sleep(300 * time.Millisecond)
		sendLite(t, b, cl, "a", "a3")
	}()
	resp := invoke(t, cl, b, popLiteReq("c1", 32, 10*time.Second, 5*time.Second))
	expectCode(t, resp, remoting.Success)
	ms, _ := decodePopLiteAnswer(t, resp)
	if len(ms) != 1 || ms[0].body != "a3" || time.Since(start) > 4*time.Second {
		t.Fatalf("parked pop got %+v after %v", ms, time.Since(start))
	}
	// Suspend: b's batch visible again at once, its count not raised.
	var bs []litePopped
	for _, m := range got {
		if m.lite == "b" {
			bs = append(bs, m)
		}
	}
	cit := remoting.NewRequest(remoting.ChangeMessageInvisibleTime, map[string]string{"consumerGroup": "G", "topic": "P",
		"queueId": "0", "extraInfo": bs[0].handle, "offset": strconv.FormatInt(bs[0].offset, 10), "invisibleTime": "0",
		"liteTopic": "b", "suspend": "true"}, nil)
	expectCode(t, invoke(t, cl, b, cit), remoting.Success)
	waitForT(t, 5*time.Second, func() bool {
		resp := invoke(t, cl, b, popLiteReq("c1", 32, 10*time.Second, 0))
		if resp.Code != remoting.Success {
			return false
		}
		ms, counts := decodePopLiteAnswer(t, resp)
		if len(ms) != 3 || ms[0].lite != "b" || strings.Join(counts, ";") != "0;0;0" {
			t.Fatalf("after suspend: %+v counts %v", ms, counts)
		}
		return true
	})
}

// With liteLagLatencyCollectEnable a lite pop that fills its batch notes
// the store time of the first message it left behind (Apache's
// collectLiteConsumerLagMetrics); one that does not takes the lite topic
// out again.
func TestLitePopNotesLag(t *testing.T) {
	b, cl := liteBroker(t, func(c *broker.Config) { c.LiteLagLatencyCollectEnable = true })
	lmq := message.LiteQueue("P", "a")
	for i := 0; i < 5; i++ {
		sendLite(t, b, cl, "a", "a"+strconv.Itoa(i))
	}
	waitForT(t, 5*time.Second, func() bool { return b.Store.MaxOffset(lmq, 0) == 5 })
	expectCode(t, invoke(t, cl, b, ctlReq(ctlBodyOf("PARTIAL_ADD", "c1", "a"))), remoting.Success)
	noted := func() map[string]int64 {
		out := map[string]int64{}
		b.LiteLag.Range(func(group, parent string, oldest int64) bool { out[group+"/"+parent] = oldest; return true })
		return out
	}
	var got []litePopped
	waitForT(t, 10*time.Second, func() bool {
		resp := invoke(t, cl, b, popLiteReq("c1", 2, 10*time.Second, 0))
		if resp.Code == remoting.Success {
			got, _ = decodePopLiteAnswer(t, resp)
		}
		return len(got) > 0
	})
	third, ok := b.Store.StoreTimeAt(lmq, 0, 2)
	if len(got) != 2 || !ok {
		t.Fatalf("popped %+v; a2 stored at %d %v", got, third, ok)
	}
	if n := noted(); len(n) != 1 || n["G/P"] != third {
		t.Fatalf("noted %v, want G/P at a2's store time %d", n, third)
	}
	for _, m := range got {
		expectCode(t, invoke(t, cl, b, ackLiteReq(m)), remoting.Success)
	}
	got = nil
	waitForT(t, 10*time.Second, func() bool {
		resp := invoke(t, cl, b, popLiteReq("c1", 32, 10*time.Second, 0))
		if resp.Code == remoting.Success {
			got, _ = decodePopLiteAnswer(t, resp)
		}
		return len(got) > 0
	})
	if len(got) != 3 {
		t.Fatalf("second pop %+v", got)
	}
	if n := noted(); len(n) != 0 {
		t.Fatalf("noted %v after a pop that caught up", n)
	}
}

// POP_LITE_MESSAGE's checks in Apache's order, with its remarks.
func TestPopLitePreCheck(t *testing.T) {
	b, cl := liteBroker(t)
	if err := b.Topics.Put(tables.TopicConfig{TopicName: "N", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}); err != nil {
		t.Fatal(err)
	}
	req := func(edit map[string]string) *remoting.Command {
		r := popLiteReq("c1", 4, 10*time.Second, 0)
		for k, v := range edit {
			r.Set(k, v)
		}
		return r
	}
	expectAnswer(t, invoke(t, cl, b, req(map[string]string{"bornTime": "1"})), remoting.PollingTimeout,
		"the broker[127.0.0.1] pop message is timeout too much")
	expectAnswer(t, invoke(t, cl, b, req(map[string]string{"maxMsgNum": "33"})), remoting.InvalidParameter,
		"the broker[127.0.0.1] pop message's num is greater than 32")
	expectAnswer(t, invoke(t, cl, b, req(map[string]string{"topic": "Q"})), remoting.TopicNotExist,
		"topic [Q] not exist, apply first please! "+remoting.FAQSuggestTodo)
	expectAnswer(t, invoke(t, cl, b, req(map[string]string{"topic": "N"})), remoting.InvalidParameter,
		"the topic [N] message type not match")
	// autoCreateSubscriptionGroup (on) makes H, as Apache's findSubscriptionGroupConfig does.
	expectAnswer(t, invoke(t, cl, b, req(map[string]string{"consumerGroup": "H"})), remoting.InvalidParameter,
		"subscription bind topic not match, H")
	r := req(nil)
	for i, f := range r.ExtFields {
		if f.Key == "clientId" {
			r.ExtFields = append(r.ExtFields[:i], r.ExtFields[i+1:]...)
			break
		}
	}
	expectCode(t, invoke(t, cl, b, r), remoting.SystemError)
}

// LITE_SUBSCRIPTION_CTL bodies a client could forge.
func TestLiteCtlHostileBodies(t *testing.T) {
	b, cl := liteBroker(t)
	expectAnswer(t, invoke(t, cl, b, ctlReq("")), remoting.IllegalOperation, "Request body is null.")
	expectAnswer(t, invoke(t, cl, b, ctlReq(`{"subscriptionSet":[]}`)), remoting.IllegalOperation,
		"LiteSubscriptionCtlRequestBody is empty.")
	expectCode(t, invoke(t, cl, b, ctlReq(`{"subscriptionSet":[{"action":"EXPLODE"}]}`)), remoting.SystemError)
	expectCode(t, invoke(t, cl, b, ctlReq(`{"subscriptionSet":`)), remoting.SystemError)
	expectCode(t, invoke(t, cl, b, ctlReq(`{"subscriptionSet":[{"action":2,"clientId":"c","group":"G","topic":"P","liteTopicSet":["x"]}]}`)),
		remoting.Success)
	b2, _ := b.Lite.ParentTopicInfo("P")
	if !strings.Contains(string(b2), `"groups":["G"]`) {
		t.Fatalf("parent info %s", b2)
	}
	names := make([]string, maxCtlLiteNames+1)
	for i := range names {
		names[i] = "n" + strconv.Itoa(i)
	}
	expectCode(t, invoke(t, cl, b, ctlReq(ctlBodyOf("PARTIAL_ADD", "c2", names...))), remoting.LiteSubscriptionQuotaExceeded)
}

func waitForT(t *testing.T, d time.Duration, fn func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !fn() {
		if time.Now().After(end) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Deleting a lite group drops its lite offsets even without cleanOffset;
// deleting the parent topic deletes its lite topics (Apache 5.5).
func TestLiteDeleteCascades(t *testing.T) {
	b, cl := liteBroker(t)
	sendLite(t, b, cl, "a", "a0")
	lmq := message.LiteQueue("P", "a")
	// Dispatched, not only made: the queue exists from the append on, and
	// an entry dispatched after a deletion makes it again.
	waitForT(t, 5*time.Second, func() bool { return b.Store.MaxOffset(lmq, 0) == 1 })
	b.Offsets.Commit("G", lmq, 0, 1)
	del := remoting.NewRequest(remoting.DeleteSubscriptionGroup, map[string]string{"groupName": "G", "cleanOffset": "false"}, nil)
	expectCode(t, invoke(t, cl, b, del), remoting.Success)
	if _, ok := b.Offsets.Query("G", lmq, 0); ok {
		t.Fatal("lite offset kept after its group's deletion")
	}
	expectCode(t, invoke(t, cl, b, remoting.NewRequest(remoting.DeleteTopicInBroker, map[string]string{"topic": "P"}, nil)),
		remoting.Success)
	waitForT(t, 5*time.Second, func() bool { return !b.Store.LmqExists(lmq) && b.Store.LmqNum() == 0 })
}

// A restart keeps lite topics and offsets, forgets subscriptions, events
// and batches in flight: the client's COMPLETE_ADD rebuilds its events and
// an un-acked batch is handed out again at once.
func TestLiteRestart(t *testing.T) {
	dir := t.TempDir()
	lite := func(c *broker.Config) {
		c.Store.EnableLmq, c.Store.EnableMultiDispatch = true, true
		c.Store.StorePathRootDir = dir
	}
	b, cl := serveBroker(t, lite, nil)
	if err := b.Topics.Put(tables.TopicConfig{TopicName: "P", ReadQueueNums: 1, WriteQueueNums: 1,
		Perm: message.PermRead | message.PermWrite, Attributes: map[string]string{tables.AttrMessageType: "LITE"}}); err != nil {
		t.Fatal(err)
	}
	gc := tables.DefaultGroupConfig("G")
	gc.Attributes = map[string]string{"+" + tables.AttrLiteBindTopic: "P"}
	if err := b.Groups.Put(gc); err != nil {
		t.Fatal(err)
	}
	expectCode(t, invoke(t, cl, b, ctlReq(ctlBodyOf("PARTIAL_ADD", "c1", "a"))), remoting.Success)
	for i := 0; i < 3; i++ {
		sendLite(t, b, cl, "a", "a"+strconv.Itoa(i))
	}
	var first []litePopped
	waitForT(t, 5*time.Second, func() bool {
		resp := invoke(t, cl, b, popLiteReq("c1", 2, time.Minute, 0))
		if resp.Code == remoting.Success {
			first, _ = decodePopLiteAnswer(t, resp)
		}
		return len(first) > 0
	})
	expectCode(t, invoke(t, cl, b, ackLiteReq(first[0])), remoting.Success)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	b2, cl2 := serveBroker(t, lite, nil)
	expectCode(t, invoke(t, cl2, b2, ctlReq(ctlBodyOf("COMPLETE_ADD", "c1", "a"))), remoting.Success)
	var again []litePopped
	waitForT(t, 5*time.Second, func() bool {
		resp := invoke(t, cl2, b2, popLiteReq("c1", 32, time.Minute, 0))
		if resp.Code == remoting.Success {
			again, _ = decodePopLiteAnswer(t, resp)
		}
		return len(again) > 0
	})
	if again[0].offset != first[0].offset+1 || len(again) != 3-int(first[0].offset+1) {
		t.Fatalf("after the restart %+v, first batch %+v", again, first)
	}
}
