package remoting

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

// grabHandler answers everything and hands over the connection of the
// first request.
type grabHandler struct{ conns chan *Conn }

func (h *grabHandler) Serve(c *Conn, req *Command) *Command {
	select {
	case h.conns <- c:
	default:
	}
	return NewResponse(req, Success, "")
}

// connectedClient dials a server and returns the client's socket and the
// server's Conn for it.
func connectedClient(t *testing.T) (net.Conn, *Conn) {
	t.Helper()
	h := &grabHandler{conns: make(chan *Conn, 1)}
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", NumEventLoop: 1}, h, testutil.Logger())
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	nc := dial(t, s.Addr())
	if _, err := nc.Write(AppendFrame(nil, &Command{Code: 1, Opaque: 1})); err != nil {
		t.Fatal(err)
	}
	readFrame(t, nc)
	return nc, <-h.conns
}

type callResult struct {
	resp *Command
	err  error
}

func invoke(t *testing.T, c *Conn, timeout time.Duration) chan callResult {
	t.Helper()
	ch := make(chan callResult, 1)
	if err := c.Invoke(NewRequest(307, map[string]string{"clientId": "x"}, nil), timeout,
		func(r *Command, err error) { ch <- callResult{r, err} }); err != nil {
		t.Fatal(err)
	}
	return ch
}

func wait(t *testing.T, ch chan callResult) callResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("call never ended")
		return callResult{}
	}
}

func TestInvokeAnswered(t *testing.T) {
	nc, c := connectedClient(t)
	ch := invoke(t, c, 5*time.Second)
	req := readFrame(t, nc)
	if req.Code != 307 || req.IsOneway() || req.IsResponse() || req.Str("clientId") != "x" {
		t.Fatalf("client got %+v", req)
	}
	ans := &Command{Code: 0, Opaque: req.Opaque, Flag: FlagResponse, Remark: "fine", Body: []byte("running info")}
	if _, err := nc.Write(AppendFrame(nil, ans)); err != nil {
		t.Fatal(err)
	}
	r := wait(t, ch)
	if r.err != nil || r.resp.Remark != "fine" || string(r.resp.Body) != "running info" {
		t.Fatalf("call ended with %+v, %v", r.resp, r.err)
	}
	// An answer nobody waits for (a second one, or to a one-way request) is dropped.
	if _, err := nc.Write(AppendFrame(nil, ans)); err != nil {
		t.Fatal(err)
	}
}

func TestInvokeTimeoutBoundAndClose(t *testing.T) {
	nc, c := connectedClient(t)
	if r := wait(t, invoke(t, c, 50*time.Millisecond)); !errors.Is(r.err, ErrCallTimeout) {
		t.Fatalf("unanswered call ended with %v, want ErrCallTimeout", r.err)
	}
	var pending []chan callResult
	for range maxCallsPerConn {
		pending = append(pending, invoke(t, c, time.Minute))
	}
	err := c.Invoke(NewRequest(307, nil, nil), time.Minute, func(*Command, error) { t.Error("refused call ended") })
	if !errors.Is(err, ErrTooManyCalls) {
		t.Fatalf("call past the bound: %v, want ErrTooManyCalls", err)
	}
	nc.Close()
	for _, ch := range pending {
		if r := wait(t, ch); !errors.Is(r.err, ErrConnClosed) {
			t.Fatalf("call on a closed connection ended with %v", r.err)
		}
	}
	if err := c.Invoke(NewRequest(307, nil, nil), time.Minute, nil); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("call on a closed connection: %v", err)
	}
}
