package remoting

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

// reasons records why the server closed each connection, by the client's
// local address (the server's remote).
type reasons struct {
	mu sync.Mutex
	m  map[string]error
}

func (r *reasons) record(c *Conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]error{}
	}
	r.m[c.Remote] = c.ClosedByServer()
}

// of waits until the server closed nc and returns why.
func (r *reasons) of(t *testing.T, nc net.Conn) error {
	t.Helper()
	var why error
	testutil.WaitFor(t, 10*time.Second, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		var ok bool
		why, ok = r.m[nc.LocalAddr().String()]
		return ok
	})
	return why
}

func startLimited(t *testing.T, lim Limits) (*Server, *testHandler, *reasons) {
	t.Helper()
	if err := lim.Validate(); err != nil {
		t.Fatal(err)
	}
	h, r := &testHandler{}, &reasons{}
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", NumEventLoop: 2, Limits: lim,
		OnClose: func(c *Conn) { h.closed.Add(1); r.record(c) }}, h, testutil.Logger())
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
		if s.Err() != nil {
			t.Errorf("engine error: %v", s.Err())
		}
	})
	return s, h, r
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}

// echo sends one echo request on nc and checks its answer.
func echo(t *testing.T, nc net.Conn, v string) {
	t.Helper()
	opaque := rand.Int32()
	req := &Command{Code: codeEcho, Opaque: opaque, ExtFields: []Field{{"v", v}}}
	if _, err := nc.Write(AppendFrame(nil, req)); err != nil {
		t.Fatalf("echo %q: %v", v, err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer nc.SetReadDeadline(time.Time{})
	resp := readFrame(t, nc)
	if resp.Opaque != opaque || resp.Str("echo") != v {
		t.Fatalf("echo %q: got %+v", v, resp)
	}
}

// closedByServer reads nc until the server closes it.
func closedByServer(t *testing.T, nc net.Conn, within time.Duration) {
	t.Helper()
	_ = nc.SetReadDeadline(time.Now().Add(within))
	_, err := io.Copy(io.Discard, nc)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after %v", within)
	}
}

func TestConnectionLimit(t *testing.T) {
	s, _, _ := startLimited(t, Limits{ServerMaxConnections: 3})
	var conns []net.Conn
	for i := range 3 {
		nc := dial(t, s.Addr())
		echo(t, nc, strconv.Itoa(i))
		conns = append(conns, nc)
	}
	over := dial(t, s.Addr())
	closedByServer(t, over, 10*time.Second)
	if s.refused.Load() != 1 || s.Connections() != 3 {
		t.Fatalf("refused %d, connections %d; want 1 and 3", s.refused.Load(), s.Connections())
	}
	for i, nc := range conns {
		echo(t, nc, "still served "+strconv.Itoa(i))
	}
	conns[0].Close()
	testutil.WaitFor(t, 10*time.Second, func() bool { return s.Connections() == 2 })
	echo(t, dial(t, s.Addr()), "room again")
}

// Out of descriptors at accept: the server sheds the pending connection and
// goes on serving (gnet's own acceptor stopped the engine here).
func TestAcceptOutOfDescriptors(t *testing.T) {
	s, _, _ := startLimited(t, Limits{ServerMaxConnections: 1 << 20})
	kept := dial(t, s.Addr())
	echo(t, kept, "before")
	// Start returns once the start-up probe was opened on a loop; gnet's main
	// reactor then calls accept once more on its private socket to drain it.
	// The kernel takes a descriptor before it looks at the queue, so if the
	// table is full by then that accept fails with EMFILE and gnet stops the
	// engine. Production is not exposed (the socket is unlinked and nothing
	// wakes the reactor again); this test fills the table at once, so it lets
	// the reactor settle first.
	time.Sleep(200 * time.Millisecond)

	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	low := rl
	low.Cur = uint64(len(fds) + 64)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			t.Error(err)
		}
	}()
	// Fill the descriptor table.
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			if !errors.Is(err, syscall.EMFILE) {
				t.Fatal(err)
			}
			break
		}
		files = append(files, f)
	}
	for i := range 3 {
		// One descriptor for the client's socket; none for the server's accept.
		files[len(files)-1].Close()
		files = files[:len(files)-1]
		nc, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		closedByServer(t, nc, 10*time.Second)
		nc.Close()
		testutil.WaitFor(t, 10*time.Second, func() bool { return s.shed.Load() == int64(i+1) })
		// Take back the descriptor the client's socket had.
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	select {
	case <-s.Done():
		t.Fatalf("engine stopped: %v", s.Err())
	default:
	}
	echo(t, kept, "during")
	for _, f := range files {
		f.Close()
	}
	files = nil
	echo(t, dial(t, s.Addr()), "after")
}

func TestIdleTimeout(t *testing.T) {
	s, _, why := startLimited(t, Limits{ServerChannelMaxIdleTimeSeconds: 2})
	idle := dial(t, s.Addr())
	busy := dial(t, s.Addr())
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { // a heartbeat every 100 ms keeps busy alive
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				done <- nil
				return
			case <-t.C:
				req := &Command{Code: codeEcho, Opaque: 1, ExtFields: []Field{{"v", "hb"}}}
				if _, err := busy.Write(AppendFrame(nil, req)); err != nil {
					done <- err
					return
				}
				if _, err := ReadFrame(busy); err != nil {
					done <- err
					return
				}
			}
		}
	}()
	closedByServer(t, idle, 20*time.Second)
	close(stop)
	if err := <-done; err != nil {
		t.Fatalf("busy connection: %v", err)
	}
	if err := why.of(t, idle); !errors.Is(err, ErrIdle) {
		t.Fatalf("idle connection closed for %v", err)
	}
	echo(t, busy, "alive")
}

func TestIncompleteFrameTimeout(t *testing.T) {
	s, _, why := startLimited(t, Limits{ServerIncompleteFrameTimeoutMillis: 300})
	frame := AppendFrame(nil, &Command{Code: codeEcho, ExtFields: []Field{{"v", "x"}}, Body: make([]byte, 1000)})
	for name, part := range map[string][]byte{"half a frame": frame[:len(frame)/2], "half a length": frame[:2]} {
		nc := dial(t, s.Addr())
		if _, err := nc.Write(part); err != nil {
			t.Fatal(err)
		}
		closedByServer(t, nc, 10*time.Second)
		if err := why.of(t, nc); !errors.Is(err, ErrFrameTimeout) {
			t.Fatalf("%s: closed for %v", name, err)
		}
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.inputBytes() == 0 })
	// A frame that arrives in time is served.
	nc := dial(t, s.Addr())
	if _, err := nc.Write(frame[:100]); err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Write(frame[100:]); err != nil {
		t.Fatal(err)
	}
	if resp := readFrame(t, nc); resp.Str("echo") != "x" || len(resp.Body) != 1000 {
		t.Fatalf("got %+v", resp)
	}
}

// bigEcho is an echo request whose body is n bytes of a pattern.
func bigEcho(opaque int32, n int) ([]byte, []byte) {
	body := make([]byte, n)
	for i := range body {
		body[i] = byte(i*7 + int(opaque))
	}
	return AppendFrame(nil, &Command{Code: codeEcho, Opaque: opaque, ExtFields: []Field{{"v", "big"}}, Body: body}), body
}

func TestInputBudget(t *testing.T) {
	s, _, why := startLimited(t, Limits{ServerInputBufferMaxBytes: 1 << 20})
	a, b := dial(t, s.Addr()), dial(t, s.Addr())
	frameA, bodyA := bigEcho(1, 900<<10)
	if _, err := a.Write(frameA[:600<<10]); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return s.inputBytes() >= 600<<10 })
	frameB, _ := bigEcho(2, 2<<20)
	_, _ = b.Write(frameB[:600<<10]) // may fail once the server closes b
	closedByServer(t, b, 10*time.Second)
	if err := why.of(t, b); !errors.Is(err, ErrInputBudget) {
		t.Fatalf("b closed for %v", err)
	}
	if n := s.inputBytes(); n > 1<<20 {
		t.Fatalf("input held %d bytes, budget 1 MiB", n)
	}
	// a finishes within the budget and is served.
	if _, err := a.Write(frameA[600<<10:]); err != nil {
		t.Fatal(err)
	}
	_ = a.SetReadDeadline(time.Now().Add(10 * time.Second))
	if resp := readFrame(t, a); resp.Opaque != 1 || !bytes.Equal(resp.Body, bodyA) {
		t.Fatalf("a: bad answer, %d body bytes", len(resp.Body))
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.inputBytes() == 0 })
}

// Frames of every size, pipelined, written in random pieces: each is
// assembled and served, and no input stays held afterwards.
func TestFramesInPieces(t *testing.T) {
	s, _, _ := startLimited(t, DefaultLimits())
	nc := dial(t, s.Addr())
	sizes := []int{0, 10, 1000, 70 << 10, 300 << 10, 5 << 20, 17, 64<<10 + 1, 1 << 20}
	var stream []byte
	bodies := map[int32][]byte{}
	for i, n := range sizes {
		f, body := bigEcho(int32(i), n)
		bodies[int32(i)] = body
		stream = append(stream, f...)
	}
	go func() {
		r := rand.New(rand.NewPCG(1, 2))
		for len(stream) > 0 {
			n := min(len(stream), 1+r.IntN(400<<10))
			if _, err := nc.Write(stream[:n]); err != nil {
				return
			}
			stream = stream[n:]
		}
	}()
	_ = nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	for range sizes {
		resp := readFrame(t, nc)
		if !bytes.Equal(resp.Body, bodies[resp.Opaque]) && !(len(resp.Body) == 0 && len(bodies[resp.Opaque]) == 0) {
			t.Fatalf("frame %d: body of %d bytes differs", resp.Opaque, len(resp.Body))
		}
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.inputBytes() == 0 })
}

// pipelineBig writes n requests for 200 KiB answers without reading any.
func pipelineBig(t *testing.T, nc net.Conn, n int) {
	t.Helper()
	var out []byte
	for i := range n {
		out = AppendFrame(out, &Command{Code: codeBig, Opaque: int32(i)})
	}
	if _, err := nc.Write(out); err != nil {
		t.Fatal(err)
	}
}

func dialSmall(t *testing.T, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, 4<<10) })
		return errors.Join(err, serr)
	}}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}

// A client that does not read its answers stops being served above the
// high-water mark, its requests wait, and it is served again once it reads.
func TestBackpressure(t *testing.T) {
	s, h, _ := startLimited(t, Limits{WriteBufferHighWaterMark: 1 << 20, WriteBufferLowWaterMark: 512 << 10})
	nc := dialSmall(t, s.Addr())
	const n = 200
	pipelineBig(t, nc, n)
	// Served until the output passed the mark, then paused: the rest waits
	// in the connection's input.
	testutil.WaitFor(t, 10*time.Second, func() bool { return s.inputBytes() > 0 })
	paused := h.released.Load()
	if paused >= n {
		t.Fatalf("all %d requests served without reading", paused)
	}
	seen := map[int32]bool{}
	_ = nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	for len(seen) < n {
		resp := readFrame(t, nc)
		if len(resp.Body) != 200<<10 {
			t.Fatalf("answer %d: %d body bytes", resp.Opaque, len(resp.Body))
		}
		seen[resp.Opaque] = true
	}
	t.Logf("served %d of %d before the client read", paused, n)
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.inputBytes() == 0 })
}

func TestSlowConsumer(t *testing.T) {
	s, _, why := startLimited(t, Limits{WriteBufferHighWaterMark: 1 << 20, ServerSlowConsumerTimeoutMillis: 300})
	nc := dialSmall(t, s.Addr())
	pipelineBig(t, nc, 200)
	testutil.WaitFor(t, 20*time.Second, func() bool { return s.Connections() == 0 })
	if err := why.of(t, nc); !errors.Is(err, ErrSlowConsumer) {
		t.Fatalf("closed for %v", err)
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.inputBytes() == 0 })
	echo(t, dial(t, s.Addr()), "others are served")
}

// Late answers are not held back by pausing the input: 100 parked requests
// (long-polling pulls) answered at once with 200 KiB each put the output
// beyond four times the high-water mark, which cuts the connection at once.
func TestLateAnswersOverHardLimit(t *testing.T) {
	s, h, why := startLimited(t, Limits{WriteBufferHighWaterMark: 256 << 10})
	nc := dialSmall(t, s.Addr())
	var out []byte
	for i := range 100 {
		out = AppendFrame(out, &Command{Code: codePark, Opaque: int32(i)})
	}
	if _, err := nc.Write(out); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return h.parkedCount() == 100 })
	h.wakeParked()
	testutil.WaitFor(t, 20*time.Second, func() bool { return s.Connections() == 0 })
	if err := why.of(t, nc); !errors.Is(err, ErrSlowConsumer) {
		t.Fatalf("closed for %v", err)
	}
}

func TestHeaderLimits(t *testing.T) {
	s, _, why := startLimited(t, Limits{ServerMaxHeaderBytes: 64 << 10, ServerMaxHeaderFields: 16})

	t.Run("header too large closes before it is read", func(t *testing.T) {
		nc := dial(t, s.Addr())
		huge := binary.BigEndian.AppendUint32(nil, 4+1<<20)
		huge = binary.BigEndian.AppendUint32(huge, 1<<20)
		if _, err := nc.Write(append(huge, `{"code":1,"extFields":{`...)); err != nil {
			t.Fatal(err)
		}
		closedByServer(t, nc, 10*time.Second)
		if err := why.of(t, nc); !errors.Is(err, ErrHeaderTooLarge) {
			t.Fatalf("closed for %v", err)
		}
	})

	t.Run("too many fields answered", func(t *testing.T) {
		nc := dial(t, s.Addr())
		for _, ser := range []SerializeType{JSON, RocketMQ} {
			var fields []Field
			for i := range 100 {
				fields = append(fields, Field{"k" + strconv.Itoa(i), "v"})
			}
			// Opaque after extFields, as fastjson writes it: found all the same.
			req := &Command{Code: codeEcho, Opaque: 4242, ExtFields: fields, Serialize: ser}
			if _, err := nc.Write(AppendFrame(nil, req)); err != nil {
				t.Fatal(err)
			}
			_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp := readFrame(t, nc)
			if resp.Code != SystemError || resp.Opaque != 4242 || resp.Serialize != ser || !resp.IsResponse() {
				t.Fatalf("%v: got %+v", ser, resp)
			}
		}
		// A one-way one gets no answer; the connection goes on.
		var fields []Field
		for i := range 100 {
			fields = append(fields, Field{"k" + strconv.Itoa(i), "v"})
		}
		if _, err := nc.Write(AppendFrame(nil, &Command{Code: codeEcho, Flag: FlagOneway, ExtFields: fields})); err != nil {
			t.Fatal(err)
		}
		echo(t, nc, "still served")
	})

	t.Run("largest legitimate header", func(t *testing.T) {
		// 16 fields, one of 8 KiB of properties full of separators.
		var props bytes.Buffer
		for props.Len() < 8<<10 {
			fmt.Fprintf(&props, "k%d\x01v%d\x02", props.Len(), props.Len())
		}
		fields := []Field{{"v", props.String()}}
		for i := range 15 {
			fields = append(fields, Field{"f" + strconv.Itoa(i), "x"})
		}
		nc := dial(t, s.Addr())
		for _, ser := range []SerializeType{JSON, RocketMQ} {
			req := &Command{Code: codeEcho, Opaque: 9, ExtFields: fields, Serialize: ser}
			if _, err := nc.Write(AppendFrame(nil, req)); err != nil {
				t.Fatal(err)
			}
			_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			if resp := readFrame(t, nc); resp.Code != Success || resp.Str("echo") != props.String() {
				t.Fatalf("%v: got code %d", ser, resp.Code)
			}
		}
	})
}

// The defaults admit the largest header a send can legitimately carry:
// 32767 characters of properties, every one a control character JSON
// escapes to six bytes.
func TestDefaultHeaderLimitAdmitsLargestProperties(t *testing.T) {
	props := string(bytes.Repeat([]byte{0x01}, 32767))
	c := &Command{Code: SendMessageV2, Opaque: 1, ExtFields: []Field{{"a", "PG"}, {"b", "T"}, {"i", props}}}
	frame := AppendFrame(nil, c)
	headerLen := int(binary.BigEndian.Uint32(frame[4:]) & 0xFFFFFF)
	if lim := DefaultLimits().ServerMaxHeaderBytes; headerLen > lim {
		t.Fatalf("header of %d bytes above the default limit %d", headerLen, lim)
	}
	s := NewServer(ServerConfig{Limits: DefaultLimits()}, nil, testutil.Logger())
	if _, err := s.checkPrefix(frame[:8]); err != nil {
		t.Fatal(err)
	}
}

func TestLimitsValidate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		lim       Limits
		ok        bool
		high, low int
	}{
		{"defaults", DefaultLimits(), true, DefaultHighWater, DefaultLowWater},
		{"zero", Limits{}, true, DefaultHighWater, DefaultLowWater},
		{"high only", Limits{WriteBufferHighWaterMark: 1 << 20}, true, 1 << 20, 512 << 10},
		{"low only", Limits{WriteBufferLowWaterMark: 6 << 20}, true, DefaultHighWater, 6 << 20},
		{"both", Limits{WriteBufferHighWaterMark: 64 << 10, WriteBufferLowWaterMark: 32 << 10}, true, 64 << 10, 32 << 10},
		{"low above high", Limits{WriteBufferHighWaterMark: 1 << 20, WriteBufferLowWaterMark: 2 << 20}, false, 0, 0},
		{"negative idle", Limits{ServerChannelMaxIdleTimeSeconds: -1}, false, 0, 0},
		{"negative budget", Limits{ServerInputBufferMaxBytes: -1}, false, 0, 0},
		{"negative connections", Limits{ServerMaxConnections: -1}, false, 0, 0},
		{"negative header", Limits{ServerMaxHeaderBytes: -1}, false, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.lim.Validate()
			if (err == nil) != tc.ok {
				t.Fatalf("Validate: %v", err)
			}
			if tc.ok && (tc.lim.highWater() != tc.high || tc.lim.lowWater() != tc.low) {
				t.Fatalf("marks %d/%d, want %d/%d", tc.lim.highWater(), tc.lim.lowWater(), tc.high, tc.low)
			}
		})
	}
	if n := ConnLimitFromRlimit(); n < 1 {
		t.Fatalf("connection limit from RLIMIT_NOFILE: %d", n)
	}
}

// An engine that stops without Shutdown is reported (Done, Err): the
// binaries exit non-zero on it, so a supervisor restarts them.
func TestEngineStopIsReported(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", NumEventLoop: 1}, &testHandler{}, testutil.Logger())
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = s.eng.Stop(cctx) // behind the server's back, as gnet's own acceptor did on EMFILE
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done not closed")
	}
	if s.Err() == nil {
		t.Fatal("Err is nil after an unrequested stop")
	}
}
