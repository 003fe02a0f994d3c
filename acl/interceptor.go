package acl

import (
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/remoting"
)

// Interceptor refuses, before its handler runs, every request the rules
// do not allow (aclEnable's RPC hook). It goes after metrics and before
// anything else, so that a refused request is measured but reaches
// nothing else.
type Interceptor struct {
	rules interface{ Rules() *Rules }
	log   zerolog.Logger // sampled: a client can send refusals in a loop
}

// NewInterceptor checks requests against what f holds at each request.
func NewInterceptor(f *Files, log zerolog.Logger) *Interceptor {
	return &Interceptor{rules: f, log: log.With().Str("component", "acl").Logger().
		Sample(&zerolog.BurstSampler{Burst: 20, Period: time.Second})}
}

// Before answers a refused request as Apache: SYSTEM_ERROR with the
// AclException's description.
func (in *Interceptor) Before(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	var scratch [8]need
	d := in.rules.Rules().Check(req, c.RemoteAddr.Addr(), scratch[:0])
	if d == nil {
		return nil
	}
	ak, _ := req.Lookup(fieldAccessKey)
	in.log.Warn().Str("remote", c.Remote).Int32("code", req.Code).Str("accessKey", short(ak)).
		Str("reason", short(d.Msg)).Msg("request refused by acl")
	// A one-way request's answer is dropped by the server, as Apache
	// answers nothing then; it must still be returned to refuse.
	return remoting.NewResponse(req, remoting.SystemError, d.Remark())
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
