package autoswitch

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/ha"
	"github.com/rocketgo/rocketgo/store"
)

// The master side (Apache's AutoSwitchHAConnection): per slave a reader
// (handshake, then offset reports) and a writer (the master's handshake
// with its epoch entries, then TRANSFER frames of one epoch each carrying
// the confirm offset, or heartbeats). Differences from Apache, on purpose:
//   - A first report beyond the master's end or below its first file, a
//     report going back or beyond what was sent, a second handshake after
//     transfer began, closes the connection with a log line (Apache keeps
//     such a slave and it never progresses).
//   - A slave that stops reading is closed once a write has been blocked
//     for haHousekeepingInterval.
//   - The writer sleeps until an append wakes it, not in 100 ms steps.

// masterConn is one slave's connection.
type masterConn struct {
	s    *Service
	t    *term
	c    net.Conn
	addr string

	since     time.Time     // when it was admitted
	hello     chan struct{} // the slave's handshake arrived (buffer 1)
	first     chan struct{} // closed on the first report
	start     int64         // the first report; set before first closes
	handshook atomic.Bool   // handshake frame received
	slaveID   atomic.Int64
	learner   atomic.Bool
	fromLast  atomic.Bool
	ack       atomic.Int64 // last report, -1 before the first
	sent      atomic.Int64 // end of what was handed to the socket
	// lastMax and lastSent: the master's end when the writer last sent a
	// frame and when (Apache's lastMasterMaxOffset, lastTransferTimeMs).
	lastMax  atomic.Int64
	lastSent atomic.Int64

	once sync.Once
	done chan struct{}
	hdr  []byte         // the writer's frame header
	fw   ha.FrameWriter // the writer's
}

// admit registers a slave's connection with the current master term.
// When maxSlaves are connected, the oldest that never reported makes room
// (a stranger's silent connections cannot keep a slave out); when every
// one has reported, c is refused.
func (s *Service) admit(c net.Conn) {
	addr := c.RemoteAddr().String()
	for range 2 {
		s.mu.Lock()
		t := s.term
		if s.shut || t == nil || !t.master {
			s.mu.Unlock()
			_ = c.Close() // not master: Apache's slave retries until the controller names one
			s.sampled.Info().Str("remote", addr).Msg("autoswitch connection refused, not master")
			return
		}
		if len(t.conns) < maxSlaves {
			mc := &masterConn{s: s, t: t, c: c, addr: addr, since: time.Now(), hello: make(chan struct{}, 1),
				first: make(chan struct{}), done: make(chan struct{}), fw: ha.FrameWriter{Conn: c, Idle: s.cfg.HAHousekeepingInterval}}
			mc.ack.Store(-1)
			mc.slaveID.Store(-1)
			t.conns[mc] = struct{}{}
			s.goRunLocked(t, mc.readLoop)
			s.goRunLocked(t, mc.writeLoop)
			s.mu.Unlock()
			s.log.Info().Str("remote", addr).Msg("autoswitch slave connected")
			return
		}
		silent, found := ha.OldestSilent(t.conns)
		s.mu.Unlock()
		if !found {
			break
		}
		silent.close("evicted: never reported while the listener was full")
	}
	_ = c.Close()
	s.sampled.Warn().Str("remote", addr).Int("maxSlaves", maxSlaves).Msg("autoswitch connection refused, too many slaves")
}

// Reported and Admitted make a masterConn an ha.Silent (eviction).
func (mc *masterConn) Reported() bool      { return mc.ack.Load() >= 0 }
func (mc *masterConn) Admitted() time.Time { return mc.since }

// close ends the connection once, with the reason logged; the slave leaves
// the SyncSet's connection table (the housekeeper may then shrink the set).
func (mc *masterConn) close(why string) {
	mc.once.Do(func() {
		_ = mc.c.Close() // both loops see the error and end
		close(mc.done)
		s := mc.s
		s.mu.Lock()
		delete(mc.t.conns, mc)
		s.mu.Unlock()
		if id := mc.slaveID.Load(); id >= 0 && mc.ack.Load() >= 0 {
			mc.t.sync.Disconnected(id)
		}
		mc.t.wake()
		s.log.Info().Str("remote", mc.addr).Int64("slaveBrokerId", mc.slaveID.Load()).Int64("ackOffset", mc.ack.Load()).
			Str("reason", why).Msg("autoswitch slave disconnected")
	})
}

// readLoop takes the slave's frames; nothing read for
// haHousekeepingInterval closes the connection.
func (mc *masterConn) readLoop() {
	s := mc.s
	var buf [1024]byte
	n := 0
	for {
		if err := mc.c.SetReadDeadline(time.Now().Add(s.cfg.HAHousekeepingInterval)); err != nil {
			mc.close("set read deadline: " + err.Error())
			return
		}
		k, err := mc.c.Read(buf[n:])
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				mc.close("nothing read for haHousekeepingInterval")
			} else {
				mc.close("read: " + err.Error())
			}
			return
		}
		n += k
		used := 0
		for {
			f, m, err := ParseSlaveFrame(buf[used:n])
			if err != nil {
				mc.close(err.Error())
				return
			}
			if m == 0 {
				break
			}
			used += m
			if why := mc.frame(f); why != "" {
				s.sampled.Warn().Str("remote", mc.addr).Int64("offset", f.MaxOffset).Int64("sent", mc.sent.Load()).
					Int64("masterMaxOffset", s.st.MaxPhyOffset()).Msg("autoswitch slave frame refused: " + why)
				mc.close("bad frame: " + why)
				return
			}
		}
		n = copy(buf[:], buf[used:n])
	}
}

// frame takes one slave frame; a non-empty answer is why the connection
// must close.
func (mc *masterConn) frame(f SlaveFrame) string {
	s := mc.s
	if f.State == StateHandshake {
		if mc.ack.Load() >= 0 {
			return "handshake after transfer began"
		}
		// Ids are the controller's (from 1); a negative one is the
		// "not handshaken" mark here, and the master's own would let
		// a connection acknowledge for it.
		if f.BrokerID < 0 || f.BrokerID == mc.t.self {
			return fmt.Sprintf("slave broker id %d", f.BrokerID)
		}
		mc.slaveID.Store(f.BrokerID)
		mc.learner.Store(f.AsyncLearner)
		mc.fromLast.Store(f.SyncFromLastFile)
		mc.handshook.Store(true)
		select {
		case mc.hello <- struct{}{}:
		default:
		}
		s.log.Info().Str("remote", mc.addr).Int64("slaveBrokerId", f.BrokerID).Bool("syncFromLastFile", f.SyncFromLastFile).
			Bool("asyncLearner", f.AsyncLearner).Msg("autoswitch slave handshake")
		return ""
	}
	if !mc.handshook.Load() {
		return "report before handshake"
	}
	off := f.MaxOffset
	prev := mc.ack.Load()
	id := mc.slaveID.Load()
	if prev < 0 {
		maxOff, minOff := s.st.MaxPhyOffset(), s.st.MinPhyOffset()
		switch {
		case off > maxOff:
			return "beyond the master's commit log"
		case off == 0 && mc.fromLast.Load():
			size := s.st.CommitLogFileSize()
			mc.start = maxOff - maxOff%size
		case off == 0:
			mc.start = minOff
		case off < minOff:
			return "below the master's first commit log file"
		default:
			mc.start = off
		}
		mc.sent.Store(mc.start)
		mc.ack.Store(off)
		mc.t.sync.Connected(id)
		mc.t.sync.Ack(id, off)
		close(mc.first)
	} else {
		switch {
		case off < prev:
			return "went back"
		case off > mc.sent.Load():
			return "beyond what was sent"
		}
		mc.ack.Store(off)
		mc.t.sync.Ack(id, off)
	}
	// Apache's maybeExpandInSyncStateSet: caught up with what the master
	// had when it last sent.
	if !mc.learner.Load() && off >= mc.lastMax.Load() {
		at := time.UnixMilli(mc.lastSent.Load())
		if s.st.MaxPhyOffset() == off {
			at = time.Now()
		}
		mc.t.sync.CaughtUp(id, at)
	}
	mc.t.wake()
	return ""
}

// writeLoop answers the handshake with the master's epoch entries, then
// ships the commit log from the slave's first report.
func (mc *masterConn) writeLoop() {
	s := mc.s
	select {
	case <-mc.hello:
	case <-mc.done:
		return
	}
	mc.hdr = AppendMasterHandshake(mc.hdr[:0], s.st.MaxPhyOffset(), s.epochs.LastEpoch(), s.epochs.All())
	if why := ha.Why(mc.fw.Write(mc.hdr, nil)); why != "" {
		mc.close(why)
		return
	}
	select {
	case <-mc.first:
	case <-mc.done:
		return
	}
	var fc flowControl
	t := ha.Transfer{Store: s.st, Beat: s.cfg.HASendHeartbeatInterval, Done: mc.done, Size: s.cfg.HATransferBatchSize,
		Send: func(cursor int64, b []byte) (int, time.Duration, string) {
			size, e, found := NextChunk(s.epochs, cursor, int64(len(b)), len(b))
			if !found || size == 0 {
				s.sampled.Error().Int64("offset", cursor).Msg("autoswitch: no epoch entry holds the offset to send, waiting")
				return 0, 500 * time.Millisecond, ""
			}
			mc.lastMax.Store(s.st.MaxPhyOffset())
			mc.lastSent.Store(time.Now().UnixMilli())
			mc.sent.Store(cursor + int64(size))
			mc.hdr = AppendMasterTransferHeader(mc.hdr[:0], size, cursor, e.Epoch, e.StartOffset, s.masterConfirm(mc.t))
			fc.sent += int64(size + len(mc.hdr))
			return size, 0, ha.Why(mc.fw.Write(mc.hdr, b[:size]))
		},
		Heartbeat: func(cursor int64) string {
			e, ok := s.epochs.ByOffset(cursor)
			if !ok {
				e, _ = s.epochs.First()
			}
			mc.hdr = AppendMasterTransferHeader(mc.hdr[:0], 0, cursor, e.Epoch, e.StartOffset, s.masterConfirm(mc.t))
			return ha.Why(mc.fw.Write(mc.hdr, nil))
		},
		// Nothing to send: the slave has all the master had (Apache
		// updates its caught-up time here).
		CaughtUp: func(cursor int64) {
			if mc.ack.Load() >= cursor {
				mc.t.sync.CaughtUp(mc.slaveID.Load(), time.Now())
			}
		},
		Behind: func(int64) string { return "behind the master's first commit log file" },
		Close:  mc.close,
	}
	if s.cfg.HAFlowControlEnable {
		t.Batch = func() (int, time.Duration) {
			allowed, wait := fc.allowed(time.Now(), s.cfg.MaxHATransferByteInSecond)
			return int(min(int64(s.cfg.HATransferBatchSize), max(allowed, 0))), wait
		}
	}
	t.Run(mc.start)
}

// flowControl is Apache's FlowMonitor for one connection: bytes sent in
// the current one-second window.
type flowControl struct {
	start time.Time
	sent  int64
}

// allowed is what may still be sent in the window holding now, and how
// long until the next window when nothing may.
func (fc *flowControl) allowed(now time.Time, perSecond int64) (int64, time.Duration) {
	if now.Sub(fc.start) >= time.Second {
		fc.start, fc.sent = now, 0
	}
	return perSecond - fc.sent, fc.start.Add(time.Second).Sub(now)
}

// masterConfirm is the confirm offset a master sends (CommitLog.
// getConfirmOffset): its end unless allAckInSyncStateSet holds it back.
func (s *Service) masterConfirm(t *term) int64 {
	if !s.st.ConfirmGated() {
		return s.st.MaxPhyOffset()
	}
	return s.st.ConfirmOffset()
}

// applySetLocked makes the store follow t's set: the confirm gate (only
// with allAckInSyncStateSet and other members, as Apache's
// getConfirmOffset), the confirm offset, and the set size SYNC_MASTER
// sends are admitted by (SendNeedsReplicas). Caller holds mu.
func (s *Service) applySetLocked(t *term) {
	set := t.sync.Current()
	gate := s.cfg.AllAckInSyncStateSet && len(set) > 1
	if gate {
		prev := s.st.ConfirmOffset()
		if !s.st.ConfirmGated() {
			prev = max(prev, s.st.DispatchedPhyOffset())
		}
		s.st.SetConfirmOffset(t.sync.ConfirmOffset(s.st.MaxPhyOffset(), prev))
	}
	s.st.SetConfirmGate(gate)
	s.inSync.Store(int32(len(set)))
}

// housekeep is the master's bookkeeping: on every ack, set change or
// append it advances the confirm offset and SYNC_MASTER's Replicated
// source; on every ack, disconnect or set change, and every
// checkSyncStateSetPeriod, it proposes shrinking the set for members
// behind longer than haMaxTimeSlaveNotCatchup, and expanding it for
// caught-up slaves.
func (s *Service) housekeep(t *term) {
	wake := make(chan struct{}, 1)
	tick := time.NewTicker(s.cfg.CheckSyncStateSetPeriod)
	defer tick.Stop()
	alter := true
	for {
		s.advance(t)
		if alter {
			s.maybeAlter(t)
		}
		alter = false
		if s.st.NotifyAppended(s.st.MaxPhyOffset(), wake) {
			continue
		}
		select {
		case <-t.done:
			return
		case <-s.quit:
			return
		case <-t.kick:
			alter = true
		case <-wake:
		case <-tick.C:
			alter = true
		}
	}
}

// advance recomputes the confirm offset and moves Replicated to what as
// many replicas as a send needs hold (acks.go).
func (s *Service) advance(t *term) {
	maxOff := s.st.MaxPhyOffset()
	if s.st.ConfirmGated() {
		s.st.SetConfirmOffset(t.sync.ConfirmOffset(maxOff, s.st.ConfirmOffset()))
	}
	s.mu.Lock()
	acks := make(map[int64]int64, len(t.conns))
	for c := range t.conns {
		if a := c.ack.Load(); a > 0 {
			acks[c.slaveID.Load()] = max(acks[c.slaveID.Load()], a)
		}
	}
	s.mu.Unlock()
	reached := replicated(s.cfg.needAcks(), maxOff, t.self, t.sync.Current(), acks)
	if reached > 0 {
		s.st.Advance(store.Replicated, reached)
	}
}

// maybeAlter proposes a shrink or an expansion to the controller, one at a
// time (Apache's isSynchronizingSyncStateSet). The request runs on its own
// goroutine, under the service's wait group but not the term's: a role
// change does not wait for the controller's answer, which setChanged then
// drops.
func (s *Service) maybeAlter(t *term) {
	if s.cfg.AlterSyncStateSet == nil || t.altering.Load() || time.Since(time.UnixMilli(t.alterFailed.Load())) < time.Second {
		return // a refused proposal is retried after a second, not per ack
	}
	next, ok := t.sync.MaybeShrink(time.Now())
	if !ok {
		s.mu.Lock()
		var cand []*masterConn
		for c := range t.conns {
			if c.ack.Load() >= 0 && !c.learner.Load() {
				cand = append(cand, c)
			}
		}
		s.mu.Unlock()
		start := int64(0)
		if e, found := s.epochs.Last(); found {
			start = e.StartOffset
		}
		for _, c := range cand {
			if next, ok = t.sync.MaybeExpand(c.slaveID.Load(), c.ack.Load(), s.masterConfirm(t), start); ok {
				break
			}
		}
	}
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applySetLocked(t)
	cur := t.setEpoch
	t.altering.Store(true)
	if !s.goRunLocked(nil, func() {
		defer t.altering.Store(false)
		accepted, setEpoch, err := s.cfg.AlterSyncStateSet(t.self, t.epoch, next, cur)
		if err != nil {
			// The proposal stays pending (its union counts, as Apache's
			// isSynchronizingSyncStateSet) until an answer or a push
			// installs a set; proposed again a second later.
			s.sampled.Warn().Err(err).Ints64("proposed", next).Msg("autoswitch alter syncStateSet refused")
			t.alterFailed.Store(time.Now().UnixMilli())
			return
		}
		s.setChanged(t, accepted, setEpoch)
	}) {
		t.altering.Store(false)
	}
}
