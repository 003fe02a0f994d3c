package controller

// The raft transport's stream layer. hashicorp/raft's TCP transport serves
// whoever connects: one AppendEntries or InstallSnapshot from a stranger
// with a higher term is taken as the leader's word, and the entries it
// carries are applied by the FSM (a forged election, a forged broker set).
// This layer accepts raft connections only from the configured peers'
// addresses, and dials from this controller's own address so that the
// others recognise it. Apache's DLedger controller accepts anyone.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/raft"
	"github.com/rs/zerolog"
)

// raftStream implements raft.StreamLayer over TCP with a peer check.
//
// Peers named by host name are looked up at start, again whenever a
// connection comes from an address none of them had (at most once per
// refreshEvery, so that a stranger cannot keep the lookups busy), and
// every peerRefresh: in Kubernetes a controller's pod comes back from a
// restart with another IP under the same name, and the others must let it
// in. A lookup that fails keeps the addresses the name had.
type raftStream struct {
	ln       net.Listener
	adv      net.Addr
	resolver *net.Resolver
	hosts    []string       // the peers' hosts, literal IPs included
	local    *net.TCPAddr   // the source of dials: this peer's address, any port
	log      zerolog.Logger // sampled
	conns    chan net.Conn
	vet      chan net.Conn // connections from addresses no peer had when they came
	quit     chan struct{}
	once     sync.Once
	wg       sync.WaitGroup

	allowed     atomic.Pointer[map[netip.Addr]bool] // the peers' addresses
	lastRefresh time.Time                           // owned by vetLoop
}

const (
	// refreshEvery bounds the lookups a stranger's connections cause.
	refreshEvery = time.Second
	// peerRefresh is how often the names are looked up regardless, so
	// that an address a peer left stops being let in.
	peerRefresh = 30 * time.Second
	// lookupTimeout bounds one round of lookups.
	lookupTimeout = 3 * time.Second
	// vetBacklog bounds the connections waiting for a lookup; more are
	// closed.
	vetBacklog = 16
)

// newRaftStream listens on self.Raft and looks the peers' host names up
// with r.
func newRaftStream(self Peer, peers []Peer, r *net.Resolver, log zerolog.Logger) (*raftStream, error) {
	s := &raftStream{resolver: r, conns: make(chan net.Conn), vet: make(chan net.Conn, vetBacklog), quit: make(chan struct{}),
		log: log.Sample(&zerolog.BurstSampler{Burst: 5, Period: 10 * time.Second})}
	for _, p := range peers {
		host, _, err := net.SplitHostPort(p.Raft)
		if err != nil {
			return nil, err
		}
		s.hosts = append(s.hosts, host)
	}
	empty := map[netip.Addr]bool{}
	s.allowed.Store(&empty)
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	err := s.lookup(ctx)
	cancel()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", self.Raft)
	if err != nil {
		return nil, err
	}
	s.ln, s.adv = ln, ln.Addr()
	// Dial from the address the listener holds (its host name's, when
	// named), so that the peers' check recognises this controller.
	if a, ok := ln.Addr().(*net.TCPAddr); ok && a.IP != nil && !a.IP.IsUnspecified() {
		s.local = &net.TCPAddr{IP: a.IP}
	}
	s.lastRefresh = time.Now()
	s.wg.Add(2)
	go s.acceptLoop()
	go s.vetLoop()
	return s, nil
}

// lookup replaces the allowed set with the peers' addresses now. A name
// that does not resolve keeps the addresses it had, and the error is
// returned.
func (s *raftStream) lookup(ctx context.Context) error {
	old := *s.allowed.Load()
	set := map[netip.Addr]bool{}
	var errs []error
	for _, h := range s.hosts {
		if ip, err := netip.ParseAddr(h); err == nil {
			set[ip.Unmap()] = true
			continue
		}
		ips, err := s.resolver.LookupNetIP(ctx, "ip", h)
		if err != nil {
			errs = append(errs, fmt.Errorf("controller peer %s: %w", h, err))
			continue
		}
		for _, ip := range ips {
			set[ip.Unmap()] = true
		}
	}
	if len(errs) > 0 {
		for ip := range old {
			set[ip] = true
		}
	}
	s.allowed.Store(&set)
	return errors.Join(errs...)
}

// vetLoop looks the names up again for connections from unknown
// addresses, and every peerRefresh.
func (s *raftStream) vetLoop() {
	defer s.wg.Done()
	tick := time.NewTicker(peerRefresh)
	defer tick.Stop()
	for {
		select {
		case <-s.quit:
			return // Close closes what waits in vet
		case <-tick.C:
			s.refresh()
		case c := <-s.vet:
			if !s.peer(c.RemoteAddr()) && time.Since(s.lastRefresh) >= refreshEvery {
				s.refresh()
			}
			if !s.peer(c.RemoteAddr()) {
				s.log.Warn().Stringer("remote", c.RemoteAddr()).Msg("raft connection from a host that is no controller peer; closed")
				_ = c.Close()
				continue
			}
			s.handOver(c)
		}
	}
}

func (s *raftStream) refresh() {
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	s.lastRefresh = time.Now()
	if err := s.lookup(ctx); err != nil {
		s.log.Warn().Err(err).Msg("controller peer lookup failed; their last addresses are kept")
	}
}

// handOver gives raft an admitted connection.
func (s *raftStream) handOver(c net.Conn) {
	select {
	case s.conns <- c:
	case <-s.quit:
		_ = c.Close()
	}
}

// acceptLoop admits peers and closes the rest. A resource error (out of
// descriptors) backs off instead of ending the loop.
func (s *raftStream) acceptLoop() {
	defer s.wg.Done()
	var backoff time.Duration
	for {
		c, err := s.ln.Accept()
		if err != nil {
			select {
			case <-s.quit:
				return
			default:
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.log.Warn().Err(err).Dur("backoff", backoff).Msg("raft accept failed")
			select {
			case <-s.quit:
				return
			case <-time.After(backoff):
			}
			continue
		}
		backoff = 0
		if !s.peer(c.RemoteAddr()) {
			// Perhaps a peer whose name moved: looked up off this loop.
			select {
			case s.vet <- c:
			default:
				s.log.Warn().Stringer("remote", c.RemoteAddr()).Msg("raft connection from an unknown host while lookups are busy; closed")
				_ = c.Close()
			}
			continue
		}
		s.handOver(c)
	}
}

func (s *raftStream) peer(a net.Addr) bool {
	ap, err := netip.ParseAddrPort(a.String())
	return err == nil && (*s.allowed.Load())[ap.Addr().Unmap()]
}

// Accept hands raft the next peer connection.
func (s *raftStream) Accept() (net.Conn, error) {
	select {
	case c := <-s.conns:
		return c, nil
	case <-s.quit:
		return nil, net.ErrClosed
	}
}

// Close stops accepting; raft closes the connections it holds.
func (s *raftStream) Close() error {
	var err error
	s.once.Do(func() {
		close(s.quit)
		err = s.ln.Close()
		s.wg.Wait()
		for len(s.vet) > 0 { // queued by the accept loop as the vetting loop ended
			_ = (<-s.vet).Close()
		}
	})
	return err
}

func (s *raftStream) Addr() net.Addr { return s.adv }

// Dial connects to a peer from this controller's own address, so that the
// peer's check recognises it; where that address is not this host's (an
// advertised one), from any.
func (s *raftStream) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout, LocalAddr: s.local}
	c, err := d.Dial("tcp", string(addr))
	if err != nil && s.local != nil && errors.Is(err, syscall.EADDRNOTAVAIL) {
		d.LocalAddr = nil
		return d.Dial("tcp", string(addr))
	}
	return c, err
}
