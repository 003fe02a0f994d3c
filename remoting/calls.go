package remoting

// Server-initiated two-way requests: the broker asks a client something and
// relays its answer (GET_CONSUMER_RUNNING_INFO, CONSUME_MESSAGE_DIRECTLY,
// as Apache's Broker2Client.callClient). Invariants:
//   - every call ends exactly once: with the client's answer, with
//     ErrCallTimeout, or with ErrConnClosed when the connection closes;
//   - done never runs on an event loop (it may write to other connections);
//   - a connection holds at most maxCallsPerConn calls: a client that never
//     answers costs a bounded table, not memory per admin request.

import (
	"errors"
	"time"
)

const maxCallsPerConn = 16

var (
	ErrCallTimeout  = errors.New("remoting: client did not answer in time")
	ErrTooManyCalls = errors.New("remoting: too many requests waiting for this client's answers")
	ErrNoCalls      = errors.New("remoting: in-process connections take no server-initiated requests")
)

type call struct {
	done  func(*Command, error)
	timer *time.Timer
}

// Invoke sends req to the client and calls done with its answer (a copy done
// owns) or an error. It returns an error, and done is not called, when the
// request cannot be sent.
func (c *Conn) Invoke(req *Command, timeout time.Duration, done func(*Command, error)) error {
	if c.local != nil {
		return ErrNoCalls
	}
	if c.closed.Load() {
		return ErrConnClosed
	}
	c.callMu.Lock()
	if len(c.calls) >= maxCallsPerConn {
		c.callMu.Unlock()
		return ErrTooManyCalls
	}
	if c.calls == nil {
		c.calls = make(map[int32]*call)
	}
	opaque := c.opaque.Add(1)
	req.Opaque = opaque
	req.Flag &^= FlagOneway | FlagResponse
	cl := &call{done: done}
	c.calls[opaque] = cl
	cl.timer = time.AfterFunc(timeout, func() {
		if c.takeCall(opaque) != nil {
			done(nil, ErrCallTimeout)
		}
	})
	c.callMu.Unlock()
	if err := c.write(AppendFrame(nil, req)); err != nil {
		if c.takeCall(opaque) != nil {
			cl.timer.Stop()
		}
		return err
	}
	return nil
}

func (c *Conn) takeCall(opaque int32) *call {
	c.callMu.Lock()
	defer c.callMu.Unlock()
	cl := c.calls[opaque]
	delete(c.calls, opaque)
	return cl
}

// answered hands a response frame to the call waiting for it, if any.
// Whoever takes a call from the table ends it: a timer that fires after
// this took it finds nothing and does nothing.
func (c *Conn) answered(resp *Command) bool {
	cl := c.takeCall(resp.Opaque)
	if cl == nil {
		return false
	}
	cl.timer.Stop()
	cp := resp.Clone()
	go cl.done(cp, nil)
	return true
}

// failCalls ends every waiting call: the connection closed.
func (c *Conn) failCalls() {
	c.callMu.Lock()
	calls := c.calls
	c.calls = nil
	c.callMu.Unlock()
	for _, cl := range calls {
		cl.timer.Stop()
		go cl.done(nil, ErrConnClosed)
	}
}
