package ha

import (
	"errors"
	"net"
	"time"

	"github.com/rocketgo/rocketgo/store"
)

// The master's half of replication that classic and AutoSwitch HA share:
// a loop that ships the commit log from a cursor straight from the mapped
// files, sleeps until the store's next append, sends a heartbeat frame
// after a quiet interval, and gives up on a slave that fell below the
// first file; and the writer of one frame. What a frame looks like, and
// what may be sent when, is the protocol's (the hooks of Transfer).

// Transfer is one slave connection's shipping loop. Run calls its hooks
// on its own goroutine only.
type Transfer struct {
	Store *store.Store
	Beat  time.Duration   // a heartbeat frame after this long without one
	Done  <-chan struct{} // closed when the connection ends
	// Batch is how many bytes the next frame may carry, or 0 and how long
	// to wait until some may (flow control); nil: Size.
	Batch func() (int, time.Duration)
	Size  int // haTransferBatchSize
	// Send writes a frame of a prefix of b, the bytes at cursor, and
	// returns its length; 0 with a wait when nothing can be sent now (the
	// bytes are read again after it). A non-empty why ends the loop.
	Send func(cursor int64, b []byte) (n int, wait time.Duration, why string)
	// Heartbeat writes an empty frame at cursor.
	Heartbeat func(cursor int64) (why string)
	// CaughtUp is called when nothing is left to send (optional).
	CaughtUp func(cursor int64)
	// Behind is called when cursor is below the store's first file (the
	// files were deleted under a slow slave): the loop ends with why.
	Behind func(cursor int64) (why string)
	// Close ends the connection with why.
	Close func(why string)
}

// Run ships from cursor until Done or a hook's why.
func (t *Transfer) Run(cursor int64) {
	wake := make(chan struct{}, 1) // signalled by the store's next append
	timer := time.NewTimer(t.Beat)
	defer timer.Stop()
	for {
		batch := t.Size
		if t.Batch != nil {
			var wait time.Duration
			if batch, wait = t.Batch(); batch <= 0 {
				if !t.sleep(wait) {
					return
				}
				continue
			}
		}
		sp, ok := t.Store.ReadReplica(cursor, batch)
		if ok {
			n, wait, why := t.Send(cursor, sp.Bytes)
			sp.Release()
			switch {
			case why != "":
				t.Close(why)
				return
			case n == 0:
				if !t.sleep(wait) {
					return
				}
				continue
			}
			cursor += int64(n)
			timer.Reset(t.Beat)
			continue
		}
		// Not "below the end": a put between the read and this look
		// would close a healthy slave.
		if cursor < t.Store.MinPhyOffset() {
			t.Close(t.Behind(cursor))
			return
		}
		if t.CaughtUp != nil {
			t.CaughtUp(cursor)
		}
		select {
		case <-wake: // stale or not: look again
		default:
		}
		if t.Store.NotifyAppended(cursor, wake) {
			continue
		}
		select {
		case <-t.Done:
			return
		case <-wake:
		case <-timer.C:
			if why := t.Heartbeat(cursor); why != "" {
				t.Close(why)
				return
			}
			timer.Reset(t.Beat)
		}
	}
}

func (t *Transfer) sleep(d time.Duration) bool {
	select {
	case <-t.Done:
		return false
	case <-time.After(d):
		return true
	}
}

// FrameWriter writes frames of a header and a body in one writev, each
// with a deadline; a frame allocates nothing.
type FrameWriter struct {
	Conn net.Conn
	Idle time.Duration // haHousekeepingInterval: a write blocked this long closes
	iov  [2][]byte
	bufs net.Buffers
}

// ErrBlocked is a write the slave did not take within Idle.
var ErrBlocked = errors.New("write blocked for haHousekeepingInterval")

// Write writes hdr and body (may be empty).
func (w *FrameWriter) Write(hdr, body []byte) error {
	if err := w.Conn.SetWriteDeadline(time.Now().Add(w.Idle)); err != nil {
		return err
	}
	w.iov[0], w.iov[1] = hdr, body
	w.bufs = w.iov[:1]
	if len(body) > 0 {
		w.bufs = w.iov[:2]
	}
	_, err := w.bufs.WriteTo(w.Conn)
	w.iov[0], w.iov[1] = nil, nil // the mapping is released after this
	if err == nil {
		return nil
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return ErrBlocked
	}
	return err
}

// Why is the reason a connection closes for a frame write's error; "" for
// nil.
func Why(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrBlocked):
		return err.Error()
	}
	return "write: " + err.Error()
}
