package autoswitch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/ha"
)

// The slave side (Apache's AutoSwitchHAClient): connect to the master the
// controller named, send the handshake, take the master's epoch entries,
// truncate the store and the epoch file to the consistent point, report
// the local end, then append each TRANSFER frame (recording an epoch entry
// when the frame's epoch changes, taking the confirm offset) and report
// after every frame and every haSendHeartbeatInterval. Differences from
// Apache, on purpose:
//   - A frame larger than the 4 MiB read buffer closes the connection at
//     its header (Apache's never completes and stalls until housekeeping).
//   - A failed append or truncation closes the connection at once; the
//     next attempt starts with a new handshake.

const (
	slaveReadBuffer = 4 << 20 // Apache's READ_MAX_BUFFER_SIZE
	dialTimeout     = 3 * time.Second
	// retryRefused: after a refusal (no consistent point, a failed
	// truncation, a frame out of order) as Apache waits before the next
	// attempt.
	retryRefused = 2 * time.Second
	backoffMin   = 200 * time.Millisecond
	backoffMax   = 5 * time.Second
)

// errRefused marks a failure that waits retryRefused.
type errRefused struct{ err error }

func (e *errRefused) Error() string { return e.err.Error() }
func (e *errRefused) Unwrap() error { return e.err }

// client follows one master for one slave term.
type client struct {
	s *Service
	t *term

	mu        sync.Mutex
	link      net.Conn
	connected atomic.Bool
	lastRead  atomic.Int64 // unix ms
	buf       []byte       // the read buffer, made on the first connection
}

// closeLink ends the live connection (a role change, shutdown).
func (c *client) closeLink() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.link != nil {
		_ = c.link.Close() // the loop sees the error
	}
}

func (c *client) loop() {
	s := c.s
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // a dial in progress ends with the term
		select {
		case <-c.t.done:
		case <-s.quit:
		case <-ctx.Done():
		}
		cancel()
	}()
	backoff := time.Duration(0)
	for {
		read, err := c.follow(ctx)
		c.connected.Store(false)
		select {
		case <-c.t.done:
			return
		case <-s.quit:
			return
		default:
		}
		wait := backoff
		var ref *errRefused
		if errors.As(err, &ref) {
			wait = s.retryRefused
			s.sampled.Error().Err(err).Str("masterHAAddr", c.t.masterAddr).Int64("maxPhyOffset", s.st.MaxPhyOffset()).
				Msg("autoswitch replication refused, retrying")
		} else {
			if read {
				wait = backoffMin
			}
			s.sampled.Warn().Err(err).Str("masterHAAddr", c.t.masterAddr).Dur("retryIn", wait).Msg("autoswitch link to master down")
		}
		backoff = min(max(2*wait, backoffMin), backoffMax)
		if wait > 0 {
			tm := time.NewTimer(wait)
			select {
			case <-c.t.done:
				tm.Stop()
				return
			case <-s.quit:
				tm.Stop()
				return
			case <-tm.C:
			}
		}
	}
}

// follow runs one connection until it fails; read reports whether a
// transfer frame arrived.
func (c *client) follow(ctx context.Context) (read bool, err error) {
	s := c.s
	d := net.Dialer{Timeout: dialTimeout}
	conn, err := d.DialContext(ctx, "tcp", c.t.masterAddr)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	c.link = conn
	c.mu.Unlock()
	select {
	case <-c.t.done: // the term ended during the dial: closeLink missed it
		_ = conn.Close()
	default:
	}
	defer func() {
		c.mu.Lock()
		c.link = nil
		c.mu.Unlock()
		_ = conn.Close()
	}()
	if len(s.cfg.AuthSecret) > 0 {
		if err := ha.Answer(conn, s.cfg.AuthSecret); err != nil {
			return false, err
		}
	}
	idle := s.cfg.HAHousekeepingInterval
	r := &reporter{c: conn, idle: idle}
	if err := r.write(AppendSlaveHandshake(nil, s.cfg.SyncFromLastFile, s.cfg.AsyncLearner, c.t.self)); err != nil {
		return false, fmt.Errorf("send handshake: %w", err)
	}
	if c.buf == nil {
		c.buf = make([]byte, slaveReadBuffer)
	}
	fr := &frameReader{c: conn, buf: c.buf, idle: idle}
	hs, err := fr.next()
	if err != nil {
		return false, fmt.Errorf("read handshake: %w", err)
	}
	if hs.State != StateHandshake {
		return false, &errRefused{fmt.Errorf("master answered the handshake in state %v: %w", hs.State, ErrFrame)}
	}
	c.connected.Store(true)
	c.lastRead.Store(time.Now().UnixMilli())
	if err := c.truncate(hs); err != nil {
		return false, &errRefused{err}
	}
	reported := s.st.MaxPhyOffset()
	if err := r.report(reported); err != nil {
		return false, err
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); c.heartbeat(r, stop) }()
	defer func() {
		_ = conn.Close() // first: a heartbeat blocked in a write ends now
		close(stop)
		wg.Wait()
	}()

	recv := NewReceiver(s.epochs)
	for {
		f, err := fr.next()
		if err != nil {
			return read, err
		}
		c.lastRead.Store(time.Now().UnixMilli())
		if f.State != StateTransfer {
			return read, &errRefused{fmt.Errorf("master sent a frame in state %v during transfer: %w", f.State, ErrFrame)}
		}
		read = true
		local := s.st.MaxPhyOffset()
		if err := recv.Accept(f, local); err != nil {
			return read, &errRefused{err}
		}
		if len(f.Body) > 0 {
			if err := s.st.AppendReplica(f.Offset, f.Body); err != nil {
				return read, &errRefused{fmt.Errorf("append at %d: %w", f.Offset, err)}
			}
		}
		local = s.st.MaxPhyOffset()
		s.st.SetConfirmOffset(Confirm(f, local))
		if local > reported {
			reported = local
			if err := r.report(local); err != nil {
				return read, err
			}
		}
	}
}

// truncate cuts the store and the epoch file at the consistent point with
// the master's handshake (Apache's doTruncate).
func (c *client) truncate(hs MasterFrame) error {
	s := c.s
	local := s.st.MaxPhyOffset()
	tr, err := TruncatePoint(s.epochs.All(), local, hs)
	if err != nil || !tr.Truncate {
		return err
	}
	if tr.Offset < local {
		if err := s.st.TruncateReplica(tr.Offset); err != nil {
			return fmt.Errorf("truncate to the consistent point %d: %w", tr.Offset, err)
		}
	}
	if err := s.epochs.TruncateFromEpoch(tr.Epoch + 1); err != nil {
		return fmt.Errorf("truncate the epoch file after epoch %d: %w", tr.Epoch, err)
	}
	s.log.Info().Int64("consistentPoint", tr.Offset).Int32("consistentEpoch", tr.Epoch).Int64("previousMaxOffset", local).
		Int64("masterMaxOffset", hs.MaxOffset).Msg("autoswitch slave truncated to the consistent point")
	return nil
}

// heartbeat reports the local end every haSendHeartbeatInterval (the
// master closes a silent slave after haHousekeepingInterval).
func (c *client) heartbeat(r *reporter, stop chan struct{}) {
	tk := time.NewTicker(c.s.cfg.HASendHeartbeatInterval)
	defer tk.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tk.C:
			if r.report(c.s.st.MaxPhyOffset()) != nil {
				_ = r.c.Close() // the reader sees it and reconnects
				return
			}
		}
	}
}

// reporter writes the slave's frames; the reader and the heartbeat share
// it.
type reporter struct {
	mu   sync.Mutex
	c    net.Conn
	idle time.Duration
	buf  [SlaveHandshakeSize]byte
}

func (r *reporter) report(off int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.writeLocked(AppendSlaveReport(r.buf[:0], off))
}

func (r *reporter) write(b []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.writeLocked(b)
}

func (r *reporter) writeLocked(b []byte) error {
	if err := r.c.SetWriteDeadline(time.Now().Add(r.idle)); err != nil {
		return err
	}
	_, err := r.c.Write(b)
	return err
}

// frameReader reads master frames into one buffer; a frame's Body is
// valid until the next call.
type frameReader struct {
	c          net.Conn
	buf        []byte
	idle       time.Duration
	start, end int // unparsed bytes: buf[start:end]
}

func (fr *frameReader) next() (MasterFrame, error) {
	for {
		f, n, err := ParseMasterFrame(fr.buf[fr.start:fr.end], len(fr.buf)-MasterTransferHeaderLen)
		if err != nil {
			return f, &errRefused{err}
		}
		if n > 0 {
			fr.start += n
			return f, nil
		}
		if fr.start > 0 && (fr.end == len(fr.buf) || fr.start == fr.end) {
			fr.end = copy(fr.buf, fr.buf[fr.start:fr.end])
			fr.start = 0
		}
		if err := fr.c.SetReadDeadline(time.Now().Add(fr.idle)); err != nil {
			return f, err
		}
		k, err := fr.c.Read(fr.buf[fr.end:])
		fr.end += k
		if err != nil {
			if errors.Is(err, io.EOF) {
				return f, fmt.Errorf("master closed the connection: %w", err)
			}
			return f, err
		}
	}
}
