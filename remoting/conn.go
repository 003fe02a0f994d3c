package remoting

import (
	"errors"
	"net/netip"
	"sync"
	"sync/atomic"

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
	closed atomic.Bool
	// why is set before the server itself closes the connection (a bad
	// frame, a limit); nil when the peer closed it or the socket failed.
	why    atomic.Pointer[error]
	opaque atomic.Int32 // opaques of server-initiated requests

	// Late frames from other goroutines are batched: the first one schedules
	// a single loop task that writes everything gathered by then, so a group
	// commit answering hundreds of sends costs one wake-up and one write per
	// connection, not one of each per send.
	lateMu      sync.Mutex
	late        []byte // frames waiting for the loop
	lateQueued  bool   // a flushLate task is scheduled
	lateSpare   []byte // the other buffer; loop-only
	flushLateFn gnet.AsyncCallback

	// out collects inline answers during one OnTraffic; loop-only.
	out  []byte
	iov  [][]byte // writev scratch for large inline answers; loop-only
	text []byte   // header text arena of the requests (pool.go); loop-only
}

// Closed reports whether the connection has gone.
func (c *Conn) Closed() bool { return c.closed.Load() }

// Close closes the connection asynchronously.
func (c *Conn) Close() { _ = c.gc.Close() }

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

// Reply writes a late answer (long poll, flush wait) from any goroutine. A
// response for a closed connection is dropped. A large body is handed to the
// socket as is (writev), not copied into the frame.
func (c *Conn) Reply(resp *Command) {
	if c.closed.Load() {
		resp.done()
		return
	}
	if writesInline(resp) {
		c.lateMu.Lock()
		c.late = AppendFrame(c.late, resp)
		c.lateMu.Unlock()
		resp.done()
		c.scheduleLate()
		return
	}
	bufs := resp.iovec(make([][]byte, 0, len(resp.BodyVec)+2), AppendFrameHeader(nil, resp))
	if err := c.gc.AsyncWritev(bufs, func(gnet.Conn, error) error {
		resp.done() // runs on the loop after the write (or with the close error)
		return nil
	}); err != nil {
		resp.done() // the loop cannot be woken; the callback will not run
	}
}

// Send writes a server-initiated one-way request (e.g. NOTIFY_CONSUMER_IDS_CHANGED).
func (c *Conn) Send(req *Command) error {
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
	c.lateMu.Unlock()
	if err == nil && len(out) > 0 && !c.closed.Load() {
		_, _ = gc.Write(out) // gnet copies what the socket does not take
	}
	if cap(out) <= 1<<20 {
		c.lateSpare = out[:0]
	} else {
		c.lateSpare = nil
	}
	return nil
}
