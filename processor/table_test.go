package processor

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// serveBroker serves a broker through wrap(its table) (nil: the table as
// is), with edit applied to its config, and returns a client for it.
func serveBroker(t *testing.T, edit func(*broker.Config), wrap func(remoting.Table) remoting.Handler) (*broker.Broker, *remoting.Client) {
	t.Helper()
	b := runBroker(t, edit, wrap)
	cl := remoting.NewClient(testutil.Logger())
	t.Cleanup(func() { _ = cl.Close() }) // before runBroker's shutdown: cleanups run last first
	return b, cl
}

// invoke sends req to the broker and fails the test on a transport error.
func invoke(t *testing.T, cl *remoting.Client, b *broker.Broker, req *remoting.Command) *remoting.Command {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cl.Invoke(ctx, b.Config().Addr(), req)
	if err != nil {
		t.Fatalf("request %d: %v", req.Code, err)
	}
	return resp
}

// sendV2 is SEND_MESSAGE_V2 of one message to queue 0 of topic.
func sendV2(topic string, body []byte) *remoting.Command {
	return remoting.NewRequest(remoting.SendMessageV2, map[string]string{"a": "PG", "b": topic, "c": "TBW102",
		"d": "4", "e": "0", "f": "0", "g": strconv.FormatInt(time.Now().UnixMilli(), 10), "h": "0", "i": "",
		"j": "0", "k": "false", "m": "false"}, body)
}

// counting is an interceptor that records what it sees.
type counting struct {
	name   string
	trace  *[]string // shared by interceptors, to check their order
	mu     *sync.Mutex
	before atomic.Int64
	refuse int32 // a request code Before refuses
	seen   []remoting.Exchange
}

func (ci *counting) Before(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	ci.before.Add(1)
	ci.mu.Lock()
	*ci.trace = append(*ci.trace, "before "+ci.name)
	ci.mu.Unlock()
	if req.Code == ci.refuse {
		return remoting.NewResponse(req, remoting.NoPermission, "refused by "+ci.name)
	}
	return nil
}

func (ci *counting) After(x remoting.Exchange) {
	ci.mu.Lock()
	defer ci.mu.Unlock()
	*ci.trace = append(*ci.trace, "after "+ci.name)
	// Req and Resp are recycled after the call: keep what the test reads.
	x.Resp = &remoting.Command{Code: x.Resp.Code, Opaque: x.Resp.Opaque}
	x.Req = nil
	ci.seen = append(ci.seen, x)
}

func (ci *counting) exchanges() []remoting.Exchange {
	ci.mu.Lock()
	defer ci.mu.Unlock()
	return append([]remoting.Exchange(nil), ci.seen...)
}

func newCounting(name string, trace *[]string, mu *sync.Mutex) *counting {
	return &counting{name: name, trace: trace, mu: mu, refuse: -1}
}

// A counting interceptor over real requests sees every request before its
// handler and every answer after it: inline answers, a long-polling pull
// answered when a message arrives, and SYNC_FLUSH sends answered after the
// group commit, each with its own duration.
func TestInterceptorCountsRealRequests(t *testing.T) {
	var mu sync.Mutex
	var trace []string
	ci := newCounting("count", &trace, &mu)
	b, cl := serveBroker(t, func(c *broker.Config) { c.Store.FlushDiskType = store.SyncFlush },
		func(tb remoting.Table) remoting.Handler { return tb.Intercept(ci) })

	create := remoting.NewRequest(remoting.UpdateAndCreateTopic, map[string]string{"topic": "IT",
		"readQueueNums": "1", "writeQueueNums": "1", "perm": "6"}, nil)
	if r := invoke(t, cl, b, create); r.Code != remoting.Success {
		t.Fatalf("create: %d %s", r.Code, r.Remark)
	}
	if r := invoke(t, cl, b, remoting.NewRequest(9999, nil, nil)); r.Code != remoting.RequestCodeNotSupported {
		t.Fatalf("unknown code answered %d", r.Code)
	}

	// A long poll at the end of the empty queue parks; a send wakes it.
	pull := remoting.NewRequest(remoting.PullMessage, map[string]string{"consumerGroup": "G", "topic": "IT",
		"queueId": "0", "queueOffset": "0", "maxMsgNums": "32", "sysFlag": "6", // suspend | subscription
		"commitOffset": "0", "suspendTimeoutMillis": "20000", "subscription": "*", "subVersion": "0",
		"expressionType": "TAG"}, nil)
	pulled := make(chan *remoting.Command, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r, err := cl.Invoke(ctx, b.Config().Addr(), pull)
		if err != nil {
			t.Errorf("pull: %v", err)
		}
		pulled <- r
	}()
	testutil.WaitFor(t, 10*time.Second, func() bool { return b.Pulls.Parked() == 1 })
	// A gap the pull's duration must cover; load only makes it longer.
	const gap = 100 * time.Millisecond
	time.Sleep(gap)
	sent := invoke(t, cl, b, sendV2("IT", []byte("wake")))
	if sent.Code != remoting.Success {
		t.Fatalf("send: %d %s", sent.Code, sent.Remark)
	}
	r := <-pulled
	if r == nil || r.Code != remoting.Success {
		t.Fatalf("pull answered %+v", r)
	}

	// Answers are observed before they are written: all four are in.
	xs := ci.exchanges()
	if got := ci.before.Load(); got != 4 {
		t.Fatalf("Before ran %d times, want 4", got)
	}
	if len(xs) != 4 {
		t.Fatalf("After ran %d times, want 4: %+v", len(xs), xs)
	}
	byCode := map[int32]remoting.Exchange{}
	for _, x := range xs {
		byCode[x.Code] = x
		if x.Conn == nil || x.Took <= 0 {
			t.Errorf("exchange %+v: no connection or duration", x)
		}
	}
	for code, want := range map[int32]struct {
		resp int32
		late bool
	}{
		remoting.UpdateAndCreateTopic: {remoting.Success, false},
		9999:                          {remoting.RequestCodeNotSupported, false},
		remoting.PullMessage:          {remoting.Success, true},
		remoting.SendMessageV2:        {remoting.Success, true}, // SYNC_FLUSH: after the group commit
	} {
		x, ok := byCode[code]
		if !ok || x.Resp.Code != want.resp || x.Late != want.late {
			t.Errorf("request %d: exchange %+v, want answer %d late %v", code, x, want.resp, want.late)
		}
	}
	// The sleep lies inside the park.
	if took := byCode[remoting.PullMessage].Took; took < gap {
		t.Errorf("the parked pull took %v, less than the %v it was parked at least", took, gap)
	}
	if x := byCode[remoting.PullMessage]; x.Resp.Opaque != pull.Opaque {
		t.Errorf("late answer opaque %d, request %d", x.Resp.Opaque, pull.Opaque)
	}
}

// Interceptors nest: Before in order, After in reverse; a refusal in Before
// answers instead of the handler, and only the interceptors whose Before ran
// see it.
func TestInterceptorOrderAndRefusal(t *testing.T) {
	var mu sync.Mutex
	var trace []string
	outer, inner := newCounting("outer", &trace, &mu), newCounting("inner", &trace, &mu)
	inner.refuse = 7
	served := 0
	h := remoting.Table{
		1: func(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
			served++
			return remoting.NewResponse(req, remoting.Success, "")
		},
		7: func(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
			served++
			return remoting.NewResponse(req, remoting.Success, "")
		},
		8: func(*remoting.Conn, *remoting.Command) *remoting.Command { return nil }, // answered later, or never
	}.Intercept(outer, inner)
	c := &remoting.Conn{}

	if r := h.Serve(c, remoting.NewRequest(1, nil, nil)); r.Code != remoting.Success || served != 1 {
		t.Fatalf("code 1: %d, served %d", r.Code, served)
	}
	want := []string{"before outer", "before inner", "after inner", "after outer"}
	if !equalStrings(trace, want) {
		t.Fatalf("trace %q, want %q", trace, want)
	}

	trace = trace[:0]
	r := h.Serve(c, remoting.NewRequest(7, nil, nil))
	if r.Code != remoting.NoPermission || r.Remark != "refused by inner" || served != 1 {
		t.Fatalf("refused request: %d %q, served %d", r.Code, r.Remark, served)
	}
	if want := []string{"before outer", "before inner", "after inner", "after outer"}; !equalStrings(trace, want) {
		t.Fatalf("trace %q, want %q", trace, want)
	}

	// A handler answering nothing now: no After until a late answer.
	trace = trace[:0]
	req := remoting.NewRequest(8, nil, nil)
	if r := h.Serve(c, req); r != nil {
		t.Fatalf("code 8 answered %+v", r)
	}
	if want := []string{"before outer", "before inner"}; !equalStrings(trace, want) {
		t.Fatalf("trace %q, want %q", trace, want)
	}
	late := remoting.NewResponse(req.Clone(), remoting.Success, "")
	if late.Began == 0 || late.ReqCode != 8 {
		t.Fatalf("late answer lost its mark: began %d code %d", late.Began, late.ReqCode)
	}
	h.(remoting.LateObserver).Answered(c, late)
	if want := []string{"before outer", "before inner", "after inner", "after outer"}; !equalStrings(trace, want) {
		t.Fatalf("trace %q, want %q", trace, want)
	}
	if x := inner.exchanges(); !x[len(x)-1].Late || x[len(x)-1].Code != 8 || x[len(x)-1].Req != nil {
		t.Fatalf("late exchange %+v", x[len(x)-1])
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// nopInterceptor counts and nothing else.
type nopInterceptor struct{ n atomic.Int64 }

func (ni *nopInterceptor) Before(*remoting.Conn, *remoting.Command) *remoting.Command { return nil }
func (ni *nopInterceptor) After(remoting.Exchange)                                    { ni.n.Add(1) }

// Interception allocates nothing per request, inline or late; without
// interceptors the table is served as is.
func TestInterceptAllocs(t *testing.T) {
	resp := &remoting.Command{Code: remoting.Success}
	tbl := remoting.Table{1: func(*remoting.Conn, *remoting.Command) *remoting.Command { return resp }}
	if _, ok := tbl.Intercept().(remoting.Table); !ok {
		t.Fatal("Intercept() without interceptors must return the table itself")
	}
	var ni nopInterceptor
	h := tbl.Intercept(&ni, &ni)
	c := &remoting.Conn{}
	req := &remoting.Command{Code: 1}
	if n := testing.AllocsPerRun(1000, func() { h.Serve(c, req) }); n != 0 {
		t.Fatalf("an intercepted request allocates %v times", n)
	}
	late := &remoting.Command{Began: 1, ReqCode: 1}
	lo := h.(remoting.LateObserver)
	if n := testing.AllocsPerRun(1000, func() { lo.Answered(c, late) }); n != 0 {
		t.Fatalf("a late answer allocates %v times", n)
	}
	if ni.n.Load() == 0 {
		t.Fatal("After never ran")
	}
}

// BenchmarkDispatch is the cost of dispatching a request with and without
// an interceptor.
func BenchmarkDispatch(b *testing.B) {
	resp := &remoting.Command{Code: remoting.Success}
	tbl := remoting.Table{1: func(*remoting.Conn, *remoting.Command) *remoting.Command { return resp }}
	c := &remoting.Conn{}
	req := &remoting.Command{Code: 1}
	for _, bc := range []struct {
		name string
		h    remoting.Handler
	}{{"plain", tbl}, {"intercepted", tbl.Intercept(&nopInterceptor{})}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				bc.h.Serve(c, req)
			}
		})
	}
}

// seeing is an interceptor that keeps what After was handed, as is.
type seeing struct {
	req, resp *remoting.Command
	took      time.Duration
}

func (s *seeing) Before(*remoting.Conn, *remoting.Command) *remoting.Command { return nil }
func (s *seeing) After(x remoting.Exchange)                                  { s.req, s.resp, s.took = x.Req, x.Resp, x.Took }

// After is handed the request and the very answer the handler returned
// (an ACL or metrics wrapper reads its code and remark), and a duration
// that covers the handler's work.
func TestInterceptorSeesAnswerAndDuration(t *testing.T) {
	const work = 3 * time.Millisecond
	var answer *remoting.Command
	var s seeing
	h := remoting.Table{5: func(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
		start := time.Now()
		for time.Since(start) < work { // the handler's work: a lower bound for Took, not a synchronisation
		}
		answer = remoting.NewResponse(req, remoting.TopicNotExist, "no such topic")
		return answer
	}}.Intercept(&s)
	req := remoting.NewRequest(5, nil, nil)
	if got := h.Serve(&remoting.Conn{}, req); got != answer {
		t.Fatalf("Serve answered %p, the handler %p", got, answer)
	}
	if s.req != req || s.resp != answer || s.resp.Code != remoting.TopicNotExist || s.resp.Remark != "no such topic" {
		t.Fatalf("After saw req %p resp %+v; want %p and the handler's answer", s.req, s.resp, req)
	}
	if s.took < work {
		t.Fatalf("After's duration %s, the handler worked %s", s.took, work)
	}
}
