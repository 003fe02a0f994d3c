package remoting

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"
)

// Handler serves one request on the connection's event loop. It returns the
// response to write now, or nil when there is none yet (the handler parked the
// request and will answer with Conn.Reply) or none at all (one-way). It must
// never block.
type Handler interface {
	Serve(c *Conn, req *Command) *Command
}

// ServerConfig configures a Server.
type ServerConfig struct {
	Addr         string // "host:port"
	NumEventLoop int    // 0 = GOMAXPROCS
	// OnClose is called on the connection's loop once it has closed, so owners
	// can drop registrations tied to it. It must not block.
	OnClose func(c *Conn)
}

// Server is a gnet engine serving the Remoting protocol.
type Server struct {
	gnet.BuiltinEventEngine
	cfg     ServerConfig
	handler Handler
	log     zerolog.Logger
	warn    zerolog.Logger // sampled, for per-connection trouble

	eng     gnet.Engine
	ids     atomic.Uint64
	bound   string // the listener's real address, set in OnBoot
	started chan struct{}
	exited  chan struct{} // closed when the engine has stopped, for any reason
	runErr  error         // why it stopped; read after exited is closed
	stopped atomic.Bool
	once    sync.Once
}

// NewServer builds a server; Start binds and serves.
func NewServer(cfg ServerConfig, h Handler, log zerolog.Logger) *Server {
	log = log.With().Str("component", "remoting").Str("addr", cfg.Addr).Logger()
	return &Server{
		cfg:     cfg,
		handler: h,
		log:     log,
		warn:    log.Sample(&zerolog.BurstSampler{Burst: 10, Period: time.Second}),
		started: make(chan struct{}),
		exited:  make(chan struct{}),
	}
}

// Start binds the listener and serves in the background. It returns once the
// port accepts connections, or the bind error.
func (s *Server) Start() error {
	loops := s.cfg.NumEventLoop
	if loops <= 0 {
		loops = runtime.GOMAXPROCS(0)
	}
	go func() {
		err := gnet.Run(s, "tcp://"+s.cfg.Addr,
			gnet.WithMulticore(true),
			gnet.WithNumEventLoop(loops),
			gnet.WithReuseAddr(true),
			gnet.WithTCPNoDelay(gnet.TCPNoDelay),
			gnet.WithReadBufferCap(256<<10),
			gnet.WithLogger(gnetLogger{s.log}),
		)
		if err == nil && !s.stopped.Load() {
			err = errors.New("engine stopped without shutdown")
		}
		s.runErr = err
		close(s.exited)
	}()
	select {
	case <-s.started:
		s.log.Info().Str("bound", s.bound).Int("eventLoops", loops).Msg("listening")
		return nil
	case <-s.exited:
		return fmt.Errorf("remoting: listen %s: %w", s.cfg.Addr, s.runErr)
	}
}

// Addr is the address the listener is bound to (port 0 resolved); valid after Start.
func (s *Server) Addr() string { return s.bound }

// Done is closed when the engine has stopped. Owners treat a close they did
// not ask for (Err non-nil) as fatal: gnet stops on its own after e.g. EMFILE.
func (s *Server) Done() <-chan struct{} { return s.exited }

// Err says why the engine stopped; nil after a requested Shutdown. Valid once
// Done is closed.
func (s *Server) Err() error { return s.runErr }

// Shutdown stops the engine and waits for its loops to exit. Idempotent.
func (s *Server) Shutdown(ctx context.Context) error {
	var err error
	s.once.Do(func() {
		s.stopped.Store(true)
		// A cancelled context makes Stop signal and return at once instead of
		// polling every 500 ms; we then wait for Run to return.
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_ = s.eng.Stop(cctx)
		select {
		case <-s.exited:
		case <-ctx.Done():
			err = ctx.Err()
		}
		s.log.Info().Msg("stopped")
	})
	return err
}

func (s *Server) OnBoot(e gnet.Engine) gnet.Action {
	s.eng = e
	s.bound = s.cfg.Addr
	if fd, err := e.Dup(); err == nil {
		if sa, err := unix.Getsockname(fd); err == nil {
			s.bound = sockaddrString(sa, s.cfg.Addr)
		}
		_ = unix.Close(fd) // a dup of the listener; the engine keeps its own
	}
	close(s.started)
	return gnet.None
}

func (s *Server) OnOpen(gc gnet.Conn) ([]byte, gnet.Action) {
	c := &Conn{ID: s.ids.Add(1), gc: gc, srv: s}
	c.flushLateFn = c.flushLate
	if ra := gc.RemoteAddr(); ra != nil {
		c.Remote = ra.String()
		if ap, err := netip.ParseAddrPort(c.Remote); err == nil {
			c.RemoteAddr = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		}
	}
	gc.SetContext(c)
	return nil, gnet.None
}

func (s *Server) OnClose(gc gnet.Conn, err error) gnet.Action {
	c, ok := gc.Context().(*Conn)
	if !ok {
		return gnet.None
	}
	c.closed.Store(true)
	if err != nil && !s.stopped.Load() {
		s.log.Debug().Err(err).Str("remote", c.Remote).Msg("connection closed")
	}
	if s.cfg.OnClose != nil {
		s.cfg.OnClose(c)
	}
	return gnet.None
}

func (s *Server) OnTraffic(gc gnet.Conn) (action gnet.Action) {
	c, ok := gc.Context().(*Conn)
	if !ok {
		return gnet.Close
	}
	defer func() {
		if r := recover(); r != nil {
			s.log.Error().Str("remote", c.Remote).Interface("panic", r).
				Str("stack", string(debug.Stack())).Msg("BUG: panic serving connection; closing it")
			action = gnet.Close
		}
	}()
	c.out = c.out[:0]
	for !c.closed.Load() {
		n := gc.InboundBuffered()
		if n < 4 {
			break
		}
		lp, _ := gc.Peek(4)
		length := int64(int32(binary.BigEndian.Uint32(lp)))
		if length < 4 || length > MaxFrameLength {
			s.warn.Warn().Str("remote", c.Remote).Int64("length", length).Msg("bad frame length; closing connection")
			c.closeFor(fmt.Errorf("%w: length %d", ErrFrameTooLarge, length))
			s.flush(gc, c)
			return gnet.Close
		}
		if int64(n) < 4+length {
			break // partial frame: gnet keeps the bytes
		}
		_, _ = gc.Discard(4)
		req := newPooledRequest(int(length)) // the frame is the request's until it is recycled
		_, _ = gc.Read(req.frame)
		if err := decodeInto(req, req.frame, &c.text); err != nil {
			req.recycle()
			s.warn.Warn().Str("remote", c.Remote).Err(err).Msg("undecodable frame; closing connection")
			c.closeFor(err)
			s.flush(gc, c)
			return gnet.Close
		}
		if req.IsResponse() {
			// A client's answer to a one-way request it treated as two-way
			// (Java answers codes it does not handle): nothing waits for it.
			req.recycle()
			continue
		}
		if resp := s.serve(c, req); resp != nil {
			if req.IsOneway() {
				resp.done()
			} else {
				s.queue(gc, c, resp)
			}
		}
		req.recycle()
	}
	s.flush(gc, c)
	return gnet.None
}

// inlineBodyMax: bodies below it are copied into the connection's output
// buffer; larger ones (pull answers) go to the socket with writev, uncopied.
const inlineBodyMax = 16 << 10

// maxIOV is gnet's limit of slices per writev (IOV_MAX); a body in more
// pieces than that is copied instead.
const maxIOV = 1024

// writesInline reports whether resp's body is copied into the frame buffer
// rather than handed to writev.
func writesInline(resp *Command) bool {
	return resp.BodyLen() < inlineBodyMax || len(resp.BodyVec) >= maxIOV
}

// queue adds an answer to the connection's inline output.
func (s *Server) queue(gc gnet.Conn, c *Conn, resp *Command) {
	c.out = AppendFrameHeader(c.out, resp)
	if writesInline(resp) {
		c.out = resp.appendBody(c.out)
		resp.done()
		return
	}
	if !c.closed.Load() {
		// gnet copies whatever the kernel does not take, so the body is free after this.
		c.iov = resp.iovec(c.iov, c.out)
		_, _ = gc.Writev(c.iov)
		clear(c.iov) // do not pin the body (or a mapped file) until the next answer
	}
	c.out = c.out[:0]
	resp.done()
}

func (s *Server) flush(gc gnet.Conn, c *Conn) {
	if len(c.out) == 0 || c.closed.Load() {
		return
	}
	_, _ = gc.Write(c.out)
	if cap(c.out) > 1<<20 {
		c.out = nil // do not pin a huge pull answer per connection
	}
}

// serve runs the handler, turning a panic into SYSTEM_ERROR so one bad request
// cannot take down the loop.
func (s *Server) serve(c *Conn, req *Command) (resp *Command) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error().Int32("code", req.Code).Str("remote", c.Remote).Interface("panic", r).
				Str("stack", string(debug.Stack())).Msg("BUG: handler panicked")
			resp = NewResponse(req, SystemError, "internal error serving request code "+strconv.Itoa(int(req.Code)))
		}
	}()
	return s.handler.Serve(c, req)
}

func sockaddrString(sa unix.Sockaddr, fallback string) string {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port))
	case *unix.SockaddrInet6:
		return net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port))
	}
	return fallback
}

// gnetLogger routes gnet's own log lines into zerolog.
type gnetLogger struct{ l zerolog.Logger }

func (g gnetLogger) Debugf(f string, a ...any) { g.l.Debug().Msgf(f, a...) }
func (g gnetLogger) Infof(f string, a ...any)  { g.l.Debug().Msgf(f, a...) }
func (g gnetLogger) Warnf(f string, a ...any)  { g.l.Warn().Msgf(f, a...) }
func (g gnetLogger) Errorf(f string, a ...any) { g.l.Error().Msgf(f, a...) }
func (g gnetLogger) Fatalf(f string, a ...any) { g.l.Error().Msgf(f, a...) }
