package auth

import (
	"strings"

	"github.com/rocketgo/rocketgo/remoting"
)

// Service is the user and ACL edits of the admin codes, with the rules
// and remarks of Apache's AdminBrokerProcessor and its
// Authentication/AuthorizationMetadataManagerImpl. Each edit is written
// and in force when it returns.
type Service struct{ s *Store }

var _ remoting.Interceptor = (*Interceptor)(nil)

// NewService edits s.
func NewService(s *Store) *Service { return &Service{s: s} }

// notSuper is isNotSuperUserLogin: a caller (AccessKey) that is not a
// super user; no caller (authentication off) is not refused.
func (v *Service) notSuper(caller string) bool {
	if caller == "" {
		return false
	}
	u := v.s.user(caller)
	return u == nil || u.Type != Super
}

// CreateUser is AUTH_CREATE_USER.
func (v *Service) CreateUser(caller string, i UserInfo) error {
	u := userOf(i)
	if u.Type == Super && v.notSuper(caller) {
		return &remoting.Refusal{Code: remoting.SystemError, Remark: "The super user can only be create by super user"}
	}
	return v.createUser(u)
}

func (v *Service) createUser(u *User) error {
	if isBlank(u.Username) {
		return refuse("username can not be blank")
	}
	if isBlank(u.Password) {
		return refuse("password can not be blank")
	}
	if u.Type == 0 {
		u.Type = Normal
	}
	if u.Status == 0 {
		u.Status = Enabled
	}
	return v.s.edit(func(t *tables) (bool, bool, error) {
		if t.users[u.Username] != nil {
			return false, false, refuse("The user is existed")
		}
		t.users[u.Username] = u
		return true, false, nil
	})
}

// UpdateUser is AUTH_UPDATE_USER: what the body carries replaces the
// user's value.
func (v *Service) UpdateUser(caller string, i UserInfo) error {
	u := userOf(i)
	if u.Type == Super && v.notSuper(caller) {
		return &remoting.Refusal{Code: remoting.SystemError, Remark: "The super user can only be update by super user"}
	}
	notSuper := v.notSuper(caller)
	return v.s.edit(func(t *tables) (bool, bool, error) {
		old := t.users[u.Username]
		if old == nil {
			return false, false, refuse("The user is not exist")
		}
		if old.Type == Super && notSuper {
			return false, false, refuse("The super user can only be update by super user")
		}
		n := old.clone()
		if !isBlank(u.Password) {
			n.Password = u.Password
		}
		if u.Type != 0 {
			n.Type = u.Type
		}
		if u.Status != 0 {
			n.Status = u.Status
		}
		t.users[n.Username] = n
		return true, false, nil
	})
}

// DeleteUser is AUTH_DELETE_USER: the user and its ACL; an unknown user
// is a success.
func (v *Service) DeleteUser(caller, username string) error {
	if isBlank(username) {
		return refuse("username can not be blank")
	}
	notSuper := v.notSuper(caller)
	return v.s.edit(func(t *tables) (bool, bool, error) {
		old := t.users[username]
		if old == nil {
			return false, false, nil
		}
		if old.Type == Super && notSuper {
			return false, false, refuse("The super user can only be update by super user")
		}
		delete(t.users, username)
		_, hadAcl := t.acls[username]
		delete(t.acls, username)
		return true, hadAcl, nil
	})
}

// GetUser is AUTH_GET_USER: nil for an unknown user.
func (v *Service) GetUser(username string) (*UserInfo, error) {
	if isBlank(username) {
		return nil, refuse("username can not be blank")
	}
	u := v.s.user(username)
	if u == nil {
		return nil, nil
	}
	i := u.Info()
	return &i, nil
}

// ListUsers is AUTH_LIST_USER: the users whose name contains filter, in
// name order.
func (v *Service) ListUsers(filter string) ([]UserInfo, error) {
	t := v.s.t.Load()
	var out []UserInfo
	for _, k := range sortedKeys(t.users) {
		if !isBlank(filter) && !strings.Contains(k, filter) {
			continue
		}
		out = append(out, t.users[k].Info())
	}
	return out, nil
}

// CreateAcl is AUTH_CREATE_ACL; Apache's createAcl and updateAcl are the
// same: policies merge into the subject's ACL (createAcl adds nothing
// new over updateAcl).
func (v *Service) CreateAcl(subject string, i AclInfo) error { return v.UpdateAcl(subject, i) }

// UpdateAcl is AUTH_UPDATE_ACL.
func (v *Service) UpdateAcl(subject string, i AclInfo) error {
	a, err := ParseAcl(i, subject)
	if err != nil {
		return err
	}
	return v.s.edit(func(t *tables) (bool, bool, error) {
		if t.users[a.Username] == nil {
			return false, false, refuse("The subject of " + SubjectKey(a.Username) + " is not exist.")
		}
		t.acls[a.Username] = t.acls[a.Username].Merged(a)
		return false, true, nil
	})
}

// DeleteAcl is AUTH_DELETE_ACL: one resource's entry of a policy (Custom
// by default), or the whole ACL without a resource.
func (v *Service) DeleteAcl(subject, policyType, resource string) error {
	name, ok := ParseSubject(subject)
	if !ok {
		return refuse("The subject is null.")
	}
	return v.s.edit(func(t *tables) (bool, bool, error) {
		if t.users[name] == nil {
			return false, false, refuse("The subject is not exist.")
		}
		old := t.acls[name]
		if old == nil {
			return false, false, refuse("The acl is not exist.")
		}
		if n := old.Without(policyType, resource); n == nil {
			delete(t.acls, name)
		} else {
			t.acls[name] = n
		}
		return false, true, nil
	})
}

// GetAcl is AUTH_GET_ACL: nil when the user has none.
func (v *Service) GetAcl(subject string) (*AclInfo, error) {
	name, ok := ParseSubject(subject)
	if !ok {
		return nil, errNoSubject
	}
	t := v.s.t.Load()
	if t.users[name] == nil {
		return nil, refuse("The subject is not exist.")
	}
	a := t.acls[name]
	if a == nil {
		return nil, nil
	}
	i := a.Info()
	return &i, nil
}

// ListAcls is AUTH_LIST_ACL (FilterAcls).
func (v *Service) ListAcls(subjectFilter, resourceFilter string) ([]AclInfo, error) {
	return FilterAcls(v.s.t.Load().acls, subjectFilter, resourceFilter), nil
}

// EnsureSuper creates a super user unless the name exists
// (initAuthenticationUser, innerClientAuthenticationCredentials).
func (v *Service) EnsureSuper(username, password string) error {
	if v.s.user(username) != nil {
		return nil
	}
	return v.createUser(&User{Username: username, Password: password, Type: Super})
}
