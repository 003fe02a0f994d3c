package controller

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/rocketgo/rocketgo/auth"
	"github.com/rocketgo/rocketgo/auth/signature"
	"github.com/rocketgo/rocketgo/remoting"
)

// ACL 2.0 on the controller (Apache's controller has none). The users are
// part of the replicated State: an ADD_USER event in the raft log, so every
// controller checks a request against the same users, whichever it reaches.
// The leader adds the configured users (initAuthenticationUser,
// innerClientAuthenticationCredentials, both Super, as the broker adds them)
// when it finds them absent.
//
// With authenticationEnabled every request must carry the signature of an
// enabled user (signature.Authenticate, Apache's messages), except a
// heartbeat from a broker the metadata knows at that address, sent from
// that address's host: heartbeats only keep a known broker alive. Admin requests need a Super user:
// UPDATE_CONTROLLER_CONFIG, CLEAN_BROKER_DATA, an elect with
// designateElect (mqadmin electMaster) and the user and ACL codes (users.go, acls.go); with
// authorizationEnabled every request that changes the metadata does too, unless the Normal user's
// policy allows Update on the broker set's cluster (acls.go); a Normal user always reads.
// A refusal is NO_PERMISSION with the message, as the broker answers.

// User types and statuses, with Apache's names.
const (
	userSuper    = "Super"
	userNormal   = "Normal"
	userDisabled = "disable"
	userEnabled  = "enable"
)

// user is one account of the controllers. A *user in the State is never
// changed: an event replaces it.
type user struct {
	Username   string `json:"username"`
	Password   string `json:"password"`
	UserType   string `json:"userType"`
	UserStatus string `json:"userStatus"`

	key *signature.Key // signers keyed by Password
}

func (u *user) withKey() *user {
	c := *u
	c.key = signature.NewKey(u.Password)
	return &c
}

// Disabled implements signature.Account.
func (u *user) Disabled() bool { return u.UserStatus == userDisabled }

// Verify implements signature.Account.
func (u *user) Verify(req *remoting.Command, sig string) bool { return u.key.Verify(req, sig) }

// initUsers parses the configured users (initAuthenticationUser, then
// innerClientAuthenticationCredentials), each a Super user.
func (c Config) initUsers() ([]user, error) {
	var out []user
	if s := strings.TrimSpace(string(c.InitAuthenticationUser)); s != "" {
		var u struct{ Username, Password string }
		if err := json.Unmarshal([]byte(s), &u); err != nil || u.Username == "" || u.Password == "" {
			return nil, fmt.Errorf("controller: initAuthenticationUser is not a JSON user with username and password")
		}
		out = append(out, user{Username: u.Username, Password: u.Password, UserType: userSuper, UserStatus: userEnabled})
	}
	if ak, sk, ok, err := c.innerCredentials(); err != nil {
		return nil, err
	} else if ok {
		out = append(out, user{Username: ak, Password: sk, UserType: userSuper, UserStatus: userEnabled})
	}
	return out, nil
}

// innerCredentials reads innerClientAuthenticationCredentials
// ({"accessKey":..,"secretKey":..}).
func (c Config) innerCredentials() (ak, sk string, ok bool, err error) {
	s := strings.TrimSpace(string(c.InnerClientAuthenticationCredentials))
	if s == "" {
		return "", "", false, nil
	}
	var v struct{ AccessKey, SecretKey string }
	if err := json.Unmarshal([]byte(s), &v); err != nil || v.AccessKey == "" || v.SecretKey == "" {
		return "", "", false, fmt.Errorf("controller: innerClientAuthenticationCredentials is not JSON credentials with accessKey and secretKey")
	}
	return v.AccessKey, v.SecretKey, true, nil
}

// signer signs the controller's own requests with the inner credentials;
// nil without them.
func (c Config) signer() func(req *remoting.Command) {
	ak, sk, ok, _ := c.innerCredentials() // validated
	if !ok {
		return nil
	}
	key := signature.NewKey(sk)
	return func(req *remoting.Command) {
		req.Set(signature.FieldAccessKey, ak)
		s := key.Signer()
		req.Set(signature.FieldSignature, string(s.Sign(nil, req)))
		key.Release(s)
	}
}

// ensureUsers adds the configured users absent from the State (leader
// only, once it is ready).
func (c *Controller) ensureUsers() {
	want, _ := c.cfg.initUsers() // validated
	if len(want) == 0 {
		return
	}
	r := c.run(func() *result {
		c.st.mu.RLock()
		defer c.st.mu.RUnlock()
		r := &result{code: remoting.Success}
		for i := range want {
			if c.st.users[want[i].Username] == nil {
				u := want[i]
				r.events = append(r.events, event{Type: evAddUser, User: &u})
			}
		}
		return r
	})
	if r.code != remoting.Success {
		c.log.Error().Int32("code", r.code).Str("remark", r.remark).Msg("configured users not added")
		return
	}
	c.log.Info().Int("users", len(want)).Msg("configured users in place")
}

// lookupUser is the State's user named name.
func (c *Controller) lookupUser(name string) (signature.Account, bool) {
	c.st.mu.RLock()
	u := c.st.users[name]
	c.st.mu.RUnlock()
	return u, u != nil
}

// adminCode reports the requests only a Super user may send; with
// authorizationEnabled also those that change the metadata.
func adminCode(req *remoting.Command, authorization bool) bool {
	switch req.Code {
	case remoting.UpdateControllerConfig, remoting.CleanBrokerData,
		authCreateUser, authUpdateUser, authDeleteUser, authGetUser, authListUser,
		authCreateACL, authUpdateACL, authDeleteACL, authGetACL, authListACL:
		return true
	case remoting.ControllerElectMaster:
		return authorization || req.Bool("designateElect")
	case remoting.ControllerAlterSyncStateSet, remoting.ControllerRegisterBroker,
		remoting.ControllerGetNextBrokerID, remoting.ControllerApplyBrokerID:
		return authorization
	}
	return false
}

// knownBroker reports whether an unsigned heartbeat comes from a broker the
// metadata holds at the address it gives, over a connection from that
// address's host: a stranger elsewhere cannot keep a dead master alive with
// heartbeats copied from the route.
func (c *Controller) knownBroker(conn *remoting.Conn, req *remoting.Command) bool {
	hb, ok := decodeHeartbeat(req)
	if !ok {
		return false
	}
	host, _, err := net.SplitHostPort(hb.BrokerAddr)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || ip.Unmap() != conn.RemoteAddr.Addr().Unmap() {
		return false
	}
	c.st.mu.RLock()
	defer c.st.mu.RUnlock()
	r := c.st.replicas[hb.BrokerName]
	if r == nil || r.Cluster != hb.Cluster {
		return false
	}
	b, ok := r.Brokers[hb.BrokerID]
	return ok && b.Addr == hb.BrokerAddr && hb.BrokerAddr != ""
}

// check decides a request before its handler runs: nil lets it through.
// It reads the State and computes one HMAC: cheap enough for the event
// loop.
func (c *Controller) check(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	if !c.cfg.AuthenticationEnabled {
		return nil
	}
	if _, signed := req.Lookup(signature.FieldAccessKey); !signed && req.Code == remoting.BrokerHeartbeat && c.knownBroker(conn, req) {
		return nil
	}
	name, msg := signature.Authenticate(req, c.lookupUser)
	if msg != "" {
		c.warn.Warn().Int32("code", req.Code).Stringer("remote", conn.RemoteAddr).Str("user", short(name)).Str("reason", msg).Msg("controller request refused: authentication")
		return remoting.NewResponse(req, remoting.NoPermission, msg)
	}
	if !adminCode(req, c.cfg.AuthorizationEnabled) {
		return nil
	}
	if c.isSuper(name) || c.authorized(conn, req, name) {
		return nil
	}
	c.warn.Warn().Int32("code", req.Code).Stringer("remote", conn.RemoteAddr).Str("user", short(name)).Msg("controller request refused: not a Super user")
	return remoting.NewResponse(req, remoting.NoPermission, "User:"+name+" has no permission to access Cluster:"+c.cfg.ControllerDLegerGroup+
		" from "+conn.RemoteAddr.Addr().String()+", the controller's admin requests need a Super user.")
}

// authorized reports whether user's ACL lets it send req, a request that
// only authorizationEnabled keeps from Normal users (adminCode's second
// group): Update on Cluster:<the broker set's cluster>, from the
// connection's address. Super-only requests are never authorized so.
func (c *Controller) authorized(conn *remoting.Conn, req *remoting.Command, user string) bool {
	if adminCode(req, false) { // Super-only whatever the policies
		return false
	}
	cluster := req.Str("clusterName")
	c.st.mu.RLock()
	defer c.st.mu.RUnlock()
	if cluster == "" {
		if r := c.st.replicas[req.Str("brokerName")]; r != nil {
			cluster = r.Cluster
		}
	}
	return c.st.acls[user].Allows(auth.Request{Resource: auth.OfCluster(cluster), Actions: []auth.Action{auth.ActionUpdate}},
		conn.RemoteAddr.Addr().Unmap())
}

// superCaller reports whether req was signed by a Super user (only
// meaningful once check let it through with authentication on).
func (c *Controller) superCaller(req *remoting.Command) bool {
	if !c.cfg.AuthenticationEnabled {
		return false
	}
	ak, _ := req.Lookup(signature.FieldAccessKey)
	return c.isSuper(ak)
}

// isSuper reports whether name is a Super user now (a user deleted since
// its request was authenticated is not).
func (c *Controller) isSuper(name string) bool {
	c.st.mu.RLock()
	u := c.st.users[name]
	c.st.mu.RUnlock()
	return u != nil && u.UserType == userSuper
}

// guard wraps every handler of t with check.
func (c *Controller) guard(t remoting.Table) remoting.Table {
	for code, h := range t {
		t[code] = func(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
			if resp := c.check(conn, req); resp != nil {
				return resp
			}
			return h(conn, req)
		}
	}
	return t
}

// short bounds a client-chosen name in a log line.
func short(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
