package pull

import (
	"bytes"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/remoting/remotingtest"
	"github.com/rs/zerolog"
)

// subPull is a pull of G on T/0 carrying its subscription.
func subPull(offset int64, expr string) *Request {
	return &Request{Group: "G", Topic: "T", QueueOffset: offset, MaxMsgNums: 32,
		SysFlag: FlagSubscription, Subscription: expr, ExpressionType: "TAG", Remote: "127.0.0.1:5"}
}

// Every pull refusal of Apache's PullMessageProcessor that rocketgo makes:
// its code and remark, in Apache's order of checks.
func TestPullRefusals(t *testing.T) {
	h := newHarness(t, func(su *setup) { su.autoCreateGroups = false })
	if err := h.topics.Put(tables.TopicConfig{TopicName: "W", ReadQueueNums: 1, WriteQueueNums: 1, Perm: message.PermWrite}); err != nil {
		t.Fatal(err)
	}
	off := tables.DefaultGroupConfig("Off")
	off.ConsumeEnable = false
	bc := tables.DefaultGroupConfig("B")
	bc.ConsumeBroadcastEnable = false
	for _, gc := range []tables.GroupConfig{off, bc, tables.DefaultGroupConfig("S")} {
		if err := h.groups.Put(gc); err != nil {
			t.Fatal(err)
		}
	}
	c := &remoting.Conn{ID: 1, Remote: "127.0.0.1:9"}
	h.clients.RegisterConsumer(c, "c1", remoting.LangGo, 317, tables.ConsumerInfo{Group: "B", MessageModel: "BROADCASTING",
		Subscriptions: []*tables.Subscription{tables.NewTagSubscription("T", "*", 1)}}, false)
	h.clients.RegisterConsumer(c, "c1", remoting.LangGo, 317, tables.ConsumerInfo{Group: "S", MessageModel: "CLUSTERING",
		Subscriptions: []*tables.Subscription{tables.NewTagSubscription("T", "*", 5)}}, false)

	faq := remoting.FAQGroupNotExist
	cases := []struct {
		name   string
		edit   func(*Request)
		code   int32
		remark string
	}{
		{"group not exist", func(r *Request) { r.Group = "Nope" }, remoting.SubscriptionGroupNotExist,
			"subscription group [Nope] does not exist, " + faq},
		{"group consume disabled", func(r *Request) { r.Group = "Off" }, remoting.NoPermission,
			"subscription group no permission, Off"},
		{"broadcast forbidden", func(r *Request) { r.Group, r.SysFlag = "B", 0 }, remoting.NoPermission,
			"the consumer group[B] can not consume by broadcast way"},
		{"topic not exist", func(r *Request) { r.Topic = "Nope" }, remoting.TopicNotExist,
			"topic[Nope] not exist, apply first please! " + faq},
		{"topic not readable", func(r *Request) { r.Topic = "W" }, remoting.NoPermission,
			"the topic[W] pulling message is forbidden"},
		{"queue id illegal", func(r *Request) { r.QueueID = 4 }, remoting.InvalidParameter,
			"queueId[4] is illegal, topic:[T] topicConfig.readQueueNums:[4] consumer:[/127.0.0.1:5]"},
		{"negative queue id", func(r *Request) { r.QueueID = -1 }, remoting.InvalidParameter,
			"queueId[-1] is illegal, topic:[T] topicConfig.readQueueNums:[4] consumer:[/127.0.0.1:5]"},
		{"group info not exist", func(r *Request) { r.SysFlag = 0 }, remoting.SubscriptionNotExist,
			"the consumer's group info not exist" + faq},
		{"subscription not latest", func(r *Request) { r.SysFlag, r.Group, r.SubVersion = 0, "S", 6 },
			remoting.SubscriptionNotLatest, "the consumer's subscription not latest"},
		{"sql92 disabled", func(r *Request) { r.ExpressionType, r.Subscription = "SQL92", "a > 1" },
			remoting.SystemError, "The broker does not support consumer to filter message by SQL92"},
		{"unknown filter type", func(r *Request) { r.ExpressionType = "CLASS" },
			remoting.SystemError, "The broker does not support consumer to filter message by CLASS"},
		{"tag expression too long", func(r *Request) { r.Subscription = strings.Repeat("a", 1<<20) },
			remoting.SubscriptionParseFailed, "parse the consumer's subscription failed"},
	}
	for _, tc := range cases {
		r := subPull(0, "*")
		tc.edit(r)
		_, err := h.Pull(r, nil)
		if err == nil {
			t.Fatalf("%s: no refusal", tc.name)
		}
		t.Run(tc.name, func(t *testing.T) { remotingtest.WantRefusal(t, err, tc.code, tc.remark) })
	}

	// A subscription the group's consumers hold not for this topic.
	if err := h.topics.Put(tables.TopicConfig{TopicName: "U", ReadQueueNums: 1, WriteQueueNums: 1, Perm: message.PermRead | message.PermWrite}); err != nil {
		t.Fatal(err)
	}
	r := subPull(0, "*")
	r.SysFlag, r.Group, r.Topic = 0, "S", "U"
	_, err := h.Pull(r, nil)
	remotingtest.WantRefusal(t, err, remoting.SubscriptionNotExist, "the consumer's subscription not exist"+faq)
	// A pull carrying its subscription is not checked for the message model
	// (as Apache's).
	r = subPull(0, "*")
	r.Group = "B"
	if res, err := h.Pull(r, nil); err != nil || res.Status != NoNewMsg {
		t.Fatalf("broadcast with its subscription: %v %v", res.Status, err)
	}
	// The registered subscription, at its version or newer, is pulled with.
	r = subPull(0, "*")
	r.SysFlag, r.Group, r.SubVersion = 0, "S", 5
	if res, err := h.Pull(r, nil); err != nil || res.Status != NoNewMsg {
		t.Fatalf("registered subscription: %v %v", res.Status, err)
	}

	// The broker's permission comes first.
	h.setConfig(func(c *Config) { c.Permission = message.PermWrite })
	_, err = h.Pull(subPull(0, "*"), nil)
	remotingtest.WantRefusal(t, err, remoting.NoPermission, "the broker[127.0.0.1] pulling message is forbidden")
	h.setConfig(func(c *Config) { c.Permission = message.PermRead | message.PermWrite })

	h.setConfig(func(c *Config) { c.EnablePropertyFilter = true })
	r = subPull(0, "a >")
	r.ExpressionType = "SQL92"
	_, err = h.Pull(r, nil)
	remotingtest.WantRefusal(t, err, remoting.SubscriptionParseFailed, "parse the consumer's subscription failed")
}

// A pull's results: found (the records as stored, pinned until Release),
// nothing new, an offset outside the queue, and the TAG and SQL92 filters;
// the offset it carries is committed.
func TestPullResults(t *testing.T) {
	h := newHarness(t, func(su *setup) { su.cfg.EnablePropertyFilter = true })
	putT(t, h, "A", "B", "A", "C")

	res, err := h.Pull(subPull(0, "*"), nil)
	if err != nil || res.Status != Found || res.Count != 4 || res.NextBeginOffset != 4 ||
		res.MinOffset != 0 || res.MaxOffset != 4 || res.SuggestWhichBrokerID != message.MasterID {
		t.Fatalf("all: %v %v, %d records, next %d, [%d, %d)", res.Status, err, res.Count, res.NextBeginOffset,
			res.MinOffset, res.MaxOffset)
	}
	res.Release()

	r := subPull(0, "*")
	r.MaxMsgNums = 2
	if res, _ = h.Pull(r, nil); res.Status != Found || res.Count != 2 || res.NextBeginOffset != 2 {
		t.Fatalf("maxMsgNums 2: %v, %d records, next %d", res.Status, res.Count, res.NextBeginOffset)
	}
	res.Release()

	if res, _ = h.Pull(subPull(0, "A"), nil); res.Status != Found || res.Count != 2 {
		t.Fatalf("tag A: %v, %d records", res.Status, res.Count)
	}
	if n := strings.Count(string(bytes.Join(res.Vec, nil)), "TAGS\x01A\x02"); n != 2 {
		t.Fatalf("tag A answered %d records of tag A", n)
	}
	res.Release()
	if res, _ = h.Pull(subPull(3, "A || B"), nil); res.Status != NoMatchedMsg || res.NextBeginOffset != 4 {
		t.Fatalf("no match: %v, next %d", res.Status, res.NextBeginOffset)
	}

	r = subPull(0, "color IN ('b', 'c')")
	r.ExpressionType = "SQL92"
	if res, _ = h.Pull(r, nil); res.Status != Found || res.Count != 2 {
		t.Fatalf("sql92: %v, %d records", res.Status, res.Count)
	}
	res.Release()

	if res, _ = h.Pull(subPull(4, "*"), nil); res.Status != NoNewMsg || res.NextBeginOffset != 4 {
		t.Fatalf("at the end: %v, next %d", res.Status, res.NextBeginOffset)
	}
	// Apache corrects to the min offset while it is 0.
	if res, _ = h.Pull(subPull(40, "*"), nil); res.Status != OffsetIllegal || res.NextBeginOffset != 0 {
		t.Fatalf("past the end: %v, next %d", res.Status, res.NextBeginOffset)
	}
	r = subPull(0, "*")
	r.QueueID = 1 // an empty queue: offset 0 is no new message, another offset moved
	if res, _ = h.Pull(r, nil); res.Status != NoNewMsg {
		t.Fatalf("empty queue at 0: %v", res.Status)
	}
	r.QueueOffset = 7
	if res, _ = h.Pull(r, nil); res.Status != OffsetIllegal || res.NextBeginOffset != 0 {
		t.Fatalf("empty queue at 7: %v, next %d", res.Status, res.NextBeginOffset)
	}

	r = subPull(4, "*")
	r.SysFlag |= FlagCommitOffset
	r.CommitOffset = 3
	if _, err := h.Pull(r, nil); err != nil {
		t.Fatal(err)
	}
	if off, ok := h.offsets.Query("G", "T", 0); !ok || off != 3 {
		t.Fatalf("committed %d %v", off, ok)
	}
	if got := Status(9).String(); got != "Status(?)" || Found.String() != "FOUND" {
		t.Fatalf("names: %s %s", got, Found)
	}
}

// completion records what a pull taken over is answered.
type completion struct {
	ch   chan Result
	errs chan error
	gone atomic.Bool
}

func newCompletion() *completion {
	return &completion{ch: make(chan Result, 1), errs: make(chan error, 1)}
}

func (c *completion) later() Completion {
	return Completion{
		Done: func(res Result, err error) {
			if err != nil {
				c.errs <- err
				return
			}
			c.ch <- res
		},
		Gone: c.gone.Load,
	}
}

func (c *completion) wait(t *testing.T) Result {
	t.Helper()
	select {
	case res := <-c.ch:
		return res
	case err := <-c.errs:
		t.Fatalf("refused: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no answer")
	}
	return Result{}
}

// A suspended pull that finds nothing is parked and answered through the
// caller's completion when a message arrives, or with nothing new when its
// suspend time ends; a pull whose requester went away is dropped; past
// maxParkedPulls the answer is at once.
func TestPullLongPolling(t *testing.T) {
	h := newHarness(t, func(su *setup) { su.deps.MaxParked = 2 })
	suspended := func(timeout int64) *Request {
		r := subPull(0, "*")
		r.SysFlag |= FlagSuspend
		r.SuspendTimeoutMillis = timeout
		return r
	}

	arrival := newCompletion()
	res, err := h.Pull(suspended(60_000), arrival.later)
	if err != nil || res.Status != Later || h.Parked() != 1 {
		t.Fatalf("not parked: %v %v, parked %d", res.Status, err, h.Parked())
	}
	putT(t, h, "A")
	res = arrival.wait(t)
	if res.Status != Found || res.Count != 1 || res.NextBeginOffset != 1 {
		t.Fatalf("woken: %v, %d records", res.Status, res.Count)
	}
	res.Release()

	timeout := newCompletion()
	r := suspended(50)
	r.QueueOffset = 1
	if res, _ = h.Pull(r, timeout.later); res.Status != Later {
		t.Fatalf("not parked: %v", res.Status)
	}
	if res = timeout.wait(t); res.Status != NoNewMsg || res.NextBeginOffset != 1 {
		t.Fatalf("timed out: %v, next %d", res.Status, res.NextBeginOffset)
	}

	// The requester is gone: dropped at the next tick, unanswered.
	gone := newCompletion()
	gone.gone.Store(true)
	if res, _ = h.Pull(r, gone.later); res.Status != Later {
		t.Fatalf("not parked: %v", res.Status)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return h.Parked() == 0 })
	select {
	case res := <-gone.ch:
		t.Fatalf("answered a gone requester: %v", res.Status)
	default:
	}

	// Without a completion, or without the suspend flag, the answer is now.
	if res, _ = h.Pull(r, nil); res.Status != NoNewMsg {
		t.Fatalf("no completion: %v", res.Status)
	}
	r.SysFlag &^= FlagSuspend
	if res, _ = h.Pull(r, newCompletion().later); res.Status != NoNewMsg {
		t.Fatalf("not suspended: %v", res.Status)
	}

	// maxParkedPulls 2: the third is answered at once.
	r = suspended(60_000)
	r.QueueOffset = 1
	first, second := newCompletion(), newCompletion()
	for _, c := range []*completion{first, second} {
		if res, _ = h.Pull(r, c.later); res.Status != Later {
			t.Fatalf("not parked: %v", res.Status)
		}
	}
	if res, _ = h.Pull(r, newCompletion().later); res.Status != NoNewMsg {
		t.Fatalf("third parked: %v", res.Status)
	}
	putT(t, h, "B")
	for _, c := range []*completion{first, second} {
		if res = c.wait(t); res.Status != Found || res.Count != 1 {
			t.Fatalf("woken: %v", res.Status)
		}
		res.Release()
	}

	// longPollingEnable off: a suspended pull waits shortPollingTimeMills,
	// not its own suspend time.
	h.setConfig(func(c *Config) { c.LongPollingEnable, c.ShortPollingTime = false, 10*time.Millisecond })
	short := newCompletion()
	r.QueueOffset = 2
	if res, _ = h.Pull(r, short.later); res.Status != Later {
		t.Fatalf("not parked: %v", res.Status)
	}
	if res = short.wait(t); res.Status != NoNewMsg {
		t.Fatalf("short polling: %v", res.Status)
	}
}

// coldT stores n records of 10 KiB in T/0, then more than the store's hot
// tail in another topic, and drops T's records from the page cache: a pull
// of them finds its pages not resident. It skips where the kernel keeps
// the pages.
func coldT(t *testing.T, h *harness, n int) {
	t.Helper()
	var first, end int64
	for i := 0; i < n; i++ {
		m := testMsg("T", props("TAGS", "A"))
		m.Body = make([]byte, 10<<10)
		r, err := h.st.Put(m)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = r.PhysicalOffset
		}
		end = r.PhysicalOffset + int64(r.WroteBytes)
	}
	filler := testMsg("F", "")
	filler.Body = make([]byte, 64<<10)
	for written := 0; written < 17<<20; written += len(filler.Body) {
		if _, err := h.st.Put(filler); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return h.st.MaxOffset("T", 0) == int64(n) })
	out, err := h.st.PageOut(first, end)
	if err != nil {
		t.Skipf("page out: %v", err)
	}
	if !out {
		t.Skip("pages still in memory after MADV_PAGEOUT")
	}
}

// A pull whose pages are not in memory is not read where it runs (an event
// loop): a cold-pull worker faults them in and answers through the
// completion, with every record.
func TestPullColdPages(t *testing.T) {
	h := newHarness(t, func(su *setup) { su.commitLogSize = 8 << 20 })
	coldT(t, h, 20)
	done := newCompletion()
	r := subPull(0, "*")
	r.SysFlag |= FlagCommitOffset
	r.CommitOffset = 0
	res, err := h.Pull(r, done.later)
	if err != nil || res.Status != Later {
		t.Fatalf("cold pull answered where it ran: %v %v", res.Status, err)
	}
	res = done.wait(t)
	if res.Status != Found || res.Count != 20 || res.NextBeginOffset != 20 {
		t.Fatalf("cold pull: %v, %d records, next %d", res.Status, res.Count, res.NextBeginOffset)
	}
	if n := len(bytes.Join(res.Vec, nil)); n < 20*(10<<10) {
		t.Fatalf("%d bytes for 20 records of 10 KiB", n)
	}
	res.Release()
	// Now in memory: answered where it runs.
	if res, _ = h.Pull(subPull(0, "*"), done.later); res.Status != Found || res.Count != 20 {
		t.Fatalf("warm pull: %v, %d records", res.Status, res.Count)
	}
	res.Release()

	// Without a completion the pull is read where it runs, pages or not.
	coldAgain(t, h)
	if res, _ = h.Pull(subPull(0, "*"), nil); res.Status != Found || res.Count != 20 {
		t.Fatalf("no completion: %v, %d records", res.Status, res.Count)
	}
	res.Release()
}

// coldAgain drops T/0's records (at the start of the commit log, coldT)
// from the page cache again.
func coldAgain(t *testing.T, h *harness) {
	t.Helper()
	if out, err := h.st.PageOut(0, h.st.MaxPhyOffset()-(17<<20)); err != nil || !out {
		t.Skipf("page out: %v %v", out, err)
	}
}

// The cold-pull queue is bounded: with no worker taking pulls, the
// pullThreadPoolQueueCapacity+1st cold pull is refused SYSTEM_BUSY, Apache's
// flow-control answer; pullMessageThreadPoolNums 0 reads every pull where it runs.
func TestPullColdQueueBound(t *testing.T) {
	h := newHarness(t, func(su *setup) {
		su.commitLogSize = 8 << 20
		su.deps.ColdCapacity = 2
		su.run = false // no worker takes pulls
	})
	coldT(t, h, 4)
	queued := []*completion{newCompletion(), newCompletion()}
	for i, c := range queued {
		if res, err := h.Pull(subPull(0, "*"), c.later); err != nil || res.Status != Later {
			t.Fatalf("pull %d: %v %v", i, res.Status, err)
		}
	}
	if size, capacity := h.Queue(); size != 2 || capacity != 2 {
		t.Fatalf("pull queue %d of %d", size, capacity)
	}
	_, err := h.Pull(subPull(0, "*"), newCompletion().later)
	remotingtest.WantRefusal(t, err, remoting.SystemBusy, "[OVERLOAD]system busy, start flow control for a while")
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("%v is not ErrBusy", err)
	}

	// A worker drains the queue, answering what it holds; a requester gone
	// by then is skipped.
	gone := newCompletion()
	gone.gone.Store(true)
	<-h.cold.jobs
	h.cold.jobs <- &coldPull{r: *subPull(0, "*"), done: gone.later()}
	quit := make(chan struct{})
	stopped := make(chan struct{})
	go func() { h.runColdPulls(quit); close(stopped) }()
	testutil.WaitFor(t, 30*time.Second, func() bool { return len(h.cold.jobs) == 0 })
	close(quit)
	<-stopped
	if res := queued[1].wait(t); res.Status != Found || res.Count != 4 {
		t.Fatalf("worker answered %v, %d records", res.Status, res.Count)
	} else {
		res.Release()
	}
	select {
	case <-gone.ch:
		t.Fatal("answered a gone requester")
	default:
	}

	h.cold = newColdPulls(0, 1, zerolog.Nop())
	if res, err := h.Pull(subPull(0, "*"), newCompletion().later); err != nil || res.Status != Found || res.Count != 4 {
		t.Fatalf("pullMessageThreadPoolNums 0: %v %v", res.Status, err)
	} else {
		res.Release()
	}
}

// Past maxParkedPulls a place is refused; a freed place is taken again.
func TestPlacesBound(t *testing.T) {
	p := newPlaces(2, zerolog.Nop())
	if !p.reserve("a") || !p.reserve("b") || p.reserve("c") {
		t.Fatal("bound of 2 not applied")
	}
	p.free()
	if p.n.Load() != 1 || !p.reserve("d") || p.reserve("e") {
		t.Fatalf("after a free: %d places taken", p.n.Load())
	}
	if q := newPlaces(0, zerolog.Nop()); q.max != DefaultMaxParked {
		t.Fatalf("bound 0 is %d, want the default", q.max)
	}
}
