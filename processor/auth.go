package processor

import (
	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/auth"
	"github.com/rocketgo/rocketgo/remoting"
)

// ACL 2.0's admin codes 3001–3010 (AdminBrokerProcessor, 5.3.3). Who may
// call them is the auth interceptor's business (Cluster:Update or
// Cluster:Get); these handlers decode, hand the work to a broker worker
// (an edit writes a file) and answer from there with the service's
// refusal (package auth: Apache's codes and remarks).

// AuthAdmin is the user and ACL service (auth.Service). caller is the
// request's AccessKey ("" without one): some edits need a super user.
// Errors are *remoting.Refusal with Apache's code and remark. Its methods
// write files: they run on broker workers, never on a loop.
type AuthAdmin interface {
	CreateUser(caller string, u auth.UserInfo) error
	UpdateUser(caller string, u auth.UserInfo) error
	DeleteUser(caller, username string) error
	GetUser(username string) (*auth.UserInfo, error)
	ListUsers(filter string) ([]auth.UserInfo, error)
	CreateAcl(subject string, a auth.AclInfo) error
	UpdateAcl(subject string, a auth.AclInfo) error
	DeleteAcl(subject, policyType, resource string) error
	GetAcl(subject string) (*auth.AclInfo, error)
	ListAcls(subjectFilter, resourceFilter string) ([]auth.AclInfo, error)
}

type authProcs struct {
	host Host
	a    AuthAdmin // nil: neither authenticationEnabled nor authorizationEnabled
	log  zerolog.Logger
}

// RegisterAuth serves 3001–3010 from a. Apache serves them whatever the
// keys (its metadata managers always exist); rocketgo opens the store
// only when ACL 2.0 is on, and without it answers SYSTEM_ERROR
// "auth is not enabled".
func RegisterAuth(t remoting.Table, a AuthAdmin, host Host, log zerolog.Logger) {
	p := &authProcs{host: host, a: a, log: log.With().Str("component", "auth-admin").Logger()}
	t[remoting.AuthCreateUser] = p.user(func(caller string, u auth.UserInfo) error { return p.a.CreateUser(caller, u) })
	t[remoting.AuthUpdateUser] = p.user(func(caller string, u auth.UserInfo) error { return p.a.UpdateUser(caller, u) })
	t[remoting.AuthDeleteUser] = p.deleteUser
	t[remoting.AuthGetUser] = p.getUser
	t[remoting.AuthListUser] = p.listUsers
	t[remoting.AuthCreateACL] = p.acl(func(s string, a auth.AclInfo) error { return p.a.CreateAcl(s, a) })
	t[remoting.AuthUpdateACL] = p.acl(func(s string, a auth.AclInfo) error { return p.a.UpdateAcl(s, a) })
	t[remoting.AuthDeleteACL] = p.deleteAcl
	t[remoting.AuthGetACL] = p.getAcl
	t[remoting.AuthListACL] = p.listAcls
}

// run answers fn's result from a broker worker: SUCCESS with its body, or
// the refusal.
func (p *authProcs) run(c *remoting.Conn, req *remoting.Command, fn func() ([]byte, error)) *remoting.Command {
	if p.a == nil {
		return remoting.NewResponse(req, remoting.SystemError, "auth is not enabled")
	}
	// req is recycled when the handler returns: the answer is made from a
	// copy of what it needs.
	head := &remoting.Command{Code: req.Code, Opaque: req.Opaque, Serialize: req.Serialize, Began: req.Began}
	if !p.host.Go(func() {
		body, err := fn()
		if err != nil {
			c.Reply(errorResponse(&p.log, head, err))
			return
		}
		resp := remoting.NewResponse(head, remoting.Success, "")
		resp.Body = body
		c.Reply(resp)
	}) {
		return remoting.NewResponse(req, remoting.SystemError, "broker shutting down")
	}
	return nil
}

func blankUsername(req *remoting.Command) *remoting.Command {
	return remoting.NewResponse(req, remoting.InvalidParameter, "The username is blank")
}

// user serves AUTH_CREATE_USER and AUTH_UPDATE_USER: the header's
// username over the body's.
func (p *authProcs) user(fn func(caller string, u auth.UserInfo) error) remoting.HandlerFunc {
	return func(c *remoting.Conn, req *remoting.Command) *remoting.Command {
		name := req.Str("username")
		if name == "" {
			return blankUsername(req)
		}
		var u auth.UserInfo
		if err := decodeAuthBody(req, &u); err != nil {
			return errorResponse(&p.log, req, err)
		}
		u.Username = name
		caller, code := req.Str("AccessKey"), req.Code // req is recycled before fn runs
		return p.run(c, req, func() ([]byte, error) {
			err := fn(caller, u)
			p.log.Info().Int32("code", code).Str("username", name).Str("remote", c.Remote).Bool("ok", err == nil).Msg("auth user edit")
			return nil, err
		})
	}
}

func (p *authProcs) deleteUser(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	name, caller := req.Str("username"), req.Str("AccessKey")
	return p.run(c, req, func() ([]byte, error) {
		err := p.a.DeleteUser(caller, name)
		p.log.Info().Str("username", name).Str("remote", c.Remote).Bool("ok", err == nil).Msg("auth user deleted")
		return nil, err
	})
}

func (p *authProcs) getUser(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	name := req.Str("username")
	if isBlankStr(name) {
		return blankUsername(req)
	}
	return p.run(c, req, func() ([]byte, error) {
		u, err := p.a.GetUser(name)
		if err != nil || u == nil {
			return nil, err
		}
		return jsonBody(u)
	})
}

func (p *authProcs) listUsers(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	filter := req.Str("filter")
	return p.run(c, req, func() ([]byte, error) {
		us, err := p.a.ListUsers(filter)
		if err != nil || len(us) == 0 {
			return nil, err
		}
		return jsonBody(us)
	})
}

// acl serves AUTH_CREATE_ACL and AUTH_UPDATE_ACL.
func (p *authProcs) acl(fn func(subject string, a auth.AclInfo) error) remoting.HandlerFunc {
	return func(c *remoting.Conn, req *remoting.Command) *remoting.Command {
		subject := req.Str("subject")
		var a auth.AclInfo
		if err := decodeAuthBody(req, &a); err != nil {
			return errorResponse(&p.log, req, err)
		}
		if len(a.Policies) == 0 {
			// Apache throws out of the handler: NettyRemotingAbstract's
			// answer, exceptionSimpleDesc with the throwing frame.
			line := "3158"
			if req.Code == remoting.AuthUpdateACL {
				line = "3185"
			}
			method := map[bool]string{true: "updateAcl", false: "createAcl"}[req.Code == remoting.AuthUpdateACL]
			return remoting.NewResponse(req, remoting.SystemError,
				"org.apache.rocketmq.auth.authorization.exception.AuthorizationException: The body of acl is null, "+
					"org.apache.rocketmq.broker.processor.AdminBrokerProcessor."+method+"(AdminBrokerProcessor.java:"+line+")")
		}
		code := req.Code // req is recycled before fn runs
		return p.run(c, req, func() ([]byte, error) {
			err := fn(subject, a)
			p.log.Info().Int32("code", code).Str("subject", subject).Str("remote", c.Remote).Bool("ok", err == nil).Msg("auth acl edit")
			return nil, err
		})
	}
}

func (p *authProcs) deleteAcl(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	subject, pt, res := req.Str("subject"), req.Str("policyType"), req.Str("resource")
	return p.run(c, req, func() ([]byte, error) {
		err := p.a.DeleteAcl(subject, pt, res)
		p.log.Info().Str("subject", subject).Str("resource", res).Str("remote", c.Remote).Bool("ok", err == nil).Msg("auth acl deleted")
		return nil, err
	})
}

func (p *authProcs) getAcl(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	subject := req.Str("subject")
	return p.run(c, req, func() ([]byte, error) {
		a, err := p.a.GetAcl(subject)
		if err != nil || a == nil {
			return nil, err
		}
		return jsonBody(a)
	})
}

func (p *authProcs) listAcls(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	sf, rf := req.Str("subjectFilter"), req.Str("resourceFilter")
	return p.run(c, req, func() ([]byte, error) {
		as, err := p.a.ListAcls(sf, rf)
		if err != nil || len(as) == 0 {
			return nil, err
		}
		return jsonBody(as)
	})
}

// decodeAuthBody reads a JSON body; an empty one is Apache's null,
// which its handlers then fail on.
func decodeAuthBody(req *remoting.Command, v any) error {
	if len(req.Body) == 0 {
		return &remoting.Refusal{Code: remoting.SystemError, Remark: "java.lang.NullPointerException"}
	}
	if err := json.Unmarshal(req.Body, v); err != nil {
		return &remoting.Refusal{Code: remoting.SystemError, Remark: "com.alibaba.fastjson2.JSONException: " + err.Error(), Err: err}
	}
	return nil
}

func jsonBody(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return b, nil
}

func isBlankStr(s string) bool {
	for _, r := range s {
		if r != ' ' && r != '\t' && r != '\n' && r != '\r' && r != '\f' && r != '\v' {
			return false
		}
	}
	return true
}
