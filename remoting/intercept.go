package remoting

import "time"

// Interceptor is called around every request an intercepted table serves
// (Table.Intercept), whatever its code: access control and metrics are
// interceptors, not edits to the handlers. Both methods run on the event
// loop (After also on the goroutine that writes a late answer), possibly
// concurrently for different requests: they must not block, and must not
// keep req or resp past the call (both are recycled).
type Interceptor interface {
	// Before runs before the handler. A non-nil answer refuses the request
	// (an ACL denial): the handler and the later interceptors do not run,
	// and that answer is sent.
	Before(c *Conn, req *Command) *Command
	// After runs once for every answer: when the handler (or a Before)
	// returns it, or, for a request answered after its handler returned
	// (a parked pull, a SYNC_FLUSH send), when that answer is handed to the
	// connection (Exchange.Late). A request that is never answered (a
	// one-way request answered by nothing, a parked pull whose connection
	// closed first) gets no After.
	After(x Exchange)
}

// Exchange is one request and its answer, as After sees it.
type Exchange struct {
	Conn *Conn
	Code int32 // the request's code
	// Req is the request; nil for a late answer: a request is recycled when
	// its handler returns.
	Req  *Command
	Resp *Command
	// Took runs from Before to the answer being handed to the connection:
	// for a late answer, the whole park or flush wait.
	Took time.Duration
	Late bool
}

// Intercepted serves a Table through interceptors; see Table.Intercept.
type Intercepted struct {
	t  Table
	is []Interceptor
}

// Intercept returns the table served through is: is[0] is the outermost,
// its Before runs first and its After last. Without interceptors it returns
// t itself, so an uninstrumented broker pays nothing per request. With
// them, a request costs a clock read and the calls, no allocation.
func (t Table) Intercept(is ...Interceptor) Handler {
	if len(is) == 0 {
		return t
	}
	return &Intercepted{t: t, is: append([]Interceptor(nil), is...)}
}

// epoch is the clock of Command.Began: monotonic nanoseconds since start,
// plus one, so that a marked request is never 0.
var epoch = time.Now()

func now() int64 { return int64(time.Since(epoch)) + 1 }

// Serve implements Handler.
func (x *Intercepted) Serve(c *Conn, req *Command) *Command {
	// Marked, so that NewResponse and Clone carry the start to a late answer.
	req.Began = now()
	for i, in := range x.is {
		if resp := in.Before(c, req); resp != nil {
			x.after(i, Exchange{Conn: c, Code: req.Code, Req: req, Resp: resp, Took: time.Duration(now() - req.Began)})
			return resp
		}
	}
	resp := x.t.Serve(c, req)
	if resp != nil {
		x.after(len(x.is)-1, Exchange{Conn: c, Code: req.Code, Req: req, Resp: resp, Took: time.Duration(now() - req.Began)})
	}
	return resp
}

// Answered implements LateObserver: an answer written after its
// handler returned.
func (x *Intercepted) Answered(c *Conn, resp *Command) {
	x.after(len(x.is)-1, Exchange{Conn: c, Code: resp.ReqCode, Resp: resp, Took: time.Duration(now() - resp.Began), Late: true})
}

// after runs the After of is[last] down to is[0].
func (x *Intercepted) after(last int, e Exchange) {
	for i := last; i >= 0; i-- {
		x.is[i].After(e)
	}
}
