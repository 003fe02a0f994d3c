package namesrv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocketgo/rocketgo/auth/signature"
	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
)

const testUsers = `[
 {"username":"nsBroker","password":"brokerPass","userType":"Normal","userStatus":"enable"},
 {"username":"nsOff","password":"offPass","userType":"Super","userStatus":"disable"}
]`

// authConfig turns authentication on with a Super user nsAdmin and the
// users of testUsers.
func authConfig(t *testing.T) func(*Config) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, usersFile), []byte(testUsers), 0o600); err != nil {
		t.Fatal(err)
	}
	return func(c *Config) {
		c.AuthenticationEnabled = true
		c.AuthConfigPath = dir
		c.InitAuthenticationUser = `{"username":"nsAdmin","password":"adminPass"}`
	}
}

// signingClient signs every request as AclClientRPCHook does.
func signingClient(t *testing.T, ak, sk string) *remoting.Client {
	cl := remoting.NewClient(testutil.Logger())
	t.Cleanup(func() { _ = cl.Close() })
	cl.SetSigner(func(req *remoting.Command) {
		req.Set(signature.FieldAccessKey, ak)
		req.Set(signature.FieldSignature, string(signature.Sign(nil, []byte(sk), req)))
	})
	return cl
}

func expectRefused(t *testing.T, what string, resp *remoting.Command, remark string) {
	t.Helper()
	if resp.Code != remoting.NoPermission || resp.Remark != remark {
		t.Errorf("%s: code %d remark %q, want %d %q", what, resp.Code, resp.Remark, remoting.NoPermission, remark)
	}
}

func routeAddrs(t *testing.T, ns *Server, topic string) string {
	t.Helper()
	rd, err := ns.Routes.Route(topic)
	if err != nil {
		return err.Error()
	}
	var addrs []string
	for _, b := range rd.BrokerDatas {
		for _, a := range b.BrokerAddrs {
			addrs = append(addrs, a)
		}
	}
	return strings.Join(addrs, ",")
}

// With authenticationEnabled, a broker user registers, anonymous and
// wrongly signed writes are refused with Apache's messages and change
// nothing, admin writes need a Super user, and reads stay open.
func TestAuthWritesNeedSignature(t *testing.T) {
	ns, anon := startNamesrv(t, authConfig(t))
	addr := ns.Addr()
	brokerCl := signingClient(t, "nsBroker", "brokerPass")
	adminCl := signingClient(t, "nsAdmin", "adminPass")

	body := []byte(registerBody)
	expectCode(t, call(t, brokerCl, addr, remoting.RegisterBroker, registerHeader("b1", "127.0.0.1:10911", 0, body), body), remoting.Success)
	if got := routeAddrs(t, ns, "T"); got != "127.0.0.1:10911" {
		t.Fatalf("route of T after the signed registration: %s", got)
	}

	hijack := registerHeader("b1", "6.6.6.6:10911", 0, body)
	writes := []struct {
		name string
		code int32
		ext  map[string]string
		body []byte
	}{
		{"register 6.6.6.6", remoting.RegisterBroker, hijack, body},
		{"unregister", remoting.UnregisterBroker, map[string]string{"brokerName": "b1", "brokerAddr": "127.0.0.1:10911", "clusterName": "DefaultCluster", "brokerId": "0"}, nil},
		{"heartbeat", codeBrokerHeartbeat, map[string]string{"brokerName": "b1", "brokerAddr": "6.6.6.6:10911", "clusterName": "DefaultCluster"}, nil},
		{"query data version", remoting.QueryDataVersion, map[string]string{"brokerName": "b1", "brokerAddr": "6.6.6.6:10911", "clusterName": "DefaultCluster", "brokerId": "0"}, []byte(`{"counter":1,"stateVersion":0,"timestamp":1}`)},
		{"put kv", remoting.PutKVConfig, map[string]string{"namespace": "ns", "key": "k", "value": "evil"}, nil},
		{"delete kv", remoting.DeleteKVConfig, map[string]string{"namespace": "ns", "key": "k"}, nil},
		{"delete topic", remoting.DeleteTopicInNamesrv, map[string]string{"topic": "T"}, nil},
		{"register topic", remoting.RegisterTopicInNamesrv, map[string]string{"topic": "T"}, []byte(`{"queueDatas":[{"brokerName":"evil","readQueueNums":1,"writeQueueNums":1,"perm":6,"topicSysFlag":0}],"brokerDatas":[]}`)},
		{"wipe write perm", codeWipeWritePermOfBroker, map[string]string{"brokerName": "b1"}, nil},
		{"add write perm", codeAddWritePermOfBroker, map[string]string{"brokerName": "b1"}, nil},
		{"update config", remoting.UpdateNamesrvConfig, nil, []byte("enableTopicList=false\n")},
	}
	expectCode(t, call(t, adminCl, addr, remoting.PutKVConfig, map[string]string{"namespace": "ns", "key": "k", "value": "good"}, nil), remoting.Success)
	wrong := signingClient(t, "nsAdmin", "brokerPass")
	off := signingClient(t, "nsOff", "offPass")
	unknown := signingClient(t, "nobody", "x")
	for _, w := range writes {
		expectRefused(t, "anonymous "+w.name, call(t, anon, addr, w.code, w.ext, w.body), "username cannot be null.")
		expectRefused(t, "wrong password "+w.name, call(t, wrong, addr, w.code, w.ext, w.body), "check signature failed.")
		expectRefused(t, "disabled "+w.name, call(t, off, addr, w.code, w.ext, w.body), "User:nsOff is disabled.")
		expectRefused(t, "unknown "+w.name, call(t, unknown, addr, w.code, w.ext, w.body), "User:nobody is not found.")
		if codeAccess[w.code] == superUser {
			expectRefused(t, "broker user "+w.name, call(t, brokerCl, addr, w.code, w.ext, w.body),
				"User:nsBroker has no permission to change the name server: only a Super user may.")
		}
	}
	if got := routeAddrs(t, ns, "T"); got != "127.0.0.1:10911" {
		t.Errorf("route of T after the refused writes: %s", got)
	}
	if v, _ := ns.KV.Value("ns", "k"); v != "good" {
		t.Errorf("kv after the refused writes: %q", v)
	}
	if !ns.live.Load().EnableTopicList {
		t.Error("config changed by a refused write")
	}

	// Reads stay open.
	resp := call(t, anon, addr, remoting.GetKVConfig, map[string]string{"namespace": "ns", "key": "k"}, nil)
	if v, _ := resp.Lookup("value"); resp.Code != remoting.Success || v != "good" {
		t.Errorf("anonymous GET_KV_CONFIG: %d %q %q", resp.Code, resp.Remark, v)
	}
	expectCode(t, call(t, anon, addr, remoting.GetRouteInfoByTopic, map[string]string{"topic": "T"}, nil), remoting.Success)
	expectCode(t, call(t, anon, addr, remoting.GetBrokerClusterInfo, nil, nil), remoting.Success)
	cfgText := string(call(t, anon, addr, remoting.GetNamesrvConfig, nil, nil).Body)
	if strings.Contains(cfgText, "adminPass") || !strings.Contains(cfgText, "initAuthenticationUser=***") {
		t.Errorf("GET_NAMESRV_CONFIG shows the init user: %s", cfgText)
	}

	// A Super user's admin writes are served.
	expectCode(t, call(t, adminCl, addr, codeWipeWritePermOfBroker, map[string]string{"brokerName": "b1"}, nil), remoting.Success)
	expectCode(t, call(t, adminCl, addr, remoting.DeleteKVConfig, map[string]string{"namespace": "ns", "key": "k"}, nil), remoting.Success)
	if _, err := ns.KV.Value("ns", "k"); err == nil {
		t.Error("kv not deleted by the super user")
	}
	expectCode(t, call(t, brokerCl, addr, remoting.UnregisterBroker,
		map[string]string{"brokerName": "b1", "brokerAddr": "127.0.0.1:10911", "clusterName": "DefaultCluster", "brokerId": "0"}, nil), remoting.Success)
	if _, err := ns.Routes.Route("T"); err == nil {
		t.Errorf("route of T after the signed unregistration: %s", routeAddrs(t, ns, "T"))
	}
}

// Off (the default), the name server takes writes from anyone, as Apache's.
func TestAuthOffTakesAnonymousWrites(t *testing.T) {
	ns, anon := startNamesrv(t, nil)
	body := []byte(registerBody)
	expectCode(t, call(t, anon, ns.Addr(), remoting.RegisterBroker, registerHeader("b1", "6.6.6.6:10911", 0, body), body), remoting.Success)
	if got := routeAddrs(t, ns, "T"); got != "6.6.6.6:10911" {
		t.Fatalf("route of T: %s", got)
	}
}

// Every code the name server serves is classified, so a new write code
// cannot be served to anyone by omission.
func TestCodeAccessCoversTable(t *testing.T) {
	ns, err := New(testConfig(t), testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	tbl := ns.newHandlers(func(fn func()) bool { fn(); return true }).handlerTable()
	for code := range tbl {
		if _, ok := codeAccess[code]; !ok {
			t.Errorf("code %d has no access in codeAccess", code)
		}
	}
	for code := range codeAccess {
		if _, ok := tbl[code]; !ok {
			t.Errorf("codeAccess lists %d, which is not served", code)
		}
	}
}

func TestLoadUsers(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(dir, usersFile), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := testConfig(t)
	cfg.AuthenticationEnabled = true
	if _, err := New(cfg, testutil.Logger()); err == nil || !strings.Contains(err.Error(), "without users") {
		t.Errorf("no users: %v", err)
	}
	cfg.AuthConfigPath = dir
	for _, bad := range []string{`{`, `[{"username":"a"}]`, `[{"username":"a","password":"p","userType":"Root"}]`,
		`[{"username":"a","password":"p","userStatus":"maybe"}]`, `[{"username":"a","password":"p","extra":1}]`} {
		write(bad)
		if _, err := New(cfg, testutil.Logger()); err == nil {
			t.Errorf("users file %s accepted", bad)
		}
	}
	write(testUsers)
	cfg.InitAuthenticationUser = `{"username":"nsBroker","password":"newPass"}`
	us, err := loadUsers(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(us) != 2 || !us["nsBroker"].super || !us["nsOff"].disabled {
		t.Errorf("users: %+v", us)
	}
	cfg.InitAuthenticationUser = `{"username":"x"`
	if _, err := loadUsers(cfg); err == nil {
		t.Error("a bad initAuthenticationUser accepted")
	}
	for _, kv := range config.Pairs(cfg) {
		if kv[0] == "initAuthenticationUser" && kv[1] != "***" {
			t.Errorf("mqnamesrv -p prints initAuthenticationUser=%s", kv[1])
		}
	}
}
