package controller

import (
	"net"
	"os"
	"strings"
	"testing"

	"github.com/rocketgo/rocketgo/auth/signature"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
)

const (
	testAdmin = `{"username":"admin","password":"admin-secret"}`
	testInner = `{"accessKey":"inner","secretKey":"inner-secret"}`
)

func authOn(cfg *Config) {
	cfg.AuthenticationEnabled = true
	cfg.InitAuthenticationUser = testAdmin
	cfg.InnerClientAuthenticationCredentials = testInner
}

// signAs makes b sign every request as name with password.
func (b *fakeBroker) signAs(name, password string) {
	key := signature.NewKey(password)
	b.cl.SetSigner(func(req *remoting.Command) {
		req.Set(signature.FieldAccessKey, name)
		s := key.Signer()
		req.Set(signature.FieldSignature, string(s.Sign(nil, req)))
		key.Release(s)
	})
}

// waitUsers waits for the configured users to be committed.
func waitUsers(t *testing.T, c *Controller, n int) {
	t.Helper()
	testutil.WaitFor(t, 10e9, func() bool {
		c.st.mu.RLock()
		defer c.st.mu.RUnlock()
		return len(c.st.users) >= n
	})
}

// With authenticationEnabled an anonymous or badly signed client is refused
// every code (but a known broker's heartbeat); a signed broker registers and
// elects; admin codes need a Super user.
func TestAuthenticationOnController(t *testing.T) {
	c := startSingle(t, authOn)
	waitUsers(t, c, 2)
	anon := newFakeBroker(t, "evil")
	bad := newFakeBroker(t, "evil")
	bad.signAs("admin", "wrong")
	bk := newFakeBroker(t, "b1")
	bk.signAs("inner", "inner-secret")

	for _, code := range []int32{remoting.UpdateControllerConfig, remoting.GetControllerConfig, remoting.CleanBrokerData,
		remoting.ControllerGetNextBrokerID, remoting.ControllerApplyBrokerID, remoting.ControllerRegisterBroker,
		remoting.ControllerElectMaster, remoting.ControllerGetReplicaInfo, remoting.ControllerGetMetadataInfo, remoting.BrokerHeartbeat} {
		ext := map[string]string{"clusterName": "c1", "brokerName": "evil", "brokerId": "1", "brokerAddr": "6.6.6.6:1",
			"brokerAddress": "6.6.6.6:1", "appliedBrokerId": "1", "registerCheckCode": "6.6.6.6:1;1", "isCleanLivingBroker": "true"}
		if r := anon.call(c.Addr(), code, ext, []byte("enableElectUncleanMaster=true\n")); r.Code != remoting.NoPermission || r.Remark != "username cannot be null." {
			t.Fatalf("anonymous %d: %d %q", code, r.Code, r.Remark)
		}
		if r := bad.call(c.Addr(), code, ext, nil); r.Code != remoting.NoPermission || r.Remark != "check signature failed." {
			t.Fatalf("bad signature %d: %d %q", code, r.Code, r.Remark)
		}
	}
	if c.live.Load().EnableElectUncleanMaster {
		t.Fatal("an anonymous update took effect")
	}

	if r := bk.register(c.Addr()); r.Code != remoting.Success {
		t.Fatalf("signed register: %d %s", r.Code, r.Remark)
	}
	if r := bk.elect(c.Addr()); r.Code != remoting.Success {
		t.Fatalf("signed elect: %d %s", r.Code, r.Remark)
	}
	// A known broker's heartbeat needs no signature; an unknown one does.
	if r := anon.call(c.Addr(), remoting.BrokerHeartbeat, bk.heartbeatFields(1, 0), nil); r.Code != remoting.Success {
		t.Fatalf("unsigned heartbeat of a known broker: %d %s", r.Code, r.Remark)
	}
	ext := bk.heartbeatFields(1, 0)
	ext["brokerAddr"] = "6.6.6.6:1"
	if r := anon.call(c.Addr(), remoting.BrokerHeartbeat, ext, nil); r.Code != remoting.NoPermission {
		t.Fatalf("unsigned heartbeat at another address: %d %s", r.Code, r.Remark)
	}
	// A broker registered at 127.0.0.2: its unsigned heartbeats count only
	// from that host, not copied by a client on 127.0.0.1.
	far := map[string]string{"clusterName": "c1", "brokerName": "far", "appliedBrokerId": "1", "registerCheckCode": "127.0.0.2:9;1",
		"brokerId": "1", "brokerAddress": "127.0.0.2:9"}
	for _, code := range []int32{remoting.ControllerApplyBrokerID, remoting.ControllerRegisterBroker} {
		if r := bk.call(c.Addr(), code, far, nil); r.Code != remoting.Success && r.Code != remoting.ControllerMasterNotAvailable {
			t.Fatalf("register far (%d): %d %s", code, r.Code, r.Remark)
		}
	}
	if r := anon.call(c.Addr(), remoting.BrokerHeartbeat, map[string]string{"clusterName": "c1", "brokerName": "far", "brokerId": "1", "brokerAddr": "127.0.0.2:9"}, nil); r.Code != remoting.NoPermission {
		t.Fatalf("unsigned heartbeat for 127.0.0.2 from 127.0.0.1: %d %s", r.Code, r.Remark)
	}

	// A Normal user reads but may not change the config or clean.
	normal := user{Username: "bob", Password: "bob-secret", UserType: userNormal, UserStatus: userEnabled}
	if r := c.run(func() *result {
		return &result{code: remoting.Success, events: []event{{Type: evAddUser, User: &normal}}}
	}); r.code != remoting.Success {
		t.Fatalf("add bob: %d %s", r.code, r.remark)
	}
	bob := newFakeBroker(t, "b1")
	bob.signAs("bob", "bob-secret")
	if r := bob.call(c.Addr(), remoting.ControllerGetReplicaInfo, map[string]string{"brokerName": "b1"}, nil); r.Code != remoting.Success {
		t.Fatalf("Normal user reads: %d %s", r.Code, r.Remark)
	}
	for _, code := range []int32{remoting.UpdateControllerConfig, remoting.CleanBrokerData} {
		r := bob.call(c.Addr(), code, map[string]string{"brokerName": "b1", "isCleanLivingBroker": "true"}, []byte("enableElectUncleanMaster=true\n"))
		if r.Code != remoting.NoPermission || !strings.HasPrefix(r.Remark, "User:bob has no permission") {
			t.Fatalf("Normal user %d: %d %q", code, r.Code, r.Remark)
		}
	}

	admin := newFakeBroker(t, "adm")
	admin.signAs("admin", "admin-secret")
	if r := admin.call(c.Addr(), remoting.UpdateControllerConfig, nil, []byte("electMasterMaxRetryCount=4\n")); r.Code != remoting.Success {
		t.Fatalf("Super update: %d %s", r.Code, r.Remark)
	}
	r := admin.call(c.Addr(), remoting.GetControllerConfig, nil, nil)
	if r.Code != remoting.Success || !strings.Contains(string(r.Body), "electMasterMaxRetryCount=4\n") ||
		!strings.Contains(string(r.Body), "initAuthenticationUser=***\n") || strings.Contains(string(r.Body), "secret") {
		t.Fatalf("Super get: %d\n%s", r.Code, r.Body)
	}
	// The file written keeps the secrets, for the next start.
	if data, err := os.ReadFile(c.cfg.ConfigStorePath); err != nil || !strings.Contains(string(data), "admin-secret") {
		t.Fatalf("config file: %v\n%s", err, data)
	}
	if r := admin.call(c.Addr(), remoting.CleanBrokerData, map[string]string{"clusterName": "c1", "brokerName": "b1", "isCleanLivingBroker": "true"}, nil); r.Code != remoting.Success {
		t.Fatalf("Super cleans a living set: %d %s", r.Code, r.Remark)
	}
}

// UPDATE_CONTROLLER_CONFIG never changes where data lives, the peers, the
// ports, the limits or authentication, nor takes a control character; and
// without authentication nobody erases a living broker set.
func TestUpdateConfigRefusals(t *testing.T) {
	c := startSingle(t, nil)
	b := newFakeBroker(t, "b1")
	for _, body := range []string{"controllerStorePath=/tmp/x\n", "controllerDLegerPeers=n0-6.6.6.6:1\n", "bindAddress=0.0.0.0\n",
		"authenticationEnabled=true\n", "controllerMaxHeartbeats=1000000000\n", "serverMaxConnections=100000\n",
		"controllerRaftPortOffset=2\n", "rocketmqHome=/tmp\n"} {
		if r := b.call(c.Addr(), remoting.UpdateControllerConfig, nil, []byte(body)); r.Code != remoting.NoPermission || r.Remark != "Can not update config in black list." {
			t.Fatalf("%q: %d %q", body, r.Code, r.Remark)
		}
	}
	if r := b.call(c.Addr(), remoting.UpdateControllerConfig, nil, []byte(`scanInactiveMasterInterval=5000\nconfigStorePath=/x`+"\n")); r.Code != remoting.InvalidParameter {
		t.Fatalf("newline in a value: %d %q", r.Code, r.Remark)
	}
	if _, err := os.Stat(c.cfg.ConfigStorePath); !os.IsNotExist(err) {
		t.Fatalf("a refused update wrote %s: %v", c.cfg.ConfigStorePath, err)
	}
	if r := b.register(c.Addr()); r.Code != remoting.Success {
		t.Fatalf("register: %d %s", r.Code, r.Remark)
	}
	b.heartbeat([]string{c.Addr()}, 1, 0)
	r := newFakeBroker(t, "x").call(c.Addr(), remoting.CleanBrokerData, map[string]string{"clusterName": "other", "brokerName": "b1", "isCleanLivingBroker": "true"}, nil)
	if r.Code != remoting.ControllerInvalidCleanData {
		t.Fatalf("clean a living set: %d %s", r.Code, r.Remark)
	}
	if r := b.call(c.Addr(), remoting.ControllerGetReplicaInfo, map[string]string{"brokerName": "b1"}, nil); r.Code != remoting.Success {
		t.Fatalf("set gone after a refused clean: %d %s", r.Code, r.Remark)
	}
}

// The Remoting port listens on the controller's own peer host, not on every
// interface, unless bindAddress says so.
func TestListensOnPeerHost(t *testing.T) {
	c := startSingle(t, nil)
	if got := c.rs.Addr(); !strings.HasPrefix(got, "127.0.0.1:") {
		t.Fatalf("listening on %s", got)
	}
	// 127.0.0.2 is this host too (Linux routes 127/8 to lo), but not the
	// address the peer list gives.
	_, port, _ := net.SplitHostPort(c.Addr())
	if conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.2", port), 2e9); err == nil {
		conn.Close()
		t.Fatal("the port answers on 127.0.0.2")
	}
}

// The users travel in the raft log and snapshots.
func TestUsersInSnapshot(t *testing.T) {
	st := NewState()
	st.applyEvents([]event{{Type: evAddUser, User: &user{Username: "u", Password: "p", UserType: userSuper, UserStatus: userEnabled}}})
	b := must(st.marshal())
	st2 := NewState()
	if err := st2.restore(b); err != nil {
		t.Fatal(err)
	}
	u := st2.users["u"]
	req := remoting.NewRequest(remoting.GetControllerConfig, map[string]string{"AccessKey": "u"}, nil)
	req.Set("Signature", string(signature.Sign(nil, []byte("p"), req)))
	if u == nil || u.UserType != userSuper || !u.Verify(req, req.Str("Signature")) {
		t.Fatalf("restored user %+v", u)
	}
}

// A Super user manages the users with the broker's codes; each edit is in
// the raft log, so every controller of the group has it.
func TestUserCodesReplicated(t *testing.T) {
	g := startGroup(t, authOn)
	li := g.leader()
	leader := g.addrs()[li]
	waitUsers(t, g.cs[li], 2)
	admin := newFakeBroker(t, "adm")
	admin.signAs("admin", "admin-secret")
	carol := newFakeBroker(t, "c")
	carol.signAs("carol", "carol-pw")

	if r := carol.call(leader, remoting.ControllerGetReplicaInfo, map[string]string{"brokerName": "x"}, nil); r.Remark != "User:carol is not found." {
		t.Fatalf("unknown carol: %d %q", r.Code, r.Remark)
	}
	if r := carol.call(leader, authCreateUser, map[string]string{"username": "eve"}, []byte(`{"password":"p","userType":"Super"}`)); r.Code != remoting.NoPermission {
		t.Fatalf("a stranger creates a user: %d %q", r.Code, r.Remark)
	}
	if r := admin.call(leader, authCreateUser, map[string]string{"username": "carol"}, []byte(`{"password":"carol-pw"}`)); r.Code != remoting.Success {
		t.Fatalf("create carol: %d %q", r.Code, r.Remark)
	}
	if r := admin.call(leader, authCreateUser, map[string]string{"username": "carol"}, []byte(`{"password":"x"}`)); r.Remark != "The user is existed" {
		t.Fatalf("create carol twice: %d %q", r.Code, r.Remark)
	}
	for i, c := range g.cs {
		testutil.WaitFor(t, 10e9, func() bool { _, ok := c.lookupUser("carol"); return ok })
		if r := carol.call(g.addrs()[i], remoting.ControllerGetMetadataInfo, nil, nil); r.Code != remoting.Success {
			t.Fatalf("carol at controller %d: %d %q", i, r.Code, r.Remark)
		}
	}
	if r := carol.call(leader, remoting.UpdateControllerConfig, nil, []byte("electMasterMaxRetryCount=4\n")); r.Code != remoting.NoPermission {
		t.Fatalf("Normal carol updates the config: %d %q", r.Code, r.Remark)
	}
	r := admin.call(leader, authListUser, nil, nil)
	if r.Code != remoting.Success || !strings.Contains(string(r.Body), `"username":"carol","password":"carol-pw","userType":"Normal","userStatus":"enable"`) {
		t.Fatalf("list: %d %s", r.Code, r.Body)
	}
	if r := admin.call(leader, authUpdateUser, map[string]string{"username": "carol"}, []byte(`{"userStatus":"disable"}`)); r.Code != remoting.Success {
		t.Fatalf("disable carol: %d %q", r.Code, r.Remark)
	}
	if r := carol.call(leader, remoting.ControllerGetMetadataInfo, nil, nil); r.Remark != "User:carol is disabled." {
		t.Fatalf("disabled carol: %d %q", r.Code, r.Remark)
	}
	if r := admin.call(leader, authDeleteUser, map[string]string{"username": "carol"}, nil); r.Code != remoting.Success {
		t.Fatalf("delete carol: %d %q", r.Code, r.Remark)
	}
	if r := carol.call(leader, remoting.ControllerGetMetadataInfo, nil, nil); r.Remark != "User:carol is not found." {
		t.Fatalf("deleted carol: %d %q", r.Code, r.Remark)
	}
}
