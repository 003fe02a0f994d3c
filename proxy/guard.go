package proxy

import (
	"context"
	"net/netip"

	v2 "github.com/rocketgo/rocketgo/apis/v2"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
)

// Guard decides a call before it is served: ACL 2.0 (auth.GRPC), set by
// the broker in local mode. A non-nil error refuses the call; its text is
// the status message, answered with Code UNAUTHORIZED as Apache's
// ResponseBuilder answers an AuthenticationException or
// AuthorizationException, in the call's own response.
type Guard interface {
	CheckCall(md metadata.MD, ip netip.Addr, req any) error
}

// SetGuard installs g; call it before Start.
func (s *Server) SetGuard(g Guard) { s.guard = g }

// refusedBy is the guard's refusal of req, nil when it is allowed (or
// there is no guard).
func (s *Server) refusedBy(ctx context.Context, req any) *v2.Status {
	if s.guard == nil {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	var ip netip.Addr
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		if ap, err := netip.ParseAddrPort(p.Addr.String()); err == nil {
			ip = ap.Addr()
		}
	}
	err := s.guard.CheckCall(md, ip, req)
	if err == nil {
		return nil
	}
	s.sampled.Info().Str("remote", metaOf(ctx).remote).Str("reason", err.Error()).Msg("grpc call refused by auth")
	return &v2.Status{Code: v2.Code_UNAUTHORIZED, Message: err.Error()}
}

// refusedResponse is the unary call's response carrying st, by method.
func refusedResponse(method string, st *v2.Status) any {
	const svc = "/apache.rocketmq.v2.MessagingService/"
	switch method {
	case svc + "QueryRoute":
		return &v2.QueryRouteResponse{Status: st}
	case svc + "Heartbeat":
		return &v2.HeartbeatResponse{Status: st}
	case svc + "SendMessage":
		return &v2.SendMessageResponse{Status: st}
	case svc + "QueryAssignment":
		return &v2.QueryAssignmentResponse{Status: st}
	case svc + "AckMessage":
		return &v2.AckMessageResponse{Status: st}
	case svc + "ForwardMessageToDeadLetterQueue":
		return &v2.ForwardMessageToDeadLetterQueueResponse{Status: st}
	case svc + "EndTransaction":
		return &v2.EndTransactionResponse{Status: st}
	case svc + "NotifyClientTermination":
		return &v2.NotifyClientTerminationResponse{Status: st}
	case svc + "ChangeInvisibleDuration":
		return &v2.ChangeInvisibleDurationResponse{Status: st}
	case svc + "SyncLiteSubscription":
		return &v2.SyncLiteSubscriptionResponse{Status: st}
	}
	return nil
}
