package metrics

// The endpoint's connection cap. Every connection a scraper (or anyone)
// opens costs the broker a file descriptor from the same table its Remoting
// clients need; without a cap, idle connections held open by a stranger
// starve the broker of descriptors and every Remoting client is refused.

import (
	"net"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// cappedListener closes connections accepted beyond max at once.
type cappedListener struct {
	net.Listener
	slots chan struct{}
	log   zerolog.Logger // sampled
}

func newCappedListener(ln net.Listener, max int, log zerolog.Logger) *cappedListener {
	return &cappedListener{Listener: ln, slots: make(chan struct{}, max),
		log: log.Sample(&zerolog.BurstSampler{Burst: 3, Period: 10 * time.Second})}
}

// Accept returns the next connection within the cap; connections over it
// are closed without a byte read. An accept error (out of descriptors
// included) is returned to http.Server, which backs off and goes on.
func (l *cappedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &cappedConn{Conn: c, release: func() { <-l.slots }}, nil
		default:
			l.log.Warn().Stringer("remote", c.RemoteAddr()).Int("maxConnections", cap(l.slots)).
				Msg("metrics endpoint at its connection cap; connection closed")
			_ = c.Close()
		}
	}
}

// cappedConn gives its slot back once, when closed.
type cappedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *cappedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
