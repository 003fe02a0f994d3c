package auth

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/netip"
	"strings"

	v2 "github.com/rocketgo/rocketgo/apis/v2"
	"github.com/rocketgo/rocketgo/remoting"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// GRPC is ACL 2.0 for the proxy's gRPC calls (the 5.x SDKs), as Apache's
// proxy checks them (grpc/pipeline/Authentication- and
// AuthorizationPipeline): the `authorization` metadata's HMAC-SHA1 over
// `x-mq-date-time`, then DefaultAuthorizationContextBuilder's resources
// for the request message. A whitelist item naming the request message
// (apache.rocketmq.v2.SendMessageRequest) skips that step, as Apache's
// strategies compare the message's full name.
type GRPC struct {
	d   Directory
	cfg Config
}

// NewGRPC checks calls against d (a Store, or a Remote) with cfg's
// switches.
func NewGRPC(d Directory, cfg Config) *GRPC { return &GRPC{d: d, cfg: cfg} }

// The metadata the SDKs sign with (GrpcConstants).
const (
	mdAuthorization = "authorization"
	mdDateTime      = "x-mq-date-time"
)

// Check decides one call (a unary request, a receive, or a telemetry
// command) from the peer at ip; nil allows it. The refusal's remark is
// Apache's message; the proxy answers it with Code UNAUTHORIZED.
func (g *GRPC) Check(md metadata.MD, ip netip.Addr, req any) *remoting.Refusal {
	var name string
	if m, ok := req.(proto.Message); ok {
		name = string(m.ProtoReflect().Descriptor().FullName())
	}
	user, hasUser := "", false
	if g.cfg.Authentication && !g.cfg.AuthenticationWhitelist.Name(name) {
		u, r := authenticateGRPC(g.d, md)
		if r != nil {
			return r
		}
		user, hasUser = u, u != "" // AUTHORIZATION_AK is set when a username was read
	}
	if !g.cfg.Authorization || g.cfg.AuthorizationWhitelist.Name(name) {
		return nil
	}
	rs, r := grpcRequests(req)
	if r != nil {
		return r
	}
	var es [8]*Entry
	return authorizeIn(g.d, user, hasUser, rs, ip, es[:0])
}

// authenticateGRPC is DefaultAuthenticationContextBuilder.build(Metadata)
// and DefaultAuthenticationHandler: it returns the username.
func authenticateGRPC(d Directory, md metadata.MD) (string, *remoting.Refusal) {
	first := func(k string) string {
		if v := md.Get(k); len(v) > 0 {
			return v[0]
		}
		return ""
	}
	authz := first(mdAuthorization)
	if authz == "" {
		return "", refuse("username cannot be null.")
	}
	dt := first(mdDateTime)
	if dt == "" {
		return "", refuse("datetime is null.")
	}
	_, rest, ok := strings.Cut(authz, " ")
	if !ok {
		return "", refuse("authentication header is incorrect.")
	}
	var user, sig string
	for _, kv := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return "", refuse("authentication keyValues length is incorrect, actual length=1.")
		}
		switch k {
		case "Credential":
			user, _, _ = strings.Cut(v, "/")
		case "Signature":
			b, err := hex.DecodeString(v)
			if err != nil {
				return "", refuse("create authentication context error.")
			}
			sig = base64.StdEncoding.EncodeToString(b)
		}
	}
	if user == "" {
		return "", refuse("username cannot be null.")
	}
	u := d.LookupUser(user)
	if u == nil {
		return "", refuse("User:" + user + " is not found.")
	}
	if u.Status == Disabled {
		return "", refuse("User:" + user + " is disabled.")
	}
	m := hmac.New(sha1.New, []byte(u.Password))
	m.Write([]byte(dt))
	want := base64.StdEncoding.EncodeToString(m.Sum(nil))
	if sig == "" || subtle.ConstantTimeCompare([]byte(want), []byte(sig)) != 1 {
		return "", refuse("check signature failed.")
	}
	return user, nil
}

// grpcRequests is DefaultAuthorizationContextBuilder.build(Metadata,
// message); nil for a message it does not check.
func grpcRequests(req any) ([]Request, *remoting.Refusal) {
	topic := func(r *v2.Resource, acts []Action) ([]Request, *remoting.Refusal) {
		if isBlank(r.GetName()) {
			return nil, refuse("topic is null.")
		}
		return []Request{{Resource: OfTopic(r.GetName()), Actions: acts}}, nil
	}
	group := func(r *v2.Resource) ([]Request, *remoting.Refusal) {
		if isBlank(r.GetName()) {
			return nil, refuse("group is null.")
		}
		return []Request{{Resource: OfGroup(r.GetName()), Actions: actSub}}, nil
	}
	sub := func(g, t *v2.Resource) ([]Request, *remoting.Refusal) {
		out, r := group(g)
		if r != nil {
			return nil, r
		}
		tr, r := topic(t, actSub)
		return append(out, tr...), r
	}
	switch m := req.(type) {
	case *v2.SendMessageRequest:
		if len(m.GetMessages()) == 0 {
			return nil, refuse("message is null.")
		}
		return topic(m.GetMessages()[0].GetTopic(), actPub)
	case *v2.EndTransactionRequest:
		return topic(m.GetTopic(), actPub)
	case *v2.HeartbeatRequest:
		switch m.GetClientType() {
		case v2.ClientType_PUSH_CONSUMER, v2.ClientType_SIMPLE_CONSUMER:
			return group(m.GetGroup())
		}
		return nil, nil
	case *v2.ReceiveMessageRequest:
		if m.GetMessageQueue() == nil {
			return nil, refuse("messageQueue is null.")
		}
		return sub(m.GetGroup(), m.GetMessageQueue().GetTopic())
	case *v2.AckMessageRequest:
		return sub(m.GetGroup(), m.GetTopic())
	case *v2.ForwardMessageToDeadLetterQueueRequest:
		return sub(m.GetGroup(), m.GetTopic())
	case *v2.NotifyClientTerminationRequest:
		if isBlank(m.GetGroup().GetName()) {
			return nil, nil
		}
		return group(m.GetGroup())
	case *v2.ChangeInvisibleDurationRequest:
		return group(m.GetGroup())
	case *v2.QueryRouteRequest:
		return topic(m.GetTopic(), []Action{ActionPub, ActionSub})
	case *v2.QueryAssignmentRequest:
		return sub(m.GetGroup(), m.GetTopic())
	case *v2.TelemetryCommand:
		st := m.GetSettings()
		if st == nil {
			return nil, nil
		}
		if st.GetPublishing() == nil && st.GetSubscription() == nil {
			return nil, nil // the proxy refuses such settings itself
		}
		var out []Request
		for _, t := range st.GetPublishing().GetTopics() {
			r, ref := topic(t, actPub)
			if ref != nil {
				return nil, ref
			}
			out = append(out, r...)
		}
		if s := st.GetSubscription(); s != nil {
			r, ref := group(s.GetGroup())
			if ref != nil {
				return nil, ref
			}
			out = append(out, r...)
			for _, e := range s.GetSubscriptions() {
				r, ref := topic(e.GetTopic(), actSub)
				if ref != nil {
					return nil, ref
				}
				out = append(out, r...)
			}
		}
		return out, nil
	}
	return nil, nil
}

// CheckCall is Check for the proxy's Guard: nil, or the refusal.
func (g *GRPC) CheckCall(md metadata.MD, ip netip.Addr, req any) error {
	if r := g.Check(md, ip, req); r != nil {
		return r
	}
	return nil
}
