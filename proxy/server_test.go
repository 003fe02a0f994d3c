package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v2 "github.com/rocketgo/rocketgo/apis/v2"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/namesrv/namesrvtest"
)

func runProxy(t *testing.T, nsAddr string) *Server {
	t.Helper()
	cfg := DefaultConfig()
	cfg.NamesrvAddr = nsAddr
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

func dial(t *testing.T, s *Server, useTLS bool) v2.MessagingServiceClient {
	t.Helper()
	creds := insecure.NewCredentials()
	if useTLS {
		creds = credentials.NewTLS(&tls.Config{InsecureSkipVerify: true})
	}
	cc, err := grpc.NewClient(s.Addr().String(), grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return v2.NewMessagingServiceClient(cc)
}

func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return metadata.AppendToOutgoingContext(ctx, "x-mq-client-id", "test-client")
}

// Plaintext and TLS on the one port (Apache's permissive mode), against a
// real name server that knows no topic: the answers are Apache's codes.
func TestServerCodesBothTransports(t *testing.T) {
	ns := namesrvtest.Run(t)
	s := runProxy(t, ns.Addr())
	for _, useTLS := range []bool{false, true} {
		cl := dial(t, s, useTLS)
		ctx := callCtx(t)
		for _, tc := range []struct {
			topic string
			want  v2.Code
		}{
			{"Unknown", v2.Code_TOPIC_NOT_FOUND},
			{"bad name", v2.Code_ILLEGAL_TOPIC},
			{"SCHEDULE_TOPIC_XXXX", v2.Code_ILLEGAL_TOPIC},
			{"", v2.Code_ILLEGAL_TOPIC},
		} {
			r, err := cl.QueryRoute(ctx, &v2.QueryRouteRequest{Topic: &v2.Resource{Name: tc.topic}})
			if err != nil {
				t.Fatalf("tls=%v QueryRoute(%q): %v", useTLS, tc.topic, err)
			}
			if r.GetStatus().GetCode() != tc.want {
				t.Errorf("tls=%v QueryRoute(%q) = %v, want %v", useTLS, tc.topic, r.GetStatus(), tc.want)
			}
		}
		a, err := cl.QueryAssignment(ctx, &v2.QueryAssignmentRequest{Topic: &v2.Resource{Name: "T"}, Group: &v2.Resource{Name: "CID_RMQ_SYS_X"}})
		if err != nil || a.GetStatus().GetCode() != v2.Code_ILLEGAL_CONSUMER_GROUP {
			t.Errorf("tls=%v QueryAssignment with a system group: %v %v", useTLS, a.GetStatus(), err)
		}
		n, err := cl.NotifyClientTermination(ctx, &v2.NotifyClientTerminationRequest{})
		if err != nil || n.GetStatus().GetCode() != v2.Code_UNRECOGNIZED_CLIENT_TYPE {
			t.Errorf("tls=%v NotifyClientTermination of an unknown client: %v %v", useTLS, n.GetStatus(), err)
		}
	}
}

// A receive's answer ends with a response of its own carrying the time
// (delivery_timestamp), after the status, as Apache's
// ReceiveMessageResponseStreamWriter ends each: the Python SDK's push
// consumer fails every receive without it.
func TestReceiveEndsWithDeliveryTimestamp(t *testing.T) {
	ns := namesrvtest.Run(t)
	s := runProxy(t, ns.Addr())
	for _, useTLS := range []bool{false, true} {
		cl := dial(t, s, useTLS)
		for _, topic := range []string{"bad name", "Unknown"} {
			before := time.Now()
			rs, err := cl.ReceiveMessage(callCtx(t), &v2.ReceiveMessageRequest{Group: &v2.Resource{Name: "G"},
				MessageQueue: &v2.MessageQueue{Topic: &v2.Resource{Name: topic}, Id: -1}, BatchSize: 1,
				InvisibleDuration: durationpb.New(20 * time.Second)})
			if err != nil {
				t.Fatal(err)
			}
			var got []*v2.ReceiveMessageResponse
			for {
				r, err := rs.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("tls=%v receive %q: %v", useTLS, topic, err)
				}
				got = append(got, r)
			}
			if len(got) != 2 || got[0].GetStatus().GetCode() == v2.Code_OK || got[0].GetStatus() == nil ||
				got[1].GetDeliveryTimestamp() == nil {
				t.Fatalf("tls=%v receive %q answered %v, want a refusal's status then a delivery timestamp", useTLS, topic, got)
			}
			if at := got[1].GetDeliveryTimestamp().AsTime(); at.Before(before.Truncate(time.Millisecond)) || at.After(time.Now()) {
				t.Errorf("tls=%v receive %q: delivery timestamp %v outside the call (%v on)", useTLS, topic, at, before)
			}
		}
	}
}

// Telemetry: settings are answered merged with the proxy's (Apache's
// GrpcClientSettingsManager), the client then heartbeats OK; a stream left
// open does not hold up Shutdown.
func TestTelemetrySettingsAndShutdown(t *testing.T) {
	ns := namesrvtest.Run(t)
	s := runProxy(t, ns.Addr())
	cl := dial(t, s, true)
	ctx := callCtx(t)
	st, err := cl.Telemetry(ctx)
	if err != nil {
		t.Fatal(err)
	}
	in := &v2.Settings{ClientType: v2.ClientType_PRODUCER.Enum(),
		PubSub: &v2.Settings_Publishing{Publishing: &v2.Publishing{Topics: []*v2.Resource{{Name: "T"}}}}}
	if err := st.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: in}}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Recv()
	if err != nil {
		t.Fatal(err)
	}
	pub := got.GetSettings().GetPublishing()
	if got.GetStatus().GetCode() != v2.Code_OK || pub.GetMaxBodySize() != 4<<20 || !pub.GetValidateMessageType() ||
		got.GetSettings().GetBackoffPolicy().GetMaxAttempts() != 3 {
		t.Fatalf("settings answer %v", got)
	}
	h, err := cl.Heartbeat(ctx, &v2.HeartbeatRequest{})
	if err != nil || h.GetStatus().GetCode() != v2.Code_OK {
		t.Fatalf("heartbeat after settings: %v %v", h.GetStatus(), err)
	}
	done := make(chan error, 1)
	go func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		done <- s.Shutdown(sctx)
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Shutdown waited for an open telemetry stream")
	}
	if _, err := st.Recv(); err == nil {
		t.Fatal("telemetry stream still open after Shutdown")
	}
}

func TestLoadConfigFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "rmq-proxy.json")
	if err := os.WriteFile(p, []byte(`{"rocketMQClusterName":"C","namesrvAddr":"a:1;b:2","grpcServerPort":18081,"unknownKey":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	if err := LoadConfigFile(p, &cfg, zerolog.Nop()); err != nil {
		t.Fatal(err)
	}
	if cfg.RocketMQClusterName != "C" || cfg.GrpcServerPort != 18081 || cfg.MaxMessageSize != 4<<20 || cfg.Validate() != nil {
		t.Fatalf("loaded %+v (validate %v)", cfg, cfg.Validate())
	}
	if c := newCluster(nil, cfg.NamesrvAddr, time.Second); len(c.ns) != 2 {
		t.Fatalf("name servers %v", c.ns)
	}
	cfg.ProxyMode = "LOCAL"
	if _, err := New(cfg, zerolog.Nop()); err == nil {
		t.Fatal("LOCAL mode accepted by mqproxy")
	}
}

// A name server that takes the connection and never answers (a pod whose
// address is gone behind a Service name): the route query that times out
// closes the proxy's connection, and the next query dials again, as
// Apache's clients do (closeSocketIfTimeout).
func TestSilentNameServerIsRedialled(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{}, 8) // one per connection the proxy closed
	held := acceptEach(silent, func(c net.Conn) {
		_, _ = io.Copy(io.Discard, c) // reads, never answers
		c.Close()
		closed <- struct{}{}
	})
	cfg := DefaultConfig()
	cfg.NamesrvAddr = silent.Addr().String()
	cfg.RemotingTimeoutMillis = 300
	s, err := New(cfg, testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.Shutdown(context.Background())
		silent.Close()
		held.Wait()
	})
	cl := dial(t, s, false)
	for i := 0; i < 2; i++ {
		r, err := cl.QueryRoute(callCtx(t), &v2.QueryRouteRequest{Topic: &v2.Resource{Name: "T"}})
		if err == nil && r.GetStatus().GetCode() == v2.Code_OK {
			t.Fatalf("query %d: a route from a name server that answers nothing", i)
		}
		select {
		case <-closed:
		case <-time.After(3 * time.Second):
			t.Fatalf("query %d timed out and the proxy kept its connection to the silent name server", i)
		}
	}
}

// A gRPC client's own short deadline (the context a handler is given) ends
// its call, not the proxy's connection to the name server that other
// clients' calls share: only the proxy's remotingTimeoutMillis counts as a
// timeout that closes it.
func TestClientDeadlineKeepsRemotingConnection(t *testing.T) {
	ns := namesrvtest.Run(t)
	relay, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted, closed atomic.Int32
	held := acceptEach(relay, func(c net.Conn) { // to the name server, its answers 400 ms late
		accepted.Add(1)
		up, err := net.Dial("tcp", ns.Addr())
		if err != nil {
			c.Close()
			return
		}
		answered := make(chan struct{})
		go func() {
			defer close(answered)
			buf := make([]byte, 64<<10)
			for {
				n, err := up.Read(buf)
				if n > 0 {
					time.Sleep(400 * time.Millisecond)
					if _, werr := c.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					c.Close()
					return
				}
			}
		}()
		_, _ = io.Copy(up, c) // until the proxy closes its side
		closed.Add(1)
		up.Close()
		<-answered
	})
	s := runProxy(t, relay.Addr().String())
	t.Cleanup(func() {
		_ = s.Shutdown(context.Background())
		relay.Close()
		held.Wait()
	})
	// The handler's context ends with the client's deadline: the call
	// ends then, the connection stays.
	client, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := s.cluster.route(client, "Unknown"); err == nil {
		t.Fatalf("a route in 100 ms from a name server answering in 400 ms: %v", err)
	}
	time.Sleep(time.Second) // the late answer arrives and is dropped
	if _, err := s.cluster.route(context.Background(), "Unknown"); !errors.Is(err, errTopicNotFound) {
		t.Fatalf("the next query: %v", err)
	}
	if a, c := accepted.Load(), closed.Load(); a != 1 || c != 0 {
		t.Fatalf("%d connections made and %d closed by the proxy: a client's deadline closed the shared one", a, c)
	}
}

// acceptEach runs handle, each on its own goroutine, for every connection
// ln accepts until ln is closed; the group is done once all have returned.
func acceptEach(ln net.Listener, handle func(net.Conn)) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				handle(c)
			}()
		}
	}()
	return &wg
}
