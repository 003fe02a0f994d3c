package auth

import (
	"net/netip"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/remoting"
)

// Interceptor refuses, before its handler runs, every request ACL 2.0
// does not allow: authentication, then authorization, as Apache's
// request pipeline. It goes after metrics (a refused request is
// measured) and before anything else.
type Interceptor struct {
	s   *Store
	cfg Config
	log zerolog.Logger // sampled: a client can send refusals in a loop
}

var _ remoting.Interceptor = (*Interceptor)(nil)

// NewInterceptor checks requests against s with cfg's switches.
func NewInterceptor(s *Store, cfg Config, log zerolog.Logger) *Interceptor {
	return &Interceptor{s: s, cfg: cfg, log: log.With().Str("component", "auth").Logger().
		Sample(&zerolog.BurstSampler{Burst: 20, Period: time.Second})}
}

// Check decides req from the peer at ip: nil allows it.
func (in *Interceptor) Check(req *remoting.Command, ip netip.Addr) *remoting.Refusal {
	if in.cfg.Authentication && !in.cfg.AuthenticationWhitelist.Code(req.Code) {
		if r := in.s.authenticate(req); r != nil {
			return r
		}
	}
	if in.cfg.Authorization {
		var rs [8]Request
		var es [8]*Entry
		return in.s.authorize(req, ip, &in.cfg, rs[:0], es[:0])
	}
	return nil
}

// Before answers a refused request as Apache's pipeline does:
// NO_PERMISSION with the exception's message.
func (in *Interceptor) Before(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	if in.cfg.TrustLocal && c.IsLocal() {
		return nil
	}
	r := in.Check(req, c.RemoteAddr.Addr())
	if r == nil {
		return nil
	}
	ak, _ := req.Lookup(fieldAccessKey)
	in.log.Info().Str("remote", c.Remote).Int32("code", req.Code).Str("user", short(ak)).
		Str("reason", short(r.Remark)).Msg("request refused by auth")
	// A one-way request's answer is dropped by the server, as Apache
	// answers nothing then; it must still be returned to refuse.
	return remoting.NewResponse(req, r.Code, r.Remark)
}

// After does nothing: the decision is taken before.
func (in *Interceptor) After(remoting.Exchange) {}

// short bounds a client's string in a log line.
func short(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
