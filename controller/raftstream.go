package controller

// The raft transport's stream layer. hashicorp/raft's TCP transport serves
// whoever connects: one AppendEntries or InstallSnapshot from a stranger
// with a higher term is taken as the leader's word, and the entries it
// carries are applied by the FSM (a forged election, a forged broker set).
// This layer accepts raft connections only from the configured peers'
// addresses, and dials from this controller's own address so that the
// others recognise it. Apache's DLedger controller accepts anyone.

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/raft"
	"github.com/rs/zerolog"
)

// raftStream implements raft.StreamLayer over TCP with a peer check.
type raftStream struct {
	ln      net.Listener
	adv     net.Addr
	allowed map[netip.Addr]bool // the peers' addresses
	local   *net.TCPAddr        // the source of dials: this peer's host, any port
	log     zerolog.Logger      // sampled
	conns   chan net.Conn
	quit    chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
}

// newRaftStream listens on self.Raft. Peers named by a host name are
// resolved once, here.
func newRaftStream(self Peer, peers []Peer, log zerolog.Logger) (*raftStream, error) {
	allowed := map[netip.Addr]bool{}
	for _, p := range peers {
		host, _, err := net.SplitHostPort(p.Raft)
		if err != nil {
			return nil, err
		}
		ips, err := net.LookupIP(host)
		if err != nil {
			return nil, err
		}
		for _, ip := range ips {
			if a, ok := netip.AddrFromSlice(ip); ok {
				allowed[a.Unmap()] = true
			}
		}
	}
	ln, err := net.Listen("tcp", self.Raft)
	if err != nil {
		return nil, err
	}
	s := &raftStream{ln: ln, adv: ln.Addr(), allowed: allowed, conns: make(chan net.Conn), quit: make(chan struct{}),
		log: log.Sample(&zerolog.BurstSampler{Burst: 5, Period: 10 * time.Second})}
	if host, _, err := net.SplitHostPort(self.Raft); err == nil {
		if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
			s.local = &net.TCPAddr{IP: ip}
		}
	}
	s.wg.Add(1)
	go s.acceptLoop()
	return s, nil
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
			s.log.Warn().Stringer("remote", c.RemoteAddr()).Msg("raft connection from a host that is no controller peer; closed")
			_ = c.Close()
			continue
		}
		select {
		case s.conns <- c:
		case <-s.quit:
			_ = c.Close()
			return
		}
	}
}

func (s *raftStream) peer(a net.Addr) bool {
	ap, err := netip.ParseAddrPort(a.String())
	return err == nil && s.allowed[ap.Addr().Unmap()]
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
