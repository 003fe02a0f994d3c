package proxy

import (
	"context"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	v2 "github.com/rocketgo/rocketgo/apis/v2"
)

// budget bounds the request bytes all calls together hold between their
// decode and the broker's answer: past it a call is refused at once
// (TOO_MANY_REQUESTS) instead of waiting, so thousands of streams each
// carrying a large message cannot add up to more than max.
type budget struct {
	max  int64
	used atomic.Int64
}

// take reserves n bytes, or reports false and reserves nothing. A request
// larger than the whole budget counts as max, so it is served when
// nothing else is in flight.
func (b *budget) take(n int64) (int64, bool) {
	n = min(n, b.max)
	for {
		u := b.used.Load()
		if u+n > b.max {
			return 0, false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return n, true
		}
	}
}

// give returns what take reserved.
func (b *budget) give(n int64) { b.used.Add(-n) }

// requestBytes is what a request's messages hold: bodies and properties,
// the part a client can make large. Requests without messages weigh 0.
func requestBytes(req any) int64 {
	r, ok := req.(*v2.SendMessageRequest)
	if !ok {
		return 0
	}
	var n int64
	for _, m := range r.GetMessages() {
		n += int64(len(m.GetBody()))
		for k, v := range m.GetUserProperties() {
			n += int64(len(k) + len(v))
		}
	}
	return n
}

const sendMethod = "/apache.rocketmq.v2.MessagingService/SendMessage"

type reservedKey struct{}

// tapSend reserves maxMessageSize of the budget for a SendMessage before
// gRPC reads its message (the size is not known yet; the SDKs send one
// message of at most maxMessageSize per call), so a burst of large sends
// cannot all be read and decoded at once. Past the budget the stream is
// refused RESOURCE_EXHAUSTED before a byte of it is read. The reservation
// is returned when the stream's context ends, on every path. It runs on
// the connection's reader: it never blocks.
func (s *Server) tapSend(ctx context.Context, info *tap.Info) (context.Context, error) {
	if info.FullMethodName != sendMethod {
		return ctx, nil
	}
	n, ok := s.inflight.take(int64(s.cfg.MaxMessageSize))
	if !ok {
		s.sampled.Warn().Str("method", info.FullMethodName).
			Int64("grpcMaxInFlightRequestBytes", s.cfg.GrpcMaxInFlightRequestBytes).Msg("grpc call refused: in-flight request bytes over budget")
		return ctx, status.Error(codes.ResourceExhausted, "proxy busy: in-flight request bytes over budget")
	}
	context.AfterFunc(ctx, func() { s.inflight.give(n) })
	return context.WithValue(ctx, reservedKey{}, n), nil
}

// reservedOf is what tapSend reserved for the call of ctx.
func reservedOf(ctx context.Context) int64 {
	n, _ := ctx.Value(reservedKey{}).(int64)
	return n
}
