package remoting

// TLS at accept (permissive and enforcing mode). gnet has no TLS, so a TLS
// connection is terminated here, in Go, and its plaintext carried to the
// event loop over a Unix socket pair:
//
//	client ──TLS/TCP──▶ bridge (two goroutines) ──plain──▶ socket pair ──▶ gnet loop
//
// The Conn keeps the client's TCP address, so nothing above this file can
// tell the two paths apart. Plaintext connections in permissive mode are
// handed to gnet themselves, after a peek (MSG_PEEK leaves the byte in the
// kernel) at their first byte; in disabled mode nothing here runs.
//
// The peek and the handshake happen off the accept loop, each connection on
// its own goroutine, bounded by the connection limit (the connection counts
// from accept) and by HandshakeTimeout: a client that sends nothing, or
// stalls in its ClientHello, is closed when it runs out.

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// tlsRecordHandshake is the first byte of a TLS connection: a handshake
// record (Apache's TlsModeHandler.HANDSHAKE_MAGIC_CODE).
const tlsRecordHandshake = 0x16

// bridgeBuf is the copy buffer of each bridge direction: one TLS record.
const bridgeBuf = 16 << 10

// defaultBridgeWriteTimeout bounds a write to a TLS client that does not
// read, when no slow-consumer limit is configured.
const defaultBridgeWriteTimeout = 30 * time.Second

// startTLS takes an accepted, counted connection whose first byte decides
// its path. It owns nc from here.
func (s *Server) startTLS(nc net.Conn) {
	s.tlsMu.Lock()
	if s.tlsClosed {
		s.tlsMu.Unlock()
		s.conns.Add(-1)
		_ = nc.Close()
		return
	}
	s.tlsConns[nc] = struct{}{}
	s.tlsWG.Add(1)
	s.tlsMu.Unlock()
	go s.serveTLS(nc)
}

func (s *Server) untrackTLS(nc net.Conn) {
	s.tlsMu.Lock()
	delete(s.tlsConns, nc)
	s.tlsMu.Unlock()
}

// closeTLS closes every connection still peeked at, handshaking or
// bridged, and waits for their goroutines. Called by Shutdown.
func (s *Server) closeTLS() {
	s.tlsMu.Lock()
	s.tlsClosed = true
	for nc := range s.tlsConns {
		_ = nc.Close()
	}
	s.tlsMu.Unlock()
	s.tlsWG.Wait()
}

// serveTLS decides a connection's path from its first byte: plaintext to
// the engine as it is, TLS through a handshake and a bridge.
func (s *Server) serveTLS(nc net.Conn) {
	defer s.tlsWG.Done()
	defer s.untrackTLS(nc)
	t := s.cfg.TLS
	deadline := time.Now().Add(t.HandshakeTimeout)
	first, err := peekByte(nc, deadline)
	switch {
	case err != nil:
		if errors.Is(err, os.ErrDeadlineExceeded) {
			s.stalled.Add(1) // before the close, which whoever watches the count sees
			s.warn.Warn().Stringer("remote", nc.RemoteAddr()).Dur("timeout", t.HandshakeTimeout).
				Msg("connection sent nothing within the tls handshake timeout; closed")
		}
		s.dropTLS(nc)
	case first == tlsRecordHandshake:
		if tc := s.handshake(nc, deadline); tc != nil {
			s.serveBridged(tc, nc.RemoteAddr())
		}
	case t.Mode == TLSEnforcing:
		s.plainRefused.Add(1)
		s.warn.Warn().Stringer("remote", nc.RemoteAddr()).
			Msg("plaintext connection refused: tls.server.mode is enforcing")
		s.dropTLS(nc)
	default:
		s.register(nc, nc.RemoteAddr())
	}
}

// dropTLS closes a counted connection that never reached the engine.
func (s *Server) dropTLS(nc net.Conn) {
	s.conns.Add(-1)
	_ = nc.Close()
}

// handshake runs the server side of the TLS handshake by deadline; on
// failure the connection is dropped and nil returned.
func (s *Server) handshake(nc net.Conn, deadline time.Time) *tls.Conn {
	tc := tls.Server(nc, s.cfg.TLS.server)
	_ = nc.SetDeadline(deadline)
	if err := tc.Handshake(); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			s.stalled.Add(1)
		}
		s.warn.Warn().Err(err).Stringer("remote", nc.RemoteAddr()).Msg("tls handshake failed; connection closed")
		s.dropTLS(nc)
		return nil
	}
	_ = nc.SetDeadline(time.Time{})
	return tc
}

// serveBridged hands the engine one end of a socket pair, as a Conn whose
// peer is remote, and bridges the other end to tc until either closes.
func (s *Server) serveBridged(tc *tls.Conn, remote net.Addr) {
	local, peer, err := socketPair()
	if err != nil {
		s.conns.Add(-1)
		_ = tc.Close()
		s.warn.Warn().Err(err).Stringer("remote", remote).Msg("tls bridge not made; connection closed")
		return
	}
	if !s.register(peer, remote) {
		_ = local.Close()
		_ = tc.Close()
		return
	}
	s.bridge(tc, local)
}

// bridge copies between the TLS connection and the event loop's end of the
// socket pair until either side ends, then closes both. A client that stops
// reading is dropped after the slow-consumer timeout (its output then sits
// in the loop's buffer, where the output limits see it).
func (s *Server) bridge(tc *tls.Conn, local net.Conn) {
	wd := time.Duration(s.slowTimeout)
	if wd <= 0 {
		wd = defaultBridgeWriteTimeout
	}
	s.tlsWG.Add(1) // this goroutine holds one: the count cannot be zero here
	go func() {
		defer s.tlsWG.Done()
		pump(local, tc, 0)
		_ = local.Close() // the loop sees the close; the other direction ends
	}()
	pump(tc, local, wd)
	_ = tc.Close() // the other direction's read ends
	_ = local.Close()
}

// pump copies src to dst until either fails; each write must finish within
// wd (0: no bound).
func pump(dst, src net.Conn, wd time.Duration) {
	buf := make([]byte, bridgeBuf)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if wd > 0 {
				_ = dst.SetWriteDeadline(time.Now().Add(wd))
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// peekByte waits until deadline for nc's first byte and returns it without
// consuming it.
func peekByte(nc net.Conn, deadline time.Time) (byte, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return 0, errors.ErrUnsupported
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, err
	}
	if err := nc.SetReadDeadline(deadline); err != nil {
		return 0, err
	}
	defer nc.SetReadDeadline(time.Time{}) //nolint:errcheck // the descriptor is handed on or closed next
	var b [1]byte
	var n int
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		for {
			n, _, rerr = unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK)
			if rerr != unix.EINTR {
				break
			}
		}
		return rerr != unix.EAGAIN // false: wait until readable
	})
	switch {
	case err != nil:
		return 0, err
	case rerr != nil:
		return 0, rerr
	case n == 0:
		return 0, io.EOF
	}
	return b[0], nil
}

// socketPair returns the two ends of a connected Unix stream socket pair.
func socketPair() (local, peer net.Conn, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, os.NewSyscallError("socketpair", err)
	}
	conns := [2]net.Conn{}
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "tls-bridge")
		conns[i], err = net.FileConn(f) // a duplicate: f is closed either way
		_ = f.Close()
		if err != nil {
			if i == 1 {
				_ = conns[0].Close()
			} else {
				_ = unix.Close(fds[1])
			}
			return nil, nil, err
		}
	}
	return conns[0], conns[1], nil
}
