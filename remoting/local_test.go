package remoting

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

func newTestLocal(t *testing.T, h Handler) (*Local, *atomic.Int32) {
	t.Helper()
	var closed atomic.Int32
	l := NewLocal(h, 1<<61+1, "127.0.0.1:8081", func(c *Conn) {
		if c.ID != 1<<61+1 {
			t.Errorf("onClose got connection %d", c.ID)
		}
		closed.Add(1)
	}, testutil.Logger())
	return l, &closed
}

// TestLocalAnswers: inline and late answers, a panic, and bodies in one
// piece or four, come back copied out of the handler's pooled responses
// (the race build poisons a recycled command, so an alias would show).
func TestLocalAnswers(t *testing.T) {
	h := &testHandler{}
	l, _ := newTestLocal(t, h)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	resp, err := l.Invoke(ctx, NewRequest(codeEcho, map[string]string{"v": "x\x01y"}, []byte("body")))
	if err != nil || resp.Code != Success || resp.Str("echo") != "x\x01y" || string(resp.Body) != "body" || !resp.IsResponse() {
		t.Fatalf("echo: %v %+v", err, resp)
	}
	if resp, err = l.Invoke(ctx, NewRequest(codeLate, nil, nil)); err != nil || resp.Remark != "late" {
		t.Fatalf("late: %v %+v", err, resp)
	}
	if resp, err = l.Invoke(ctx, NewRequest(codePanic, nil, nil)); err != nil || resp.Code != SystemError {
		t.Fatalf("panic: %v %+v", err, resp)
	}
	for _, late := range []string{"", "1"} {
		resp, err = l.Invoke(ctx, NewRequest(codeBig, map[string]string{"vec": "1000", "late": late}, nil))
		want := append(append(append(bytes.Repeat([]byte{'a'}, 1000), bytes.Repeat([]byte{'b'}, 1000)...),
			bytes.Repeat([]byte{'c'}, 1000)...), bytes.Repeat([]byte{'d'}, 1000)...)
		if err != nil || !bytes.Equal(resp.Body, want) || resp.BodyVec != nil {
			t.Fatalf("vec late=%q: %v, body %d bytes", late, err, len(resp.Body))
		}
	}
	if n := h.released.Load(); n != 2 {
		t.Fatalf("bodies released %d times, want 2", n)
	}
}

// TestLocalGivesUp: a caller whose context ends stops waiting; the answer
// that comes later is dropped (and released), not delivered to the next call.
func TestLocalGivesUp(t *testing.T) {
	h := &testHandler{}
	l, _ := newTestLocal(t, h)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := l.Invoke(ctx, NewRequest(codePark, nil, nil)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("parked call: %v, want a deadline", err)
	}
	h.wakeParked()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	resp, err := l.Invoke(ctx2, NewRequest(codeEcho, map[string]string{"v": "next"}, nil))
	if err != nil || resp.Str("echo") != "next" || len(resp.Body) != 0 {
		t.Fatalf("next call: %v %+v", err, resp)
	}
	l.mu.Lock()
	n := len(l.waiting)
	l.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d callers still registered", n)
	}
}

// TestLocalSendAndClose: a request the handler sends reaches the request
// handler; the handler closing the connection drops its registrations and
// keeps the link; the owner's Close fails a waiting caller, refuses new
// calls and runs onClose once.
func TestLocalSendAndClose(t *testing.T) {
	h := &testHandler{}
	var sent atomic.Pointer[Command]
	tbl := Table{
		7: func(c *Conn, req *Command) *Command {
			if err := c.Send(NewRequest(39, map[string]string{"k": "v"}, []byte("check"))); err != nil {
				t.Errorf("send: %v", err)
			}
			return NewResponse(req, Success, "")
		},
		codePark: h.Serve,
	}
	l, closed := newTestLocal(t, tbl)
	l.SetRequestHandler(func(req *Command) { sent.Store(req) })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := l.Invoke(ctx, NewRequest(7, nil, nil)); err != nil {
		t.Fatal(err)
	}
	if r := sent.Load(); r == nil || r.Code != 39 || r.Str("k") != "v" || string(r.Body) != "check" || !r.IsOneway() {
		t.Fatalf("request sent by the handler: %+v", r)
	}

	l.Conn().Close() // the handler's side: registrations dropped, link kept
	if closed.Load() != 1 || l.Conn().Closed() {
		t.Fatalf("handler-side close: onClose ran %d times, closed=%v", closed.Load(), l.Conn().Closed())
	}
	if _, err := l.Invoke(ctx, NewRequest(7, nil, nil)); err != nil {
		t.Fatalf("call after the handler-side close: %v", err)
	}

	errc := make(chan error, 1)
	go func() {
		_, err := l.Invoke(ctx, NewRequest(codePark, nil, nil))
		errc <- err
	}()
	for h.parkedCount() == 0 {
		time.Sleep(time.Millisecond)
	}
	l.Close()
	l.Close()
	if err := <-errc; !errors.Is(err, ErrConnClosed) {
		t.Fatalf("waiting caller: %v, want ErrConnClosed", err)
	}
	h.wakeParked() // dropped: the connection is closed
	if _, err := l.Invoke(ctx, NewRequest(7, nil, nil)); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("call after Close: %v", err)
	}
	if err := l.InvokeOneway(NewRequest(7, nil, nil)); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("one-way after Close: %v", err)
	}
	if !l.Conn().Closed() || closed.Load() != 2 {
		t.Fatalf("closed=%v onClose ran %d times", l.Conn().Closed(), closed.Load())
	}
}
