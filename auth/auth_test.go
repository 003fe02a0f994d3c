package auth

import (
	"net/netip"
	"testing"

	"github.com/rocketgo/rocketgo/acl"
	"github.com/rocketgo/rocketgo/remoting"
)

func newTestStore(t *testing.T) (*Store, *Service) {
	t.Helper()
	s, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s, NewService(s)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func signed(user, password string, code int32, ext map[string]string) *remoting.Command {
	req := remoting.NewRequest(code, ext, []byte("body"))
	req.Version = 500
	req.Set("AccessKey", user)
	return resign(req, password)
}

// resign signs req again (Signature is not signed).
func resign(req *remoting.Command, password string) *remoting.Command {
	req.Set("Signature", string(acl.Sign(nil, []byte(password), req)))
	return req
}

var peer = netip.MustParseAddr("10.1.2.3")

func TestAuthenticate(t *testing.T) {
	s, v := newTestStore(t)
	must(t, v.CreateUser("", UserInfo{Username: "alice", Password: "secret12"}))
	must(t, v.CreateUser("", UserInfo{Username: "off", Password: "secret12", UserStatus: "disable"}))
	in := NewInterceptor(s, Config{Authentication: true}, zlog())
	cases := []struct {
		name string
		req  *remoting.Command
		want string
	}{
		{"good", signed("alice", "secret12", 10, map[string]string{"topic": "t"}), ""},
		{"wrong password", signed("alice", "nope", 10, map[string]string{"topic": "t"}), "check signature failed."},
		{"unknown", signed("bob", "secret12", 10, map[string]string{"topic": "t"}), "User:bob is not found."},
		{"disabled", signed("off", "secret12", 10, map[string]string{"topic": "t"}), "User:off is disabled."},
		{"anonymous", remoting.NewRequest(10, map[string]string{"topic": "t"}, nil), "username cannot be null."},
	}
	for _, c := range cases {
		r := in.Check(c.req, peer)
		got := ""
		if r != nil {
			got = r.Remark
			if r.Code != remoting.NoPermission {
				t.Errorf("%s: code %d", c.name, r.Code)
			}
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	// The Go client's unsigned SecurityToken.
	req := signed("alice", "secret12", 10, map[string]string{"topic": "t"})
	req.Set("SecurityToken", "x")
	if r := in.Check(req, peer); r != nil {
		t.Errorf("unsigned SecurityToken refused: %s", r.Remark)
	}
	// Whitelisted code.
	in = NewInterceptor(s, Config{Authentication: true, AuthenticationWhitelist: ParseWhitelist(" 10 ,x")}, zlog())
	if r := in.Check(remoting.NewRequest(10, map[string]string{"topic": "t"}, nil), peer); r != nil {
		t.Errorf("whitelisted code refused: %s", r.Remark)
	}
}

func TestAuthorize(t *testing.T) {
	s, v := newTestStore(t)
	must(t, v.CreateUser("", UserInfo{Username: "root", Password: "secret12", UserType: "Super"}))
	must(t, v.CreateUser("", UserInfo{Username: "alice", Password: "secret12"}))
	must(t, v.CreateUser("", UserInfo{Username: "noacl", Password: "secret12"}))
	must(t, v.CreateAcl("User:alice", AclInfo{Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{
		{Resource: "Topic:order-*", Actions: []string{"Pub", "Sub"}, Decision: "Allow"},
		{Resource: "Topic:order-secret", Actions: []string{"Pub"}, Decision: "Deny"},
		{Resource: "Topic:local", Actions: []string{"Pub"}, SourceIps: []string{"10.1.0.0/16"}, Decision: "Allow"},
		{Resource: "Topic:far", Actions: []string{"Pub"}, SourceIps: []string{"192.168.0.1"}, Decision: "Allow"},
		{Resource: "Group:g1", Actions: []string{"Sub"}, Decision: "Allow"},
	}}}}))
	in := NewInterceptor(s, Config{Authentication: true, Authorization: true, Cluster: "C"}, zlog())
	send := func(user, topic string) *remoting.Command {
		return signed(user, "secret12", 10, map[string]string{"topic": topic})
	}
	cases := []struct {
		name string
		req  *remoting.Command
		want string
	}{
		{"prefix allow", send("alice", "order-1"), ""},
		{"literal deny over prefix", send("alice", "order-secret"), "User:alice has no permission to access Topic:order-secret from 10.1.2.3, the decision is deny."},
		{"no entry", send("alice", "other"), "User:alice has no permission to access Topic:other from 10.1.2.3, no matched policies."},
		{"cidr in", send("alice", "local"), ""},
		{"ip out", send("alice", "far"), "User:alice has no permission to access Topic:far from 10.1.2.3, no matched policies."},
		{"no acl", send("noacl", "order-1"), "User:noacl has no permission to access Topic:order-1 from 10.1.2.3, no matched policies."},
		{"super", send("root", "anything"), ""},
		{"pull needs group", signed("alice", "secret12", 11, map[string]string{"topic": "order-1", "consumerGroup": "g2"}),
			"User:alice has no permission to access Group:g2 from 10.1.2.3, no matched policies."},
		{"pull", signed("alice", "secret12", 11, map[string]string{"topic": "order-1", "consumerGroup": "g1"}), ""},
		{"admin code", signed("alice", "secret12", 3001, map[string]string{"username": "x"}),
			"User:alice has no permission to access Cluster:C from 10.1.2.3, no matched policies."},
		{"missing action", signed("alice", "secret12", 17, map[string]string{"topic": "order-1"}), // UPDATE_AND_CREATE_TOPIC: Create
			"User:alice has no permission to access Topic:order-1 from 10.1.2.3, no matched policies."},
	}
	for _, c := range cases {
		r := in.Check(c.req, peer)
		got := ""
		if r != nil {
			got = r.Remark
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestEntryOrder pins comparePolicyEntries with Java's sort: the
// comparator is not symmetric, so the order depends on the input's.
func TestEntryOrder(t *testing.T) {
	lit := &Entry{Resource: Resource{Type: TypeTopic, Name: "abc", Pattern: PatternLiteral}, Decision: Allow}
	pre := &Entry{Resource: Resource{Type: TypeTopic, Name: "a", Pattern: PatternPrefixed}, Decision: Deny}
	anyT := &Entry{Resource: Resource{Type: TypeTopic, Pattern: PatternAny}, Decision: Deny}
	star := &Entry{Resource: Resource{Type: TypeAny, Pattern: PatternAny}, Decision: Allow}
	for _, c := range []struct {
		in   []*Entry
		want *Entry
	}{
		{[]*Entry{pre, lit}, lit},
		{[]*Entry{lit, pre}, pre}, // Apache: the input order decides
		{[]*Entry{star, anyT}, anyT},
		{[]*Entry{anyT, lit}, lit},
		// ANY pattern first and literal second compare 0 one way: Allow
		// before Deny decides.
		{[]*Entry{lit, anyT}, lit},
	} {
		a := append([]*Entry(nil), c.in...)
		sortJava(a, compareEntries)
		if a[0] != c.want {
			t.Errorf("%v: first %v, want %v", keys(c.in), a[0].Resource.Key(), c.want.Resource.Key())
		}
	}
}

func keys(es []*Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Resource.Key()+"/"+e.Decision.String())
	}
	return out
}

func TestInRange(t *testing.T) {
	ip := netip.MustParseAddr("10.1.2.3")
	for cidr, want := range map[string]bool{
		"10.1.2.3": true, "10.1.2.4": false, "10.0.0.0/8": true, "10.1.2.3/32": true,
		"10.1.2.7/29": true, "10.1.2.8/29": false, "0.0.0.0/0": true, "::/0": true, "bad/8": false,
	} {
		if got := inRange(ip, javaHost(ip), cidr); got != want {
			t.Errorf("%s: %v", cidr, got)
		}
	}
	if h := javaHost(netip.MustParseAddr("::1")); h != "0:0:0:0:0:0:0:1" {
		t.Errorf("javaHost ::1 = %s", h)
	}
}

func TestStoreEdits(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenStore(dir)
	must(t, err)
	v := NewService(s)
	must(t, v.CreateUser("", UserInfo{Username: "alice", Password: "secret12"}))
	for _, c := range []struct {
		err  error
		want string
	}{
		{v.CreateUser("", UserInfo{Username: "alice", Password: "x"}), "The user is existed"},
		{v.CreateUser("", UserInfo{Username: "bob"}), "password can not be blank"},
		{v.UpdateUser("", UserInfo{Username: "bob", Password: "x"}), "The user is not exist"},
		{v.CreateUser("alice", UserInfo{Username: "root", Password: "x", UserType: "Super"}), "The super user can only be create by super user"},
		{v.CreateAcl("User:bob", AclInfo{Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{{Resource: "Topic:t", Actions: []string{"Pub"}, Decision: "Allow"}}}}}), "The subject of User:bob is not exist."},
		{v.CreateAcl("User:alice", AclInfo{Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{{Resource: "Topic:t", Actions: []string{"Any"}, Decision: "Allow"}}}}}), "The actions can not be Any."},
		{v.CreateAcl("User:alice", AclInfo{Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{{Resource: "Topic:t", Actions: []string{"Pub"}, SourceIps: []string{"10.0.0.0/33"}, Decision: "Allow"}}}}}), "The source ip is invalid."},
		{v.CreateAcl("User:alice", AclInfo{Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{{Resource: "Topic:t", Actions: []string{"Pub"}, Decision: "Maybe"}}}}}), "The decision is null or illegal."},
		{v.DeleteAcl("User:alice", "", "Topic:t"), "The acl is not exist."},
	} {
		got := ""
		if c.err != nil {
			got = c.err.Error()
		}
		if got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
	entry := func(res, dec string) AclInfo {
		return AclInfo{Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{{Resource: res, Actions: []string{"Pub"}, Decision: dec}}}}}
	}
	must(t, v.CreateAcl("User:alice", entry("Topic:a", "Allow")))
	must(t, v.UpdateAcl("User:alice", entry("Topic:b", "Deny")))
	must(t, v.UpdateAcl("User:alice", entry("Topic:a", "Deny"))) // replaces a's entry
	// Reopened, the files give the same state.
	s2, err := OpenStore(dir)
	must(t, err)
	v2 := NewService(s2)
	got, err := v2.GetAcl("User:alice")
	must(t, err)
	if len(got.Policies) != 1 || len(got.Policies[0].Entries) != 2 || got.Policies[0].Entries[0].Decision != "Deny" ||
		got.Policies[0].PolicyType != "Custom" {
		t.Fatalf("reloaded acl %+v", got)
	}
	must(t, v2.DeleteAcl("User:alice", "", "Topic:a"))
	must(t, v2.DeleteUser("", "alice"))
	if a, err := v2.ListAcls("", ""); err != nil || len(a) != 0 {
		t.Fatalf("acl survives its user: %v %v", a, err)
	}
}
