package lite

import (
	"errors"
	"net/netip"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
	"github.com/rocketgo/rocketgo/store/storetest"
)

func TestMain(m *testing.M) {
	store.FakeDiskUsage(0.5) // no test depends on how full the host disk is
	testutil.VerifyNoLeaks(m)
}

var host = netip.MustParseAddrPort("127.0.0.1:10911")

// harness is the service on a real store (LMQ multi-dispatch on) and real
// tables: parent topic P (LITE, 4 queues) and lite groups made on demand.
type harness struct {
	*Service
	st      *store.Store
	topics  *tables.Topics
	groups  *tables.Groups
	offsets *tables.Offsets
	cfg     atomic.Pointer[Config]
	clock   atomic.Int64 // ms added to the real clock
	mu      sync.Mutex
	woken   map[string]int
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	dir := t.TempDir()
	h := &harness{woken: map[string]int{},
		st:      storetest.Open(t, dir, func(c *store.Config) { c.EnableLmq, c.EnableMultiDispatch = true, true }),
		topics:  tables.NewTopics(filepath.Join(dir, "config", "topics.json"), 1024, func() {}, func() bool { return false }),
		groups:  tables.NewGroups(filepath.Join(dir, "config", "subscriptionGroup.json"), 1024, func() bool { return false }),
		offsets: tables.NewOffsets(filepath.Join(dir, "config", "consumerOffset.json"), 1024)}
	if err := h.topics.Put(tables.TopicConfig{TopicName: "P", ReadQueueNums: 4, WriteQueueNums: 4,
		Perm:       message.PermRead | message.PermWrite,
		Attributes: map[string]string{tables.AttrMessageType: "LITE", tables.AttrLiteExpiration: "1"}}); err != nil {
		t.Fatal(err)
	}
	h.cfg.Store(&Config{BrokerName: "b", EnableLiteEventMode: true, LiteEventCheckInterval: 10000,
		LiteTtlCheckInterval: 120000, MinLiteTTl: 900000, LiteSubscriptionCheckInterval: 120000,
		LiteSubscriptionCheckTimeoutMills: 180000, MaxLiteSubscriptionCount: 100000, MaxClientEventCount: 100,
		LiteEventFullDispatchDelayTime: 10000, LiteEventFullDispatchDelayTimeForWildcardGroup: 10000})
	h.Service = New(Deps{Config: func() Config { return *h.cfg.Load() }, Store: h.st, Offsets: h.offsets, Topics: h.topics,
		Groups: h.groups,
		Wake: func(id string) {
			h.mu.Lock()
			h.woken[id]++
			h.mu.Unlock()
		},
		Now: func() int64 { return time.Now().UnixMilli() + h.clock.Load() }}, zerolog.Nop())
	return h
}

func (h *harness) edit(fn func(*Config)) {
	c := *h.cfg.Load()
	fn(&c)
	h.cfg.Store(&c)
}

// group makes a lite group of P with extra attributes.
func (h *harness) group(t *testing.T, name string, attrs ...string) {
	t.Helper()
	gc := tables.DefaultGroupConfig(name)
	gc.Attributes = map[string]string{"+" + tables.AttrLiteBindTopic: "P"} // as an update request names them
	for i := 0; i+1 < len(attrs); i += 2 {
		gc.Attributes["+"+attrs[i]] = attrs[i+1]
	}
	if err := h.groups.Put(gc); err != nil {
		t.Fatal(err)
	}
}

// send stores n messages of P for lite topic l and waits for their LMQ entries.
func (h *harness) send(t *testing.T, l string, n int) {
	t.Helper()
	lmq := message.LiteQueue("P", l)
	want := h.st.MaxOffset(lmq, 0) + int64(n)
	for i := 0; i < n; i++ {
		m := &store.PutMessage{Topic: "P", Body: []byte(l + strconv.Itoa(i)), BornHost: host, StoreHost: host,
			BornTimestamp: time.Now().UnixMilli(),
			Properties:    message.SetProperties("", message.PropInnerMultiDispatch, lmq, "__LITE_TOPIC", l)}
		if _, err := h.st.Put(m); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return h.st.MaxOffset(lmq, 0) == want })
}

// conn records what the registry sends a client.
type conn struct {
	mu   sync.Mutex
	sent []*remoting.Command
}

func (c *conn) Send(req *remoting.Command) error {
	c.mu.Lock()
	c.sent = append(c.sent, req)
	c.mu.Unlock()
	return nil
}

func (c *conn) notices() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, r := range c.sent {
		if r.Code == remoting.NotifyUnsubscribeLite {
			out = append(out, r.Str("clientId")+"/"+r.Str("consumerGroup")+"/"+r.Str("liteTopic"))
		}
	}
	return out
}

func entry(a Action, client, group string, lites ...string) Entry {
	return Entry{Action: a, ClientID: client, Group: group, Topic: "P", Lite: lites}
}

// check verifies the registry's invariants: active == Σ |sets|, and byLMQ
// holds c iff c's set holds the LMQ, and c is registered.
func (h *harness) check(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.Service
	s.mu.Lock()
	defer s.mu.Unlock()
	var sum int64
	for id, c := range s.clients {
		sum += int64(len(c.set))
		for q := range c.set {
			if !slices.Contains(s.byLMQ[q], c) {
				t.Fatalf("%s holds %s, not listed", id, q)
			}
		}
		if c.ev != nil && c.ev.size() > c.ev.cap {
			t.Fatalf("%s: %d events over capacity %d", id, c.ev.size(), c.ev.cap)
		}
	}
	if sum != s.active {
		t.Fatalf("active %d, sets hold %d", s.active, sum)
	}
	for q, subs := range s.byLMQ {
		for _, c := range subs {
			if s.clients[c.id] != c {
				t.Fatalf("%s lists gone client %s", q, c.id)
			}
			if _, ok := c.set[q]; !ok {
				t.Fatalf("%s lists %s, whose set lacks it", q, c.id)
			}
		}
	}
}

func (h *harness) set(id string) []string {
	set, _, _, _ := h.ClientSet(id, 1000)
	for i := range set {
		_, set[i], _ = message.ParseLiteQueue(set[i])
	}
	return set
}

func expectRefusal(t *testing.T, err error, code int32, remark string) {
	t.Helper()
	var r *remoting.Refusal
	if !errors.As(err, &r) || r.Code != code || r.Remark != remark {
		t.Fatalf("got %v, want %d %q", err, code, remark)
	}
}

// The four actions, Apache's refusals, and the invariants after each.
func TestCtlActions(t *testing.T) {
	h := newHarness(t)
	h.group(t, "G")
	c := &conn{}
	expectRefusal(t, h.Ctl(c, nil), remoting.IllegalOperation, "LiteSubscriptionCtlRequestBody is empty.")
	expectRefusal(t, h.Ctl(c, []Entry{entry(PartialAdd, "c1", "nope", "a")}), remoting.IllegalOperation,
		"java.lang.IllegalStateException: Consumer group is not allowed to consume.")
	// Blank client, group or topic: skipped.
	if err := h.Ctl(c, []Entry{entry(PartialAdd, " ", "G", "a"), {Action: PartialAdd, ClientID: "c1", Group: "G", Topic: "\t"}}); err != nil {
		t.Fatal(err)
	}
	if err := h.Ctl(c, []Entry{entry(PartialAdd, "c1", "G", "a", "b", "a")}); err != nil {
		t.Fatal(err)
	}
	h.check(t)
	if got := strings.Join(sorted(h.set("c1")), ","); got != "a,b" {
		t.Fatalf("set %s", got)
	}
	_ = h.Ctl(c, []Entry{entry(PartialRemove, "c1", "G", "a")})
	_ = h.Ctl(c, []Entry{entry(CompleteAdd, "c1", "G", "b", "c", "d")})
	h.check(t)
	if got := strings.Join(sorted(h.set("c1")), ","); got != "b,c,d" {
		t.Fatalf("set after COMPLETE_ADD %s", got)
	}
	_ = h.Ctl(c, []Entry{entry(CompleteRemove, "c1", "G")})
	h.check(t)
	if subs, _ := h.Counts(); subs != 0 {
		t.Fatalf("%d subscriptions after COMPLETE_REMOVE", subs)
	}
	h.group(t, "W", tables.AttrLiteWildcard, "")
	expectRefusal(t, h.Ctl(c, []Entry{entry(PartialAdd, "c2", "W", "a")}), remoting.IllegalOperation,
		"java.lang.IllegalStateException: subscribe lite operation is not supported for this group")
}

func sorted(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

// A forged flood of subscriptions (many clients, huge sets, hostile names)
// stops at maxLiteSubscriptionCount pairs and as many clients, refused
// with Apache's 2018 text; the registry stays consistent.
func TestCtlQuotaFlood(t *testing.T) {
	h := newHarness(t)
	h.group(t, "G")
	h.edit(func(c *Config) { c.MaxLiteSubscriptionCount = 100 })
	const quota = "org.apache.rocketmq.broker.lite.LiteQuotaException: lite subscription quota exceeded 100"
	var refused int
	for i := 0; i < 1000; i++ {
		err := h.Ctl(&conn{}, []Entry{entry(PartialAdd, "c"+strconv.Itoa(i), "G", "t"+strconv.Itoa(i))})
		if err != nil {
			expectRefusal(t, err, remoting.LiteSubscriptionQuotaExceeded, quota)
			refused++
		}
	}
	if refused != 900 {
		t.Fatalf("%d refused, want 900", refused)
	}
	// One request may not go past the quota either, nor COMPLETE_ADD.
	_ = h.Ctl(&conn{}, []Entry{entry(CompleteRemove, "c0", "G")})
	big := make([]string, 5000)
	for i := range big {
		big[i] = "x" + strconv.Itoa(i)
	}
	expectRefusal(t, h.Ctl(&conn{}, []Entry{entry(PartialAdd, "c0", "G", big...)}), remoting.LiteSubscriptionQuotaExceeded, quota)
	expectRefusal(t, h.Ctl(&conn{}, []Entry{entry(CompleteAdd, "c0", "G", big...)}), remoting.LiteSubscriptionQuotaExceeded, quota)
	// Empty COMPLETE_ADDs from new clients are clients too: bounded.
	for i := 0; i < 500; i++ {
		_ = h.Ctl(&conn{}, []Entry{entry(CompleteAdd, "e"+strconv.Itoa(i), "G")})
	}
	h.mu.Lock()
	h.Service.mu.Lock()
	n := len(h.Service.clients)
	h.Service.mu.Unlock()
	h.mu.Unlock()
	if n > 100 {
		t.Fatalf("%d clients held, quota 100", n)
	}
	// Hostile names: none is held.
	_ = h.Ctl(&conn{}, []Entry{entry(CompleteRemove, "c1", "G")})
	_ = h.Ctl(&conn{}, []Entry{entry(PartialAdd, "c1", "G", "", "a$b", strings.Repeat("z", 300))})
	if set := h.set("c1"); len(set) != 0 {
		t.Fatalf("hostile names held: %q", set)
	}
	h.check(t)
}

// Exclusive: a second client's PARTIAL_ADD evicts the first (notified on
// the connection of its last ADD, dropped when its set empties); a client
// re-adding a lite topic it holds does not evict itself (Apache does).
func TestExclusiveEvictsOthers(t *testing.T) {
	h := newHarness(t)
	h.group(t, "X", tables.AttrLiteSubModel, "Exclusive", tables.AttrLiteResetOnExclusive, "true")
	c1, c2 := &conn{}, &conn{}
	if err := h.Ctl(c1, []Entry{entry(PartialAdd, "c1", "X", "a", "b")}); err != nil {
		t.Fatal(err)
	}
	h.offsets.Commit("X", message.LiteQueue("P", "a"), 0, 7)
	if err := h.Ctl(c2, []Entry{entry(PartialAdd, "c2", "X", "a")}); err != nil {
		t.Fatal(err)
	}
	h.check(t)
	if got := strings.Join(c1.notices(), ","); got != "c1/X/a" {
		t.Fatalf("c1 told %q", got)
	}
	if got := strings.Join(h.set("c1"), ","); got != "b" {
		t.Fatalf("c1 holds %q", got)
	}
	if off, _ := h.offsets.Query("X", message.LiteQueue("P", "a"), 0); off != 0 {
		t.Fatalf("offset %d after eviction with reset, want 0", off)
	}
	if err := h.Ctl(c2, []Entry{entry(PartialAdd, "c2", "X", "a")}); err != nil {
		t.Fatal(err)
	}
	if n := len(c2.notices()); n != 0 || strings.Join(h.set("c2"), ",") != "a" {
		t.Fatalf("c2 evicted itself: %d notices, set %q", n, h.set("c2"))
	}
	// c1 loses its last topic: it is dropped.
	_ = h.Ctl(c2, []Entry{entry(PartialAdd, "c2", "X", "b")})
	if _, _, _, ok := h.ClientSet("c1", 10); ok {
		t.Fatal("c1 kept with an empty set")
	}
	h.check(t)
}

// Events: an arrival reaches one client of each subscribed group, once
// per LMQ while unread; a full set waits for a full dispatch, which offers
// what the group has not consumed.
func TestEventsDispatch(t *testing.T) {
	h := newHarness(t)
	h.group(t, "G")
	h.group(t, "H")
	h.edit(func(c *Config) { c.MaxClientEventCount = 3 })
	_ = h.Ctl(&conn{}, []Entry{entry(PartialAdd, "c1", "G", "a", "b", "c", "d", "e")})
	_ = h.Ctl(&conn{}, []Entry{entry(PartialAdd, "h1", "H", "a")})
	for _, l := range []string{"a", "b", "c", "d", "e"} {
		h.send(t, l, 2) // the store's dispatch hook is not wired here: Arrived by hand
		h.Arrived(message.LiteQueue("P", l))
	}
	h.Arrived(message.LiteQueue("P", "a"))
	var got []string
	for {
		q, ok := h.Next("c1")
		if !ok {
			break
		}
		got = append(got, q)
	}
	if len(got) != 3 {
		t.Fatalf("c1 events %q, want 3 (capacity)", got)
	}
	if q, ok := h.Next("h1"); !ok || q != message.LiteQueue("P", "a") {
		t.Fatalf("h1 event %q %v", q, ok)
	}
	// The full dispatch, due after liteEventFullDispatchDelayTime, offers
	// the two the set could not take (and the three still unconsumed).
	h.clock.Add(11_000)
	h.tick(h.now())
	n := 0
	for {
		if _, ok := h.Next("c1"); !ok {
			break
		}
		n++
	}
	if n != 3 {
		t.Fatalf("%d events after the full dispatch, want 3 (capacity)", n)
	}
	h.mu.Lock()
	woken := h.woken["c1"]
	h.mu.Unlock()
	if woken == 0 {
		t.Fatal("c1 never woken")
	}
	h.check(t)
}

// A client that stops popping loses its events to the group's others.
func TestScanMovesEvents(t *testing.T) {
	h := newHarness(t)
	h.group(t, "G")
	_ = h.Ctl(&conn{}, []Entry{entry(PartialAdd, "c1", "G", "a")})
	h.send(t, "a", 1)
	h.Arrived(message.LiteQueue("P", "a"))
	if !h.HasEvents("c1") {
		t.Fatal("c1 has no event")
	}
	_ = h.Ctl(&conn{}, []Entry{entry(PartialAdd, "c2", "G", "a")})
	h.clock.Add(11_000) // c1's events unread for more than 10 s; c2 pops
	h.Touch("c2")
	h.scan(h.now())
	if h.HasEvents("c1") || !h.HasEvents("c2") {
		t.Fatalf("after the scan c1 %v c2 %v", h.HasEvents("c1"), h.HasEvents("c2"))
	}
}

// Subscriptions not refreshed within liteSubscriptionCheckTimeoutMills go.
func TestSubscriptionExpiry(t *testing.T) {
	h := newHarness(t)
	h.group(t, "G")
	_ = h.Ctl(&conn{}, []Entry{entry(PartialAdd, "c1", "G", "a")})
	h.expire(h.now())
	if _, _, _, ok := h.ClientSet("c1", 1); !ok {
		t.Fatal("fresh client expired")
	}
	h.clock.Add(181_000)
	h.expire(h.now())
	if _, _, _, ok := h.ClientSet("c1", 1); ok {
		t.Fatal("stale client kept")
	}
	h.check(t)
}

// TTL: a lite topic whose last message is older than its parent's
// lite.topic.expiration goes with its offsets and subscriptions; one
// deleted parent takes all its lite topics.
func TestTTLAndParentCascade(t *testing.T) {
	h := newHarness(t)
	h.group(t, "G")
	h.edit(func(c *Config) { c.MinLiteTTl = 0 })
	h.send(t, "a", 2)
	h.send(t, "b", 1)
	lmqA := message.LiteQueue("P", "a")
	h.offsets.Commit("G", lmqA, 0, 1)
	_ = h.Ctl(&conn{}, []Entry{entry(PartialAdd, "c1", "G", "a")})
	h.cleanExpired(h.now(), nil)
	if !h.st.LmqExists(lmqA) {
		t.Fatal("fresh lite topic deleted")
	}
	h.clock.Add(61_000) // past the 1-minute expiration
	h.cleanExpired(h.now(), nil)
	if h.st.LmqExists(lmqA) || h.st.LmqExists(message.LiteQueue("P", "b")) {
		t.Fatal("expired lite topics kept")
	}
	if _, ok := h.offsets.Query("G", lmqA, 0); ok {
		t.Fatal("expired lite topic's offset kept")
	}
	if set := h.set("c1"); len(set) != 0 {
		t.Fatalf("subscription to a deleted lite topic kept: %q", set)
	}
	h.send(t, "c", 1)
	h.CleanByParent("P")
	if h.st.LmqNum() != 0 {
		t.Fatalf("%d LMQs after the parent's deletion", h.st.LmqNum())
	}
	h.check(t)
}

// The admin bodies and Apache's refusal texts.
func TestAdminBodies(t *testing.T) {
	h := newHarness(t)
	h.group(t, "G")
	_ = h.Ctl(&conn{}, []Entry{entry(PartialAdd, "c1", "G", "a")})
	h.send(t, "a", 3)
	h.offsets.Commit("G", message.LiteQueue("P", "a"), 0, 1)
	_, err := h.ParentTopicInfo("Q")
	expectRefusal(t, err, remoting.TopicNotExist, "Topic [Q] not exist.")
	_ = h.topics.Put(tables.TopicConfig{TopicName: "N", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6})
	_, err = h.LiteTopicInfo("N", "a")
	expectRefusal(t, err, remoting.InvalidParameter, "Topic [N] type not match.")
	b, err := h.ParentTopicInfo("P")
	if err != nil || string(b) != `{"topic":"P","ttl":1,"groups":["G"],"lmqNum":1,"liteTopicCount":1}` {
		t.Fatalf("parent info %s %v", b, err)
	}
	b, err = h.LiteTopicInfo("P", "a")
	if err != nil || !strings.Contains(string(b), `"subscriber":[{"clientId":"c1","group":"G"}]`) ||
		!strings.Contains(string(b), `"maxOffset":3`) {
		t.Fatalf("lite topic info %s %v", b, err)
	}
	b, err = h.LiteGroupInfo("G", "", 20)
	if err != nil || !strings.Contains(string(b), `"totalLagCount":2`) {
		t.Fatalf("group info %s %v", b, err)
	}
	_, err = h.LiteGroupInfo("Z", "", 20)
	expectRefusal(t, err, remoting.SubscriptionGroupNotExist, "Group [Z] not exist.")
	_ = h.groups.Put(tables.DefaultGroupConfig("plain"))
	expectRefusal(t, h.TriggerLiteDispatch("plain", ""), remoting.InvalidParameter, "Group [plain] is not a LITE group.")
	b, err = h.LiteClientInfo("P", "G", "c1", 10)
	if err != nil || !strings.Contains(string(b), `"liteTopicCount":1`) {
		t.Fatalf("client info %s %v", b, err)
	}
	if _, err := h.BrokerLiteInfo(); err != nil {
		t.Fatal(err)
	}
}

// 100,000 lite topics on one parent, 1,000 per client: the registry's
// live heap per (client, lite topic) pair (B/pair), names included.
func BenchmarkRegistry100k(b *testing.B) {
	b.ReportAllocs()
	var perPair float64
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		s := New(Deps{Config: func() Config { return Config{MaxLiteSubscriptionCount: 1 << 20, MaxClientEventCount: 100} },
			Store: nopStore{}, Groups: oneGroup{}}, zerolog.Nop())
		for c := 0; c < 100; c++ {
			names := make([]string, 1000)
			for i := range names {
				names[i] = "t" + strconv.Itoa(c*1000+i)
			}
			if err := s.Ctl(nil, []Entry{entry(PartialAdd, "c"+strconv.Itoa(c), "G", names...)}); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perPair = float64(after.HeapAlloc-before.HeapAlloc) / 100_000
		runtime.KeepAlive(s)
	}
	b.ReportMetric(perPair, "B/pair")
}

type nopStore struct{ Store }

func (nopStore) MaxOffset(string, int32) int64 { return 0 }

type oneGroup struct{ Groups }

func (oneGroup) Get(name string) (*tables.GroupConfig, bool) {
	gc := tables.DefaultGroupConfig(name)
	return &gc, true
}

// A wildcard group's client (COMPLETE_ADD only) gets every lite topic of
// its parent, and a full dispatch offers it those its group has not read.
func TestWildcardGroup(t *testing.T) {
	h := newHarness(t)
	h.group(t, "W", tables.AttrLiteWildcard, "")
	h.send(t, "old", 1)
	if err := h.Ctl(&conn{}, []Entry{entry(CompleteAdd, "w1", "W")}); err != nil {
		t.Fatal(err)
	}
	h.send(t, "new", 1)
	h.Arrived(message.LiteQueue("P", "new"))
	if q, ok := h.Next("w1"); !ok || q != message.LiteQueue("P", "new") {
		t.Fatalf("wildcard event %q %v", q, ok)
	}
	h.Touch("w1")
	h.clock.Add(10_100) // the wildcard's full dispatch, scheduled at registration
	h.tick(h.now())
	var got []string
	for {
		q, ok := h.Next("w1")
		if !ok {
			break
		}
		got = append(got, q)
	}
	if strings.Join(sorted(got), ",") != message.LiteQueue("P", "new")+","+message.LiteQueue("P", "old") {
		t.Fatalf("full dispatch offered %q", got)
	}
	b, _ := h.LiteTopicInfo("P", "old")
	if !strings.Contains(string(b), `{"clientId":"*","group":"W"}`) {
		t.Fatalf("wildcard subscriber not listed: %s", b)
	}
}

// A batch's redelivery dispatch is dropped when the batch is acked: none
// is left for the acked lite topics, and the heap holds no stale keys.
func TestCancelDispatchAtFreesTheTimers(t *testing.T) {
	h := newHarness(t)
	due := h.now() + 60_000
	for i := 0; i < 5000; i++ {
		h.DispatchAt("G", message.LiteQueue("P", "l"+strconv.Itoa(i)), due)
	}
	for i := 1; i < 5000; i++ {
		h.CancelDispatchAt("G", message.LiteQueue("P", "l"+strconv.Itoa(i)))
	}
	h.mu.Lock()
	live, held := len(h.blocks.due), len(h.blocks.h)
	h.mu.Unlock()
	if live != 1 || held > 2*live+1024 {
		t.Fatalf("after 4,999 of 5,000 cancelled: %d due, %d in the heap", live, held)
	}
	h.mu.Lock()
	got := h.blocks.take(due)
	h.mu.Unlock()
	if want := "G\x00" + message.LiteQueue("P", "l0"); len(got) != 1 || got[0] != want {
		t.Fatalf("due at %d: %q, want the one not cancelled", due, got)
	}
	h.CancelDispatchAt("G", message.LiteQueue("P", "l0")) // already taken: nothing
	h.DispatchAt("G", message.LiteQueue("P", "l1"), due)
	h.CancelDispatchAt("G", message.LiteQueue("P", "l1"))
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.blocks.due) != 0 || h.blocks.h != nil || len(h.blocks.take(due+1)) != 0 {
		t.Fatalf("all cancelled: %d due, %d in the heap", len(h.blocks.due), len(h.blocks.h))
	}
}

// A client's event set that held thousands of lite topics gives their
// map back once drained.
func TestDrainedEventSetShrinks(t *testing.T) {
	const sets, names = 100, 4000
	all := make([]*eventSet, sets)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range all {
		e := newEventSet(names, 0)
		for j := 0; j < names; j++ {
			if !e.offer(message.LiteQueue("P", "l"+strconv.Itoa(j))) {
				t.Fatal("offer refused below the capacity")
			}
		}
		if got := e.drain(); len(got) != names {
			t.Fatalf("drained %d of %d", len(got), names)
		}
		all[i] = e
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / sets
	if per > 2048 {
		t.Fatalf("a drained set holds %d B", per)
	}
	runtime.KeepAlive(all)
	e := all[0]
	if !e.offer("again") || e.size() != 1 || e.big {
		t.Fatalf("the remade set: size %d, big %v", e.size(), e.big)
	}
}
