package compattest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
)

var auth2Normal = primitive.Credentials{AccessKey: "cfgNormal", SecretKey: "cfgNormalPass1"}

// With ACL 2.0 on, UPDATE_BROKER_CONFIG (25) from a Normal user without a
// single policy is refused on the main and the VIP port, whatever key it
// names: switching authentication off, moving the store, locking clients
// out. Nothing reaches the config file, and a restart still refuses
// anonymous admin requests. A Super user may change an ordinary key; a key
// of the default black list is refused with Apache's code and remark.
// Group writes (200, 225) need Update on the group, topic creation from a
// body (18, 513) Create on the topic, broker-wide cleanups and switches
// (306, 316, 50) Cluster:Update; Apache asks for none of them.
func TestAuth2BrokerConfigRaw(t *testing.T) {
	t.Parallel()
	vip, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	c := newClusterConf(t, "auth2-cfg", auth2Keys+fmt.Sprintf("fastListenPort=%d\n", vip))
	vipAddr := fmt.Sprintf("127.0.0.1:%d", vip)
	if r := auth2Admin(t, c, auth2Super, 3001, map[string]string{"username": auth2Normal.AccessKey}, map[string]any{"username": auth2Normal.AccessKey,
		"password": auth2Normal.SecretKey, "userType": "Normal"}); r.Code != 0 {
		t.Fatalf("create Normal user: %d %q", r.Code, r.Remark)
	}
	update := func(addr string, cred primitive.Credentials, body string) *rawCmd {
		t.Helper()
		resp, err := rawInvoke(addr, signRaw(javaRequest(25, nil, []byte(body)), cred), 10*time.Second)
		if err != nil {
			t.Fatalf("UPDATE_BROKER_CONFIG to %s: %v", addr, err)
		}
		return resp
	}
	for _, addr := range []string{c.brokerAddr, vipAddr} {
		for _, body := range []string{"authenticationEnabled=false\nauthorizationEnabled=false\n",
			"storePathRootDir=/tmp/elsewhere\n", "brokerPermission=0\n", "flushConsumerOffsetInterval=6543\n"} {
			resp := update(addr, auth2Normal, body)
			if resp.Code != 16 || !strings.Contains(resp.Remark, "has no permission to access Cluster:") {
				t.Errorf("Normal user, %s, %q: code %d remark %q, want 16 no permission", addr, body, resp.Code, resp.Remark)
			}
		}
	}
	for _, addr := range []string{c.brokerAddr, vipAddr} {
		expectRefused(t, "Super, black-listed key", update(addr, auth2Super, "authenticationEnabled=false\n"),
			16, "Can not update config in black list.")
		expectRefused(t, "Super, black-listed key", update(addr, auth2Super, "storePathRootDir=/tmp/elsewhere\n"),
			16, "Can not update config in black list.")
		expectRefused(t, "Super, black-listed key", update(addr, auth2Super, "brokerPermission=2\n"),
			16, "Can not update config in black list.")
	}
	expectRefused(t, "Super, ordinary key", update(c.brokerAddr, auth2Super, "flushConsumerOffsetInterval=6543\n"), 0, "")

	// Subscription group writes need Update on the group (Apache: anyone
	// authenticated may stop any group's consumption).
	group := uniq("A2G")
	groupWrite := func(code int, cred primitive.Credentials, body string) *rawCmd {
		t.Helper()
		resp, err := rawInvoke(c.brokerAddr, signRaw(javaRequest(code, nil, []byte(body)), cred), 10*time.Second)
		if err != nil {
			t.Fatalf("group write %d: %v", code, err)
		}
		return resp
	}
	stop := `{"groupName":"` + group + `","consumeEnable":false}`
	for code, body := range map[int]string{200: stop, 225: `{"groupConfigList":[` + stop + `]}`} {
		if r := groupWrite(code, auth2Normal, body); r.Code != 16 || !strings.Contains(r.Remark, "has no permission to access Group:"+group) {
			t.Errorf("Normal user without a policy, %d: code %d remark %q, want 16 no permission", code, r.Code, r.Remark)
		}
	}
	if r := auth2Admin(t, c, auth2Super, 3006, map[string]string{"subject": "User:" + auth2Normal.AccessKey}, map[string]any{
		"subject": "User:" + auth2Normal.AccessKey, "policies": []any{map[string]any{"policyType": "Custom",
			"entries": []any{map[string]any{"resource": "Group:" + group, "actions": []string{"Update"}, "decision": "Allow"}}}}}); r.Code != 0 {
		t.Fatalf("grant Group:%s Update: %d %q", group, r.Code, r.Remark)
	}
	if r := groupWrite(200, auth2Normal, stop); r.Code != 0 {
		t.Errorf("Normal user with Update on the group: %d %q", r.Code, r.Remark)
	}
	if r := groupWrite(200, auth2Normal, `{"groupName":"`+group+`x"}`); r.Code != 16 {
		t.Errorf("Normal user, another group: %d %q, want 16", r.Code, r.Remark)
	}

	// Other admin codes Apache leaves without a resource: topics created
	// from the body need Create on each, broker-wide cleanups and switches
	// Cluster:Update.
	topic := uniq("A2T")
	for _, w := range []struct {
		code     int
		ext      map[string]string
		body     string
		resource string
	}{
		{18, nil, `{"topicConfigList":[{"topicName":"` + topic + `","readQueueNums":1,"writeQueueNums":1,"perm":6}]}`, "Topic:" + topic},
		{513, map[string]string{"topic": topic, "readQueueNums": "1", "writeQueueNums": "1", "perm": "6", "topicFilterType": "SINGLE_TAG"}, `{}`, "Topic:" + topic},
		{316, nil, "", "Cluster:"},
		{306, nil, "", "Cluster:"},
		{50, map[string]string{"accessKey": "x", "secretKey": "y"}, "", "Cluster:"},
	} {
		resp, err := rawInvoke(c.brokerAddr, signRaw(javaRequest(w.code, w.ext, []byte(w.body)), auth2Normal), 10*time.Second)
		if err != nil {
			t.Fatalf("code %d: %v", w.code, err)
		}
		if resp.Code != 16 || !strings.Contains(resp.Remark, "has no permission to access "+w.resource) {
			t.Errorf("Normal user without a policy, code %d: code %d remark %q, want 16 no permission to %s", w.code, resp.Code, resp.Remark, w.resource)
		}
	}

	// Written back by the persist loop or at shutdown.
	conf := filepath.Join(c.dir, "broker.properties")
	waitFor(t, 10*time.Second, func() bool {
		b, _ := os.ReadFile(conf)
		return strings.Contains(string(b), "flushConsumerOffsetInterval=6543")
	})
	if graceful, _ := c.stopBroker(); !graceful {
		t.Errorf("broker did not stop on SIGTERM")
	}
	b, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	text := "\n" + string(b)
	if strings.Contains(text, "\nauthenticationEnabled=false") || strings.Contains(text, "\nauthorizationEnabled=false") ||
		strings.Contains(text, "/tmp/elsewhere") || strings.Contains(text, "\nbrokerPermission=0") {
		t.Errorf("refused updates reached the config file:\n%s", b)
	}
	if !strings.Contains(text, "\nflushConsumerOffsetInterval=6543") {
		t.Errorf("the Super user's update is not in the config file:\n%s", b)
	}
	// A restart on the same file (not rewritten by the harness).
	c.starts++
	if c.broker, err = startProc(fmt.Sprintf("mqbroker#%d", c.starts), filepath.Join(binDir, "mqbroker"),
		[]string{"-n", c.nsAddr, "-c", conf}, filepath.Join(c.dir, "broker.log")); err != nil {
		t.Fatal(err)
	}
	if err := waitTCP(c.broker, c.brokerAddr, readyTimeout); err != nil {
		t.Fatal(err)
	}
	resp, err := rawInvoke(c.brokerAddr, javaRequest(25, nil, []byte("flushConsumerOffsetInterval=1000\n")), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Code == 0 {
		t.Errorf("anonymous UPDATE_BROKER_CONFIG after the restart answered SUCCESS")
	}
}

// The same through mqadmin 5.3.3 updateBrokerConfig: the Normal user
// (tools.yml with its keys, no ACL) is refused, the Super user changes an
// ordinary key, and a black-listed key is refused with Apache's remark.
func TestAuth2MQAdminBrokerConfig(t *testing.T) {
	requireJava(t)
	t.Parallel()
	cp := toolsClasspath(t)
	c := newClusterConf(t, "auth2-admcfg", auth2Keys)
	if r := auth2Admin(t, c, auth2Super, 3001, map[string]string{"username": auth2Normal.AccessKey}, map[string]any{"username": auth2Normal.AccessKey,
		"password": auth2Normal.SecretKey, "userType": "Normal"}); r.Code != 0 {
		t.Fatalf("create Normal user: %d %q", r.Code, r.Remark)
	}
	admin := func(cred primitive.Credentials) *javaAdmin {
		home := t.TempDir()
		if err := os.MkdirAll(filepath.Join(home, "conf"), 0o755); err != nil {
			t.Fatal(err)
		}
		tools := "accessKey: " + cred.AccessKey + "\nsecretKey: " + cred.SecretKey + "\n"
		if err := os.WriteFile(filepath.Join(home, "conf", "tools.yml"), []byte(tools), 0o644); err != nil {
			t.Fatal(err)
		}
		return startJavaAdmin(t, cp, home)
	}
	super, normal := admin(auth2Super), admin(auth2Normal)
	// run returns the tool's output and the broker's answer it reports.
	run := func(ja *javaAdmin, key, value string) (string, string) {
		before := len(ja.stderr.String())
		out := ja.run(t, []string{"updateBrokerConfig", "-n", c.nsAddr, "-b", c.brokerAddr, "-k", key, "-v", value})
		deadline := time.Now().Add(2 * time.Second)
		for time.Now().Before(deadline) {
			if m := brokerFailure.FindStringSubmatch(ja.stderr.String()[before:]); m != nil {
				return out, "CODE: " + m[1] + "  DESC: " + m[2]
			}
			if strings.Contains(out, "success") {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		return out, ""
	}
	getConfig := func() string {
		resp, err := rawInvoke(c.brokerAddr, signRaw(javaRequest(26, nil, nil), auth2Super), 10*time.Second)
		if err != nil || resp.Code != 0 {
			t.Fatalf("GET_BROKER_CONFIG: %v %+v", err, resp)
		}
		return "\n" + string(resp.Body)
	}
	for _, kv := range [][2]string{{"authenticationEnabled", "false"}, {"brokerPermission", "0"}, {"flushConsumerOffsetInterval", "6543"}} {
		out, fail := run(normal, kv[0], kv[1])
		if strings.Contains(out, "update broker config success") || !strings.Contains(fail, "CODE: 16") ||
			!strings.Contains(fail, "has no permission to access Cluster:"+clusterName) {
			t.Errorf("Normal user, %s=%s: %q %q, want refused (16, no permission)", kv[0], kv[1], out, fail)
		}
	}
	if strings.Contains(getConfig(), "\nflushConsumerOffsetInterval=6543\n") {
		t.Fatal("the Normal user's update is in force")
	}
	if out, fail := run(super, "flushConsumerOffsetInterval", "6543"); !strings.Contains(out, "update broker config success") || fail != "" {
		t.Errorf("Super user, flushConsumerOffsetInterval: %q %q", out, fail)
	}
	if !strings.Contains(getConfig(), "\nflushConsumerOffsetInterval=6543\n") {
		t.Error("the Super user's update is not in force")
	}
	for _, kv := range [][2]string{{"authenticationEnabled", "false"}, {"storePathRootDir", "/tmp/elsewhere"}, {"brokerPermission", "2"}} {
		if out, fail := run(super, kv[0], kv[1]); !strings.HasPrefix(fail, "CODE: 16  DESC: Can not update config in black list.") {
			t.Errorf("Super user, %s=%s: %q %q, want Apache's black-list refusal", kv[0], kv[1], out, fail)
		}
	}
}

// ACL 1.0: UPDATE_BROKER_CONFIG needs an admin account (as in Apache), and
// even an admin cannot switch the ACL off or move the store over the wire.
func TestACLBrokerConfigRaw(t *testing.T) {
	t.Parallel()
	c := newACLCluster(t, "acl1-cfg")
	update := func(cred primitive.Credentials, body string) *rawCmd {
		t.Helper()
		resp, err := rawInvoke(c.brokerAddr, signRaw(javaRequest(25, nil, []byte(body)), cred), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if r := update(aclUser, "flushConsumerOffsetInterval=6543\n"); r.Code != 1 || !strings.Contains(r.Remark, "Need admin permission for request code=25") {
		// AclException: SYSTEM_ERROR, as Apache answers it.
		t.Errorf("non-admin account: %d %q", r.Code, r.Remark)
	}
	for _, body := range []string{"aclEnable=false\n", "storePathRootDir=/tmp/elsewhere\n", "brokerPermission=0\n"} {
		expectRefused(t, "admin, "+strings.TrimSpace(body), update(aclAdmin, body), 16, "Can not update config in black list.")
	}
	expectRefused(t, "admin, ordinary key", update(aclAdmin, "flushConsumerOffsetInterval=6543\n"), 0, "")
}
