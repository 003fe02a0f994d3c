package ha

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/store"
)

// The master side (Apache's DefaultHAConnection): one connection per
// slave, a reader taking the slave's reports and a writer shipping commit
// log bytes. Differences from Apache, on purpose:
//   - A first report beyond the master's max offset or below its min
//     offset closes the connection with a log line (Apache accepts it and
//     sends heartbeats forever: the slave never progresses, silently).
//   - A later report beyond what this connection has sent, or going back,
//     closes it too (a slave cannot hold bytes it was not sent; for a
//     SYNC_MASTER such an ack would acknowledge data no slave holds).
//   - The writer waits for the first report on a channel, not by polling
//     every 10 ms, and sleeps until an append wakes it rather than 100 ms.
//   - A slave that stops reading is closed once a write has been blocked
//     for haHousekeepingInterval (Apache's writer blocks on its selector).

// slaveConn is one slave's connection.
type slaveConn struct {
	s    *Service
	c    net.Conn
	addr string

	since time.Time     // when it was admitted
	first chan struct{} // closed by the reader on the first report
	start int64         // where the writer begins; set before first closes
	ack   atomic.Int64  // last report, -1 before the first
	sent  atomic.Int64  // end of the bytes handed to the socket (set before the write)

	once sync.Once
	done chan struct{} // closed by close

	// The writer's: the header of the frame being written, and the
	// frame writer.
	hdr [headerSize]byte
	fw  FrameWriter
}

// admit registers a slave connection and starts its reader and writer.
// When maxSlaves are connected, the oldest that never reported makes room
// (a stranger's silent connections cannot keep a slave out); when every
// one has reported, c is refused.
func (s *Service) admit(c net.Conn) {
	sc := &slaveConn{s: s, c: c, addr: c.RemoteAddr().String(), since: time.Now(),
		first: make(chan struct{}), done: make(chan struct{}), fw: FrameWriter{Conn: c, Idle: ms(s.cfg.HAHousekeepingInterval)}}
	sc.ack.Store(-1)
	for range 2 {
		s.mu.Lock()
		if !s.shut && len(s.conns) < maxSlaves {
			s.conns[sc] = struct{}{}
			s.goRunLocked(sc.readLoop)
			s.goRunLocked(sc.writeLoop)
			s.mu.Unlock()
			s.connLog.Info().Str("remote", sc.addr).Msg("ha slave connected")
			return
		}
		silent, found := OldestSilent(s.conns)
		shut := s.shut
		s.mu.Unlock()
		if shut || !found {
			break
		}
		silent.close("evicted: never reported while the listener was full")
	}
	_ = c.Close() // refused: nothing was exchanged
	s.sampled.Warn().Str("remote", sc.addr).Int("maxSlaves", maxSlaves).Msg("ha connection refused, too many slaves")
}

// Reported and Admitted make a slaveConn a Silent (eviction).
func (sc *slaveConn) Reported() bool      { return sc.ack.Load() >= 0 }
func (sc *slaveConn) Admitted() time.Time { return sc.since }

// close ends the connection once, with the reason logged.
func (sc *slaveConn) close(why string) {
	sc.once.Do(func() {
		_ = sc.c.Close() // both loops see the error and end
		close(sc.done)
		s := sc.s
		s.mu.Lock()
		delete(s.conns, sc)
		s.mu.Unlock()
		if sc.ack.Load() >= 0 {
			s.usableChanged(-1)
		}
		if why == "shutdown" {
			return
		}
		s.connLog.Info().Str("remote", sc.addr).Int64("ackOffset", sc.ack.Load()).Str("reason", why).Msg("ha slave disconnected")
	})
}

// readLoop takes the slave's reports: the last complete 8 bytes of what
// arrived. Nothing read for haHousekeepingInterval closes the connection.
func (sc *slaveConn) readLoop() {
	s := sc.s
	var buf [1024]byte // whole reports only are consumed; a tail of < 8 stays
	n := 0
	idle := ms(s.cfg.HAHousekeepingInterval)
	for {
		if err := sc.c.SetReadDeadline(time.Now().Add(idle)); err != nil {
			sc.close("set read deadline: " + err.Error())
			return
		}
		k, err := sc.c.Read(buf[n:])
		if err != nil {
			var ne net.Error
			switch {
			case errors.As(err, &ne) && ne.Timeout():
				s.sampled.Warn().Str("remote", sc.addr).Dur("idle", idle).Msg("ha slave silent, closing")
				sc.close("nothing read for haHousekeepingInterval")
			default:
				sc.close("read: " + err.Error())
			}
			return
		}
		n += k
		off, used, ok := lastReport(buf[:n])
		if !ok {
			continue
		}
		n = copy(buf[:], buf[used:n])
		if why := sc.report(off); why != "" {
			s.sampled.Warn().Str("remote", sc.addr).Int64("offset", off).Int64("masterMaxOffset", s.st.MaxPhyOffset()).
				Int64("masterMinOffset", s.st.MinPhyOffset()).Int64("sent", sc.sent.Load()).Msg("ha report refused: " + why)
			sc.close("bad report: " + why)
			return
		}
	}
}

// report takes one report; a non-empty answer is why the connection must
// close.
func (sc *slaveConn) report(off int64) string {
	s := sc.s
	prev := sc.ack.Load()
	if prev < 0 { // the first: where to start
		maxOff, minOff := s.st.MaxPhyOffset(), s.st.MinPhyOffset()
		switch {
		case off < 0 || off > maxOff:
			return "beyond the master's commit log"
		case off == 0:
			// An empty slave starts at the master's last file (Apache).
			size := s.st.CommitLogFileSize()
			sc.start = max(maxOff-maxOff%size, 0)
		case off < minOff:
			return "below the master's first commit log file"
		default:
			sc.start = off
		}
		sc.sent.Store(sc.start)
		sc.ack.Store(off)
		close(sc.first)
		s.usableChanged(+1)
		s.acked(off)
		return ""
	}
	switch {
	case off < prev:
		return "went back"
	case off > sc.sent.Load():
		return "beyond what was sent"
	}
	if off > prev {
		sc.ack.Store(off)
		s.acked(off)
	}
	return ""
}

// usableChanged counts slaves that reported; a SYNC_MASTER refuses waits at
// once while there is none.
func (s *Service) usableChanged(d int32) {
	s.usableMu.Lock()
	defer s.usableMu.Unlock()
	n := s.usable.Add(d)
	if s.cfg.BrokerRole == SyncMaster && ((d > 0 && n == 1) || (d < 0 && n == 0)) {
		s.st.LimitSource(store.Replicated, n > 0, s.cfg.FallbehindMax())
	}
}

// acked advances the Replicated source to a slave's ack (any one slave
// suffices: the source only moves forward, to the best ack seen).
func (s *Service) acked(off int64) {
	if s.cfg.BrokerRole == SyncMaster && off > 0 {
		s.st.Advance(store.Replicated, off)
	}
}

// writeLoop ships the commit log from the start the first report chose:
// frames of at most haTransferBatchSize straight from the mapped file,
// never across a file end; a heartbeat header after
// haSendHeartbeatInterval without a frame.
func (sc *slaveConn) writeLoop() {
	s := sc.s
	select {
	case <-sc.first:
	case <-sc.done:
		return
	}
	t := Transfer{Store: s.st, Beat: ms(s.cfg.HASendHeartbeatInterval), Done: sc.done, Size: s.cfg.HATransferBatchSize,
		Send: func(cursor int64, b []byte) (int, time.Duration, string) {
			sc.sent.Store(cursor + int64(len(b)))
			putHeader(&sc.hdr, cursor, len(b))
			return len(b), 0, sc.write(b)
		},
		Heartbeat: func(cursor int64) string {
			putHeader(&sc.hdr, cursor, 0)
			return sc.write(nil)
		},
		Behind: func(cursor int64) string {
			s.sampled.Warn().Str("remote", sc.addr).Int64("offset", cursor).Int64("masterMinOffset", s.st.MinPhyOffset()).
				Msg("ha slave behind the master's first commit log file, closing")
			return "behind the master's commit log"
		},
		Close: sc.close,
	}
	t.Run(sc.start)
}

// write writes sc.hdr and body; a non-empty answer is why the connection
// must close.
func (sc *slaveConn) write(body []byte) string {
	err := sc.fw.Write(sc.hdr[:], body)
	if errors.Is(err, ErrBlocked) {
		sc.s.sampled.Warn().Str("remote", sc.addr).Dur("blocked", sc.fw.Idle).Msg("ha slave stopped reading, closing")
	}
	return Why(err)
}
