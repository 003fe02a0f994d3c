package controller

import (
	"errors"

	"github.com/rocketgo/rocketgo/auth"
	"github.com/rocketgo/rocketgo/remoting"
)

// The ACL codes of ACL 2.0 (AUTH_CREATE_ACL … AUTH_LIST_ACL, the broker's
// 3006–3010, with its headers and bodies): each edit is a PUT_ACL or
// DELETE_ACL event in the raft log, so every controller decides with the
// same policies. What an edit does to an ACL, and its refusals, are the
// broker's (package auth). Only a Super user may send them (check).
//
// A policy lets a Normal user do what authorizationEnabled otherwise keeps
// for Super users among the requests that change the metadata: electing a
// master without designating it, altering a SyncStateSet, registering a
// broker and taking a broker id, each needing Update (or All) on
// Cluster:<the set's cluster> (see authorized).

// The ACL codes (RequestCode.AUTH_*).
const (
	authCreateACL int32 = 3006
	authUpdateACL int32 = 3007
	authDeleteACL int32 = 3008
	authGetACL    int32 = 3009
	authListACL   int32 = 3010
)

// maxAcls bounds the ACLs a Super user can add (one per user).
const maxAcls = maxUsers

// aclTable adds the ACL codes to t.
func (c *Controller) aclTable(t remoting.Table) {
	t[authCreateACL] = c.editAcl
	t[authUpdateACL] = c.editAcl
	t[authDeleteACL] = c.deleteAcl
	t[authGetACL] = c.getAcl
	t[authListACL] = c.listAcls
}

// refusal turns package auth's refusal (Apache's code and message:
// NO_PERMISSION for its AuthorizationExceptions) into a result.
func refusal(err error) *result {
	var r *remoting.Refusal
	if errors.As(err, &r) {
		return &result{code: r.Code, remark: r.Remark}
	}
	return &result{code: remoting.SystemError, remark: err.Error()}
}

// editAcl is AUTH_CREATE_ACL and AUTH_UPDATE_ACL (the same in Apache: the
// body's policies merge into the subject's ACL).
func (c *Controller) editAcl(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	if !c.cfg.AuthenticationEnabled {
		return notEnabled(req)
	}
	var in auth.AclInfo
	if len(req.Body) > 0 {
		if err := json.Unmarshal(req.Body, &in); err != nil {
			return remoting.NewResponse(req, remoting.SystemError, "com.alibaba.fastjson2.JSONException: "+err.Error())
		}
	}
	if len(in.Policies) == 0 {
		return remoting.NewResponse(req, remoting.SystemError, "The body of acl is null")
	}
	a, err := auth.ParseAcl(in, req.Str("subject"))
	if err != nil {
		return respond(req, refusal(err))
	}
	caller := req.Str("AccessKey")
	return c.park(conn, req, func() *result {
		c.st.mu.RLock()
		defer c.st.mu.RUnlock()
		if c.st.users[a.Username] == nil {
			return &result{code: remoting.NoPermission, remark: "The subject of " + auth.SubjectKey(a.Username) + " is not exist."}
		}
		old := c.st.acls[a.Username]
		if old == nil && len(c.st.acls) >= maxAcls {
			return &result{code: remoting.NoPermission, remark: "too many acls"}
		}
		n := old.Merged(a).Info()
		c.log.Info().Str("subject", short(n.Subject)).Str("caller", short(caller)).Msg("controller acl edited")
		return &result{code: remoting.Success, events: []event{{Type: evPutAcl, Acl: &n}}}
	})
}

// deleteAcl is AUTH_DELETE_ACL: one resource's entry of a policy, or the
// whole ACL without a resource.
func (c *Controller) deleteAcl(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	if !c.cfg.AuthenticationEnabled {
		return notEnabled(req)
	}
	subject, pt, res := req.Str("subject"), req.Str("policyType"), req.Str("resource")
	name, ok := auth.ParseSubject(subject)
	if !ok {
		return remoting.NewResponse(req, remoting.NoPermission, "The subject is null.")
	}
	return c.park(conn, req, func() *result {
		c.st.mu.RLock()
		defer c.st.mu.RUnlock()
		if c.st.users[name] == nil {
			return &result{code: remoting.NoPermission, remark: "The subject is not exist."}
		}
		old := c.st.acls[name]
		if old == nil {
			return &result{code: remoting.NoPermission, remark: "The acl is not exist."}
		}
		if n := old.Without(pt, res); n != nil {
			i := n.Info()
			return &result{code: remoting.Success, events: []event{{Type: evPutAcl, Acl: &i}}}
		}
		return &result{code: remoting.Success, events: []event{{Type: evDeleteAcl, Acl: &auth.AclInfo{Subject: auth.SubjectKey(name)}}}}
	})
}

// getAcl is AUTH_GET_ACL: the subject's ACL, no body when it has none.
func (c *Controller) getAcl(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if !c.cfg.AuthenticationEnabled {
		return notEnabled(req)
	}
	name, ok := auth.ParseSubject(req.Str("subject"))
	if !ok { // Apache: a NullPointerException, answered as any other error
		return remoting.NewResponse(req, remoting.SystemError, "An system error occurred, please try again later.")
	}
	c.st.mu.RLock()
	u, a := c.st.users[name], c.st.acls[name]
	c.st.mu.RUnlock()
	if u == nil {
		return remoting.NewResponse(req, remoting.NoPermission, "The subject is not exist.")
	}
	resp := remoting.NewResponse(req, remoting.Success, "")
	if a != nil {
		resp.Body, _ = json.Marshal(a.Info()) // strings only: cannot fail
	}
	return resp
}

// listAcls is AUTH_LIST_ACL (auth.FilterAcls).
func (c *Controller) listAcls(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if !c.cfg.AuthenticationEnabled {
		return notEnabled(req)
	}
	c.st.mu.RLock()
	out := auth.FilterAcls(c.st.acls, req.Str("subjectFilter"), req.Str("resourceFilter"))
	c.st.mu.RUnlock()
	resp := remoting.NewResponse(req, remoting.Success, "")
	if len(out) > 0 {
		resp.Body, _ = json.Marshal(out)
	}
	return resp
}
