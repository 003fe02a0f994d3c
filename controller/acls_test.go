package controller

import (
	"strings"
	"testing"

	"github.com/rocketgo/rocketgo/auth"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
)

// With authorizationEnabled a Normal user changes the metadata only where
// a policy allows it: a Super user gives dave Update on Cluster:c1 with the
// broker's ACL codes (replicated: every controller decides the same); dave
// then elects in c1 but not in c2, still may not send a Super-only code,
// and loses the right when the entry is deleted. Strangers and Normal
// users cannot send the ACL codes.
func TestAclCodesAuthorize(t *testing.T) {
	g := startGroup(t, func(cfg *Config) { authOn(cfg); cfg.AuthorizationEnabled = true })
	li := g.leader()
	leader := g.addrs()[li]
	waitUsers(t, g.cs[li], 2)
	admin := newFakeBroker(t, "adm")
	admin.signAs("admin", "admin-secret")
	dave := newFakeBroker(t, "b1")
	dave.signAs("dave", "dave-pw")
	if r := admin.call(leader, authCreateUser, map[string]string{"username": "dave"}, []byte(`{"password":"dave-pw"}`)); r.Code != remoting.Success {
		t.Fatalf("create dave: %d %q", r.Code, r.Remark)
	}
	testutil.WaitFor(t, 10e9, func() bool { _, ok := g.cs[li].lookupUser("dave"); return ok })
	elect := func(b *fakeBroker, cluster string) *remoting.Command {
		return b.call(leader, remoting.ControllerElectMaster, map[string]string{"clusterName": cluster, "brokerName": "b1", "brokerId": "1"}, nil)
	}
	if r := elect(dave, "c1"); r.Code != remoting.NoPermission {
		t.Fatalf("dave elects without a policy: %d %q", r.Code, r.Remark)
	}
	policy := `{"subject":"User:dave","policies":[{"policyType":"Custom","entries":[{"resource":"Cluster:c1","actions":["Update"],"decision":"Allow"}]}]}`
	if r := dave.call(leader, authCreateACL, map[string]string{"subject": "User:dave"}, []byte(policy)); r.Code != remoting.NoPermission {
		t.Fatalf("dave grants himself: %d %q", r.Code, r.Remark)
	}
	if r := admin.call(leader, authCreateACL, map[string]string{"subject": "User:nobody"}, []byte(strings.ReplaceAll(policy, "dave", "nobody"))); r.Remark != "The subject of User:nobody is not exist." {
		t.Fatalf("ACL of an unknown user: %d %q", r.Code, r.Remark)
	}
	if r := admin.call(leader, authCreateACL, map[string]string{"subject": "User:dave"}, []byte(policy)); r.Code != remoting.Success {
		t.Fatalf("create dave's ACL: %d %q", r.Code, r.Remark)
	}
	for i, c := range g.cs {
		testutil.WaitFor(t, 10e9, func() bool {
			c.st.mu.RLock()
			defer c.st.mu.RUnlock()
			return c.st.acls["dave"] != nil
		})
		if r := admin.call(g.addrs()[i], authGetACL, map[string]string{"subject": "User:dave"}, nil); r.Code != remoting.Success ||
			!strings.Contains(string(r.Body), `"resource":"Cluster:c1"`) {
			t.Fatalf("controller %d: get dave's ACL: %d %s", i, r.Code, r.Body)
		}
	}
	if r := dave.register(leader); r.Code != remoting.Success {
		t.Fatalf("dave registers in c1: %d %q", r.Code, r.Remark)
	}
	if r := elect(dave, "c1"); r.Code != remoting.Success {
		t.Fatalf("dave elects in c1: %d %q", r.Code, r.Remark)
	}
	if r := elect(dave, "c2"); r.Code != remoting.NoPermission {
		t.Fatalf("dave elects in c2: %d %q", r.Code, r.Remark)
	}
	if r := dave.call(leader, remoting.CleanBrokerData, map[string]string{"clusterName": "c1", "brokerName": "b1"}, nil); r.Code != remoting.NoPermission {
		t.Fatalf("dave cleans: %d %q", r.Code, r.Remark)
	}
	r := admin.call(leader, authListACL, map[string]string{"resourceFilter": "Cluster"}, nil)
	if r.Code != remoting.Success || !strings.Contains(string(r.Body), `"subject":"User:dave"`) {
		t.Fatalf("list: %d %s", r.Code, r.Body)
	}
	if r := admin.call(leader, authDeleteACL, map[string]string{"subject": "User:dave", "resource": "Cluster:c1"}, nil); r.Code != remoting.Success {
		t.Fatalf("delete dave's entry: %d %q", r.Code, r.Remark)
	}
	testutil.WaitFor(t, 10e9, func() bool {
		g.cs[li].st.mu.RLock()
		defer g.cs[li].st.mu.RUnlock()
		return g.cs[li].st.acls["dave"] == nil
	})
	if r := elect(dave, "c1"); r.Code != remoting.NoPermission {
		t.Fatalf("dave elects after his entry was deleted: %d %q", r.Code, r.Remark)
	}
	if r := admin.call(leader, authGetACL, map[string]string{"subject": "User:dave"}, nil); r.Code != remoting.Success || len(r.Body) != 0 {
		t.Fatalf("get a deleted ACL: %d %s", r.Code, r.Body)
	}
}

// The ACLs travel in the raft log and snapshots; deleting a user drops
// its ACL.
func TestAclsInSnapshot(t *testing.T) {
	st := NewState()
	st.applyEvents([]event{{Type: evAddUser, User: &user{Username: "u", Password: "p", UserType: userNormal, UserStatus: userEnabled}}})
	a := aclInfoOf(t, `{"subject":"User:u","policies":[{"policyType":"Custom","entries":[{"resource":"Cluster:*","actions":["Update"],"decision":"Allow"}]}]}`)
	st.applyEvents([]event{{Type: evPutAcl, Acl: &a}})
	st2 := NewState()
	if err := st2.restore(must(st.marshal())); err != nil {
		t.Fatal(err)
	}
	if st2.acls["u"] == nil {
		t.Fatal("the ACL was not restored")
	}
	st2.applyEvents([]event{{Type: evDeleteUser, User: &user{Username: "u"}}})
	if st2.acls["u"] != nil {
		t.Fatal("a deleted user's ACL stays")
	}
}

func aclInfoOf(t *testing.T, s string) auth.AclInfo {
	t.Helper()
	var a auth.AclInfo
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		t.Fatal(err)
	}
	return a
}
