package auth

import (
	"strings"
	"sync"

	"github.com/rocketgo/rocketgo/auth/signature"
)

// UserType is Super or Normal (0: Apache's null). A Super user skips
// authorization.
type UserType uint8

// The user types, with Apache's codes.
const (
	Super  UserType = 1
	Normal UserType = 2
)

var userTypeNames = []string{"", "Super", "Normal"}

func (t UserType) String() string { return nameOf(userTypeNames, t) }

// ParseUserType is UserType.getByName (0 for an unknown name).
func ParseUserType(s string) UserType { t, _ := byName[UserType](userTypeNames, s); return t }

// UserStatus is enable or disable (0: Apache's null).
type UserStatus uint8

// The user statuses, with Apache's codes.
const (
	Enabled  UserStatus = 1
	Disabled UserStatus = 2
)

var userStatusNames = []string{"", "enable", "disable"}

func (s UserStatus) String() string { return nameOf(userStatusNames, s) }

// ParseUserStatus is UserStatus.getByName (0 for an unknown name).
func ParseUserStatus(s string) UserStatus { v, _ := byName[UserStatus](userStatusNames, s); return v }

// User is an account: clients sign with AccessKey=Username and the
// password as the secret key. A *User in a table is never changed: an
// edit replaces it.
type User struct {
	Username string
	Password string
	Type     UserType
	Status   UserStatus

	signers sync.Pool // *signature.Signer keyed by Password
}

func (u *User) signer() *signature.Signer {
	if s, ok := u.signers.Get().(*signature.Signer); ok {
		return s
	}
	return signature.NewSigner([]byte(u.Password))
}

// clone copies the user's fields (never its signers).
func (u *User) clone() *User {
	return &User{Username: u.Username, Password: u.Password, Type: u.Type, Status: u.Status}
}

// SubjectKey is User.getSubjectKey: "User:name".
func SubjectKey(username string) string { return "User:" + username }

// ParseSubject is Subject.of for the one subject type Apache has: the
// username of "User:name" (type case-insensitive); ok false where Apache
// has null.
func ParseSubject(key string) (username string, ok bool) {
	typ, name, _ := strings.Cut(key, ":")
	if !strings.EqualFold(typ, "User") {
		return "", false
	}
	return name, true
}

// Acl is one subject's policies. An *Acl in a table is never changed: an
// edit builds a new one.
type Acl struct {
	Username string // the subject is "User:" + Username
	Policies []*Policy
}

// Policy is a Custom or a Default policy's entries.
type Policy struct {
	Type    PolicyType
	Entries []*Entry
}

// Entry is PolicyEntry.
type Entry struct {
	Resource Resource
	Actions  []Action
	// SourceIPs empty: any address (Apache's Environment without IPs).
	SourceIPs []string
	Decision  Decision
}

// policy is Acl.getPolicy: the first of type t, nil if none.
func (a *Acl) policy(t PolicyType) *Policy {
	for _, p := range a.Policies {
		if p.Type == t {
			return p
		}
	}
	return nil
}

// clone copies the acl deep enough to edit policies and their entry lists.
func (a *Acl) clone() *Acl {
	c := &Acl{Username: a.Username, Policies: make([]*Policy, len(a.Policies))}
	for i, p := range a.Policies {
		c.Policies[i] = &Policy{Type: p.Type, Entries: append([]*Entry(nil), p.Entries...)}
	}
	return c
}

// merge is Acl.updatePolicy: a policy of a new type is added; an
// existing one gets each entry replaced (same resource) or appended.
func (a *Acl) merge(ps []*Policy) {
	for _, np := range ps {
		old := a.policy(np.Type)
		if old == nil {
			a.Policies = append(a.Policies, np)
			continue
		}
		for _, ne := range np.Entries {
			i := old.find(ne.Resource)
			if i < 0 {
				old.Entries = append(old.Entries, ne)
				continue
			}
			old.Entries[i] = ne
		}
	}
}

// find is Policy.getEntry: the index of the entry for r, or -1.
func (p *Policy) find(r Resource) int {
	for i, e := range p.Entries {
		if e.Resource == r {
			return i
		}
	}
	return -1
}

// deleteEntry is Acl.deletePolicy: drop the entry for r from the policy
// of type t, and the policy when it is left empty.
func (a *Acl) deleteEntry(t PolicyType, r Resource) {
	for pi, p := range a.Policies {
		if p.Type != t {
			continue
		}
		if i := p.find(r); i >= 0 {
			p.Entries = append(p.Entries[:i:i], p.Entries[i+1:]...)
		}
		if len(p.Entries) == 0 {
			a.Policies = append(a.Policies[:pi:pi], a.Policies[pi+1:]...)
		}
		return
	}
}
