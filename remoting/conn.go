package remoting

import (
	"errors"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// ErrConnClosed is returned for writes and calls on a closed connection.
var ErrConnClosed = errors.New("remoting: connection closed")

// Conn is one inbound connection. Reply and Send are safe from any
// goroutine; everything else about the gnet connection stays on its loop.
type Conn struct {
	ID         uint64
	Remote     string         // peer "ip:port", captured when the connection opened
	RemoteAddr netip.AddrPort // the same, parsed (bornHost of the messages it sends)

	gc     gnet.Conn
	srv    *Server
	local  *Local      // set on an in-process connection (local.go): no gc, no srv
	opened atomic.Bool // OnOpen ran: the accept loop counts a failed registration back
	closed atomic.Bool
	// why is set before the server itself closes the connection (a bad
	// frame, a limit); nil when the peer closed it or the socket failed.
	why    atomic.Pointer[error]
	opaque atomic.Int32 // opaques of server-initiated requests

	callMu sync.Mutex
	calls  map[int32]*call // server-initiated requests awaiting answers (calls.go)

	// Late frames from other goroutines are batched: the first one schedules
	// a single loop task that writes everything gathered by then, so a group
	// commit answering hundreds of sends costs one wake-up and one write per
	// connection, not one of each per send.
	lateMu      sync.Mutex
	late        []byte // frames waiting for the loop
	lateQueued  bool   // a flushLate task is scheduled
	lateSpare   []byte // the other buffer; loop-only
	flushLateFn gnet.AsyncCallback

	// Times on the server's clock (Server.now), read by the sweeper.
	lastRead   atomic.Int64 // bytes last read (or the connection opened)
	inSince    atomic.Int64 // in began holding input; 0 while it is empty
	aboveSince atomic.Int64 // output went above the high-water mark; 0 below it
	// lateOut counts the bytes of late frames (Reply, Send) not yet handed
	// to gnet: they count toward the output marks.
	lateOut atomic.Int64

	// out collects inline answers during one OnTraffic; loop-only.
	out  []byte
	iov  [][]byte // writev scratch for large inline answers; loop-only
	text []byte   // header text arena of the requests (pool.go); loop-only

	// Input read from gnet but not yet served (input.go); loop-only.
	in        []byte // in[inOff:] is the unserved stream: a partial frame, or requests held back
	inOff     int
	inFrame   int // size of the frame at in[inOff:] with its length field, once known; else 0
	inCharged int // cap(in), as charged to the server's input budget

	// Backpressure (server.go); loop-only.
	resume      *time.Timer // wakes the connection to look at its output again
	resumeDelay time.Duration
}

// Closed reports whether the connection has gone.
func (c *Conn) Closed() bool { return c.closed.Load() }

// Close closes the connection asynchronously.
func (c *Conn) Close() {
	if c.local != nil {
		c.local.drop()
		return
	}
	_ = c.gc.Close()
}

// ClosedByServer is why the server closed the connection (a frame it could
// not read, a limit crossed), or nil when the peer closed it or the socket
// failed. Owners read it in ServerConfig.OnClose: a peer the server cut off
// may well be alive (a name server keeps such a broker's registration).
func (c *Conn) ClosedByServer() error {
	if p := c.why.Load(); p != nil {
		return *p
	}
	return nil
}

// closeFor records why the server is closing the connection; the first
// reason wins.
func (c *Conn) closeFor(err error) {
	c.why.CompareAndSwap(nil, &err)
}

// cut closes the connection for err, from any goroutine.
func (c *Conn) cut(err error) {
	c.closeFor(err)
	_ = c.gc.Close()
}

// Reply writes a late answer (long poll, flush wait) from any goroutine. A
// response for a closed connection is dropped. A large body is handed to the
// socket as is (writev), not copied into the frame.
func (c *Conn) Reply(resp *Command) {
	if c.local != nil {
		c.local.reply(resp)
		return
	}
	if resp.Began != 0 && c.srv != nil && c.srv.late != nil {
		c.srv.late.Answered(c, resp)
	}
	if c.closed.Load() {
		resp.done()
		return
	}
	if writesInline(resp) {
		c.lateMu.Lock()
		n := len(c.late)
		c.late = AppendFrame(c.late, resp)
		c.lateOut.Add(int64(len(c.late) - n))
		c.lateMu.Unlock()
		resp.done()
		_ = c.scheduleLate()
		return
	}
	header := AppendFrameHeader(nil, resp)
	size := int64(len(header) + resp.BodyLen())
	bufs := resp.iovec(make([][]byte, 0, len(resp.BodyVec)+2), header)
	c.lateOut.Add(size)
	if err := c.gc.AsyncWritev(bufs, func(gc gnet.Conn, err error) error {
		// On the loop, after the write (or with the close error).
		c.lateOut.Add(-size)
		resp.done()
		if err == nil {
			c.srv.wrote(gc, c)
		}
		return nil
	}); err != nil {
		c.lateOut.Add(-size)
		resp.done() // the loop cannot be woken; the callback will not run
	}
}

// Send writes a server-initiated one-way request (e.g. NOTIFY_CONSUMER_IDS_CHANGED).
func (c *Conn) Send(req *Command) error {
	if c.local != nil {
		return c.local.send(req)
	}
	if c.closed.Load() {
		return ErrConnClosed
	}
	req.Opaque = c.opaque.Add(1)
	req.Flag |= FlagOneway
	return c.write(AppendFrame(nil, req))
}

func (c *Conn) write(frame []byte) error {
	if c.closed.Load() {
		return ErrConnClosed
	}
	c.lateMu.Lock()
	c.late = append(c.late, frame...)
	c.lateOut.Add(int64(len(frame)))
	c.lateMu.Unlock()
	return c.scheduleLate()
}

// scheduleLate makes sure one flushLate task is queued on the loop.
func (c *Conn) scheduleLate() error {
	c.lateMu.Lock()
	if c.lateQueued {
		c.lateMu.Unlock()
		return nil
	}
	c.lateQueued = true
	c.lateMu.Unlock()
	// An empty asynchronous write is a high-priority task whose callback runs
	// on the loop, where Write is allowed.
	if err := c.gc.AsyncWrite(nil, c.flushLateFn); err != nil {
		c.lateMu.Lock()
		c.lateQueued = false // the loop cannot be woken; a later frame retries
		c.lateMu.Unlock()
		return err
	}
	return nil
}

// flushLate runs on the connection's loop and writes the batched frames.
func (c *Conn) flushLate(gc gnet.Conn, err error) error {
	c.lateMu.Lock()
	out := c.late
	c.late = c.lateSpare[:0]
	c.lateQueued = false
	c.lateOut.Add(-int64(len(out)))
	c.lateMu.Unlock()
	if err == nil && len(out) > 0 && !c.closed.Load() {
		_, _ = gc.Write(out) // gnet copies what the socket does not take
		c.srv.wrote(gc, c)
	}
	if cap(out) <= 1<<20 {
		c.lateSpare = out[:0]
	} else {
		c.lateSpare = nil
	}
	return nil
}
