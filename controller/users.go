package controller

import (
	"slices"
	"strings"

	"github.com/rocketgo/rocketgo/remoting"
)

// The user codes of ACL 2.0 (AUTH_CREATE_USER … AUTH_LIST_USER, the
// broker's 3001–3005, which mqadmin createUser/updateUser/deleteUser/
// getUser/listUser send to the address given with -b): on the controller
// each edit is an event in the raft log, so every controller has it once
// it is committed. Only a Super user may send them (check), and only with
// authenticationEnabled: without it they answer as a broker without ACL
// 2.0 does. The ACL codes (3006–3010) are in acls.go.

// The user codes (RequestCode.AUTH_*).
const (
	authCreateUser int32 = 3001
	authUpdateUser int32 = 3002
	authDeleteUser int32 = 3003
	authGetUser    int32 = 3004
	authListUser   int32 = 3005
)

// maxUsers bounds the users a Super user can add.
const maxUsers = 10000

// maxUsername bounds a username's length.
const maxUsername = 256

// userInfo is the body of the user codes (Apache's UserInfo).
type userInfo struct {
	Username   string `json:"username,omitempty"`
	Password   string `json:"password,omitempty"`
	UserType   string `json:"userType,omitempty"`
	UserStatus string `json:"userStatus,omitempty"`
}

func (u *user) info() userInfo {
	return userInfo{Username: u.Username, Password: u.Password, UserType: u.UserType, UserStatus: u.UserStatus}
}

// userTable adds the user codes to t.
func (c *Controller) userTable(t remoting.Table) {
	t[authCreateUser] = c.editUser
	t[authUpdateUser] = c.editUser
	t[authDeleteUser] = c.deleteUser
	t[authGetUser] = c.getUser
	t[authListUser] = c.listUsers
}

func notEnabled(req *remoting.Command) *remoting.Command {
	return remoting.NewResponse(req, remoting.SystemError, "auth is not enabled")
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }

// editUser is AUTH_CREATE_USER and AUTH_UPDATE_USER: the header's
// username, the body's password, type and status.
func (c *Controller) editUser(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	if !c.cfg.AuthenticationEnabled {
		return notEnabled(req)
	}
	in, fail := decodeUser(req)
	if fail != nil {
		return respond(req, fail)
	}
	name := in.Username
	create := req.Code == authCreateUser
	caller := req.Str("AccessKey")
	return c.park(conn, req, func() *result {
		r := c.ru.editUser(in, create)
		if r.code == remoting.Success {
			c.log.Info().Str("username", short(name)).Str("caller", short(caller)).Bool("create", create).Msg("controller user edited")
		}
		return r
	})
}

// decodeUser reads AUTH_CREATE_USER's and AUTH_UPDATE_USER's header and
// body; fail is the answer to a request that does not decode.
func decodeUser(req *remoting.Command) (in userInfo, fail *result) {
	name := req.Str("username")
	if blank(name) {
		return in, &result{code: remoting.InvalidParameter, remark: "The username is blank"}
	}
	if len(name) > maxUsername || hasControl(name) {
		return in, &result{code: remoting.InvalidParameter, remark: "The username is invalid"}
	}
	if len(req.Body) == 0 {
		return in, &result{code: remoting.SystemError, remark: "java.lang.NullPointerException"}
	}
	if err := json.Unmarshal(req.Body, &in); err != nil {
		return in, &result{code: remoting.SystemError, remark: "com.alibaba.fastjson2.JSONException: " + err.Error()}
	}
	in.Username = name
	if in.UserType != "" && in.UserType != userSuper && in.UserType != userNormal {
		in.UserType = "" // Apache's getByName: null
	}
	if in.UserStatus != "" && in.UserStatus != userEnabled && in.UserStatus != userDisabled {
		in.UserStatus = ""
	}
	return in, nil
}

// editUser decides a create or an update with Apache's remarks
// (AuthenticationMetadataManagerImpl).
func (ru rules) editUser(in userInfo, create bool) *result {
	st := ru.st
	st.mu.RLock()
	defer st.mu.RUnlock()
	r := &result{code: remoting.Success}
	old := st.users[in.Username]
	var u user
	switch {
	case create:
		if blank(in.Password) {
			return r.fail(remoting.NoPermission, "password can not be blank")
		}
		if old != nil {
			return r.fail(remoting.NoPermission, "The user is existed")
		}
		if len(st.users) >= maxUsers {
			return r.fail(remoting.NoPermission, "too many users")
		}
		u = user{Username: in.Username, Password: in.Password, UserType: in.UserType, UserStatus: in.UserStatus}
		if u.UserType == "" {
			u.UserType = userNormal
		}
		if u.UserStatus == "" {
			u.UserStatus = userEnabled
		}
	default:
		if old == nil {
			return r.fail(remoting.NoPermission, "The user is not exist")
		}
		u = *old
		if !blank(in.Password) {
			u.Password = in.Password
		}
		if in.UserType != "" {
			u.UserType = in.UserType
		}
		if in.UserStatus != "" {
			u.UserStatus = in.UserStatus
		}
	}
	u.key = nil
	r.events = []event{{Type: evAddUser, User: &u}}
	return r
}

// deleteUser is AUTH_DELETE_USER: an unknown user is a success.
func (c *Controller) deleteUser(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	if !c.cfg.AuthenticationEnabled {
		return notEnabled(req)
	}
	name := req.Str("username")
	if blank(name) {
		return remoting.NewResponse(req, remoting.NoPermission, "username can not be blank")
	}
	return c.park(conn, req, func() *result {
		c.st.mu.RLock()
		defer c.st.mu.RUnlock()
		r := &result{code: remoting.Success}
		if c.st.users[name] != nil {
			r.events = []event{{Type: evDeleteUser, User: &user{Username: name}}}
		}
		return r
	})
}

// getUser is AUTH_GET_USER: the user as UserInfo, no body for an unknown
// one.
func (c *Controller) getUser(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if !c.cfg.AuthenticationEnabled {
		return notEnabled(req)
	}
	name := req.Str("username")
	if blank(name) {
		return remoting.NewResponse(req, remoting.InvalidParameter, "The username is blank")
	}
	resp := remoting.NewResponse(req, remoting.Success, "")
	c.st.mu.RLock()
	u := c.st.users[name]
	c.st.mu.RUnlock()
	if u != nil {
		resp.Body, _ = json.Marshal(u.info()) // strings only: cannot fail
	}
	return resp
}

// listUsers is AUTH_LIST_USER: the users whose name contains filter, in
// name order.
func (c *Controller) listUsers(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if !c.cfg.AuthenticationEnabled {
		return notEnabled(req)
	}
	filter := req.Str("filter")
	var out []userInfo
	c.st.mu.RLock()
	for _, u := range c.st.users {
		if blank(filter) || strings.Contains(u.Username, filter) {
			out = append(out, u.info())
		}
	}
	c.st.mu.RUnlock()
	slices.SortFunc(out, func(a, b userInfo) int { return strings.Compare(a.Username, b.Username) })
	resp := remoting.NewResponse(req, remoting.Success, "")
	if len(out) > 0 {
		resp.Body, _ = json.Marshal(out)
	}
	return resp
}
