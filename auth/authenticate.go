package auth

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/rocketgo/rocketgo/auth/signature"
	"github.com/rocketgo/rocketgo/remoting"
)

// The extFields the clients sign with (SessionCredentials, MixAll).
const (
	fieldAccessKey = signature.FieldAccessKey
)

// Config is what the keys turn on (AuthConfig).
type Config struct {
	Authentication bool // authenticationEnabled
	Authorization  bool // authorizationEnabled
	// Cluster is the broker's cluster: the Cluster resource of admin codes.
	Cluster string
	// The requests each step skips (authenticationWhitelist and
	// authorizationWhitelist).
	AuthenticationWhitelist, AuthorizationWhitelist Whitelist
	// TrustLocal lets in-process connections through: the local proxy's
	// (mqbroker --enable-proxy), whose gRPC calls GRPC checked. Apache's
	// local proxy calls the broker's processors without its pipeline.
	TrustLocal bool
}

// Whitelist is an authenticationWhitelist or authorizationWhitelist key:
// comma-separated items that Apache compares, trimmed, with a request's
// rpcCode — a Remoting request's code in decimal, a gRPC request's message
// full name (apache.rocketmq.v2.QueryRouteRequest). The zero value lists
// nothing.
type Whitelist struct {
	codes map[int32]bool
	names map[string]bool
}

// ParseWhitelist reads a whitelist key. An item that is a code's decimal
// text matches that code; any other matches the gRPC message of that name.
func ParseWhitelist(s string) Whitelist {
	w := Whitelist{codes: map[int32]bool{}, names: map[string]bool{}}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if n, err := strconv.ParseInt(item, 10, 32); err == nil && strconv.FormatInt(n, 10) == item {
			w.codes[int32(n)] = true
		} else if item != "" {
			w.names[item] = true
		}
	}
	return w
}

// Code reports whether the Remoting request code is listed.
func (w Whitelist) Code(code int32) bool { return w.codes[code] }

// Name reports whether the gRPC message full name is listed.
func (w Whitelist) Name(name string) bool { return w.names[name] }

// authenticate is DefaultAuthenticationHandler (package signature holds
// the check and its messages).
func (s *Store) authenticate(req *remoting.Command) *remoting.Refusal {
	if _, msg := signature.Authenticate(req, s.account); msg != "" {
		return refuse(msg)
	}
	return nil
}

// account is the user named name for signature.Authenticate.
func (s *Store) account(name string) (signature.Account, bool) {
	u := s.user(name)
	return u, u != nil
}

// Disabled implements signature.Account.
func (u *User) Disabled() bool { return u.Status == Disabled }

// Verify implements signature.Account: ACL 2.0's comparison, with one of
// the user's pooled signers.
func (u *User) Verify(req *remoting.Command, sig string) bool {
	sg := u.signer()
	defer u.signers.Put(sg)
	return sg.Verify(req, sig)
}

// authorize is UserAuthorizationHandler then AclAuthorizationHandler for
// each resource the request uses, in the builder's order; the first
// refusal is the answer.
func (s *Store) authorize(req *remoting.Command, ip netip.Addr, cfg *Config, scratch []Request, entries []*Entry) *remoting.Refusal {
	rs, err := requests(req, cfg.Cluster, scratch[:0])
	if err != nil {
		return errParse
	}
	if len(rs) == 0 || cfg.AuthorizationWhitelist.Code(req.Code) {
		return nil
	}
	ak, ok := req.Lookup(fieldAccessKey)
	return s.authorizeAll(ak, ok, rs, ip, entries)
}

// authorizeAll decides rs for the subject ak (hasAK false: none).
func (s *Store) authorizeAll(ak string, hasAK bool, rs []Request, ip netip.Addr, entries []*Entry) *remoting.Refusal {
	return authorizeIn(s, ak, hasAK, rs, ip, entries)
}

// authorizeIn is authorizeAll against any directory.
func authorizeIn(d Directory, ak string, hasAK bool, rs []Request, ip netip.Addr, entries []*Entry) *remoting.Refusal {
	if len(rs) == 0 {
		return nil
	}
	if !hasAK {
		// No subject: Apache's handler fails with a NullPointerException.
		return refuse("Authorization failed. Please verify your access rights and try again.")
	}
	u := d.LookupUser(ak)
	if u == nil {
		return refuse("User:" + ak + " not found.")
	}
	if u.Type == Super {
		return nil
	}
	a := d.LookupAcl(ak)
	host := ""
	for _, r := range rs {
		var e *Entry
		if a != nil {
			if host == "" && a.usesSourceIPs() {
				host = javaHost(ip) // text form only when an entry compares it
			}
			e = a.decide(r, ip, host, entries)
		}
		switch {
		case e == nil:
			return denied(ak, r, ip, "no matched policies.")
		case e.Decision == Deny:
			return denied(ak, r, ip, "the decision is deny.")
		}
	}
	return nil
}

// denied is AclAuthorizationHandler.throwException's message.
func denied(user string, r Request, ip netip.Addr, detail string) *remoting.Refusal {
	return refuse(SubjectKey(user) + " has no permission to access " + r.Resource.Key() + " from " + javaHost(ip) + ", " + detail)
}
