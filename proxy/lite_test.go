package proxy

import (
	"strings"
	"testing"
	"time"

	v2 "github.com/rocketgo/rocketgo/apis/v2"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/namesrv/namesrvtest"
)

// The LITE_SUBSCRIPTION_CTL body is LiteSubscriptionCtlRequestBody as
// fastjson2 writes it (fields by name; the broker reads it with fastjson2).
func TestLiteCtlBody(t *testing.T) {
	sub := liteSub{action: "PARTIAL_ADD", clientID: `c"1`, group: "G", topic: "P", lites: []string{"a", "b-1"}, version: 7,
		offset: &v2.OffsetOption{OffsetType: &v2.OffsetOption_Policy_{Policy: v2.OffsetOption_MIN}}}
	got := string(liteCtlBody(nil, sub))
	want := `{"subscriptionSet":[{"action":"PARTIAL_ADD","clientId":"c\"1","group":"G","liteTopicSet":["a","b-1"],` +
		`"offsetOption":{"type":"POLICY","value":1},"topic":"P","version":7}]}`
	if got != want {
		t.Fatalf("body\n got %s\nwant %s", got, want)
	}
	var v any
	if err := json.Unmarshal([]byte(got), &v); err != nil {
		t.Fatal(err)
	}
	sub = liteSub{action: "COMPLETE_REMOVE", clientID: "c", group: "G", topic: "P"}
	if got, want := string(liteCtlBody(nil, sub)),
		`{"subscriptionSet":[{"action":"COMPLETE_REMOVE","clientId":"c","group":"G","liteTopicSet":[],"topic":"P","version":0}]}`; got != want {
		t.Fatalf("body\n got %s\nwant %s", got, want)
	}
	for _, tc := range []struct {
		o    *v2.OffsetOption
		typ  string
		want int64
	}{
		{&v2.OffsetOption{OffsetType: &v2.OffsetOption_Policy_{Policy: v2.OffsetOption_LAST}}, "POLICY", 0},
		{&v2.OffsetOption{OffsetType: &v2.OffsetOption_Policy_{Policy: v2.OffsetOption_MAX}}, "POLICY", 2},
		{&v2.OffsetOption{OffsetType: &v2.OffsetOption_Offset{Offset: 42}}, "OFFSET", 42},
		{&v2.OffsetOption{OffsetType: &v2.OffsetOption_TailN{TailN: 3}}, "TAIL_N", 3},
		{&v2.OffsetOption{OffsetType: &v2.OffsetOption_Timestamp{Timestamp: 99}}, "TIMESTAMP", 99},
	} {
		typ, v, ok := offsetOption(tc.o)
		if !ok || typ != tc.typ || v != tc.want {
			t.Errorf("offsetOption(%v) = %s %d %v, want %s %d", tc.o, typ, v, ok, tc.typ, tc.want)
		}
	}
	if _, _, ok := offsetOption(nil); ok {
		t.Error("no offset option gave one")
	}
}

// A sharding key picks its queue by Guava's consistent hash over the write
// queues in MessageQueue order, whatever order the route lists them in.
func TestShardQueue(t *testing.T) {
	var qs []writeQueue
	for _, b := range []string{"broker-b", "broker-a"} {
		for i := int32(3); i >= 0; i-- {
			qs = append(qs, writeQueue{brokerName: b, queueID: i})
		}
	}
	for _, key := range []string{"lite-1", "order-42", "x", "用户"} {
		q := shardQueue(qs, key)
		i := message.ConsistentHash(int64(message.JavaHash(key)), len(qs))
		want := writeQueue{brokerName: "broker-a", queueID: int32(i)}
		if i >= 4 {
			want = writeQueue{brokerName: "broker-b", queueID: int32(i - 4)}
		}
		if q != want {
			t.Errorf("%q: queue %+v, want %+v (bucket %d)", key, q, want, i)
		}
	}
}

func TestLiteOrderCounts(t *testing.T) {
	for _, tc := range []struct {
		info string
		n    int
		want []int32
	}{
		{"", 2, nil},
		{"0;2;1", 3, []int32{0, 2, 1}},
		{"0;2", 3, nil},
		{"0 %LMQ%$P$l 4;x", 2, []int32{4, 0}},
	} {
		got := liteOrderCounts(tc.info, tc.n)
		if len(got) != len(tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("%q: %v, want %v", tc.info, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q: %v, want %v", tc.info, got, tc.want)
			}
		}
	}
}

func TestTagSet(t *testing.T) {
	if tagSet(nil) != nil || tagSet(&v2.FilterExpression{Expression: "*"}) != nil ||
		tagSet(&v2.FilterExpression{Type: v2.FilterType_SQL, Expression: "a > 1"}) != nil {
		t.Fatal("match-all expressions gave a tag set")
	}
	got := tagSet(&v2.FilterExpression{Expression: " A || B ||"})
	if len(got) != 2 || !got["A"] || !got["B"] {
		t.Fatalf("tags %v, want A and B", got)
	}
}

// The checks a SyncLiteSubscription meets before any broker is asked, in
// Apache's order and with its texts, against a real name server that
// knows no broker (so no group exists).
func TestSyncLiteSubscriptionChecks(t *testing.T) {
	ns := namesrvtest.Run(t)
	s := runProxy(t, ns.Addr())
	cl := dial(t, s, false)
	ctx := callCtx(t)
	alnum := "lite topic can only contain alphanumeric characters, hyphens(-), and underscores(_)"
	for _, tc := range []struct {
		name   string
		req    *v2.SyncLiteSubscriptionRequest
		code   v2.Code
		prefix string
	}{
		{"bad topic", &v2.SyncLiteSubscriptionRequest{Topic: &v2.Resource{Name: "bad topic"}, Group: &v2.Resource{Name: "G"}},
			v2.Code_ILLEGAL_TOPIC, ""},
		{"bad group", &v2.SyncLiteSubscriptionRequest{Topic: &v2.Resource{Name: "P"}, Group: &v2.Resource{Name: "bad group"}},
			v2.Code_ILLEGAL_CONSUMER_GROUP, ""},
		{"unknown action", &v2.SyncLiteSubscriptionRequest{Action: 9, Topic: &v2.Resource{Name: "P"}, Group: &v2.Resource{Name: "G"}},
			v2.Code_INTERNAL_SERVER_ERROR, "unknown LiteSubscriptionAction"},
		{"bad name", &v2.SyncLiteSubscriptionRequest{Topic: &v2.Resource{Name: "P"}, Group: &v2.Resource{Name: "G"},
			LiteTopicSet: []string{"ok", "not ok"}}, v2.Code_ILLEGAL_LITE_TOPIC, alnum},
		{"too long", &v2.SyncLiteSubscriptionRequest{Topic: &v2.Resource{Name: "P"}, Group: &v2.Resource{Name: "G"},
			LiteTopicSet: []string{strings.Repeat("x", 65)}}, v2.Code_ILLEGAL_LITE_TOPIC, "lite topic exceed the max size 64"},
		{"blank", &v2.SyncLiteSubscriptionRequest{Topic: &v2.Resource{Name: "P"}, Group: &v2.Resource{Name: "G"},
			LiteTopicSet: []string{"\t "}}, v2.Code_ILLEGAL_LITE_TOPIC, "lite topic cannot be the char sequence of whitespace"},
		{"complete add checked too", &v2.SyncLiteSubscriptionRequest{Action: v2.LiteSubscriptionAction_COMPLETE_ADD,
			Topic: &v2.Resource{Name: "P"}, Group: &v2.Resource{Name: "G"}, LiteTopicSet: []string{"a/b"}}, v2.Code_ILLEGAL_LITE_TOPIC, alnum},
		{"remove not checked", &v2.SyncLiteSubscriptionRequest{Action: v2.LiteSubscriptionAction_PARTIAL_REMOVE,
			Topic: &v2.Resource{Name: "P"}, Group: &v2.Resource{Name: "G"}, LiteTopicSet: []string{"a/b"}},
			v2.Code_ILLEGAL_CONSUMER_GROUP, "group not found: G"},
		{"unknown group", &v2.SyncLiteSubscriptionRequest{Topic: &v2.Resource{Name: "P"}, Group: &v2.Resource{Name: "G"},
			LiteTopicSet: []string{"a"}}, v2.Code_ILLEGAL_CONSUMER_GROUP, "group not found: G"},
	} {
		r, err := cl.SyncLiteSubscription(ctx, tc.req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.GetStatus().GetCode() != tc.code || !strings.HasPrefix(r.GetStatus().GetMessage(), tc.prefix) {
			t.Errorf("%s: %v %q, want %v %q…", tc.name, r.GetStatus().GetCode(), r.GetStatus().GetMessage(), tc.code, tc.prefix)
		}
	}
}

// A lite topic on send is checked as on SyncLiteSubscription, before the
// route is looked up.
func TestSendLiteTopicChecked(t *testing.T) {
	ns := namesrvtest.Run(t)
	s := runProxy(t, ns.Addr())
	cl := dial(t, s, false)
	lite := "bad name"
	r, err := cl.SendMessage(callCtx(t), &v2.SendMessageRequest{Messages: []*v2.Message{{
		Topic: &v2.Resource{Name: "P"}, Body: []byte("x"),
		SystemProperties: &v2.SystemProperties{MessageId: "id-1", LiteTopic: &lite, MessageType: v2.MessageType_LITE},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.GetStatus().GetCode() != v2.Code_ILLEGAL_LITE_TOPIC {
		t.Fatalf("status %v, want ILLEGAL_LITE_TOPIC", r.GetStatus())
	}
}

func TestRateLimiter(t *testing.T) {
	now := timeZero()
	l := newRateLimiter(5, now)
	n := 0
	for range 20 {
		if l.take(now) {
			n++
		}
	}
	if n != 5 {
		t.Fatalf("a burst took %d, want one second's worth (5)", n)
	}
	if !l.take(now.Add(200_000_000)) || l.take(now.Add(200_000_000)) {
		t.Fatal("after 200 ms exactly one more token, want one")
	}
}

func timeZero() time.Time { return time.Unix(1_700_000_000, 0) }
