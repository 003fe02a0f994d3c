package remoting

// The sweeper: one goroutine per server that advances the server's clock
// and, every tick, closes connections that were idle too long or left a
// frame incomplete too long, and wakes those whose output is above the
// high-water mark so that their loop looks at it again with fresh figures
// (only a loop may read gnet's output buffer; the slow-consumer deadline is
// applied there, in resumed).

import (
	"runtime"
	"runtime/debug"
	"time"
)

const (
	// releaseMin: after this much memory was dropped with closed
	// connections, the sweeper gives the free heap back to the system.
	releaseMin = 32 << 20
	// releaseEvery: at most this often.
	releaseEvery = 5 * time.Second
)

func (s *Server) sweepLoop() {
	defer s.wg.Done()
	t := time.NewTicker(s.tick)
	defer t.Stop()
	var conns []*Conn
	var lastRelease time.Time
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
		}
		now := int64(time.Since(s.epoch))
		s.clock.Store(now)
		s.liveMu.Lock()
		for c := range s.live {
			conns = append(conns, c)
		}
		s.liveMu.Unlock()
		for _, c := range conns {
			s.check(c, now)
		}
		clear(conns)
		conns = conns[:0]
		if s.released.Load() >= releaseMin && time.Since(lastRelease) >= releaseEvery {
			lastRelease = time.Now()
			s.releaseMemory()
		}
	}
}

// check applies the time limits to one connection.
func (s *Server) check(c *Conn, now int64) {
	if c.closed.Load() {
		return
	}
	above := c.aboveSince.Load() != 0
	switch since := c.inSince.Load(); {
	case s.idle > 0 && s.expired(c.lastRead.Load(), s.idle, now):
		s.warn.Info().Str("remote", c.Remote).Msg("idle connection closed (serverChannelMaxIdleTimeSeconds)")
		c.cut(ErrIdle)
	case s.frameTimeout > 0 && !above && since != 0 && s.expired(since, s.frameTimeout, now):
		s.warn.Warn().Str("remote", c.Remote).
			Msg("incomplete frame timed out (serverIncompleteFrameTimeoutMillis); closing connection")
		c.cut(ErrFrameTimeout)
	case above:
		_ = c.gc.Wake(nil)
	}
}

// expired reports whether more than limit has passed since since, both on
// the server's clock. Times taken on the loops are up to a tick old, so a
// tick is added: a limit is never enforced early, and at most two ticks
// (half the shortest limit) late.
func (s *Server) expired(since, limit, now int64) bool {
	return now-since > limit+int64(s.tick)
}

// releaseMemory gives the heap freed by closed connections back to the
// system. Without it the process keeps its peak: an idle server reaches no
// GC until the runtime forces one (every 2 minutes), gnet's buffer pools
// (sync.Pool) keep what they hold until the GC after that, and only then
// does the scavenger return the pages, gradually. Two collections empty
// the pools (their victim caches survive one); FreeOSMemory returns the
// pages at once. On a heap as small as the servers' this takes milliseconds,
// off the event loops, at most every releaseEvery and only after releaseMin
// was dropped (floods, slow consumers, not ordinary traffic).
func (s *Server) releaseMemory() {
	dropped := s.released.Swap(0)
	start := time.Now()
	runtime.GC()
	debug.FreeOSMemory()
	s.log.Info().Int64("droppedBytes", dropped).Dur("took", time.Since(start)).Msg("memory of closed connections released")
}
