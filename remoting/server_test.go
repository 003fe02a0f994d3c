package remoting

import (
	"bytes"
	"context"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

const (
	codeEcho  int32 = 1
	codeLate  int32 = 2
	codePanic int32 = 3
	codeBig   int32 = 4 // late answer with a large, released body
	codePark  int32 = 5 // parked until the test wakes it (a long-polling pull), then a 200 KiB answer
)

type testHandler struct {
	closed   atomic.Int32
	released atomic.Int32
	mu       sync.Mutex
	kept     map[int32]string // echo values kept past their request, by opaque
	parked   []parked
}

type parked struct {
	c    *Conn
	resp *Command
}

// wakeParked answers every parked request from other goroutines.
func (h *testHandler) wakeParked() {
	h.mu.Lock()
	ps := h.parked
	h.parked = nil
	h.mu.Unlock()
	for _, p := range ps {
		go p.c.Reply(p.resp)
	}
}

func (h *testHandler) parkedCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.parked)
}

func (h *testHandler) Serve(c *Conn, req *Command) *Command {
	switch req.Code {
	case codeEcho:
		h.mu.Lock()
		if h.kept == nil {
			h.kept = map[int32]string{}
		}
		h.kept[req.Opaque] = req.Str("v") // a handler may keep header strings
		h.mu.Unlock()
		resp := NewResponse(req, Success, "")
		resp.Set("echo", req.Str("v"))
		resp.Body = req.Body
		return resp
	case codeLate:
		resp := NewResponse(req, Success, "late") // req is recycled when Serve returns
		go func() {                               // parked, answered from another goroutine
			time.Sleep(20 * time.Millisecond)
			c.Reply(resp)
		}()
		return nil
	case codePanic:
		panic("boom")
	case codePark:
		resp := NewResponse(req, Success, "")
		resp.Body = bytes.Repeat([]byte{'p'}, 200<<10)
		h.mu.Lock()
		h.parked = append(h.parked, parked{c, resp})
		h.mu.Unlock()
		return nil
	case codeBig:
		resp := NewResponse(req, Success, "")
		resp.Body = bytes.Repeat([]byte{'x'}, 200<<10)
		if n, _ := req.Int64("vec"); n > 0 { // the same length in four pieces a, b, c, d
			resp.Body = nil
			for _, b := range "abcd" {
				resp.BodyVec = append(resp.BodyVec, bytes.Repeat([]byte{byte(b)}, int(n)))
			}
		}
		resp.ReleaseBody = func() { h.released.Add(1) }
		if req.Str("late") == "" {
			return resp
		}
		go c.Reply(resp)
		return nil
	}
	return NewResponse(req, RequestCodeNotSupported, "unknown")
}

func startServer(t *testing.T) (*Server, *testHandler) {
	t.Helper()
	h := &testHandler{}
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", NumEventLoop: 2, OnClose: func(*Conn) { h.closed.Add(1) }}, h, testutil.Logger())
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return s, h
}

func TestServerRoundTrip(t *testing.T) {
	s, h := startServer(t)
	cl := NewClient(testutil.Logger())
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, ser := range []SerializeType{JSON, RocketMQ} {
		req := NewRequest(codeEcho, map[string]string{"v": "x\x01y"}, []byte("body"))
		req.Serialize = ser
		resp, err := cl.Invoke(ctx, s.Addr(), req)
		if err != nil {
			t.Fatal(err)
		}
		if !resp.IsResponse() || resp.Opaque != req.Opaque || resp.Serialize != ser ||
			resp.Str("echo") != "x\x01y" || string(resp.Body) != "body" {
			t.Fatalf("%v: bad response %+v", ser, resp)
		}
	}
	resp, err := cl.Invoke(ctx, s.Addr(), NewRequest(codeLate, nil, nil))
	if err != nil || resp.Remark != "late" {
		t.Fatalf("late reply: %+v %v", resp, err)
	}
	released := int32(0)
	for _, late := range []string{"", "yes"} {
		resp, err := cl.Invoke(ctx, s.Addr(), NewRequest(codeBig, map[string]string{"late": late}, nil))
		if err != nil || len(resp.Body) != 200<<10 || resp.Body[len(resp.Body)-1] != 'x' {
			t.Fatalf("big body (late=%q): %v", late, err)
		}
		released++
		testutil.WaitFor(t, 5*time.Second, func() bool { return h.released.Load() == released })
		// A body in pieces, small (copied into the frame) and large (writev).
		for _, n := range []int{10, 50 << 10} {
			resp, err := cl.Invoke(ctx, s.Addr(), NewRequest(codeBig, map[string]string{"late": late, "vec": strconv.Itoa(n)}, nil))
			want := bytes.Repeat([]byte{'a'}, n)
			want = append(append(append(want, bytes.Repeat([]byte{'b'}, n)...), bytes.Repeat([]byte{'c'}, n)...), bytes.Repeat([]byte{'d'}, n)...)
			if err != nil || !bytes.Equal(resp.Body, want) {
				t.Fatalf("body in pieces of %d (late=%q): %d bytes, %v", n, late, len(resp.Body), err)
			}
			released++
			testutil.WaitFor(t, 5*time.Second, func() bool { return h.released.Load() == released })
		}
	}
	resp, err = cl.Invoke(ctx, s.Addr(), NewRequest(codePanic, nil, nil))
	if err != nil || resp.Code != SystemError {
		t.Fatalf("panicking handler: %+v %v", resp, err)
	}
	resp, err = cl.Invoke(ctx, s.Addr(), NewRequest(codeEcho, map[string]string{"v": "still up"}, nil))
	if err != nil || resp.Str("echo") != "still up" {
		t.Fatalf("after panic: %+v %v", resp, err)
	}
}

func TestServerPipelinedAndSplitFrames(t *testing.T) {
	s, h := startServer(t)
	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var out []byte
	// 50 values of ~1 KiB (with an escape in JSON) fill several header text arenas.
	value := func(i int32) string { return strings.Repeat(strconv.Itoa(int(i)), 400) + "\x01" }
	for i := int32(0); i < 50; i++ {
		out = AppendFrame(out, &Command{Code: codeEcho, Opaque: i, Serialize: SerializeType(i % 2),
			ExtFields: Fields(map[string]string{"v": value(i)})})
	}
	// Dribble the bytes so frames straddle reads.
	for i := 0; i < len(out); i += 7 {
		if _, err := nc.Write(out[i:min(i+7, len(out))]); err != nil {
			t.Fatal(err)
		}
	}
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	seen := map[int32]bool{}
	for len(seen) < 50 {
		resp := readFrame(t, nc)
		if resp.Str("echo") != value(resp.Opaque) {
			t.Fatalf("bad response %+v", resp)
		}
		seen[resp.Opaque] = true
	}
	// Every kept string is intact after its request was recycled.
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := int32(0); i < 50; i++ {
		if h.kept[i] != value(i) {
			t.Fatalf("kept value %d changed: %.40q", i, h.kept[i])
		}
	}
}

func readFrame(t *testing.T, r io.Reader) *Command {
	t.Helper()
	c, err := ReadFrame(r)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestServerClosesOnGarbage(t *testing.T) {
	s, h := startServer(t)
	for name, garbage := range map[string][]byte{
		"oversize":   {0x7f, 0xff, 0xff, 0xff},
		"too short":  {0, 0, 0, 2, 0, 0},
		"bad header": append([]byte{0, 0, 0, 8, 0, 0, 0, 4}, "{{{{"...),
	} {
		nc, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := nc.Write(garbage); err != nil {
			t.Fatal(err)
		}
		_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := nc.Read(make([]byte, 1)); err == nil {
			t.Errorf("%s: read %d bytes, want the connection closed", name, n)
		} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("%s: connection left open", name)
		}
		nc.Close()
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { return h.closed.Load() == 3 })
}

func TestMain(m *testing.M) { testutil.VerifyNoLeaks(m) }

// TestServerWithoutTmpDir: with TMPDIR missing (a container built from
// scratch has no /tmp) the engine's private socket goes elsewhere and the
// server starts. Its abstract-socket fallback once failed: gnet reads
// "unix://@name" as the relative path "name".
func TestServerWithoutTmpDir(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	s, _ := startServer(t)
	cl := NewClient(testutil.Logger())
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if resp, err := cl.Invoke(ctx, s.Addr(), NewRequest(codeEcho, map[string]string{"v": "x"}, nil)); err != nil || resp.Str("echo") != "x" {
		t.Fatalf("echo without TMPDIR: %v %+v", err, resp)
	}
}
