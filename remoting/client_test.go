package remoting

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rs/zerolog"
)

// answerServer answers every request on a fresh 127.0.0.1 port with
// SUCCESS, until the test ends.
func answerServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return answerOn(t, ln)
}

// answerOn answers every request on ln with SUCCESS, until the test ends.
func answerOn(t *testing.T, ln net.Listener) string {
	t.Helper()
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	var conns sync.Map
	t.Cleanup(func() {
		conns.Range(func(k, _ any) bool { k.(net.Conn).Close(); return true })
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Store(c, nil)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				for {
					req, err := ReadFrame(c)
					if err != nil {
						return
					}
					if _, err := c.Write(AppendFrame(nil, NewResponse(req, 0, ""))); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// A dial that hangs (a dead name server: SYN unanswered until the dial
// timeout) does not hold up requests to other addresses; callers for the
// hung address wait for it and hear its failure.
func TestClientDialDoesNotBlockOthers(t *testing.T) {
	good := answerServer(t)
	const dead = "192.0.2.1:9876" // TEST-NET-1: never dialled for real here
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	var deadDials atomic.Int32
	cl := NewClient(testutil.Logger())
	real := cl.dial
	cl.dial = func(ctx context.Context, addr string) (net.Conn, error) {
		if addr != dead {
			return real(ctx, addr)
		}
		deadDials.Add(1)
		entered <- struct{}{}
		<-release
		return nil, errors.New("no route to host")
	}

	deadErr := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := cl.Invoke(context.Background(), dead, NewRequest(105, nil, nil))
			deadErr <- err
		}()
	}
	<-entered // the dial to dead is in progress (and stays so until release)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range 3 {
		resp, err := cl.Invoke(ctx, good, NewRequest(105, nil, nil))
		if err != nil || resp.Code != 0 {
			t.Fatalf("request to a live address while another dials: %v %v", resp, err)
		}
	}
	select {
	case err := <-deadErr:
		t.Fatalf("a caller for the dead address returned before its dial ended: %v", err)
	default:
	}

	close(release)
	for range 2 {
		if err := <-deadErr; err == nil {
			t.Fatal("request to the dead address succeeded")
		}
	}
	if n := deadDials.Load(); n != 1 && n != 2 {
		t.Fatalf("%d dials for one address", n)
	}
	if err := cl.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Invoke(ctx, good, NewRequest(105, nil, nil)); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("invoke after Close: %v", err)
	}
}

// Close during a dial: the connection dialled is closed, not kept.
func TestClientCloseDuringDial(t *testing.T) {
	good := answerServer(t)
	cl := NewClient(testutil.Logger())
	real := cl.dial
	entered, release := make(chan struct{}), make(chan struct{})
	cl.dial = func(ctx context.Context, addr string) (net.Conn, error) {
		close(entered)
		<-release
		return real(ctx, addr)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := cl.Invoke(context.Background(), good, NewRequest(105, nil, nil))
		errc <- err
	}()
	<-entered
	if err := cl.Close(); err != nil { // does not wait for the dial
		t.Fatal(err)
	}
	close(release)
	if err := <-errc; !errors.Is(err, ErrConnClosed) {
		t.Fatalf("invoke across Close: %v", err)
	}
	cl.mu.Lock()
	n := len(cl.conns)
	cl.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d connections kept after Close", n)
	}
}

// A peer that stops reading holds the wire of the first call that fills
// its socket buffers; a second call gives up with its own context instead
// of queueing behind that write.
func TestClientWriteWaitEndsWithContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c // never read
		}
	}()
	cl := NewClient(zerolog.Nop())
	defer cl.Close()
	big := NewRequest(10, nil, make([]byte, 64<<20)) // more than both socket buffers
	first := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		first <- cl.InvokeOneway(ctx, ln.Addr().String(), big)
	}()
	peer := <-accepted
	defer peer.Close()
	testutil.WaitFor(t, 10*time.Second, func() bool { // the first call holds the wire
		cl.mu.Lock()
		defer cl.mu.Unlock()
		cc := cl.conns[ln.Addr().String()]
		return cc != nil && len(cc.wsem) == 1
	})
	time.Sleep(100 * time.Millisecond) // and is blocked in its write
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = cl.InvokeOneway(ctx, ln.Addr().String(), NewRequest(10, nil, nil))
	if took := time.Since(start); err == nil || took > 2*time.Second {
		t.Fatalf("second call: err %v after %v, want its context's error at about 300 ms", err, took)
	}
	if err := <-first; err == nil {
		t.Fatal("the first write to a peer that reads nothing succeeded")
	}
}

// A peer that stops answering without closing (a crashed host, a pod
// whose IP is gone) and comes back under the same host name elsewhere:
// with SetCloseOnTimeout the call that times out drops the connection,
// and the next call dials the name again and reaches the new address;
// without it, calls stay on the dead connection.
func TestClientTimeoutRedialsByName(t *testing.T) {
	for _, closeOnTimeout := range []bool{true, false} {
		t.Run(fmt.Sprintf("closeOnTimeout=%v", closeOnTimeout), func(t *testing.T) {
			// The old address takes connections and reads, never answers;
			// the new one, on the same port, answers.
			silent, err := net.Listen("tcp", "127.0.0.2:0")
			if err != nil {
				t.Fatal(err)
			}
			_, port, _ := net.SplitHostPort(silent.Addr().String())
			moved, err := net.Listen("tcp", "127.0.0.3:"+port)
			if err != nil {
				t.Skipf("port %s taken on 127.0.0.3: %v", port, err)
			}
			answerOn(t, moved)
			var held sync.WaitGroup
			held.Add(1)
			go func() {
				defer held.Done()
				c, err := silent.Accept()
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, c) // until the client closes it
				c.Close()
			}()
			t.Cleanup(func() {
				silent.Close()
				held.Wait()
			})
			dns := testutil.NewDNS(t)
			dns.Set("ns.rocketgo.test", "127.0.0.2")
			cl := NewClient(testutil.Logger())
			t.Cleanup(func() { _ = cl.Close() })
			if closeOnTimeout {
				cl.SetCloseOnTimeout()
			}
			d := net.Dialer{Timeout: 2 * time.Second, Resolver: dns.Resolver()}
			cl.dial = func(ctx context.Context, addr string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }
			addr := net.JoinHostPort("ns.rocketgo.test", port)
			invoke := func(timeout time.Duration) error {
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				defer cancel()
				_, err := cl.Invoke(ctx, addr, NewRequest(105, nil, nil))
				return err
			}
			if err := invoke(300 * time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("the silent peer: %v", err)
			}
			dns.Set("ns.rocketgo.test", "127.0.0.3")
			err = invoke(2 * time.Second)
			if closeOnTimeout && err != nil {
				t.Fatalf("after the timeout, the name's new address: %v", err)
			}
			if !closeOnTimeout && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("without closeOnTimeout the dead connection was left: %v", err)
			}
		})
	}
}
