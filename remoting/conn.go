package remoting

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/panjf2000/gnet/v2"
)

// ErrConnClosed is returned for writes and calls on a closed connection.
var ErrConnClosed = errors.New("remoting: connection closed")

// Conn is one inbound connection. Reply, Send and Invoke are safe from any
// goroutine; everything else about the gnet connection stays on its loop.
type Conn struct {
	ID         uint64
	Remote     string         // peer "ip:port", captured when the connection opened
	RemoteAddr netip.AddrPort // the same, parsed (bornHost of the messages it sends)

	gc     gnet.Conn
	srv    *Server
	closed atomic.Bool
	opaque atomic.Int32 // opaques of server-initiated requests

	mu      sync.Mutex
	pending map[int32]chan *Command // server-initiated requests awaiting an answer

	// out collects inline answers during one OnTraffic; loop-only.
	out []byte
}

// Closed reports whether the connection has gone.
func (c *Conn) Closed() bool { return c.closed.Load() }

// Close closes the connection asynchronously.
func (c *Conn) Close() { _ = c.gc.Close() }

// Reply writes a late answer (long poll, flush wait) from any goroutine. A
// response for a closed connection is dropped. A large body is handed to the
// socket as is (writev), not copied into the frame.
func (c *Conn) Reply(resp *Command) {
	if c.closed.Load() {
		resp.releaseBody()
		return
	}
	if len(resp.Body) < inlineBodyMax {
		frame := AppendFrame(nil, resp)
		resp.releaseBody()
		_ = c.write(frame)
		return
	}
	bufs := [][]byte{AppendFrameHeader(nil, resp), resp.Body}
	if err := c.gc.AsyncWritev(bufs, func(gnet.Conn, error) error {
		resp.releaseBody() // runs on the loop after the write (or with the close error)
		return nil
	}); err != nil {
		resp.releaseBody() // the loop cannot be woken; the callback will not run
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

// Invoke sends a server-initiated request and waits for the client's answer.
// It must never be called from an event loop.
func (c *Conn) Invoke(ctx context.Context, req *Command) (*Command, error) {
	if c.closed.Load() {
		return nil, ErrConnClosed
	}
	req.Opaque = c.opaque.Add(1)
	req.Flag &^= FlagOneway
	ch := make(chan *Command, 1)
	c.mu.Lock()
	if c.pending == nil {
		c.pending = make(map[int32]chan *Command)
	}
	c.pending[req.Opaque] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, req.Opaque)
		c.mu.Unlock()
	}()
	if err := c.write(AppendFrame(nil, req)); err != nil {
		return nil, err
	}
	select {
	case resp := <-ch:
		return resp, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// deliver hands a response frame from the client to a waiting Invoke.
func (c *Conn) deliver(resp *Command) {
	c.mu.Lock()
	ch := c.pending[resp.Opaque]
	c.mu.Unlock()
	if ch != nil {
		select {
		case ch <- resp:
		default:
		}
	}
}

func (c *Conn) write(frame []byte) error {
	// frame is not touched again by us, so no release callback is needed.
	return c.gc.AsyncWrite(frame, nil)
}
