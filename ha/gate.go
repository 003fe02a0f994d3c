package ha

import (
	"errors"
	"net"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// Gate is the door of an HA listener, the same for classic and AutoSwitch
// HA: its accept loop never ends on an accept error (EMFILE and the like
// are retried every 100 ms, a timeout at once), and with a secret each
// connection must answer the challenge (Challenge) before Admit sees it,
// on a goroutine of its own, at most MaxPendingAuth at a time, so that the
// loop never waits for a slave.
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

	pending atomic.Int32
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
	if g.pending.Add(1) > MaxPendingAuth {
		g.pending.Add(-1)
		_ = c.Close()
		g.Log.Warn().Stringer("remote", c.RemoteAddr()).Msg(g.Name + " connection refused: too many unauthenticated")
		return
	}
	if !g.Go(func() {
		defer g.pending.Add(-1)
		if err := Challenge(c, g.Secret); err != nil {
			_ = c.Close()
			g.Log.Warn().Err(err).Stringer("remote", c.RemoteAddr()).Msg(g.Name + " connection refused: not authenticated")
			return
		}
		g.Admit(c)
	}) {
		g.pending.Add(-1)
		_ = c.Close()
	}
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
