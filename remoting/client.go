package remoting

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// Client sends requests to other Remoting servers (broker→namesrv, later
// replication), one connection per address, multiplexed by opaque. A broken
// connection is dropped and redialled on the next call.
//
// mu guards the tables only, never a dial: a name server that does not
// answer (a dead host: the dial waits dialTimeout) must not hold up
// requests to the others. Callers for the same address share one dial.
type Client struct {
	log         zerolog.Logger
	dialTimeout time.Duration
	opaque      atomic.Int32
	// dial connects; tests replace it to make one address hang.
	dial func(ctx context.Context, addr string) (net.Conn, error)
	// onRequest, when set (SetRequestHandler, before the first call), is
	// given the requests a server sends on a client connection (a broker's
	// CHECK_TRANSACTION_STATE to a producer); it runs on the connection's
	// reader and must not block.
	onRequest func(addr string, req *Command)
	// sign, when set (SetSigner, before the first call), adds credentials
	// to every request this client sends (a broker's inner credentials).
	sign func(req *Command)
	// closeOnTimeout (SetCloseOnTimeout, before the first call): a call
	// whose deadline passes without an answer closes its connection.
	closeOnTimeout bool

	mu     sync.Mutex
	conns  map[string]*clientConn
	dials  map[string]*dialCall // dials in progress, by address
	closed bool
}

// dialCall is a dial in progress; done is closed once cc or err is set.
type dialCall struct {
	done chan struct{}
	cc   *clientConn
	err  error
}

// NewClient returns a client with no connections yet.
func NewClient(log zerolog.Logger) *Client {
	cl := &Client{
		log:         log.With().Str("component", "remoting-client").Logger(),
		dialTimeout: 3 * time.Second,
		conns:       make(map[string]*clientConn),
		dials:       make(map[string]*dialCall),
	}
	cl.dial = func(ctx context.Context, addr string) (net.Conn, error) {
		d := net.Dialer{Timeout: cl.dialTimeout}
		return d.DialContext(ctx, "tcp", addr)
	}
	return cl
}

// SetTLS makes the client dial TLS when t says clients do (tls.enable, or
// an enforcing server mode); nil or a plaintext t keeps plain TCP. Call it
// before the first Invoke.
func (cl *Client) SetTLS(t *TLS) {
	if t == nil || t.client == nil {
		return
	}
	plain := cl.dial
	cfg := t.client
	cl.dial = func(ctx context.Context, addr string) (net.Conn, error) {
		nc, err := plain(ctx, addr)
		if err != nil {
			return nil, err
		}
		hctx, cancel := context.WithTimeout(ctx, cl.dialTimeout)
		defer cancel()
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(hctx); err != nil {
			_ = nc.Close()
			return nil, fmt.Errorf("tls handshake: %w", err)
		}
		return tc, nil
	}
}

// SetRequestHandler installs fn for requests servers send on this client's
// connections (otherwise they are logged and dropped). Call it before the
// first Invoke; fn runs on a connection's reader goroutine and must not block.
func (cl *Client) SetRequestHandler(fn func(addr string, req *Command)) { cl.onRequest = fn }

// SetSigner installs fn, called on every request before it is sent (it
// adds AccessKey and Signature: ACL 2.0's innerClientAuthenticationCredentials).
// Call it before the first Invoke.
func (cl *Client) SetSigner(fn func(req *Command)) { cl.sign = fn }

// SetCloseOnTimeout makes a call that times out waiting for its answer
// close the connection, as Apache's client does
// (com.rocketmq.remoting.client.closeSocketIfTimeout, on by default): a
// peer that went away without a reset (a crashed host, a Kubernetes pod
// whose IP is gone) is dialled again at the next call, by its host name,
// which then resolves to where the peer is now. Calls in flight on that
// connection fail with it. Call it before the first Invoke.
func (cl *Client) SetCloseOnTimeout() { cl.closeOnTimeout = true }

// Invoke sends req to addr and waits for the response or ctx's end.
func (cl *Client) Invoke(ctx context.Context, addr string, req *Command) (*Command, error) {
	cc, err := cl.conn(ctx, addr)
	if err != nil {
		return nil, err
	}
	if cl.sign != nil {
		cl.sign(req)
	}
	return cc.call(ctx, req, cl.opaque.Add(1))
}

// InvokeOneway sends req with the one-way bit and does not wait for an answer.
func (cl *Client) InvokeOneway(ctx context.Context, addr string, req *Command) error {
	cc, err := cl.conn(ctx, addr)
	if err != nil {
		return err
	}
	req.Opaque = cl.opaque.Add(1)
	req.Flag |= FlagOneway
	if cl.sign != nil {
		cl.sign(req)
	}
	return cc.send(ctx, AppendFrame(nil, req))
}

// Close closes every connection; later calls fail. Idempotent.
func (cl *Client) Close() error {
	cl.mu.Lock()
	cl.closed = true
	conns := cl.conns
	cl.conns = map[string]*clientConn{}
	cl.mu.Unlock()
	for _, cc := range conns {
		cc.fail(ErrConnClosed)
		<-cc.readerDone
	}
	return nil
}

// conn returns the connection to addr, dialling it if there is none. The
// dial runs without mu; a caller arriving meanwhile for the same address
// waits for that dial (or its ctx) and shares its result.
func (cl *Client) conn(ctx context.Context, addr string) (*clientConn, error) {
	cl.mu.Lock()
	for {
		if cl.closed {
			cl.mu.Unlock()
			return nil, ErrConnClosed
		}
		if cc := cl.conns[addr]; cc != nil {
			select {
			case <-cc.done:
				delete(cl.conns, addr)
			default:
				cl.mu.Unlock()
				return cc, nil
			}
		}
		d := cl.dials[addr]
		if d == nil {
			break
		}
		cl.mu.Unlock()
		select {
		case <-d.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("dial %s: %w", addr, ctx.Err())
		}
		if d.err != nil {
			return nil, d.err
		}
		cl.mu.Lock() // the dialled connection may have broken already: look again
	}
	d := &dialCall{done: make(chan struct{})}
	cl.dials[addr] = d
	cl.mu.Unlock()

	nc, err := cl.dial(ctx, addr)
	if err != nil {
		err = fmt.Errorf("dial %s: %w", addr, err)
	}
	cl.mu.Lock()
	delete(cl.dials, addr)
	if err == nil && cl.closed {
		_ = nc.Close() // Close ran during the dial
		err = ErrConnClosed
	}
	if err == nil {
		d.cc = &clientConn{
			nc:             nc,
			addr:           addr,
			log:            cl.log,
			onRequest:      cl.onRequest,
			closeOnTimeout: cl.closeOnTimeout,
			pending:        make(map[int32]chan *Command),
			wsem:           make(chan struct{}, 1),
			done:           make(chan struct{}),
			readerDone:     make(chan struct{}),
		}
		cl.conns[addr] = d.cc
		go d.cc.readLoop()
	}
	d.err = err
	close(d.done)
	cl.mu.Unlock()
	return d.cc, err
}

type clientConn struct {
	nc   net.Conn
	addr string
	log  zerolog.Logger
	// onRequest is the client's handler for server requests, or nil.
	onRequest      func(addr string, req *Command)
	closeOnTimeout bool

	// wsem holds the wire: one frame at a time. A channel, not a mutex, so
	// that a caller waiting for it gives up with its context or when the
	// connection fails, instead of queueing behind a write to a peer that
	// stopped reading.
	wsem chan struct{}

	mu      sync.Mutex
	pending map[int32]chan *Command

	once       sync.Once
	err        error
	done       chan struct{}
	readerDone chan struct{}
}

func (cc *clientConn) call(ctx context.Context, req *Command, opaque int32) (*Command, error) {
	req.Opaque = opaque
	req.Flag &^= FlagOneway | FlagResponse
	ch := make(chan *Command, 1)
	cc.mu.Lock()
	cc.pending[opaque] = ch
	cc.mu.Unlock()
	defer func() {
		cc.mu.Lock()
		delete(cc.pending, opaque)
		cc.mu.Unlock()
	}()
	if err := cc.send(ctx, AppendFrame(nil, req)); err != nil {
		return nil, err
	}
	select {
	case resp := <-ch:
		return resp, nil
	case <-ctx.Done():
		err := fmt.Errorf("invoke code %d on %s: %w", req.Code, cc.addr, ctx.Err())
		if cc.closeOnTimeout && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			cc.fail(err)
		}
		return nil, err
	case <-cc.done:
		return nil, fmt.Errorf("invoke code %d on %s: %w", req.Code, cc.addr, cc.err)
	}
}

func (cc *clientConn) send(ctx context.Context, frame []byte) error {
	select {
	case cc.wsem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("write to %s: %w", cc.addr, ctx.Err())
	case <-cc.done:
		return fmt.Errorf("write to %s: %w", cc.addr, cc.err)
	}
	defer func() { <-cc.wsem }()
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(clientWriteTimeout)
	}
	_ = cc.nc.SetWriteDeadline(dl)
	if _, err := cc.nc.Write(frame); err != nil {
		cc.fail(err)
		return fmt.Errorf("write to %s: %w", cc.addr, err)
	}
	return nil
}

// clientWriteTimeout bounds a write whose context has no deadline: a peer
// that reads nothing for that long fails the connection (the next call
// dials again) rather than holding the wire for ever.
const clientWriteTimeout = 30 * time.Second

func (cc *clientConn) readLoop() {
	defer close(cc.readerDone)
	br := bufio.NewReaderSize(cc.nc, 64<<10)
	for {
		resp, err := ReadFrame(br)
		if err != nil {
			cc.fail(fmt.Errorf("read from %s: %w", cc.addr, err))
			return
		}
		if !resp.IsResponse() {
			if cc.onRequest != nil {
				cc.onRequest(cc.addr, resp)
				continue
			}
			cc.log.Debug().Int32("code", resp.Code).Str("remote", cc.addr).Msg("ignoring request from server")
			continue
		}
		cc.mu.Lock()
		ch := cc.pending[resp.Opaque]
		cc.mu.Unlock()
		if ch != nil {
			select {
			case ch <- resp:
			default: // a duplicate answer for the same opaque
			}
		}
	}
}

func (cc *clientConn) fail(err error) {
	cc.once.Do(func() {
		cc.err = err
		close(cc.done)
		_ = cc.nc.Close()
	})
}

// ReadFrame reads and decodes one whole frame from a blocking reader (the
// client's connections, tests). The Command owns its memory.
func ReadFrame(r io.Reader) (*Command, error) {
	var lp [4]byte
	if _, err := io.ReadFull(r, lp[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(lp[:]))
	if n < 4 || n > MaxFrameLength {
		return nil, fmt.Errorf("%w: length %d", ErrFrameTooLarge, n)
	}
	frame := make([]byte, n)
	if _, err := io.ReadFull(r, frame); err != nil {
		return nil, err
	}
	return DecodeFrame(frame)
}
