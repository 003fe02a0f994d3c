package proxy

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	v2 "github.com/rocketgo/rocketgo/apis/v2"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/namesrv/namesrvtest"
)

func runProxyConf(t *testing.T, nsAddr string, edit func(*Config)) *Server {
	t.Helper()
	cfg := DefaultConfig()
	cfg.NamesrvAddr = nsAddr
	edit(&cfg)
	s, err := New(cfg, testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return s
}

// Connections that stall in their TLS handshake (a ClientHello never
// finished) or send nothing at all are closed by grpcHandshakeTimeoutMillis.
func TestStalledHandshakesClosed(t *testing.T) {
	ns := namesrvtest.Run(t)
	s := runProxyConf(t, ns.Addr(), func(c *Config) { c.GrpcHandshakeTimeoutMillis = 300 })
	partialHello := []byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03}
	const n = 100
	var wg sync.WaitGroup
	closed := make(chan time.Duration, n)
	start := time.Now()
	for i := range n {
		c, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		if i%2 == 0 {
			if _, err := c.Write(partialHello); err != nil {
				t.Fatal(err)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			buf := make([]byte, 4096)
			for {
				if _, err := c.Read(buf); err != nil {
					if !errors.Is(err, io.EOF) && !isReset(err) {
						return // our own deadline: not closed
					}
					closed <- time.Since(start)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(closed)
	got, slowest := 0, time.Duration(0)
	for d := range closed {
		got++
		slowest = max(slowest, d)
	}
	if got != n || slowest > 4*time.Second {
		t.Fatalf("%d of %d stalled connections closed, slowest after %v", got, n, slowest)
	}
}

func isReset(err error) bool { return strings.Contains(err.Error(), "reset by peer") }

func TestValidateBatchAndClientID(t *testing.T) {
	for n, want := range map[int32]int32{1: 1, 32: 32, 33: 32, 1<<31 - 1: 32, 0: 0, -1: 0} {
		got, err := receiveBatch(n)
		if got != want || (want == 0) != (statusOf(err).GetCode() == v2.Code_BAD_REQUEST) {
			t.Errorf("batch %d: %d %v, want %d", n, got, err, want)
		}
	}
	for id, want := range map[string]v2.Code{"host@1@0@abc": v2.Code_OK, "": v2.Code_CLIENT_ID_REQUIRED, "  ": v2.Code_CLIENT_ID_REQUIRED,
		strings.Repeat("x", 1025): v2.Code_BAD_REQUEST, "a\x00b": v2.Code_BAD_REQUEST, "a\nb": v2.Code_BAD_REQUEST} {
		got := v2.Code_OK
		if st := validateClientID(id); st != nil {
			got = st.GetCode()
		}
		if got != want {
			t.Errorf("client id %q: %v, want %v", id, got, want)
		}
	}
}

func TestDurationMillis(t *testing.T) {
	for _, tc := range []struct {
		d    *durationpb.Duration
		ms   int64
		code v2.Code
	}{{nil, 0, v2.Code_OK}, {durationpb.New(90 * time.Second), 90_000, v2.Code_OK}, {durationpb.New(-time.Second), -1000, v2.Code_OK},
		{&durationpb.Duration{Seconds: 1 << 62}, 0, v2.Code_INTERNAL_SERVER_ERROR},
		{&durationpb.Duration{Seconds: 1, Nanos: -1}, 0, v2.Code_INTERNAL_SERVER_ERROR}} {
		ms, err := durationMillis(tc.d)
		if ms != tc.ms || statusOf(err).GetCode() != tc.code {
			t.Errorf("%v: %d %v, want %d %v", tc.d, ms, err, tc.ms, tc.code)
		}
	}
}

func TestTokenBucket(t *testing.T) {
	now := time.Unix(0, 0)
	b := newTokenBucket(10, now)
	n := 0
	for b.take(now) {
		n++
	}
	if n != 100 {
		t.Fatalf("burst %d, want 100", n)
	}
	if b.take(now.Add(50*time.Millisecond)) || !b.take(now.Add(200*time.Millisecond)) {
		t.Fatal("refill at 10/s wrong")
	}
}

// A telemetry stream flooding thread stacks is answered TOO_MANY_REQUESTS
// past its budget, keeps its stream, and the proxy serves the client after.
func TestTelemetryFlood(t *testing.T) {
	ns := namesrvtest.Run(t)
	s := runProxyConf(t, ns.Addr(), func(c *Config) { c.GrpcTelemetryCommandsPerSecond = 5 })
	cl := dial(t, s, false)
	ctx := callCtx(t)
	st, err := cl.Telemetry(ctx)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 8<<10)
	go func() {
		for range 200 {
			if st.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_ThreadStackTrace{
				ThreadStackTrace: &v2.ThreadStackTrace{Nonce: "n", ThreadStackTrace: &big}}}) != nil {
				return
			}
		}
	}()
	limited := 0
	for limited < 140 {
		got, err := st.Recv()
		if err != nil {
			t.Fatalf("after %d refusals: %v", limited, err)
		}
		if got.GetStatus().GetCode() != v2.Code_TOO_MANY_REQUESTS {
			t.Fatalf("answer %v", got)
		}
		limited++
	}
	r, err := cl.QueryRoute(metadata.AppendToOutgoingContext(ctx), &v2.QueryRouteRequest{Topic: &v2.Resource{Name: "T"}})
	if err != nil || r.GetStatus().GetCode() != v2.Code_TOPIC_NOT_FOUND {
		t.Fatalf("route after flood: %v %v", r.GetStatus(), err)
	}
}

// An accepted client id is never blank, over the bound or with a control
// character; no input panics.
func FuzzValidateClientID(f *testing.F) {
	for _, s := range []string{"host@1@0@abc", "", " ", "a\x00b", "a\u0085b", strings.Repeat("x", 1025), "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if validateClientID(id) == nil && (strings.TrimSpace(id) == "" || len(id) > maxClientIDLength || hasControl(id)) {
			t.Fatalf("accepted %q", id)
		}
	})
}
