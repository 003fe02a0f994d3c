package proxy

import (
	"context"
	"sync"
	"testing"
	"time"

	v2 "github.com/rocketgo/rocketgo/apis/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
)

func sendOf(bodies ...int) *v2.SendMessageRequest {
	r := &v2.SendMessageRequest{}
	for _, n := range bodies {
		r.Messages = append(r.Messages, &v2.Message{Body: make([]byte, n)})
	}
	return r
}

// Concurrent takers never hold more than the budget together, and all of
// it comes back.
func TestBudgetNeverOver(t *testing.T) {
	b := &budget{max: 1000}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var peak int64
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				if n, ok := b.take(300); ok {
					mu.Lock()
					peak = max(peak, b.used.Load())
					mu.Unlock()
					b.give(n)
				}
			}
		}()
	}
	wg.Wait()
	if peak > 1000 || b.used.Load() != 0 {
		t.Fatalf("peak %d (max 1000), left %d (want 0)", peak, b.used.Load())
	}
	// A request larger than the whole budget is served alone.
	n, ok := b.take(5000)
	if !ok || n != 1000 {
		t.Fatalf("oversized request: took %d, %v", n, ok)
	}
	if _, ok := b.take(1); ok {
		t.Fatal("budget full but a byte was taken")
	}
	b.give(n)
}

// A SendMessage past the budget is answered TOO_MANY_REQUESTS while the
// calls holding it are at the broker, and served once they answered.
func TestSendOverBudgetRefused(t *testing.T) {
	cfg := DefaultConfig()
	cfg.GrpcMaxInFlightRequestBytes = 10 << 20
	s := &Server{cfg: cfg, sampled: zerologNop(), inflight: &budget{max: cfg.GrpcMaxInFlightRequestBytes}}
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("x-mq-client-id", "c1"))
	info := &grpc.UnaryServerInfo{FullMethod: "/apache.rocketmq.v2.MessagingService/SendMessage"}
	release := make(chan struct{})
	held := make(chan struct{})
	blocked := func(context.Context, any) (any, error) {
		held <- struct{}{}
		<-release
		return &v2.SendMessageResponse{Status: &v2.Status{Code: v2.Code_OK}}, nil
	}
	var wg sync.WaitGroup
	for range 2 { // 2 × 4 MB held at the broker
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = s.unaryGuard(ctx, sendOf(4<<20), info, blocked)
		}()
		<-held
	}
	served := func(context.Context, any) (any, error) {
		return &v2.SendMessageResponse{Status: &v2.Status{Code: v2.Code_OK}}, nil
	}
	resp, err := s.unaryGuard(ctx, sendOf(1<<20, 2<<20), info, served)
	if err != nil || resp.(*v2.SendMessageResponse).GetStatus().GetCode() != v2.Code_TOO_MANY_REQUESTS {
		t.Fatalf("over budget: %v %v, want TOO_MANY_REQUESTS", resp, err)
	}
	// Calls without messages are not weighed.
	qr := &grpc.UnaryServerInfo{FullMethod: "/apache.rocketmq.v2.MessagingService/QueryRoute"}
	if _, err := s.unaryGuard(ctx, &v2.QueryRouteRequest{}, qr, served); err != nil {
		t.Fatal(err)
	}
	close(release)
	wg.Wait()
	resp, err = s.unaryGuard(ctx, sendOf(1<<20, 2<<20), info, served)
	if err != nil || resp.(*v2.SendMessageResponse).GetStatus().GetCode() != v2.Code_OK {
		t.Fatalf("after release: %v %v, want OK", resp, err)
	}
	if s.inflight.used.Load() != 0 {
		t.Fatalf("budget leaked %d bytes", s.inflight.used.Load())
	}
}

// A SendMessage stream reserves maxMessageSize before it is read, is
// refused RESOURCE_EXHAUSTED when that does not fit, and gives the
// reservation back when its context ends.
func TestTapReservesUntilStreamEnds(t *testing.T) {
	cfg := DefaultConfig()
	cfg.GrpcMaxInFlightRequestBytes = int64(cfg.MaxMessageSize) * 2
	s := &Server{cfg: cfg, sampled: zerologNop(), inflight: &budget{max: cfg.GrpcMaxInFlightRequestBytes}}
	send := &tap.Info{FullMethodName: sendMethod}
	var cancels []context.CancelFunc
	for range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		got, err := s.tapSend(ctx, send)
		if err != nil || reservedOf(got) != int64(cfg.MaxMessageSize) {
			t.Fatalf("tap: %v, reserved %d", err, reservedOf(got))
		}
	}
	if _, err := s.tapSend(context.Background(), send); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("tap over budget: %v, want RESOURCE_EXHAUSTED", err)
	}
	if _, err := s.tapSend(context.Background(), &tap.Info{FullMethodName: "/apache.rocketmq.v2.MessagingService/QueryRoute"}); err != nil {
		t.Fatalf("other methods are not weighed: %v", err)
	}
	for _, c := range cancels {
		c()
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.inflight.used.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("reservations not returned: %d bytes held", s.inflight.used.Load())
		}
		time.Sleep(time.Millisecond)
	}
}
