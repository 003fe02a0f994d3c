package remoting

// Input a connection has sent and the server has not served yet lives in the
// connection's own buffer (Conn.in), never in gnet's: at the end of every
// OnTraffic whatever gnet read and no request consumed is taken into
// Conn.in. gnet's per-connection ring buffers grow to the largest frame they
// ever held and go back to a process-wide pool on close, where the next
// connections reuse them: 64 connections each sending all but one byte of a
// 16 MiB frame left the broker at 2.5 GB after they were gone. Conn.in is
// sized to what is actually held (doubling, never beyond the frame being
// assembled), charged to Limits.ServerInputBufferMaxBytes, and dropped as
// soon as it is empty.
//
// A frame that arrives whole within one read is copied once, from gnet's
// read buffer into the request; one that straddles reads is assembled in
// Conn.in and, when large, handed to the request without a copy.

import (
	"fmt"

	"github.com/panjf2000/gnet/v2"
)

const (
	// maxConnInput bounds one connection's held input: two maximal frames.
	maxConnInput = 2 * (MaxFrameLength + 4)
	// adoptMin: an assembled frame above it becomes the request's frame as is.
	adoptMin = 64 << 10
)

// nextHeld returns the next complete request from c.in, completing its
// frame from gnet's input if need be; nil when it is still incomplete.
func (s *Server) nextHeld(gc gnet.Conn, c *Conn) (*Command, error) {
	if err := s.fill(gc, c, 8); err != nil {
		return nil, err
	}
	held := c.in[c.inOff:]
	if len(held) < 4 {
		return nil, nil
	}
	length, err := s.checkPrefix(held[:min(len(held), 8)])
	if err != nil {
		return nil, err
	}
	size := 4 + length
	c.inFrame = size
	if len(held) < size {
		if err := s.fill(gc, c, size); err != nil {
			return nil, err
		}
		if held = c.in[c.inOff:]; len(held) < size {
			return nil, nil
		}
	}
	if c.inOff == 0 && len(c.in) == size && length > adoptMin {
		// Assembled for this frame alone: the request takes the buffer (and
		// drops it when recycled, being above the pool's size).
		req := newPooledRequest(0)
		req.frame = c.in[4:size:size]
		c.in = nil
		s.dropIn(c)
		return req, nil
	}
	req := newPooledRequest(length)
	copy(req.frame, held[4:size])
	c.inOff += size
	c.inFrame = 0
	if c.inOff == len(c.in) {
		s.dropIn(c)
	} else {
		c.inSince.Store(max(s.now(), 1)) // the next frame's time starts now
	}
	return req, nil
}

// hold takes whatever gnet still has for c into c.in: the start of a frame,
// or requests held back while c's output is above the high-water mark.
func (s *Server) hold(gc gnet.Conn, c *Conn) gnet.Action {
	n := gc.InboundBuffered()
	if n == 0 || c.closed.Load() {
		return gnet.None
	}
	if c.inOff == len(c.in) && n >= 4 {
		// A new frame: its length bounds the buffer it is assembled in.
		p, _ := gc.Peek(min(n, 8))
		length, err := s.checkPrefix(p)
		if err != nil {
			s.warn.Warn().Str("remote", c.Remote).Err(err).Msg("bad frame; closing connection")
			c.closeFor(err)
			return gnet.Close
		}
		c.inFrame = 4 + length
	}
	if err := s.take(gc, c, n); err != nil {
		s.warn.Warn().Str("remote", c.Remote).Err(err).Int64("inputBytes", s.input.Load()).
			Msg("input buffer budget exceeded; closing connection")
		c.closeFor(err)
		return gnet.Close
	}
	return gnet.None
}

// fill takes from gnet until c.in holds want unserved bytes, or gnet has
// no more.
func (s *Server) fill(gc gnet.Conn, c *Conn, want int) error {
	have := len(c.in) - c.inOff
	if have >= want {
		return nil
	}
	n := min(want-have, gc.InboundBuffered())
	if n <= 0 {
		return nil
	}
	return s.take(gc, c, n)
}

// take moves n bytes of gnet's input to the end of c.in.
func (s *Server) take(gc gnet.Conn, c *Conn, n int) error {
	if err := s.reserve(c, len(c.in)-c.inOff+n); err != nil {
		return err
	}
	at := len(c.in)
	c.in = c.in[:at+n]
	_, _ = gc.Read(c.in[at:])
	if at == c.inOff {
		c.inSince.Store(max(s.now(), 1))
	}
	return nil
}

// reserve makes room for need unserved bytes in c.in, charging any growth
// to the server's input budget.
func (s *Server) reserve(c *Conn, need int) error {
	if c.inOff > 0 {
		c.in = c.in[:copy(c.in, c.in[c.inOff:])]
		c.inOff = 0
	}
	if need <= cap(c.in) {
		return nil
	}
	if need > maxConnInput {
		return fmt.Errorf("%w: %d bytes held by one connection", ErrInputBudget, need)
	}
	grow := max(need, 2*cap(c.in), 1024)
	if c.inFrame >= need {
		grow = min(grow, c.inFrame) // never more than the frame being assembled
	}
	grow = min(grow, maxConnInput)
	delta := int64(grow - c.inCharged)
	if total := s.input.Add(delta); s.maxInput > 0 && total > s.maxInput {
		s.input.Add(-delta)
		return fmt.Errorf("%w: %d bytes more would pass serverInputBufferMaxBytes %d", ErrInputBudget, delta, s.maxInput)
	}
	buf := make([]byte, len(c.in), grow)
	copy(buf, c.in)
	c.in, c.inCharged = buf, grow
	return nil
}

// dropIn lets go of c.in and its charge.
func (s *Server) dropIn(c *Conn) {
	s.input.Add(-int64(c.inCharged))
	c.in, c.inOff, c.inFrame, c.inCharged = nil, 0, 0, 0
	c.inSince.Store(0)
}

// inputBytes is the input held across connections (tests, diagnostics).
func (s *Server) inputBytes() int64 { return s.input.Load() }
