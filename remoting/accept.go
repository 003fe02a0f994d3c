package remoting

// The accept loop. Connections are accepted here, on a Go listener, and
// handed to the gnet engine with Engine.Register, so that:
//   - a connection above serverMaxConnections is closed at once, before it
//     costs an event-loop registration or a buffer;
//   - running out of descriptors (EMFILE, ENFILE) or kernel memory
//     (ENOBUFS, ENOMEM) at accept is survived: gnet v2.9.7's acceptor
//     returns ErrAcceptSocket on any such error and the whole engine stops,
//     which ended the process. Here a pending connection is shed with a
//     spare descriptor (closed, the connection accepted and closed, the
//     spare reopened), so clients see a close rather than hang in the
//     backlog, and accepting backs off while no descriptor can be had.

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"
)

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	var backoff time.Duration
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if s.stopped.Load() {
				return
			}
			if backoff = s.acceptFailed(err, backoff); backoff > 0 {
				select {
				case <-s.quit:
					return
				case <-time.After(backoff):
				}
			}
			continue
		}
		backoff, s.waited = 0, false
		s.admit(nc)
	}
}

// resourceErr reports whether an accept error says the process or the
// system is out of something that closing connections gives back.
func resourceErr(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM)
}

// acceptFailed handles an accept error and returns how long to wait before
// accepting again. Out of descriptors, accept fails whether or not a
// connection is pending (the kernel takes the descriptor first), so the loop
// first waits for one, holding its spare; when accepting it fails again, it
// is shed. Each connection that arrives while no descriptor can be had is
// thus closed at once, and the loop does not spin meanwhile.
func (s *Server) acceptFailed(err error, backoff time.Duration) time.Duration {
	if resourceErr(err) {
		if !s.waited {
			s.waited = true
			if s.awaitPending() == nil {
				return 0
			}
		} else {
			s.waited = false
			if s.shedOne() {
				s.warn.Warn().Err(err).Int64("connections", s.conns.Load()).Int64("shed", s.shed.Load()).
					Msg("accept failed: out of descriptors; pending connection shed")
				return 0
			}
		}
	}
	backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
	s.warn.Warn().Err(err).Int64("connections", s.conns.Load()).Dur("backoff", backoff).
		Msg("accept failed; backing off")
	return backoff
}

// awaitPending waits until a connection is pending on the listener (or the
// listener is closed), holding the spare descriptor meanwhile.
func (s *Server) awaitPending() error {
	sc, ok := s.ln.(syscall.Conn)
	if !ok {
		return errors.ErrUnsupported
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	return rc.Read(func(fd uintptr) bool {
		if s.spare == nil {
			s.spare, _ = os.Open(os.DevNull)
		}
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, _ := unix.Poll(pfd, 0)
		return n > 0 // false: wait for the listener to become readable
	})
}

// shedOne accepts one pending connection with the spare descriptor and
// closes it. It reports whether one was shed.
func (s *Server) shedOne() bool {
	if s.spare == nil {
		s.spare, _ = os.Open(os.DevNull) // one may have come free since
		return false
	}
	sc, ok := s.ln.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	_ = s.spare.Close()
	s.spare = nil
	shed := false
	// The listener is non-blocking: EAGAIN if the connection went away meanwhile.
	_ = rc.Control(func(fd uintptr) {
		if nfd, _, err := unix.Accept4(int(fd), unix.SOCK_CLOEXEC); err == nil {
			_ = unix.Close(nfd)
			shed = true
		}
	})
	// The spare is taken back before the shed is counted: whoever watches the
	// count (a test refilling the table) must not win the descriptor from it.
	s.spare, _ = os.Open(os.DevNull)
	if shed {
		s.shed.Add(1)
	}
	return shed
}

func (s *Server) closeSpare() {
	if s.spare != nil {
		_ = s.spare.Close()
		s.spare = nil
	}
}

// admit registers an accepted connection with the engine, or closes it when
// the server is at its connection limit. With TLS on, the connection's
// first byte decides its path, off this loop (tls_accept.go).
func (s *Server) admit(nc net.Conn) {
	if s.maxConns > 0 && s.conns.Load() >= s.maxConns {
		s.refused.Add(1)
		_ = nc.Close()
		s.warn.Warn().Stringer("remote", nc.RemoteAddr()).Int64("serverMaxConnections", s.maxConns).
			Int64("refused", s.refused.Load()).Msg("connection limit reached; connection refused")
		return
	}
	s.conns.Add(1) // given back by OnClose, or when the connection never opens
	if s.cfg.TLS.serves() {
		s.startTLS(nc)
		return
	}
	s.register(nc, nc.RemoteAddr())
}

// register hands a counted connection to the engine as a Conn whose peer is
// remote; it reports whether the connection opened. On failure the count is
// given back and nc closed.
func (s *Server) register(nc net.Conn, remote net.Addr) bool {
	c := s.newConn(remote)
	res, err := s.eng.Register(gnet.NewContext(gnet.NewNetConnContext(context.Background(), nc), c))
	if err != nil {
		s.conns.Add(-1)
		_ = nc.Close()
		s.warn.Warn().Err(err).Str("remote", c.Remote).Msg("connection not registered; closed")
		return false
	}
	// gnet duplicates the descriptor, closes nc and runs OnOpen on a loop;
	// waiting for it keeps the count exact and registrations few at a time.
	select {
	case r := <-res:
		if r.Err != nil || !c.opened.Load() {
			s.conns.Add(-1)
			s.warn.Warn().Err(r.Err).Str("remote", c.Remote).Msg("connection not registered; closed")
			return false
		}
	case <-s.exited:
		return false
	}
	return true
}
