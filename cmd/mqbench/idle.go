package main

// Idle clients: -c connections that each send one request when they open
// and then one every -hb, as an idle client keeps its connection: a
// HEART_BEAT (34) naming a producer group to a broker (-broker), a
// GET_ROUTEINFO_BY_TOPIC (105) of -t to a name server (-n). They hold no
// window and no large buffers, so ten thousand of them cost the client
// little; what they cost the server is what is measured (with the server's
// RSS before and after, and the p99 of a load run beside them).
//
// Prints "IDLE open=N failed=F ms=T" once every connection has opened and
// had its first answer, and "IDLE alive=N closed=C" at the end (-d, or
// SIGINT/SIGTERM): connections the server closed meanwhile.

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/internal/adminclient"
	"github.com/rocketgo/rocketgo/remoting"
)

type idleConn struct {
	nc  net.Conn
	br  *bufio.Reader
	req []byte
}

// heartbeatBody is a HeartbeatData naming one producer group, as an idle
// producer sends it (the JSON Apache's clients send; no consumers).
func heartbeatBody(clientID, group string) []byte {
	b := []byte(`{"clientID":`)
	b = appendJSONString(b, clientID)
	b = append(b, `,"consumerDataSet":[],"producerDataSet":[{"groupName":`...)
	b = appendJSONString(b, group)
	return append(b, `}]}`...)
}

// idleRequest is the frame an idle connection sends: a heartbeat to a
// broker, a route query to a name server.
func idleRequest(o *options, i int, broker bool) []byte {
	w := reqWriter{ser: o.ser}
	if broker {
		w.begin(remoting.HeartBeat, int32(i))
		w.end(heartbeatBody(fmt.Sprintf("127.0.0.1@mqbench_idle_%d_%d", os.Getpid(), i), o.group))
	} else {
		w.begin(remoting.GetRouteInfoByTopic, int32(i))
		w.strS("topic", o.topic)
		w.end()
	}
	return w.buf
}

// roundTrip writes the connection's request and reads one answer, which
// must be a response (a refusal counts too: the server kept the connection).
func (c *idleConn) roundTrip(timeout time.Duration) error {
	_ = c.nc.SetDeadline(time.Now().Add(timeout)) // a deadline error surfaces in Write or Read
	if _, err := c.nc.Write(c.req); err != nil {
		return err
	}
	var lp [4]byte
	if _, err := io.ReadFull(c.br, lp[:]); err != nil {
		return err
	}
	n := int(int32(binary.BigEndian.Uint32(lp[:])))
	if n < 4 || n > remoting.MaxFrameLength {
		return fmt.Errorf("frame length %d", n)
	}
	frame := make([]byte, n)
	if _, err := io.ReadFull(c.br, frame); err != nil {
		return err
	}
	var r resp
	if err := scanFrame(frame, &r); err != nil {
		return err
	}
	if r.flag&remoting.FlagResponse == 0 {
		return fmt.Errorf("request code %d from the server", r.code)
	}
	return nil
}

// alive reports whether the server still holds the connection: a read
// that times out finds it open, EOF or a reset closed.
func (c *idleConn) alive() bool {
	_ = c.nc.SetReadDeadline(time.Now().Add(time.Millisecond)) // the timeout is the expected outcome
	_, err := c.br.Peek(1)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return true
	}
	return err == nil
}

func runIdle(o *options, a *adminclient.Client, out io.Writer, stop <-chan struct{}) error {
	addr, broker := o.broker, true
	if addr == "" {
		if len(a.NameServers) == 0 {
			return fmt.Errorf("idle: need -broker or -n")
		}
		addr, broker = a.NameServers[0], false
	}
	fmt.Fprintf(out, "# mqbench idle addr=%s broker=%v conns=%d heartbeat=%s\n", addr, broker, o.conns, o.heartbeat)
	start := time.Now()
	conns := make([]*idleConn, o.conns)
	var failed atomic.Int64
	var firstErr error
	var errOnce sync.Once // the failures' errors have several types: no atomic.Value
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err == nil {
				c := &idleConn{nc: nc, br: bufio.NewReaderSize(nc, 512), req: idleRequest(o, i, broker)}
				if err = c.roundTrip(5 * time.Second); err == nil {
					conns[i] = c
					return
				}
				nc.Close()
			}
			failed.Add(1)
			errOnce.Do(func() { firstErr = err })
		}()
	}
	wg.Wait()
	fmt.Fprintf(out, "IDLE open=%d failed=%d ms=%.0f\n", int64(o.conns)-failed.Load(), failed.Load(), float64(time.Since(start))/1e6)
	if firstErr != nil {
		fmt.Fprintf(out, "# first failure: %v\n", firstErr)
	}
	done := deadline(stop, o.duration, nil)
	if o.heartbeat > 0 && len(conns) > 0 {
		heartbeats(conns, o.heartbeat, done)
	}
	<-done
	alive := 0
	for _, c := range conns {
		if c != nil && c.alive() {
			alive++
		}
		if c != nil {
			c.nc.Close()
		}
	}
	fmt.Fprintf(out, "IDLE alive=%d closed=%d\n", alive, int64(o.conns)-failed.Load()-int64(alive))
	return nil
}

// heartbeats sends every open connection's request again once per every,
// spread evenly over the interval, until done closes. Connections whose
// round trip fails are closed and left out from then on.
func heartbeats(conns []*idleConn, every time.Duration, done <-chan struct{}) {
	step := every / time.Duration(max(len(conns), 1))
	tk := time.NewTicker(max(step, time.Millisecond))
	defer tk.Stop()
	// A tick of a millisecond covers several connections when there are
	// more than every/1ms of them.
	perTick := max(int(time.Millisecond/max(step, 1)), 1)
	for i := 0; ; {
		select {
		case <-done:
			return
		case <-tk.C:
		}
		for n := 0; n < perTick; n, i = n+1, (i+1)%len(conns) {
			if c := conns[i]; c != nil {
				if err := c.roundTrip(5 * time.Second); err != nil {
					c.nc.Close()
					conns[i] = nil
				}
			}
		}
	}
}
