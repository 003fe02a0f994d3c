package remoting

import (
	"context"
	"net/netip"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	"github.com/rs/zerolog"
)

// Local is an in-process connection to a Handler: a component of the same
// process (the gRPC proxy in local mode) calls the broker's handlers with no
// socket, no frame and no event loop in between, as Apache's local proxy
// calls its broker's processors through a channel of its own.
//
// The handler sees an ordinary *Conn: it registers clients on it, parks
// requests and answers them later with Conn.Reply, and sends requests of
// its own with Conn.Send; those reach the function given to
// SetRequestHandler. Conn.Close from the handler's side drops what it
// registered (onClose) and leaves the link up; only the owner's Close ends it.
//
// Invariants: an answer is copied out of the handler's pooled response
// (fields and body) before the caller sees it, and the response is then
// released, so nothing the caller keeps aliases a pooled buffer or a mapped
// file. A request is the handler's once Invoke is called; the caller builds
// a new one for each call.
type Local struct {
	h         Handler
	conn      *Conn
	onClose   func(*Conn)
	onRequest func(req *Command)
	log       zerolog.Logger

	mu      sync.Mutex
	waiting map[int32]chan *Command // opaque -> the caller waiting for a late answer
	opaque  int32
}

// NewLocal returns an in-process connection to h. id must differ from the
// IDs of h's network connections (client registrations are keyed by it);
// remote is the address the handler sees (the proxy's clients, typically).
// onClose, if set, runs once when Close is called, as a server's OnClose.
func NewLocal(h Handler, id uint64, remote string, onClose func(*Conn), log zerolog.Logger) *Local {
	l := &Local{h: h, onClose: onClose, log: log, waiting: make(map[int32]chan *Command)}
	c := &Conn{ID: id, Remote: remote, local: l}
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		c.RemoteAddr = ap
	}
	l.conn = c
	return l
}

// SetRequestHandler sets where requests the handler sends on the connection
// go (Conn.Send). fn runs on the sender's goroutine and must not block.
// Call it before the first Invoke.
func (l *Local) SetRequestHandler(fn func(req *Command)) { l.onRequest = fn }

// Conn is the connection the handler sees.
func (l *Local) Conn() *Conn { return l.conn }

// Invoke serves req and returns its answer, waiting for a late one until
// ctx ends.
func (l *Local) Invoke(ctx context.Context, req *Command) (*Command, error) {
	ch := make(chan *Command, 1)
	l.mu.Lock()
	// Checked under mu: Close marks the connection closed before it takes
	// mu to fail the waiting callers, so a caller registered here is seen.
	if l.conn.closed.Load() {
		l.mu.Unlock()
		return nil, ErrConnClosed
	}
	l.opaque++
	req.Opaque = l.opaque
	// Registered before serving: a late answer may come from another
	// goroutine before Serve returns.
	l.waiting[req.Opaque] = ch
	l.mu.Unlock()
	req.Flag &^= FlagResponse | FlagOneway

	if resp := l.serve(req); resp != nil {
		l.forget(req.Opaque)
		return detach(resp), nil
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			return nil, ErrConnClosed
		}
		return resp, nil
	case <-ctx.Done():
		l.forget(req.Opaque)
		return nil, ctx.Err()
	}
}

// InvokeOneway serves req and drops any answer.
func (l *Local) InvokeOneway(req *Command) error {
	if l.conn.closed.Load() {
		return ErrConnClosed
	}
	l.mu.Lock()
	l.opaque++
	req.Opaque = l.opaque
	l.mu.Unlock()
	req.Flag = req.Flag&^FlagResponse | FlagOneway
	if resp := l.serve(req); resp != nil {
		resp.done()
	}
	return nil
}

// Close ends the connection: callers waiting get ErrConnClosed, late
// answers are dropped, and onClose drops the handler's registrations.
// Idempotent.
func (l *Local) Close() {
	if !l.conn.closed.CompareAndSwap(false, true) {
		return
	}
	l.mu.Lock()
	for op, ch := range l.waiting {
		close(ch)
		delete(l.waiting, op)
	}
	l.mu.Unlock()
	if l.onClose != nil {
		l.onClose(l.conn)
	}
}

// drop is the handler closing the connection (a client's heartbeat expired):
// its registrations go, as when a TCP client is cut off and reconnects, but
// the link stays usable and calls in flight are still answered — there is
// no socket to close, and the proxy in front serves many clients on it.
func (l *Local) drop() {
	l.log.Info().Str("remote", l.conn.Remote).Msg("local connection's registrations dropped by the broker")
	if l.onClose != nil && !l.conn.closed.Load() {
		l.onClose(l.conn)
	}
}

func (l *Local) forget(opaque int32) {
	l.mu.Lock()
	delete(l.waiting, opaque)
	l.mu.Unlock()
}

// serve runs the handler, turning a panic into SYSTEM_ERROR as the network
// server does.
func (l *Local) serve(req *Command) (resp *Command) {
	defer func() {
		if r := recover(); r != nil {
			l.log.Error().Int32("code", req.Code).Str("remote", l.conn.Remote).Interface("panic", r).
				Str("stack", string(debug.Stack())).Msg("BUG: handler panicked (local connection)")
			resp = NewResponse(req, SystemError, "internal error serving request code "+strconv.Itoa(int(req.Code)))
		}
	}()
	return l.h.Serve(l.conn, req)
}

// reply takes a late answer (Conn.Reply).
func (l *Local) reply(resp *Command) {
	if obs, ok := l.h.(LateObserver); ok && resp.Began != 0 {
		obs.Answered(l.conn, resp)
	}
	l.mu.Lock()
	ch := l.waiting[resp.Opaque]
	delete(l.waiting, resp.Opaque)
	l.mu.Unlock()
	if ch == nil { // the caller gave up, or the connection closed
		resp.done()
		return
	}
	ch <- detach(resp) // buffered, and only this answer is sent on it
}

// send takes a request the handler sends (Conn.Send).
func (l *Local) send(req *Command) error {
	if l.conn.closed.Load() {
		return ErrConnClosed
	}
	req.Opaque = l.conn.opaque.Add(1)
	req.Flag |= FlagOneway
	if l.onRequest != nil {
		l.onRequest(detach(req))
	}
	return nil
}

// detach copies c into a command of its own — field strings, remark and a
// flat body — and releases c (a pooled response goes back to its pool).
func detach(c *Command) *Command {
	out := &Command{
		Code: c.Code, Language: c.Language, Version: c.Version, Opaque: c.Opaque, Flag: c.Flag,
		Remark: strings.Clone(c.Remark), Serialize: c.Serialize, ReqCode: c.ReqCode,
	}
	if len(c.ExtFields) > 0 {
		out.ExtFields = make([]Field, len(c.ExtFields))
		for i, f := range c.ExtFields {
			out.ExtFields[i] = Field{strings.Clone(f.Key), strings.Clone(f.Value)}
		}
	}
	if n := c.BodyLen(); n > 0 {
		out.Body = c.appendBody(make([]byte, 0, n))
	}
	c.done()
	return out
}

// IsLocal says whether c is an in-process connection (NewLocal): the
// local proxy's, whose calls were checked at its own door.
func (c *Conn) IsLocal() bool { return c.local != nil }
