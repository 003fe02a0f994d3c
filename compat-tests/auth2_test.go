package compattest

// ACL 2.0: authenticationEnabled and authorizationEnabled,
// users and ACLs managed with the admin codes 3001–3010, and the official
// Go client producing and consuming as a user with an Allow policy; a
// wrong password, an unknown user, no credentials, a Deny entry, a
// missing action and a source address outside the entry's are refused
// with Apache's code and remark, and nothing refused is written.
//
// ROCKETGO_AUTH2_TARGETS=rocketgo,apache (make test-acl2-apache) runs the
// same against Apache's 5.3.3 broker with the same keys.

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

var (
	auth2Super = primitive.Credentials{AccessKey: "rocketmq2", SecretKey: "superPass1"}
	auth2Alice = primitive.Credentials{AccessKey: "authAlice", SecretKey: "alicePass1"}
)

// auth2Keys are the broker keys of the ACL 2.0 tests (both targets).
// Apache needs the metadata providers named (without them its broker
// does not start with initAuthenticationUser); rocketgo takes blank for
// them.
const auth2Keys = `authenticationEnabled=true
authorizationEnabled=true
authenticationMetadataProvider=org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider
authorizationMetadataProvider=org.apache.rocketmq.auth.authorization.provider.LocalAuthorizationMetadataProvider
initAuthenticationUser={"username":"rocketmq2","password":"superPass1"}
innerClientAuthenticationCredentials={"accessKey":"rocketmq2","secretKey":"superPass1"}
`

// startApacheAuth2 runs the reference name server and Apache's 5.3.3
// broker with auth2Keys.
func startApacheAuth2(t *testing.T, name string) *cluster {
	t.Helper()
	began := time.Now()
	c, script := startApacheNamesrv(t, name, "")
	props := fmt.Sprintf("brokerName=%s\nbrokerClusterName=%s\n", c.brokerName, clusterName) + auth2Keys
	if err := os.WriteFile(filepath.Join(c.dir, "broker.extra.properties"), []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	if c.broker, err = startProc("apache-broker-auth2", script, []string{"broker", strconv.Itoa(c.brokerPort), c.nsAddr, c.dir, clusterName},
		filepath.Join(c.dir, "broker.log")); err != nil {
		t.Fatal(err)
	}
	if !waitFor(t, 90*time.Second, func() bool {
		code, rd, _, err := queryRoute(c.nsAddr, "TBW102")
		return err == nil && code == 0 && rd.hasBroker(c.brokerAddr)
	}) {
		t.Fatalf("apache 5.3.3 broker with ACL 2.0 not routed within 90 s")
	}
	t.Logf("Apache 5.3.3 broker with ACL 2.0 up in %.1fs", time.Since(began).Seconds())
	return c
}

// auth2Cluster starts a target of ROCKETGO_AUTH2_TARGETS with auth2Keys.
func auth2Cluster(t *testing.T, target, name string) *cluster {
	t.Helper()
	switch target {
	case "rocketgo":
		return newClusterConf(t, name+"-go", auth2Keys)
	case "apache":
		return startApacheAuth2(t, name+"-apache")
	}
	t.Fatalf("ROCKETGO_AUTH2_TARGETS: unknown target %q", target)
	return nil
}

// signRaw signs req as AclClientRPCHook does: AccessKey added, then
// HMAC-SHA1 (Base64) over the extFields' values ordered by key and the body.
func signRaw(req *rawCmd, cred primitive.Credentials) *rawCmd {
	if req.ExtFields == nil {
		req.ExtFields = map[string]string{}
	}
	req.ExtFields["AccessKey"] = cred.AccessKey
	keys := make([]string, 0, len(req.ExtFields))
	for k := range req.ExtFields {
		if k != "Signature" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	m := hmac.New(sha1.New, []byte(cred.SecretKey))
	for _, k := range keys {
		m.Write([]byte(req.ExtFields[k]))
	}
	m.Write(req.Body)
	req.ExtFields["Signature"] = base64.StdEncoding.EncodeToString(m.Sum(nil))
	return req
}

// auth2Admin sends an admin code signed by cred and returns the answer.
func auth2Admin(t *testing.T, c *cluster, cred primitive.Credentials, code int, ext map[string]string, body any) *rawCmd {
	t.Helper()
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := rawInvoke(c.brokerAddr, signRaw(javaRequest(code, ext, b), cred), 15*time.Second)
	if err != nil {
		t.Fatalf("request %d: %v", code, err)
	}
	return resp
}

// wantNoPermission checks err is NO_PERMISSION (16) with remark msg.
func wantNoPermission(t *testing.T, what string, err error, msg string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted", what)
		return
	}
	s := err.Error()
	if !strings.Contains(s, "CODE: 16,") || !strings.HasSuffix(s, "DESC: "+msg) {
		t.Errorf("%s: %v\nwant NO_PERMISSION with %q", what, err, msg)
	}
}

func TestAuth2GoClient(t *testing.T) {
	t.Parallel()
	for _, target := range strings.Split(envOr("ROCKETGO_AUTH2_TARGETS", "rocketgo"), ",") {
		t.Run(target, func(t *testing.T) {
			auth2Scenario(t, auth2Cluster(t, target, "auth2"))
		})
	}
}

// auth2Setup creates the user authAlice, its ACL and the topics, signed
// by the super user.
func auth2Setup(t *testing.T, c *cluster) {
	ok := func(what string, r *rawCmd) {
		t.Helper()
		if r.Code != 0 {
			t.Fatalf("%s: %v", what, r)
		}
	}
	ok("create user", auth2Admin(t, c, auth2Super, 3001, map[string]string{"username": auth2Alice.AccessKey},
		map[string]string{"username": auth2Alice.AccessKey, "password": auth2Alice.SecretKey, "userType": "Normal"}))
	entry := func(res string, actions []string, ips []string, decision string) map[string]any {
		e := map[string]any{"resource": res, "actions": actions, "decision": decision}
		if ips != nil {
			e["sourceIps"] = ips
		}
		return e
	}
	ok("create acl", auth2Admin(t, c, auth2Super, 3006, map[string]string{"subject": "User:" + auth2Alice.AccessKey},
		map[string]any{"subject": "User:" + auth2Alice.AccessKey, "policies": []any{map[string]any{"policyType": "Custom", "entries": []any{
			entry("Topic:AuthT*", []string{"Pub", "Sub", "Get"}, nil, "Allow"),
			entry("Topic:AuthTDeny", []string{"Pub"}, nil, "Deny"),
			entry("Topic:AuthRead", []string{"Sub", "Get"}, nil, "Allow"),
			entry("Topic:AuthFar", []string{"Pub"}, []string{"10.9.9.0/24"}, "Allow"),
			entry("Group:AuthGroup", []string{"Sub", "Get"}, nil, "Allow"),
		}}}}))
	// A normal user may not create a super user.
	if r := auth2Admin(t, c, auth2Alice, 3001, map[string]string{"username": "authSuper2"},
		map[string]string{"password": "x1234567", "userType": "Super"}); r.Code == 0 {
		t.Errorf("a normal user created a super user: %v", r)
	}
	for _, topic := range []string{"AuthTopic", "AuthRead", "AuthTDeny", "AuthFar"} {
		if err := aclAdminTopic(c, auth2Super, topic); err != nil {
			t.Fatalf("CreateTopic %s as the super user: %v", topic, err)
		}
		waitRoute(t, c, topic, 1)
	}
}

func auth2Scenario(t *testing.T, c *cluster) {
	ok := func(what string, r *rawCmd) {
		t.Helper()
		if r.Code != 0 {
			t.Fatalf("%s: %v", what, r)
		}
	}
	auth2Setup(t, c)
	const n = 3
	var ids []string
	for i := range n {
		id := uniq("auth2")
		r, err := aclSend(t, c, auth2Alice, "AuthTopic", id)
		if err != nil || r.Status != primitive.SendOK || r.QueueOffset != int64(i) {
			t.Fatalf("send %d as the user: %v %v", i, r, err)
		}
		ids = append(ids, id)
	}
	deny := func(topic, detail string) string {
		return "User:authAlice has no permission to access Topic:" + topic + " from 127.0.0.1, " + detail
	}
	_, err := aclSend(t, c, primitive.Credentials{AccessKey: auth2Alice.AccessKey, SecretKey: "wrongPass1"}, "AuthTopic", "x")
	wantNoPermission(t, "wrong password", err, "check signature failed.")
	_, err = aclSend(t, c, primitive.Credentials{AccessKey: "authNobody", SecretKey: "alicePass1"}, "AuthTopic", "x")
	wantNoPermission(t, "unknown user", err, "User:authNobody is not found.")
	_, err = aclSend(t, c, primitive.Credentials{}, "AuthTopic", "x")
	wantNoPermission(t, "no credentials", err, "username cannot be null.")
	_, err = aclSend(t, c, auth2Alice, "AuthTDeny", "x")
	wantNoPermission(t, "deny entry", err, deny("AuthTDeny", "the decision is deny."))
	_, err = aclSend(t, c, auth2Alice, "AuthRead", "x")
	wantNoPermission(t, "missing action", err, deny("AuthRead", "no matched policies."))
	_, err = aclSend(t, c, auth2Alice, "AuthFar", "x")
	wantNoPermission(t, "source address outside", err, deny("AuthFar", "no matched policies."))

	// Nothing refused was written: the next sends land where the first
	// refused would have.
	if r, err := aclSend(t, c, auth2Alice, "AuthTopic", uniq("auth2")); err != nil || r.QueueOffset != n {
		t.Fatalf("send after the refusals: %v %v (queue offset %d wants the refused send unwritten)", r, err, n)
	}
	for _, topic := range []string{"AuthRead", "AuthTDeny", "AuthFar"} {
		if r, err := aclSend(t, c, auth2Super, topic, uniq("auth2")); err != nil || r.QueueOffset != 0 {
			t.Fatalf("super user's send to %s: %v %v (queue offset 0 wants the refused send unwritten)", topic, r, err)
		}
	}

	col := newCollector("auth2")
	startConsumer(t, c, "AuthGroup", "AuthTopic", "*", col, consumer.WithCredentials(auth2Alice))
	waitAll(t, col, ids, 30*time.Second, "consumer with the user's credentials")

	// The user's answers read back (3004), and a user and its ACL deleted.
	r := auth2Admin(t, c, auth2Super, 3004, map[string]string{"username": auth2Alice.AccessKey}, nil)
	if r.Code != 0 || !strings.Contains(string(r.Body), `"userType":"Normal"`) || !strings.Contains(string(r.Body), `"userStatus":"enable"`) {
		t.Errorf("get user: %v %s", r, r.Body)
	}
	ok("delete user", auth2Admin(t, c, auth2Super, 3003, map[string]string{"username": auth2Alice.AccessKey}, nil))
	_, err = aclSend(t, c, auth2Alice, "AuthTopic", "x")
	wantNoPermission(t, "deleted user", err, "User:authAlice is not found.")
}

// TestJavaAuth2: the Java 5.3.3 client signing with AclClientRPCHook as
// the ACL 2.0 user authAlice produces and consumes; a wrong password and
// a Deny entry are refused with Apache's code and remark
// (java/…/Auth2Test.java); the Go side then checks only the allowed
// sends were written.
func TestJavaAuth2(t *testing.T) {
	requireJava(t)
	for _, target := range strings.Split(envOr("ROCKETGO_AUTH2_TARGETS", "rocketgo"), ",") {
		t.Run(target, func(t *testing.T) {
			c := auth2Cluster(t, target, "auth2-java")
			auth2Setup(t, c)
			run := fmt.Sprintf("rmq5-auth2-%d", time.Now().UnixNano()%1_000_000)
			runMaven(t, mavenRun{profile: "rmq5", serialize: "JSON", class: "Auth2Test", props: map[string]string{
				"namesrv": c.nsAddr, "run": run, "cluster": clusterName, "brokerName": c.brokerName,
				"brokerAddr": c.brokerAddr, "go2javaTopic": "unused", "java2goTopic": "unused",
			}})
			const javaSent = 3 // Auth2Test.N
			if r, err := aclSend(t, c, auth2Alice, "AuthTopic", uniq("auth2")); err != nil || r.QueueOffset != javaSent {
				t.Fatalf("send after the Java run: %v %v (queue offset %d wants only the allowed sends written)", r, err, javaSent)
			}
			if r, err := aclSend(t, c, auth2Super, "AuthTDeny", uniq("auth2")); err != nil || r.QueueOffset != 0 {
				t.Fatalf("super user's send to AuthTDeny: %v %v (queue offset 0 wants the refused send unwritten)", r, err)
			}
		})
	}
}

// TestAuth2Kill9: user and ACL edits acknowledged by the broker survive
// kill -9: the edit is on disk when it is answered (users.json and
// acls.json are written with fsync and renamed before the answer), so the
// restarted broker authenticates and authorizes as before.
func TestAuth2Kill9(t *testing.T) {
	t.Parallel()
	c := newClusterConf(t, "auth2-kill9", auth2Keys)
	auth2Setup(t, c)
	if !waitFor(t, 10*time.Second, func() bool { // topics.json is persisted by a 1 s ticker
		b, _ := os.ReadFile(filepath.Join(c.dir, "store", "config", "topics.json"))
		return strings.Contains(string(b), "AuthTDeny")
	}) {
		t.Fatal("topics not persisted to config/topics.json")
	}
	// The last edit is answered, then the broker is killed at once.
	if r := auth2Admin(t, c, auth2Super, 3001, map[string]string{"username": "authBob"},
		map[string]string{"username": "authBob", "password": "bobPass12", "userType": "Normal"}); r.Code != 0 {
		t.Fatalf("create user authBob: %v", r)
	}
	_ = c.broker.cmd.Process.Kill()
	<-c.broker.done
	startBrokerWith(t, c, auth2Keys)

	if r := auth2Admin(t, c, auth2Super, 3004, map[string]string{"username": "authBob"}, nil); r.Code != 0 || !strings.Contains(string(r.Body), `"username":"authBob"`) {
		t.Errorf("authBob, acknowledged before kill -9, after the restart: %v %s", r, r.Body)
	}
	if r, err := aclSend(t, c, auth2Alice, "AuthTopic", uniq("auth2k")); err != nil || r.Status != primitive.SendOK {
		t.Errorf("the user's send after kill -9: %v %v", r, err)
	}
	_, err := aclSend(t, c, auth2Alice, "AuthTDeny", "x")
	wantNoPermission(t, "deny entry after kill -9", err,
		"User:authAlice has no permission to access Topic:AuthTDeny from 127.0.0.1, the decision is deny.")
	_, err = aclSend(t, c, primitive.Credentials{AccessKey: "authBob", SecretKey: "bobPass12"}, "AuthTopic", "x")
	wantNoPermission(t, "authBob without an ACL after kill -9", err,
		"User:authBob has no permission to access Topic:AuthTopic from 127.0.0.1, no matched policies.")
}
