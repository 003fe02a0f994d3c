package metrics

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"
)

// Server is a broker's Prometheus endpoint (metricsExporterType=PROM).
type Server struct {
	// RPC is the interceptor to wrap the broker's processor table with.
	RPC *RPC

	reg      *prometheus.Registry
	addr     string
	fallback string // every interface, when addr is brokerIP1 by default
	log      zerolog.Logger
	http     *http.Server
	ln       net.Listener
	maxConns int // metricsPromExporterMaxConnections
}

// idleTimeout closes a kept-alive connection no scrape used for this long;
// above Prometheus' usual scrape intervals, so a scraper keeps its one.
const idleTimeout = 90 * time.Second

// New returns the endpoint of the broker b reads, or nil when
// metricsExporterType is not PROM. Every metric carries Apache's labels
// cluster, node_type and node_id (the broker name) and those of
// metricsLabel ("k:v,k:v").
func New(cfg Config, b Source, log zerolog.Logger) (*Server, error) {
	if !strings.EqualFold(cfg.ExporterType, "PROM") {
		return nil, nil
	}
	labels := prometheus.Labels{"cluster": cfg.Cluster, "node_type": "broker", "node_id": cfg.BrokerName,
		"otel_scope_name": "broker-meter"} // Apache's exporter labels every sample with its meter
	for _, kv := range strings.Split(cfg.Label, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), ":")
		if !ok || k == "" {
			continue
		}
		labels[k] = v
	}
	s := &Server{RPC: newRPC(labels), reg: prometheus.NewRegistry(), log: log.With().Str("component", "metrics").Logger(),
		maxConns: cfg.MaxConnections}
	for _, c := range []prometheus.Collector{s.RPC.hist, s.RPC.creates.topic, s.RPC.creates.group} {
		if err := s.reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	if err := s.reg.Register(newCollector(b, labels, s.log)); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	host := cfg.Host
	if host == "" {
		host = cfg.BrokerIP1 // Apache's default
		// In a container brokerIP1 is often the host's address, which no
		// interface inside has: then every interface, rather than none.
		s.fallback = net.JoinHostPort("", strconv.Itoa(cfg.Port))
	}
	s.addr = net.JoinHostPort(host, strconv.Itoa(cfg.Port))
	return s, nil
}

// Start listens and serves /metrics (any path, as Apache's exporter).
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil && s.fallback != "" && errors.Is(err, syscall.EADDRNOTAVAIL) {
		s.log.Warn().Str("addr", s.addr).Str("fallback", s.fallback).
			Msg("brokerIP1 is not an address of this host: metrics on every interface (set metricsPromExporterHost)")
		ln, err = net.Listen("tcp", s.fallback)
	}
	if err != nil {
		return fmt.Errorf("metrics: listen %s: %w", s.addr, err)
	}
	s.ln = newCappedListener(ln, s.maxConns, s.log)
	h := promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{MaxRequestsInFlight: 4, Timeout: 10 * time.Second})
	// A scrape is one small GET: a client slower than these to send it, or
	// to take the answer, or silent this long between scrapes, is closed.
	s.http = &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 15 * time.Second, IdleTimeout: idleTimeout, MaxHeaderBytes: 16 << 10,
		ErrorLog: log.New(s.log.Sample(&zerolog.BurstSampler{Burst: 3, Period: 10 * time.Second}), "", 0)}
	ln = s.ln
	go func() {
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error().Err(err).Msg("metrics endpoint stopped")
		}
	}()
	s.log.Info().Str("addr", ln.Addr().String()).Int("maxConnections", s.maxConns).Msg("metrics endpoint (Prometheus) started")
	return nil
}

// Addr is the address listened on once started.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Shutdown stops serving; scrapes in flight finish until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	if s.http == nil {
		return nil
	}
	return s.http.Shutdown(ctx)
}
