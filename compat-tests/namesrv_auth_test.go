package compattest

// The name server's writes: anonymous REGISTER_BROKER,
// UNREGISTER_BROKER, DELETE_TOPIC_IN_NAMESRV and the KV codes point a
// topic's route at an attacker's address on Apache's name server, and on
// rocketgo's by default. With authenticationEnabled=true on rocketgo's name
// server they are refused NO_PERMISSION with Apache's authentication
// messages and change nothing; the broker registers signed with its
// innerClientAuthenticationCredentials, a Super user's admin writes
// (signed raw requests, and Apache 5.3.3's mqadmin with tools.yml) are
// served, and the official Go client, unsigned, still finds its routes.

import (
	"fmt"
	"hash/crc32"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
)

var (
	nsAuthAdmin  = primitive.Credentials{AccessKey: "nsAdmin", SecretKey: "nsAdminPass1"}
	nsAuthBroker = primitive.Credentials{AccessKey: "nsBroker", SecretKey: "nsBrokerPass1"}
)

// nsAuthCluster starts a name server with authentication on (nsAdmin a
// Super user by initAuthenticationUser, nsBroker a Normal user of
// authConfigPath/users.json) and a broker signing with nsBroker's
// credentials; auth false starts both without those keys.
func nsAuthCluster(t *testing.T, name string, auth bool) *cluster {
	t.Helper()
	c := nsAuthNamesrv(t, name, auth)
	if err := c.startBroker(); err != nil {
		t.Fatal(err)
	}
	return c
}

// nsAuthNamesrv is nsAuthCluster's name server, the broker's port picked
// and its keys in c.extraConf.
func nsAuthNamesrv(t *testing.T, name string, auth bool) *cluster {
	t.Helper()
	c := &cluster{name: name, brokerName: "broker-" + name}
	c.dir = filepath.Join(workDir, name)
	t.Cleanup(func() { _ = os.RemoveAll(c.dir) })
	if err := os.MkdirAll(filepath.Join(c.dir, "store"), 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	if c.nsPort, err = pickPort(); err != nil {
		t.Fatal(err)
	}
	if c.brokerPort, err = pickPort(); err != nil {
		t.Fatal(err)
	}
	c.nsAddr = fmt.Sprintf("127.0.0.1:%d", c.nsPort)
	c.brokerAddr = fmt.Sprintf("127.0.0.1:%d", c.brokerPort)
	nsProps := fmt.Sprintf("listenPort=%d\nkvConfigPath=%s\n", c.nsPort, filepath.Join(c.dir, "kvConfig.json"))
	if auth {
		users := `[{"username":"nsBroker","password":"nsBrokerPass1","userType":"Normal","userStatus":"enable"}]`
		if err := os.WriteFile(filepath.Join(c.dir, "users.json"), []byte(users), 0o600); err != nil {
			t.Fatal(err)
		}
		nsProps += "authenticationEnabled=true\nauthConfigPath=" + c.dir + "\n" +
			`initAuthenticationUser={"username":"nsAdmin","password":"nsAdminPass1"}` + "\n"
		c.extraConf = `innerClientAuthenticationCredentials={"accessKey":"nsBroker","secretKey":"nsBrokerPass1"}` + "\n"
	}
	nsConf := filepath.Join(c.dir, "namesrv.properties")
	if err := os.WriteFile(nsConf, []byte(nsProps), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.stop)
	c.attachLogs(t)
	if c.ns, err = startProc("mqnamesrv", filepath.Join(binDir, "mqnamesrv"), []string{"-c", nsConf}, filepath.Join(c.dir, "namesrv.log")); err != nil {
		t.Fatal(err)
	}
	if err := waitTCP(c.ns, c.nsAddr, readyTimeout); err != nil {
		t.Fatal(err)
	}
	return c
}

// nsAttack is one anonymous write an attacker sends to a name server.
type nsAttack struct {
	name string
	code int
	ext  map[string]string
	body []byte
}

// nsAttacks aim at topic of c: its route to 6.6.6.6, its deletion, the
// broker's unregistration and write permission, the KV config (an order
// topic's queues), another route, the server's config.
func nsAttacks(c *cluster, topic string) []nsAttack {
	body := []byte(fmt.Sprintf(`{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":99,"stateVersion":0,"timestamp":%d},"topicConfigTable":{%q:{"attributes":{},"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":%q,"topicSysFlag":0,"writeQueueNums":4}}}}`,
		time.Now().UnixMilli(), topic, topic))
	broker := map[string]string{"brokerName": c.brokerName, "brokerAddr": c.brokerAddr, "clusterName": clusterName, "brokerId": "0"}
	return []nsAttack{
		{"REGISTER_BROKER at 6.6.6.6", 103, map[string]string{"brokerName": c.brokerName, "brokerAddr": "6.6.6.6:10911", "clusterName": clusterName,
			"haServerAddr": "6.6.6.6:10912", "brokerId": "0", "compressed": "false",
			"bodyCrc32": strconv.FormatInt(int64(crc32.ChecksumIEEE(body)&0x7fffffff), 10)}, body},
		{"UNREGISTER_BROKER", 104, broker, nil},
		{"DELETE_TOPIC_IN_NAMESRV", 216, map[string]string{"topic": topic}, nil},
		{"PUT_KV_CONFIG", 100, map[string]string{"namespace": "ORDER_TOPIC_CONFIG", "key": topic, "value": "evil:8"}, nil},
		{"DELETE_KV_CONFIG", 102, map[string]string{"namespace": "nsAuth", "key": "k"}, nil},
		{"WIPE_WRITE_PERM_OF_BROKER", 205, map[string]string{"brokerName": c.brokerName}, nil},
		{"REGISTER_TOPIC_IN_NAMESRV", 217, map[string]string{"topic": "evil-" + topic},
			[]byte(`{"queueDatas":[{"brokerName":"evil","readQueueNums":1,"writeQueueNums":1,"perm":6,"topicSysFlag":0}],"brokerDatas":[]}`)},
		{"UPDATE_NAMESRV_CONFIG", 318, nil, []byte("enableTopicList=false\n")},
	}
}

// nsRouteIntact fails unless topic still routes to c's broker only, with
// write permission.
func nsRouteIntact(t *testing.T, c *cluster, topic, when string) {
	t.Helper()
	code, rd, remark, err := queryRoute(c.nsAddr, topic)
	if err != nil || code != 0 {
		t.Fatalf("%s: route of %s: code %d %q %v", when, topic, code, remark, err)
	}
	if !rd.hasBroker(c.brokerAddr) || rd.hasBroker("6.6.6.6:10911") || rd.writeQueues() == 0 {
		t.Fatalf("%s: route of %s: %s", when, topic, rd.raw)
	}
	for _, q := range rd.queues {
		if q.Perm&2 == 0 {
			t.Fatalf("%s: write permission wiped: %s", when, rd.raw)
		}
	}
}

func nsInvoke(t *testing.T, c *cluster, a nsAttack, cred *primitive.Credentials) *rawCmd {
	t.Helper()
	req := javaRequest(a.code, a.ext, a.body)
	if cred != nil {
		req = signRaw(req, *cred)
	}
	resp, err := rawInvoke(c.nsAddr, req, 10*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", a.name, err)
	}
	return resp
}

func TestNamesrvAuthRefusesStrangers(t *testing.T) {
	t.Parallel()
	c := nsAuthCluster(t, "nsauth-on", true)
	// The broker's signed registration is served.
	if !waitFor(t, 20*time.Second, func() bool {
		code, rd, _, err := queryRoute(c.nsAddr, "TBW102")
		return err == nil && code == 0 && rd.hasBroker(c.brokerAddr)
	}) {
		t.Fatal("the broker signing with nsBroker did not register")
	}
	topic := uniq("NsAuth")
	createTopic(t, c, topic)

	wrong := primitive.Credentials{AccessKey: nsAuthAdmin.AccessKey, SecretKey: "guess"}
	for _, a := range nsAttacks(c, topic) {
		for _, try := range []struct {
			who    string
			cred   *primitive.Credentials
			remark string
		}{
			{"anonymous", nil, "username cannot be null."},
			{"wrong password", &wrong, "check signature failed."},
		} {
			resp := nsInvoke(t, c, a, try.cred)
			if resp.Code != 16 || resp.Remark != try.remark {
				t.Errorf("%s %s: code %d remark %q, want 16 %q", try.who, a.name, resp.Code, resp.Remark, try.remark)
			}
		}
		if a.code != 103 && a.code != 104 {
			resp := nsInvoke(t, c, a, &nsAuthBroker)
			if resp.Code != 16 {
				t.Errorf("broker user %s: code %d remark %q, want 16", a.name, resp.Code, resp.Remark)
			}
		}
		nsRouteIntact(t, c, topic, "after "+a.name)
	}

	// A Super user's admin writes are served; reads stay open.
	put := nsAttack{"PUT_KV_CONFIG", 100, map[string]string{"namespace": "nsAuth", "key": "k", "value": "v1"}, nil}
	if resp := nsInvoke(t, c, put, &nsAuthAdmin); resp.Code != 0 {
		t.Fatalf("super user PUT_KV_CONFIG: %d %q", resp.Code, resp.Remark)
	}
	get := nsAttack{"GET_KV_CONFIG", 101, map[string]string{"namespace": "nsAuth", "key": "k"}, nil}
	if resp := nsInvoke(t, c, get, nil); resp.Code != 0 || resp.ExtFields["value"] != "v1" {
		t.Fatalf("anonymous GET_KV_CONFIG: %d %q %v", resp.Code, resp.Remark, resp.ExtFields)
	}
	del := nsAttack{"DELETE_KV_CONFIG", 102, map[string]string{"namespace": "nsAuth", "key": "k"}, nil}
	if resp := nsInvoke(t, c, del, &nsAuthAdmin); resp.Code != 0 {
		t.Fatalf("super user DELETE_KV_CONFIG: %d %q", resp.Code, resp.Remark)
	}

	// The official Go client, without credentials, routes through it.
	p := newProducer(t, c)
	for i := range 5 {
		p.mustSend(t, newMsg(topic, fmt.Sprintf("nsauth-%d", i), "tag"))
	}
	col := newCollector("nsauth")
	startConsumer(t, c, uniq("NsAuthCG"), topic, "*", col)
	want := make([]string, 5)
	for i := range want {
		want[i] = fmt.Sprintf("nsauth-%d", i)
	}
	waitAll(t, col, want, 30*time.Second, "consume through the authenticated name server")
	nsRouteIntact(t, c, topic, "at the end")
	if !strings.Contains(tailFile(filepath.Join(c.dir, "namesrv.log"), 400), "refused by authentication") {
		t.Error("no refusal in the name server's log")
	}
}

// With authentication off (the default, Apache's behaviour) one anonymous
// REGISTER_BROKER points the topic's route at 6.6.6.6.
func TestNamesrvAuthOffTakesStrangers(t *testing.T) {
	t.Parallel()
	c := nsAuthCluster(t, "nsauth-off", false)
	topic := uniq("NsAuthOff")
	createTopic(t, c, topic)
	a := nsAttacks(c, topic)[0]
	// The attacker keeps its connection: a broker's registration ends with
	// the connection it came over.
	conn, err := net.DialTimeout("tcp", c.nsAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	resp, err := invokeOn(conn, javaRequest(a.code, a.ext, a.body), 10*time.Second)
	if err != nil || resp.Code != 0 {
		t.Fatalf("anonymous REGISTER_BROKER: %v %v", resp, err)
	}
	_, rd, _, err := queryRoute(c.nsAddr, topic)
	if err != nil || !rd.hasBroker("6.6.6.6:10911") {
		t.Fatalf("route after the anonymous registration: %v %v", rd, err)
	}
}

// nsKV is the name server's value of namespace/key ("" when none).
func nsKV(t *testing.T, c *cluster, namespace, key string) string {
	t.Helper()
	resp := nsInvoke(t, c, nsAttack{"GET_KV_CONFIG", 101, map[string]string{"namespace": namespace, "key": key}, nil}, nil)
	return resp.ExtFields["value"]
}

// Apache 5.3.3's mqadmin signs its name-server writes with tools.yml's
// credentials (AclClientRPCHook on every request): a Super user's
// updateKvConfig, deleteKvConfig, wipeWritePerm and addWritePerm are
// served; without tools.yml the tool gets NO_PERMISSION and nothing
// changes.
func TestNamesrvAuthMQAdmin(t *testing.T) {
	requireJava(t)
	t.Parallel()
	cp := toolsClasspath(t)
	c := nsAuthCluster(t, "nsauth-adm", true)
	topic := uniq("NsAuthAdm")
	createTopic(t, c, topic)

	anonHome := t.TempDir()
	anon := startJavaAdmin(t, cp, anonHome)
	before := len(anon.stderr.String())
	if out := anon.run(t, []string{"updateKvConfig", "-n", c.nsAddr, "-s", "nsAuthAdm", "-k", "k1", "-v", "evil"}); strings.Contains(out, "success") {
		t.Errorf("unsigned updateKvConfig: %s", out)
	}
	fail := ""
	if waitFor(t, 5*time.Second, func() bool {
		m := brokerFailure.FindStringSubmatch(anon.stderr.String()[before:])
		if m != nil {
			fail = "CODE: " + m[1] + " DESC: " + m[2]
		}
		return m != nil
	}); !strings.HasPrefix(fail, "CODE: 16 DESC: username cannot be null.") {
		t.Errorf("unsigned updateKvConfig failed with %q, want CODE 16 username cannot be null.", fail)
	}
	if v := nsKV(t, c, "nsAuthAdm", "k1"); v != "" {
		t.Errorf("unsigned updateKvConfig wrote %q", v)
	}

	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	tools := "accessKey: " + nsAuthAdmin.AccessKey + "\nsecretKey: " + nsAuthAdmin.SecretKey + "\n"
	if err := os.WriteFile(filepath.Join(home, "conf", "tools.yml"), []byte(tools), 0o600); err != nil {
		t.Fatal(err)
	}
	adm := startJavaAdmin(t, cp, home)
	adm.run(t, []string{"updateKvConfig", "-n", c.nsAddr, "-s", "nsAuthAdm", "-k", "k1", "-v", "v1"})
	if v := nsKV(t, c, "nsAuthAdm", "k1"); v != "v1" {
		t.Fatalf("signed updateKvConfig: value %q\n%s", v, adm.stderr.String())
	}
	adm.run(t, []string{"deleteKvConfig", "-n", c.nsAddr, "-s", "nsAuthAdm", "-k", "k1"})
	if v := nsKV(t, c, "nsAuthAdm", "k1"); v != "" {
		t.Errorf("signed deleteKvConfig: value %q", v)
	}
	out := adm.run(t, []string{"wipeWritePerm", "-n", c.nsAddr, "-b", c.brokerName})
	_, rd, _, err := queryRoute(c.nsAddr, topic)
	if err != nil || len(rd.queues) == 0 || rd.queues[0].Perm&2 != 0 {
		t.Errorf("signed wipeWritePerm (%s): route %v %v", out, rd, err)
	}
	out = adm.run(t, []string{"addWritePerm", "-n", c.nsAddr, "-b", c.brokerName})
	nsRouteIntact(t, c, topic, "after addWritePerm ("+out+")")
}

// Apache 5.3.3's broker signs its registrations with
// innerClientAuthenticationCredentials (BrokerOuterAPI's AclClientRPCHook)
// and is routed by the authenticated name server; the official Go client
// sends through it.
func TestNamesrvAuthApacheBroker(t *testing.T) {
	requireJava(t)
	t.Parallel()
	c := nsAuthNamesrv(t, "nsauth-apache", true)
	script, err := filepath.Abs(filepath.Join("reference", "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	// Apache's broker does not start with innerClientAuthenticationCredentials
	// unless the metadata providers are named (auth2Keys).
	props := fmt.Sprintf("brokerName=%s\nbrokerClusterName=%s\n", c.brokerName, clusterName) + c.extraConf +
		"authenticationMetadataProvider=org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider\n" +
		"authorizationMetadataProvider=org.apache.rocketmq.auth.authorization.provider.LocalAuthorizationMetadataProvider\n"
	if err := os.WriteFile(filepath.Join(c.dir, "broker.extra.properties"), []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	if c.broker, err = startProc("apache-broker-nsauth", script, []string{"broker", strconv.Itoa(c.brokerPort), c.nsAddr, c.dir, clusterName},
		filepath.Join(c.dir, "broker.log")); err != nil {
		t.Fatal(err)
	}
	if !waitFor(t, 90*time.Second, func() bool {
		code, rd, _, err := queryRoute(c.nsAddr, "TBW102")
		return err == nil && code == 0 && rd.hasBroker(c.brokerAddr)
	}) {
		t.Fatal("Apache's broker signing with nsBroker not routed within 90 s")
	}
	topic := uniq("NsAuthApache")
	createTopic(t, c, topic)
	p := newProducer(t, c)
	p.mustSend(t, newMsg(topic, "nsauth-apache", "tag"))
	if strings.Contains(tailFile(filepath.Join(c.dir, "namesrv.log"), 400), "refused by authentication") {
		t.Error("the name server refused a request of Apache's signing broker")
	}
}
