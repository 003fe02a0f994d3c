package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v2 "github.com/rocketgo/rocketgo/apis/v2"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/rocketgo/rocketgo/remoting"
)

// Server is the gRPC MessagingService, in cluster mode (New) or in local
// mode beside a broker (NewLocal).
type Server struct {
	v2.UnimplementedMessagingServiceServer

	cfg     Config
	log     zerolog.Logger
	sampled zerolog.Logger // per-client warnings, rate limited

	rc       transport
	local    *LocalBroker // local mode's broker; nil in cluster mode
	guard    Guard        // ACL 2.0 (SetGuard); nil: every call is served
	cluster  *cluster
	clients  *clients
	txs      *transactions
	inflight *budget // request bytes held by calls in flight
	meta     metaCache
	renew    *renewals
	liteRate *rateLimiter     // PARTIAL_ADD SyncLiteSubscription calls (maxSyncLiteSubscriptionRate)
	checks   chan brokerCheck // CHECK_TRANSACTION_STATE from brokers, for the relay worker
	beat     chan struct{}    // asks the heartbeat loop for a round now

	txGroupsMu sync.Mutex
	txGroups   map[string]map[string]time.Time // broker addr -> producer group -> last half message
	proxyID    string                          // the clientID the proxy heartbeats brokers with

	grpc *grpc.Server
	ln   net.Listener
	port int // the gRPC port listened on
	tls  *tlsMux

	base     context.Context // canceled by Shutdown: ends parked receives
	cancel   context.CancelFunc
	quit     chan struct{}
	wg       sync.WaitGroup
	started  atomic.Bool
	shutdown atomic.Bool
}

// New returns a proxy in cluster mode for cfg; Start listens.
func New(cfg Config, log zerolog.Logger) (*Server, error) {
	if !strings.EqualFold(cfg.ProxyMode, "CLUSTER") {
		return nil, fmt.Errorf("proxy: proxyMode %q: only CLUSTER is served by mqproxy (local mode is mqbroker --enable-proxy)", cfg.ProxyMode)
	}
	rc := remoting.NewClient(log)
	rc.SetTLS(cfg.TLS)
	// A name server or broker that went away without a reset (a pod whose
	// address is gone behind a Service name) is dialled again after the
	// first call that times out, as Apache's clients do.
	rc.SetCloseOnTimeout()
	return newServer(cfg, log, rc, nil)
}

// LocalBroker is the broker a local-mode proxy serves from its own process
// (mqbroker --enable-proxy, Apache's proxyMode LOCAL).
type LocalBroker struct {
	Name string          // brokerName
	Addr string          // the address it registers with the name servers
	Conn *remoting.Local // in-process connection to its handlers
}

// NewLocal returns a proxy in local mode: what it sends to lb goes through
// lb.Conn with no socket in between, sends and receives use lb's queues
// only, and QueryRoute answers every broker of a topic at its host and this
// proxy's gRPC port (each broker's own local proxy), as Apache's
// LocalTopicRouteService. Shutdown closes lb.Conn.
func NewLocal(cfg Config, log zerolog.Logger, lb LocalBroker) (*Server, error) {
	if lb.Conn == nil || lb.Name == "" || lb.Addr == "" {
		return nil, errors.New("proxy: local mode needs the broker's name, address and connection")
	}
	cfg.ProxyMode = "LOCAL"
	remote := remoting.NewClient(log) // to the other brokers
	remote.SetTLS(cfg.TLS)
	remote.SetCloseOnTimeout()
	rc := &localTransport{addr: lb.Addr, local: lb.Conn, remote: remote}
	return newServer(cfg, log, rc, &lb)
}

func newServer(cfg Config, log zerolog.Logger, rc transport, lb *LocalBroker) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		_ = rc.Close()
		return nil, err
	}
	log = log.With().Str("component", "proxy").Logger()
	s := &Server{
		cfg:      cfg,
		log:      log,
		sampled:  log.Sample(&zerolog.BurstSampler{Burst: 10, Period: time.Second}),
		rc:       rc,
		local:    lb,
		clients:  newClients(cfg.MaxClients),
		txs:      newTransactions(cfg),
		inflight: &budget{max: cfg.GrpcMaxInFlightRequestBytes},
		renew:    newRenewals(),
		liteRate: newRateLimiter(cfg.MaxSyncLiteSubscriptionRate, time.Now()),
		checks:   make(chan brokerCheck, maxPendingChecks),
		beat:     make(chan struct{}, 1),
		quit:     make(chan struct{}),
	}
	s.base, s.cancel = context.WithCancel(context.Background())
	s.proxyID = "rocketgo-proxy@" + strconv.Itoa(os.Getpid())
	s.cluster = newCluster(s.rc, cfg.NamesrvAddr, time.Duration(cfg.RemotingTimeoutMillis)*time.Millisecond)
	if lb != nil {
		s.cluster.only = lb.Name
	}
	s.rc.SetRequestHandler(s.onBrokerRequest)
	return s, nil
}

// Start listens on the gRPC port (host:port, or ":grpcServerPort" when
// addr is "") and serves.
func (s *Server) Start(addr string) error {
	if !s.started.CompareAndSwap(false, true) {
		return errors.New("proxy: already started")
	}
	if addr == "" {
		addr = ":" + strconv.Itoa(s.cfg.GrpcServerPort)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen grpc %s: %w", addr, err)
	}
	s.ln = ln
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		s.port = a.Port
	}
	ln = &limitListener{Listener: ln, max: int64(s.cfg.GrpcMaxConnections), log: s.sampled}
	if s.cfg.TLSTestModeEnable || s.cfg.TLSCertPath != "" {
		mux, err := newTLSMux(ln, s.cfg, s.log)
		if err != nil {
			_ = ln.Close()
			return err
		}
		s.tls = mux
		ln = mux
	}
	s.grpc = grpc.NewServer(
		grpc.MaxRecvMsgSize(s.cfg.GrpcMaxInboundMessageSize),
		grpc.MaxConcurrentStreams(s.cfg.GrpcMaxConcurrentStreams),
		// A connection must finish its TLS handshake and HTTP/2 preface
		// within the timeout (the TLS sniff and handshake run under the
		// deadline gRPC sets on the connection for it), so stalled
		// handshakes cannot hold the connection cap.
		grpc.ConnectionTimeout(time.Duration(s.cfg.GrpcHandshakeTimeoutMillis)*time.Millisecond),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionIdle: time.Duration(s.cfg.GrpcClientIdleTimeMills) * time.Millisecond,
		}),
		grpc.MaxHeaderListSize(s.cfg.GrpcMaxHeaderListSize),
		grpc.UnaryInterceptor(s.unaryGuard),
		grpc.StreamInterceptor(s.streamGuard),
		grpc.InTapHandle(s.tapSend),
		// Calls run on a pool of goroutines that keep their grown stacks,
		// not a new goroutine each: stack growth was 9 % of the local
		// proxy's CPU under grpc-produce. Past the pool grpc-go starts a
		// goroutine, so parked receives never hold up other calls.
		grpc.NumStreamWorkers(uint32(4*runtime.GOMAXPROCS(0))),
	)
	v2.RegisterMessagingServiceServer(s.grpc, s)
	s.goRun(func() {
		if err := s.grpc.Serve(ln); err != nil && !s.shutdown.Load() {
			s.log.Error().Err(err).Msg("grpc serve ended")
		}
	})
	s.goRun(s.heartbeatLoop)
	s.goRun(s.checkRelay)
	if s.cfg.EnableProxyAutoRenew {
		s.goRun(s.renewLoop)
	}
	s.log.Info().Str("addr", s.ln.Addr().String()).Str("namesrvAddr", s.cfg.NamesrvAddr).Str("mode", s.cfg.ProxyMode).
		Bool("tls", s.tls != nil).Msg("proxy started")
	return nil
}

// Addr is the listening address once started.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

func (s *Server) goRun(fn func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		fn()
	}()
}

// Shutdown stops accepting, ends the streams and calls in flight (after
// ctx, forcibly), stops the loops and closes the Remoting connections.
// Idempotent.
func (s *Server) Shutdown(ctx context.Context) error {
	if !s.shutdown.CompareAndSwap(false, true) {
		return nil
	}
	close(s.quit)
	s.cancel()
	if s.grpc != nil {
		done := make(chan struct{})
		go func() { s.grpc.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			s.grpc.Stop()
			<-done
		}
	}
	s.wg.Wait()
	err := s.rc.Close()
	s.log.Info().Msg("proxy stopped")
	return err
}

// clientMeta is what the SDKs send in every call's metadata.
type clientMeta struct {
	clientID string
	language string
	version  string
	remote   string
}

type metaKey struct{}

func metaOf(ctx context.Context) clientMeta {
	m, _ := ctx.Value(metaKey{}).(clientMeta)
	return m
}

func readMeta(ctx context.Context) clientMeta {
	var m clientMeta
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		first := func(k string) string {
			if v := md.Get(k); len(v) > 0 {
				return v[0]
			}
			return ""
		}
		m.clientID = first("x-mq-client-id")
		m.language = first("x-mq-language")
		m.version = first("x-mq-client-version")
	}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		m.remote = p.Addr.String()
	}
	return m
}

// unaryGuard puts the client's metadata in the context and turns a panic
// (a bug) into INTERNAL instead of a dead process.
func (s *Server) unaryGuard(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error().Interface("panic", r).Str("method", info.FullMethod).Stack().Msg("BUG: panic in grpc handler")
			err = status.Error(codes.Internal, "internal error")
		}
	}()
	meta := readMeta(ctx)
	ctx = context.WithValue(ctx, metaKey{}, meta)
	if st := validateClientID(meta.clientID); st != nil {
		s.sampled.Info().Str("remote", meta.remote).Str("method", info.FullMethod).Str("reason", st.GetMessage()).Msg("grpc call refused")
		if resp := refusedResponse(info.FullMethod, st); resp != nil {
			return resp, nil
		}
		return nil, status.Error(codes.InvalidArgument, st.GetMessage())
	}
	if st := s.refusedBy(ctx, req); st != nil {
		if resp := refusedResponse(info.FullMethod, st); resp != nil {
			return resp, nil
		}
	}
	if n := requestBytes(req) - reservedOf(ctx); n > 0 { // a batch over what tapSend reserved
		held, ok := s.inflight.take(n)
		if !ok {
			s.sampled.Warn().Str("remote", meta.remote).Str("method", info.FullMethod).Int64("bytes", n).
				Int64("grpcMaxInFlightRequestBytes", s.cfg.GrpcMaxInFlightRequestBytes).Msg("grpc call refused: in-flight request bytes over budget")
			return refusedResponse(info.FullMethod, &v2.Status{Code: v2.Code_TOO_MANY_REQUESTS, Message: "proxy busy: in-flight request bytes over budget"}), nil
		}
		defer s.inflight.give(held)
	}
	return h(ctx, req)
}

type metaStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (m metaStream) Context() context.Context { return m.ctx }

func (s *Server) streamGuard(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error().Interface("panic", r).Str("method", info.FullMethod).Stack().Msg("BUG: panic in grpc stream")
			err = status.Error(codes.Internal, "internal error")
		}
	}()
	ctx := ss.Context()
	meta := readMeta(ctx)
	if st := validateClientID(meta.clientID); st != nil {
		s.sampled.Info().Str("remote", meta.remote).Str("method", info.FullMethod).Str("reason", st.GetMessage()).Msg("grpc call refused")
		if info.FullMethod == "/apache.rocketmq.v2.MessagingService/ReceiveMessage" {
			return ss.SendMsg(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Status{Status: st}})
		}
		return status.Error(codes.InvalidArgument, st.GetMessage())
	}
	return h(srv, metaStream{ServerStream: ss, ctx: context.WithValue(ctx, metaKey{}, meta)})
}
