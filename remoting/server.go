package remoting

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/rs/zerolog"
)

// Handler serves one request on the connection's event loop. It returns the
// response to write now, or nil when there is none yet (the handler parked the
// request and will answer with Conn.Reply) or none at all (one-way). It must
// never block.
type Handler interface {
	Serve(c *Conn, req *Command) *Command
}

// LateObserver is implemented by a Handler that wants to see the answers
// written after Serve returned nil (Conn.Reply: a parked pull, a SYNC_FLUSH
// send, work offloaded by the name server). Answered runs on the goroutine
// that replies, before the answer is written (or dropped for a closed
// connection), and only for answers whose request had Began set; it must
// not block or keep resp.
type LateObserver interface {
	Answered(c *Conn, resp *Command)
}

// ServerConfig configures a Server.
type ServerConfig struct {
	Addr         string // "host:port"
	NumEventLoop int    // 0 = GOMAXPROCS
	// OnClose is called on the connection's loop once it has closed, so owners
	// can drop registrations tied to it. It must not block.
	OnClose func(c *Conn)
	// Limits bound connections, buffered input and output, and headers.
	Limits Limits
	// IDBase: connection IDs start after it, so that two servers of one
	// owner (a broker's main and VIP channels) never give two connections
	// the same ID.
	IDBase uint64
	// TLS, when it serves (permissive or enforcing mode), terminates TLS
	// connections before the event loops (tls_accept.go); nil or disabled
	// leaves every connection on the plain path.
	TLS *TLS
}

// Server serves the Remoting protocol on gnet event loops.
//
// It accepts connections itself (accept.go) and hands them to a gnet engine
// that listens only on a private, already unlinked Unix socket: gnet's own
// acceptor stops the whole engine on the first accept error it does not
// expect, EMFILE included, and a connection limit needs a look at every
// connection before it costs anything.
type Server struct {
	gnet.BuiltinEventEngine
	cfg     ServerConfig
	handler Handler
	late    LateObserver // handler, if it observes late answers
	log     zerolog.Logger
	warn    zerolog.Logger // sampled, for per-connection trouble

	// Limits in the units the loops use (0: off).
	maxConns     int64
	idle         int64 // nanoseconds
	frameTimeout int64
	slowTimeout  int64
	maxInput     int64
	highWater    int
	lowWater     int
	hardOut      int // output that closes a connection at once
	maxHeader    int
	maxFields    int

	eng     gnet.Engine
	ln      net.Listener
	spare   *os.File // a descriptor given up to shed a connection at EMFILE (accept.go); accept loop only
	waited  bool     // the accept loop waited for a pending connection after EMFILE
	ids     atomic.Uint64
	bound   string        // the listener's real address
	started chan struct{} // OnBoot ran
	ready   chan struct{} // the loops run: the start-up probe was opened on one
	readyOK sync.Once
	exited  chan struct{} // closed when the engine has stopped, for any reason
	runErr  error         // why it stopped; read after exited is closed
	stopped atomic.Bool
	running bool // Start succeeded
	once    sync.Once
	quit    chan struct{} // closed by Shutdown: stops the accept loop and the sweeper
	wg      sync.WaitGroup

	conns    atomic.Int64 // accepted and not yet closed
	refused  atomic.Int64 // closed at accept: over the connection limit
	shed     atomic.Int64 // closed at accept: no descriptor left (EMFILE and kin)
	input    atomic.Int64 // bytes of every connection's in buffer (Limits.ServerInputBufferMaxBytes)
	released atomic.Int64 // bytes dropped with cut or closed connections since the last memory release

	epoch time.Time
	clock atomic.Int64 // nanoseconds since epoch, advanced by the sweeper
	tick  time.Duration

	liveMu sync.Mutex
	live   map[*Conn]struct{} // open connections, for the sweeper

	// TLS connections being peeked at, handshaking or bridged (tls_accept.go).
	tlsMu        sync.Mutex
	tlsConns     map[net.Conn]struct{}
	tlsClosed    bool // Shutdown began: no more
	tlsWG        sync.WaitGroup
	stalled      atomic.Int64 // closed: no first byte or handshake within the timeout
	plainRefused atomic.Int64 // closed: plaintext in enforcing mode
}

// NewServer builds a server; Start binds and serves. cfg.Limits must be
// valid (Limits.Validate).
func NewServer(cfg ServerConfig, h Handler, log zerolog.Logger) *Server {
	log = log.With().Str("component", "remoting").Str("addr", cfg.Addr).Logger()
	lim := cfg.Limits
	s := &Server{
		cfg:          cfg,
		handler:      h,
		log:          log,
		warn:         log.Sample(&zerolog.BurstSampler{Burst: 10, Period: time.Second}),
		idle:         int64(time.Duration(lim.ServerChannelMaxIdleTimeSeconds) * time.Second),
		frameTimeout: int64(millis(lim.ServerIncompleteFrameTimeoutMillis)),
		slowTimeout:  int64(millis(lim.ServerSlowConsumerTimeoutMillis)),
		maxInput:     lim.ServerInputBufferMaxBytes,
		highWater:    lim.highWater(),
		lowWater:     lim.lowWater(),
		maxHeader:    lim.ServerMaxHeaderBytes,
		maxFields:    lim.ServerMaxHeaderFields,
		started:      make(chan struct{}),
		ready:        make(chan struct{}),
		exited:       make(chan struct{}),
		quit:         make(chan struct{}),
		epoch:        time.Now(),
		live:         make(map[*Conn]struct{}),
		tlsConns:     make(map[net.Conn]struct{}),
	}
	s.late, _ = h.(LateObserver)
	s.ids.Store(cfg.IDBase)
	s.hardOut = 4 * s.highWater
	s.maxConns = int64(lim.ServerMaxConnections)
	if s.maxConns == 0 {
		s.maxConns = int64(ConnLimitFromRlimit())
	}
	// The sweeper's period: a quarter of the shortest time limit, between
	// 10 ms and 1 s (see expired).
	s.tick = time.Second
	for _, d := range []int64{s.idle, s.frameTimeout, s.slowTimeout} {
		if d > 0 {
			s.tick = min(s.tick, time.Duration(d/4))
		}
	}
	s.tick = max(s.tick, 10*time.Millisecond)
	return s
}

// Start binds the listener and serves in the background. It returns once the
// port accepts connections, or the bind error.
func (s *Server) Start() error {
	ln, err := (&net.ListenConfig{KeepAlive: -1}).Listen(context.Background(), "tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("remoting: listen %s: %w", s.cfg.Addr, err)
	}
	s.ln, s.bound = ln, ln.Addr().String()
	s.spare, _ = os.Open(os.DevNull) // none (EMFILE already): accept errors back off instead

	loops := s.cfg.NumEventLoop
	if loops <= 0 {
		loops = runtime.GOMAXPROCS(0)
	}
	sock, dir, err := engineSocket()
	if err != nil {
		_ = ln.Close()
		s.closeSpare()
		return fmt.Errorf("remoting: %w", err)
	}
	go func() {
		err := gnet.Run(s, "unix://"+sock,
			gnet.WithMulticore(true),
			gnet.WithNumEventLoop(loops),
			// Engine.Register races with RoundRobin's counter (gnet.go).
			gnet.WithLoadBalancing(gnet.LeastConnections),
			gnet.WithReadBufferCap(256<<10),
			gnet.WithLogger(gnetLogger{s.log}),
		)
		if err == nil && !s.stopped.Load() {
			err = errors.New("engine stopped without shutdown")
		}
		s.runErr = err
		close(s.exited)
	}()
	if err := s.awaitEngine(sock); err != nil {
		_ = ln.Close()
		s.closeSpare()
		_ = os.RemoveAll(dir)
		if s.eng.Validate() == nil {
			s.stopped.Store(true)
			cctx, cancel := context.WithCancel(context.Background())
			cancel()
			_ = s.eng.Stop(cctx)
			<-s.exited
		}
		return fmt.Errorf("remoting: start engine: %w", err)
	}
	// The engine listens on sock only so that it has a listener (Register
	// needs one); unlinked, nobody can connect to it.
	_ = os.RemoveAll(dir)
	s.clock.Store(int64(time.Since(s.epoch)))
	s.running = true
	s.wg.Add(2)
	go s.acceptLoop()
	go s.sweepLoop()
	s.log.Info().Str("bound", s.bound).Int("eventLoops", loops).Int64("maxConnections", s.maxConns).
		Stringer("tls.server.mode", s.tlsMode()).Msg("listening")
	return nil
}

// awaitEngine waits until the engine's loops run. OnBoot comes before gnet
// starts them, and gnet says nothing after; so one connection is made to
// the engine's own socket: its OnOpen runs on a loop started after all were
// set up, which Register may then use.
func (s *Server) awaitEngine(sock string) error {
	select {
	case <-s.started:
	case <-s.exited:
		return s.runErr
	}
	probe, err := net.DialTimeout("unix", sock, 10*time.Second)
	if err != nil {
		return fmt.Errorf("probe %s: %w", sock, err)
	}
	defer probe.Close()
	select {
	case <-s.ready:
		return nil
	case <-s.exited:
		return s.runErr
	case <-time.After(10 * time.Second):
		return errors.New("event loops not running after 10 s")
	}
}

// engineSocket returns a path for the engine's private Unix socket, in a
// fresh directory only this user can enter, and that directory: under
// TMPDIR, else /dev/shm, else the working directory (a container built
// from scratch has no /tmp). Never an abstract socket: gnet reads its
// address as a URL, where "unix://@name" is the relative path "name".
func engineSocket() (sock, dir string, err error) {
	for _, parent := range []string{os.TempDir(), "/dev/shm", "."} {
		if dir, err = os.MkdirTemp(parent, "rocketgo-remoting-"); err == nil {
			return filepath.Join(dir, "engine.sock"), dir, nil
		}
	}
	return "", "", fmt.Errorf("no directory for the event loops' private socket (TMPDIR, /dev/shm, .): %w", err)
}

// Addr is the address the listener is bound to (port 0 resolved); valid after Start.
func (s *Server) Addr() string { return s.bound }

// Done is closed when the engine has stopped. Owners treat a close they did
// not ask for (Err non-nil) as fatal: the process can no longer serve.
func (s *Server) Done() <-chan struct{} { return s.exited }

// Err says why the engine stopped; nil after a requested Shutdown. Valid once
// Done is closed.
func (s *Server) Err() error { return s.runErr }

func (s *Server) tlsMode() TLSMode {
	if !s.cfg.TLS.serves() {
		return TLSDisabled
	}
	return s.cfg.TLS.Mode
}

// Connections is the number of connections accepted and not yet closed.
func (s *Server) Connections() int { return int(s.conns.Load()) }

// Shutdown stops accepting, stops the engine and waits for its loops to
// exit. Idempotent.
func (s *Server) Shutdown(ctx context.Context) error {
	var err error
	s.once.Do(func() {
		s.stopped.Store(true)
		close(s.quit)
		if !s.running {
			return // Start failed and cleaned up after itself
		}
		_ = s.ln.Close()
		s.wg.Wait() // the accept loop and the sweeper
		s.closeSpare()
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
		s.closeTLS()
		s.log.Info().Msg("stopped")
	})
	return err
}

func (s *Server) OnBoot(e gnet.Engine) gnet.Action {
	s.eng = e
	close(s.started)
	return gnet.None
}

// now is the server's clock: nanoseconds since it was made, as of the
// sweeper's last tick. Per-request code reads it instead of the time.
func (s *Server) now() int64 { return s.clock.Load() }

func (s *Server) OnOpen(gc gnet.Conn) ([]byte, gnet.Action) {
	c, ok := gc.Context().(*Conn) // made by the accept loop
	if !ok {
		// The start-up probe (awaitEngine), the only connection to the
		// engine's own socket.
		s.readyOK.Do(func() { close(s.ready) })
		return nil, gnet.Close
	}
	c.gc = gc
	c.lastRead.Store(s.now())
	s.liveMu.Lock()
	s.live[c] = struct{}{}
	s.liveMu.Unlock()
	c.opened.Store(true)
	return nil, gnet.None
}

func (s *Server) OnClose(gc gnet.Conn, err error) gnet.Action {
	c, ok := gc.Context().(*Conn)
	if !ok {
		return gnet.None
	}
	c.closed.Store(true)
	s.conns.Add(-1)
	s.liveMu.Lock()
	delete(s.live, c)
	s.liveMu.Unlock()
	if c.resume != nil {
		c.resume.Stop()
	}
	// What the connection held is garbage now; enough of it is worth giving
	// back to the system (sweep.go).
	s.released.Add(int64(c.inCharged + gc.OutboundBuffered()))
	s.dropIn(c)
	c.failCalls()
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
	now := s.now()
	// Every OnTraffic ends with gnet's input taken into c.in, so bytes here
	// are new: a Wake (backpressure) brings none.
	if gc.InboundBuffered() > 0 {
		c.lastRead.Store(now)
	}
	if c.aboveSince.Load() != 0 && !s.resumed(gc, c, now) {
		if c.why.Load() != nil {
			return gnet.Close // a slow consumer
		}
		return s.hold(gc, c)
	}
	c.out = c.out[:0]
	for !c.closed.Load() {
		if s.highWater > 0 && gc.OutboundBuffered()+len(c.out)+int(c.lateOut.Load()) > s.highWater {
			s.pause(c, now)
			break
		}
		req, err := s.next(gc, c)
		if err != nil {
			s.warn.Warn().Str("remote", c.Remote).Err(err).Msg("bad frame; closing connection")
			c.closeFor(err)
			s.flush(gc, c)
			return gnet.Close
		}
		if req == nil {
			break
		}
		if err := decodeInto(req, req.frame, &c.text, s.maxFields); err != nil {
			if errors.Is(err, ErrTooManyFields) {
				s.refuseFields(gc, c, req)
				req.recycle()
				continue
			}
			req.recycle()
			s.warn.Warn().Str("remote", c.Remote).Err(err).Msg("undecodable frame; closing connection")
			c.closeFor(err)
			s.flush(gc, c)
			return gnet.Close
		}
		if req.IsResponse() {
			// The answer to a server-initiated request (calls.go), or a
			// client's answer to a one-way request it treated as two-way
			// (Java answers codes it does not handle): nothing waits for it.
			c.answered(req)
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
	if !s.wrote(gc, c) {
		return gnet.Close
	}
	return s.hold(gc, c)
}

// next returns the next complete request of c, nil when there is none yet,
// or the error that condemns the connection. Frames that arrived whole in
// this read are copied once, from gnet's read buffer into the request.
func (s *Server) next(gc gnet.Conn, c *Conn) (*Command, error) {
	if c.inOff < len(c.in) {
		return s.nextHeld(gc, c)
	}
	n := gc.InboundBuffered()
	if n < 4 {
		return nil, nil
	}
	p, _ := gc.Peek(min(n, 8))
	length, err := s.checkPrefix(p)
	if err != nil {
		return nil, err
	}
	if n < 4+length {
		return nil, nil // partial frame: hold takes it into c.in
	}
	_, _ = gc.Discard(4)
	req := newPooledRequest(length) // the frame is the request's until it is recycled
	_, _ = gc.Read(req.frame)
	return req, nil
}

// checkPrefix checks what a frame's first 4 bytes (length) or 8 bytes
// (length, serialize type and header length) say, before the rest is read,
// and returns the length.
func (s *Server) checkPrefix(p []byte) (int, error) {
	length := int64(int32(binary.BigEndian.Uint32(p)))
	if length < 4 || length > MaxFrameLength {
		return 0, fmt.Errorf("%w: length %d", ErrFrameTooLarge, length)
	}
	if len(p) >= 8 {
		headerLen := int64(binary.BigEndian.Uint32(p[4:]) & 0xFFFFFF)
		if s.maxHeader > 0 && headerLen > int64(s.maxHeader) {
			return 0, fmt.Errorf("%w: %d bytes, serverMaxHeaderBytes %d", ErrHeaderTooLarge, headerLen, s.maxHeader)
		}
		if headerLen > length-4 {
			return 0, fmt.Errorf("%w: header length %d exceeds frame %d", ErrMalformed, headerLen, length-4)
		}
	}
	return int(length), nil
}

// refuseFields answers a request with too many header fields SYSTEM_ERROR
// without serving it: the client gets an answer to that request, and the
// other requests on its connection go on.
func (s *Server) refuseFields(gc gnet.Conn, c *Conn, req *Command) {
	s.warn.Warn().Str("remote", c.Remote).Int32("code", req.Code).Int("serverMaxHeaderFields", s.maxFields).
		Msg("request with too many header fields refused")
	if req.IsOneway() || req.IsResponse() {
		return
	}
	s.queue(gc, c, NewResponse(req, SystemError,
		"request header has more than "+strconv.Itoa(s.maxFields)+" fields (serverMaxHeaderFields)"))
}

// pause stops reading c's requests: its output is above the high-water mark.
// A timer wakes it to look again (resumed), sooner at first: a reading
// client drains its output in milliseconds, a client that does not read is
// looked at less and less often until the sweeper's deadline.
func (s *Server) pause(c *Conn, now int64) {
	c.aboveSince.CompareAndSwap(0, max(now, 1))
	c.resumeDelay = min(max(2*c.resumeDelay, time.Millisecond), 100*time.Millisecond)
	if c.resume == nil {
		gc := c.gc
		c.resume = time.AfterFunc(c.resumeDelay, func() { _ = gc.Wake(nil) })
	} else {
		c.resume.Reset(c.resumeDelay)
	}
}

// resumed reports whether a paused connection may be read again: its output
// fell to the low-water mark. One above the mark for
// serverSlowConsumerTimeoutMillis is cut (c.why set); otherwise it stays
// paused and is looked at again later.
func (s *Server) resumed(gc gnet.Conn, c *Conn, now int64) bool {
	level := gc.OutboundBuffered() + int(c.lateOut.Load())
	if level <= s.lowWater {
		c.aboveSince.Store(0)
		c.resumeDelay = 0
		return true
	}
	if since := c.aboveSince.Load(); s.slowTimeout > 0 && s.expired(since, s.slowTimeout, now) {
		s.warn.Warn().Str("remote", c.Remote).Int("pendingBytes", level).
			Dur("above", time.Duration(now-since)).Msg("slow consumer: output above writeBufferHighWaterMark too long; closing connection")
		c.closeFor(ErrSlowConsumer)
		return false
	}
	s.pause(c, now)
	return false
}

// wrote runs on the loop after anything was written to c: output above four
// times the high-water mark cuts the connection at once (late answers are
// not held back by pausing its input); above the mark it pauses. It reports
// whether the connection lives on.
func (s *Server) wrote(gc gnet.Conn, c *Conn) bool {
	if s.highWater <= 0 || c.closed.Load() {
		return true
	}
	level := gc.OutboundBuffered() + int(c.lateOut.Load())
	if level <= s.highWater {
		return true
	}
	if level > s.hardOut {
		s.warn.Warn().Str("remote", c.Remote).Int("pendingBytes", level).Int("limit", s.hardOut).
			Msg("slow consumer: output above 4 x writeBufferHighWaterMark; closing connection")
		c.cut(ErrSlowConsumer)
		return false
	}
	if c.aboveSince.Load() == 0 {
		s.pause(c, s.now())
	}
	return true
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
	if len(c.out) > 0 && !c.closed.Load() {
		_, _ = gc.Write(c.out)
	}
	c.out = c.out[:0]
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

// newConn is the state of a connection the accept loop is about to register.
func (s *Server) newConn(remote net.Addr) *Conn {
	c := &Conn{ID: s.ids.Add(1), srv: s}
	c.flushLateFn = c.flushLate
	if remote != nil {
		c.Remote = remote.String()
		if ap, err := netip.ParseAddrPort(c.Remote); err == nil {
			c.RemoteAddr = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		}
	}
	return c
}

// gnetLogger routes gnet's own log lines into zerolog.
type gnetLogger struct{ l zerolog.Logger }

func (g gnetLogger) Debugf(f string, a ...any) { g.l.Debug().Msgf(f, a...) }
func (g gnetLogger) Infof(f string, a ...any)  { g.l.Debug().Msgf(f, a...) }
func (g gnetLogger) Warnf(f string, a ...any)  { g.l.Warn().Msgf(f, a...) }
func (g gnetLogger) Errorf(f string, a ...any) { g.l.Error().Msgf(f, a...) }
func (g gnetLogger) Fatalf(f string, a ...any) { g.l.Error().Msgf(f, a...) }
