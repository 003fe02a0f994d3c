package ha

import (
	"errors"
	"net"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Gate is the door of an HA listener, the same for classic and AutoSwitch
// HA: its accept loop never ends on an accept error (EMFILE and the like
// are retried every 100 ms, a timeout at once), and with a secret each
// connection must answer the challenge (Challenge) before Admit sees it,
// on a goroutine of its own, so that the loop never waits for a slave. At
// most MaxPendingAuth connections (MaxPendingAuthPerAddr from one IP) are
// being authenticated at once; a newcomer past a bound closes the oldest,
// so that connections a stranger holds open age out instead of keeping a
// slave out.
type Gate struct {
	Listener net.Listener
	Secret   []byte // nil: no challenge
	// Admit takes an accepted (and authenticated) connection; it must not
	// block for long: the accept loop calls it when there is no secret.
	Admit func(net.Conn)
	// Go runs fn on a goroutine the owner waits for at shutdown; false
	// when the owner is shutting down (fn is not run).
	Go   func(fn func()) bool
	Quit <-chan struct{}
	Log  *zerolog.Logger // sampled: strangers can make it log in a loop
	Name string          // "ha" or "autoswitch", in log lines

	mu      sync.Mutex
	pending []pendingConn // oldest first
}

type pendingConn struct {
	c    net.Conn
	addr string // the remote IP
}

// Run accepts until the listener is closed.
func (g *Gate) Run() {
	for {
		c, err := g.Listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return // Shutdown closed the listener
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			g.Log.Warn().Err(err).Msg(g.Name + " accept failed")
			select {
			case <-g.Quit:
				return
			case <-time.After(100 * time.Millisecond): // EMFILE and the like: do not spin
			}
			continue
		}
		if len(g.Secret) == 0 {
			g.Admit(c)
			continue
		}
		g.authenticate(c)
	}
}

func (g *Gate) authenticate(c net.Conn) {
	addr := remoteIP(c)
	g.mu.Lock()
	evicted := g.makeRoomLocked(addr)
	g.pending = append(g.pending, pendingConn{c: c, addr: addr})
	g.mu.Unlock()
	if evicted != nil {
		_ = evicted.Close() // its Challenge fails and it leaves pending
		g.Log.Warn().Stringer("remote", evicted.RemoteAddr()).Msg(g.Name + " connection closed: unauthenticated for the longest while the gate was full")
	}
	if !g.Go(func() {
		err := Challenge(c, g.Secret)
		if !g.done(c) {
			return // evicted, and closed, meanwhile
		}
		if err != nil {
			_ = c.Close()
			g.Log.Warn().Err(err).Stringer("remote", c.RemoteAddr()).Msg(g.Name + " connection refused: not authenticated")
			return
		}
		g.Admit(c)
	}) {
		g.done(c)
		_ = c.Close()
	}
}

// makeRoomLocked takes out of pending, and returns for closing, the
// connection a newcomer from addr replaces: the oldest from addr when addr
// holds its share, else the oldest of all when the gate is full.
func (g *Gate) makeRoomLocked(addr string) net.Conn {
	first, same := -1, 0
	for i, p := range g.pending {
		if p.addr == addr {
			if first < 0 {
				first = i
			}
			same++
		}
	}
	victim := -1
	switch {
	case same >= MaxPendingAuthPerAddr:
		victim = first
	case len(g.pending) >= MaxPendingAuth:
		victim = 0
	default:
		return nil
	}
	c := g.pending[victim].c
	g.pending = append(g.pending[:victim], g.pending[victim+1:]...)
	return c
}

// done takes c out of pending; false when eviction already did.
func (g *Gate) done(c net.Conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, p := range g.pending {
		if p.c == c {
			g.pending = append(g.pending[:i], g.pending[i+1:]...)
			return true
		}
	}
	return false
}

func remoteIP(c net.Conn) string {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return c.RemoteAddr().String()
}

// Silent is a connection as eviction sees it: whether it reported an
// offset yet, and when it was admitted.
type Silent interface {
	comparable
	Reported() bool
	Admitted() time.Time
}

// OldestSilent is the connection admitted first among those that never
// reported (the one a full listener evicts for a newcomer); the zero C if
// none.
func OldestSilent[C Silent](conns map[C]struct{}) (C, bool) {
	var out C
	found := false
	for c := range conns {
		if !c.Reported() && (!found || c.Admitted().Before(out.Admitted())) {
			out, found = c, true
		}
	}
	return out, found
}
