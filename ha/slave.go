package ha

import (
	"errors"
	"net"
	"sync"
	"time"
)

// The slave side (Apache's DefaultHAClient): connect to the master's HA
// address, report the local commit log end at once, every
// haSendHeartbeatInterval and after every appended frame; append each
// frame's bytes at its offset. Differences from Apache, on purpose:
//   - The first report goes out at once on connecting (Apache may wait up
//     to haSendHeartbeatInterval).
//   - A frame larger than the 4 MiB read buffer closes the connection at
//     its header (Apache's can never complete and the link stalls until
//     housekeeping).
//   - A failed append closes the connection at once (Apache ignores it and
//     fails the offset check at the next frame).

const (
	dialTimeout = 3 * time.Second
	// retryMismatch: after an offset mismatch or a refused append, as
	// Apache, wait 5 s before connecting again (the master's view of this
	// slave will not change sooner).
	retryMismatch = 5 * time.Second
	// A dropped link is retried after backoffMin, doubling to backoffMax.
	backoffMin = 200 * time.Millisecond
	backoffMax = 5 * time.Second
)

// errMismatch marks a failure that waits retryMismatch.
type errMismatch struct{ msg string }

func (e *errMismatch) Error() string { return "ha: " + e.msg }

func (s *Service) slaveLoop() {
	backoff := time.Duration(0)
	var buf []byte // the 4 MiB read buffer, made on the first connection, kept
	for {
		s.mu.Lock()
		addr := s.masterAddr
		s.mu.Unlock()
		if addr == "" {
			select {
			case <-s.quit:
				return
			case <-s.addrCh:
				continue
			}
		}
		if buf == nil {
			buf = make([]byte, slaveReadBuffer)
		}
		read, err := s.replicate(addr, buf)
		s.connected.Store(false)
		select {
		case <-s.quit:
			return
		default:
		}
		wait := backoff
		var mm *errMismatch
		switch {
		case errors.As(err, &mm) || errors.As(err, new(*errFrame)):
			wait = retryMismatch
			s.sampled.Error().Err(err).Str("masterHAAddr", addr).Int64("maxPhyOffset", s.st.MaxPhyOffset()).
				Msg("ha replication refused, retrying later")
		default:
			if read {
				wait = backoffMin // it worked: come back quickly
			}
			s.sampled.Warn().Err(err).Str("masterHAAddr", addr).Dur("retryIn", wait).Msg("ha link to master down")
		}
		backoff = min(max(2*wait, backoffMin), backoffMax)
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-s.quit:
				t.Stop()
				return
			case <-s.addrCh: // a new address: at once
			case <-t.C:
			}
			t.Stop()
		}
	}
}

// replicate runs one connection to addr until it fails; read reports
// whether any frame arrived.
func (s *Service) replicate(addr string, buf []byte) (read bool, err error) {
	d := net.Dialer{Timeout: dialTimeout}
	c, err := d.DialContext(s.run, "tcp", addr)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	if s.shut || s.masterAddr != addr {
		s.mu.Unlock()
		_ = c.Close() // shut down, or the address changed meanwhile
		return false, errors.New("ha: connection no longer wanted")
	}
	s.link = c
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.link == c {
			s.link = nil
		}
		s.mu.Unlock()
		_ = c.Close() // ends the reporter too
	}()
	if len(s.cfg.AuthSecret) > 0 {
		if err := Answer(c, s.cfg.AuthSecret); err != nil {
			return false, err
		}
	}
	s.connected.Store(true)
	s.connLog.Info().Str("masterHAAddr", addr).Int64("maxPhyOffset", s.st.MaxPhyOffset()).Msg("ha connected to master")

	r := &reporter{c: c, idle: ms(s.cfg.HAHousekeepingInterval)}
	if err := r.report(s.st.MaxPhyOffset()); err != nil {
		return false, err
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	if !s.goRun(func() { defer wg.Done(); s.reportLoop(r, stop) }) {
		wg.Done()
		return false, errors.New("ha: shutting down")
	}
	defer func() {
		_ = c.Close() // first: a reporter blocked in a write ends now, not at its deadline
		close(stop)
		wg.Wait()
	}()

	var hdr [headerSize]byte
	idle := ms(s.cfg.HAHousekeepingInterval)
	for {
		if err := c.SetReadDeadline(time.Now().Add(idle)); err != nil {
			return read, err
		}
		off, body, err := readFrame(c, &hdr, buf)
		if err != nil {
			return read, err
		}
		read = true
		s.lastRead.Store(time.Now().UnixMilli())
		local := s.st.MaxPhyOffset()
		if local != 0 && off != local {
			return read, &errMismatch{"master sent offset " + itoa(off) + ", local commit log ends at " + itoa(local)}
		}
		if len(body) == 0 {
			continue // heartbeat
		}
		if err := s.st.AppendReplica(off, body); err != nil {
			return read, &errMismatch{"append at " + itoa(off) + ": " + err.Error()}
		}
		if err := r.report(s.st.MaxPhyOffset()); err != nil {
			return read, err
		}
	}
}

// reportLoop reports every haSendHeartbeatInterval (the master closes a
// silent slave after its haHousekeepingInterval).
func (s *Service) reportLoop(r *reporter, stop chan struct{}) {
	t := time.NewTicker(ms(s.cfg.HASendHeartbeatInterval))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-s.quit:
			return
		case <-t.C:
			if r.tick(s.st.MaxPhyOffset()) != nil {
				_ = r.c.Close() // the reader sees it and reconnects
				return
			}
		}
	}
}

// reporter writes reports; the reader (after frames) and the ticker share it.
// mu is held across a write bounded by idle: only these two goroutines take
// it, never an event loop or a handler, and the ticker skips its report
// while the reader writes one (tick).
type reporter struct {
	mu   sync.Mutex
	c    net.Conn
	idle time.Duration
	buf  [reportSize]byte
}

func (r *reporter) report(off int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.write(off)
}

// tick reports unless a report is being written: that one is as recent.
func (r *reporter) tick(off int64) error {
	if !r.mu.TryLock() {
		return nil
	}
	defer r.mu.Unlock()
	return r.write(off)
}

func (r *reporter) write(off int64) error {
	if err := r.c.SetWriteDeadline(time.Now().Add(r.idle)); err != nil {
		return err
	}
	_, err := r.c.Write(appendReport(r.buf[:0], off))
	return err
}
