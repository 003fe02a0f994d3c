package main

// pconn is one pipelined connection: the owner goroutine appends request
// frames to w.buf and flushes them in one write; a reader goroutine scans
// every response in place and hands it to handle. Requests are matched to
// responses by opaque, whose meaning belongs to the owner.

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/remoting"
)

// bigBuf is the buffer size of send and pull connections: a window of
// 4 KiB sends or of 32-message pulls in one read or write.
const bigBuf = 512 << 10

type pconn struct {
	addr    string
	nc      net.Conn
	w       reqWriter
	handle  func(r *resp) // runs on the reader goroutine; r is valid only during the call
	bufSize int

	done chan struct{} // closed when the reader exits
	once sync.Once
	err  error
}

// dialPconn connects to addr. bufSize is the read buffer's size and the
// frame buffer's first size, half of it the write buffer's: large for the
// send and pull paths, small for runs with many connections.
func dialPconn(addr string, ser remoting.SerializeType, bufSize int, handle func(*resp)) (*pconn, error) {
	nc, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true) // already the default; explicit because latency is measured
	}
	c := &pconn{addr: addr, nc: nc, handle: handle, bufSize: bufSize, done: make(chan struct{})}
	c.w.ser = ser
	c.w.buf = make([]byte, 0, bufSize/2)
	go c.readLoop()
	return c, nil
}

// flush writes the frames appended since the last flush.
func (c *pconn) flush() error {
	if len(c.w.buf) == 0 {
		return nil
	}
	_, err := c.nc.Write(c.w.buf)
	c.w.buf = c.w.buf[:0]
	if err != nil {
		c.fail(err)
		return fmt.Errorf("write to %s: %w", c.addr, err)
	}
	return nil
}

func (c *pconn) fail(err error) {
	c.once.Do(func() {
		c.err = err
		_ = c.nc.Close()
	})
}

func (c *pconn) close() {
	c.fail(net.ErrClosed)
	<-c.done
}

func (c *pconn) readLoop() {
	defer close(c.done)
	br := bufio.NewReaderSize(c.nc, c.bufSize)
	frame := make([]byte, 0, c.bufSize)
	var lp [4]byte
	var r resp
	for {
		if _, err := io.ReadFull(br, lp[:]); err != nil {
			c.fail(err)
			return
		}
		n := int(int32(binary.BigEndian.Uint32(lp[:])))
		if n < 4 || n > remoting.MaxFrameLength {
			c.fail(fmt.Errorf("frame length %d from %s", n, c.addr))
			return
		}
		if cap(frame) < n {
			frame = make([]byte, n)
		}
		frame = frame[:n]
		if _, err := io.ReadFull(br, frame); err != nil {
			c.fail(err)
			return
		}
		if err := scanFrame(frame, &r); err != nil {
			c.fail(fmt.Errorf("%w from %s", err, c.addr))
			return
		}
		if r.flag&remoting.FlagResponse == 0 {
			continue // a server-initiated request (we never register, so none expected)
		}
		c.handle(&r)
	}
}
