package proxy

import (
	"net"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"
)

// limitListener closes connections past max at once (counted from Accept
// to Close), with a sampled log line: a client cannot make the proxy hold
// more sockets and HTTP/2 state than grpcMaxConnections.
type limitListener struct {
	net.Listener
	max  int64
	open atomic.Int64
	log  zerolog.Logger
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) > l.max {
			l.open.Add(-1)
			l.log.Warn().Str("remote", c.RemoteAddr().String()).Int64("grpcMaxConnections", l.max).
				Msg("grpc connection refused: too many connections")
			_ = c.Close() // refused: nothing was read or written
			continue
		}
		return &countedConn{Conn: c, l: l}, nil
	}
}

type countedConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}
