package compattest

// ACL 1.0 with the official Go client: a broker with
// aclEnable=true and a plain_acl.yml under its rocketmqHome.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// aclFile is the plain_acl.yml of the ACL tests (Java's too): an admin,
// a user with PUB|SUB on AclTopic, SUB on AclRead, DENY on AclDeny and SUB
// on the group AclGroup, and an account whose white address is not the
// tests' 127.0.0.1.
const aclFile = `globalWhiteRemoteAddresses:
  - 10.10.103.*
accounts:
  - accessKey: aclAdmin01
    secretKey: adminSecret01
    admin: true
  - accessKey: aclUser001
    secretKey: userSecret001
    defaultTopicPerm: DENY
    defaultGroupPerm: DENY
    topicPerms:
      - AclTopic=PUB|SUB
      - AclRead=SUB
      - AclDeny=DENY
    groupPerms:
      - AclGroup=SUB
  - accessKey: aclWhite01
    secretKey: whiteSecret01
    whiteRemoteAddress: 192.168.77.*
    admin: true
`

var (
	aclAdmin = primitive.Credentials{AccessKey: "aclAdmin01", SecretKey: "adminSecret01"}
	aclUser  = primitive.Credentials{AccessKey: "aclUser001", SecretKey: "userSecret001"}
)

// newACLCluster starts a cluster whose broker has aclEnable=true and
// aclFile as ${rocketmqHome}/conf/plain_acl.yml.
func newACLCluster(t *testing.T, name string) *cluster {
	t.Helper()
	home := filepath.Join(workDir, name+"-home")
	if err := os.MkdirAll(filepath.Join(home, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "conf", "plain_acl.yml"), []byte(aclFile), 0o644); err != nil {
		t.Fatal(err)
	}
	return newClusterConf(t, name, "aclEnable=true\nrocketmqHome="+home+"\n")
}

// aclAdminTopic creates a one-queue topic with the Go admin signed by
// cred. The Go admin (v2.1.2) signs only after GetAllSubscriptionGroup
// registered its ACL hook, and CreateTopic ignores the answer's code: the
// caller checks the route.
func aclAdminTopic(c *cluster, cred primitive.Credentials, topic string) error {
	a, err := admin.NewAdmin(admin.WithResolver(resolver(c)), admin.WithCredentials(cred))
	if err != nil {
		return err
	}
	defer a.Close()
	if _, err := a.GetAllSubscriptionGroup(context.Background(), c.brokerAddr, 5*time.Second); err != nil {
		return err
	}
	return a.CreateTopic(context.Background(), admin.WithTopicCreate(topic), admin.WithBrokerAddrCreate(c.brokerAddr),
		admin.WithReadQueueNums(1), admin.WithWriteQueueNums(1))
}

// aclSend sends one message with a producer signed by cred (unsigned when
// cred is empty) and no retries: a refusal is the broker's first answer.
func aclSend(t *testing.T, c *cluster, cred primitive.Credentials, topic, id string) (*primitive.SendResult, error) {
	t.Helper()
	opts := []producer.Option{producer.WithRetry(0)}
	if !cred.IsEmpty() {
		opts = append(opts, producer.WithCredentials(cred))
	}
	p := newProducer(t, c, opts...)
	defer p.shutdown()
	return p.sendSync(context.Background(), newMsg(topic, id, ""))
}

// Apache 5.3.1's stack frames, as its refusals name them.
const (
	frameValidate = "org.apache.rocketmq.acl.plain.PlainPermissionManager.validate(PlainPermissionManager.java:"
	frameCheck    = "org.apache.rocketmq.acl.plain.PlainPermissionChecker.check(PlainPermissionChecker.java:"
	frameSig      = frameValidate + "622)"
)

// wantRefused checks err is the broker's ACL refusal: SYSTEM_ERROR (1)
// with Apache's AclException description, msg being its message and frame.
func wantRefused(t *testing.T, what string, err error, msg string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted", what)
		return
	}
	s := err.Error()
	if !strings.Contains(s, "CODE: 1,") || !strings.HasSuffix(s, "DESC: org.apache.rocketmq.acl.common.AclException: "+msg) {
		t.Errorf("%s: %v\nwant SYSTEM_ERROR with %q", what, err, msg)
	}
}

// TestACLGoClient: the right credentials produce, consume and administer;
// a wrong secret, an unknown key, no key, a topic without PUB, a DENY, a group
// without SUB, an admin code without admin and an account whose white
// address does not cover the client are each refused as Apache refuses
// them, and nothing refused is written (the queue offset of the next
// allowed send counts the writes).
//
// ROCKETGO_ACL_TARGETS=rocketgo,apache (make test-acl-apache) runs the same
// against Apache's 5.3.1 broker with the same file: the proof that the
// answers are Apache's. One difference is rocketgo's on purpose: the Go
// client's unsigned SecurityToken (Apache refuses the signature).
func TestACLGoClient(t *testing.T) {
	t.Parallel() // mostly waits: the reload's watch
	for _, target := range strings.Split(envOr("ROCKETGO_ACL_TARGETS", "rocketgo"), ",") {
		t.Run(target, func(t *testing.T) {
			var c *cluster
			var file string // its plain_acl.yml
			switch target {
			case "rocketgo":
				c = newACLCluster(t, "acl-go")
				file = filepath.Join(workDir, "acl-go-home", "conf", "plain_acl.yml")
			case "apache":
				c = startApacheACL(t, "acl-apache")
				file = filepath.Join(c.dir, "conf", "plain_acl.yml")
			default:
				t.Fatalf("ROCKETGO_ACL_TARGETS: unknown target %q", target)
			}
			aclGoScenario(t, c, target)
			aclReload(t, c, file)
		})
	}
}

func aclGoScenario(t *testing.T, c *cluster, target string) {

	if err := aclAdminTopic(c, aclUser, "AclDenied"); err != nil {
		t.Fatalf("CreateTopic as a user: %v", err)
	}
	for _, topic := range []string{"AclTopic", "AclRead"} {
		if err := aclAdminTopic(c, aclAdmin, topic); err != nil {
			t.Fatalf("CreateTopic %s as admin: %v", topic, err)
		}
		waitRoute(t, c, topic, 1)
	}
	// Registered after the user's attempt: had it been served, its route
	// would be there.
	if code, _, _, err := queryRoute(c.nsAddr, "AclDenied"); err != nil || code != 17 {
		t.Fatalf("topic created by a user without admin: route code %d %v", code, err)
	}

	const n = 5
	var ids []string
	for i := range n {
		id := uniq("acl")
		r, err := aclSend(t, c, aclUser, "AclTopic", id)
		if err != nil || r.Status != primitive.SendOK || r.QueueOffset != int64(i) {
			t.Fatalf("send %d as the user: %v %v", i, r, err)
		}
		ids = append(ids, id)
	}

	_, err := aclSend(t, c, primitive.Credentials{AccessKey: "aclUser001", SecretKey: "wrongSecret1"}, "AclTopic", "x")
	wantRefused(t, "wrong secret", err, "Check signature failed for accessKey=aclUser001, "+frameSig)
	_, err = aclSend(t, c, primitive.Credentials{AccessKey: "aclNobody01", SecretKey: "userSecret001"}, "AclTopic", "x")
	wantRefused(t, "unknown key", err, "No acl config for aclNobody01, "+frameValidate+"606)")
	_, err = aclSend(t, c, primitive.Credentials{}, "AclTopic", "x")
	wantRefused(t, "no credentials", err, "No accessKey is configured, "+frameValidate+"602)")
	_, err = aclSend(t, c, aclUser, "AclRead", "x")
	wantRefused(t, "topic without PUB", err, "No permission for topic:AclRead, "+frameCheck+"62)")
	_, err = aclSend(t, c, aclUser, "AclDeny", "x")
	wantRefused(t, "topic DENY", err, "No permission for topic:AclDeny, "+frameCheck+"62)")
	_, err = aclSend(t, c, primitive.Credentials{AccessKey: "aclWhite01", SecretKey: "notTheSecret"}, "AclTopic", "x")
	wantRefused(t, "white address not the client's", err, "Check signature failed for accessKey=aclWhite01, "+frameSig)
	// The Go client's SecurityToken is sent unsigned: rocketgo accepts it,
	// Apache refuses the signature.
	tok := aclUser
	tok.SecurityToken = "session-token"
	r, err := aclSend(t, c, tok, "AclTopic", uniq("acl"))
	if target == "apache" {
		wantRefused(t, "SecurityToken (Apache)", err, "Check signature failed for accessKey=aclUser001, "+frameSig)
		if r, err = aclSend(t, c, aclUser, "AclTopic", uniq("acl")); err != nil {
			t.Fatal(err)
		}
	}
	if err != nil || r.QueueOffset != n {
		t.Fatalf("send with a SecurityToken: %v %v (queue offset %d wants the refused sends unwritten)", r, err, n)
	}
	if r, err := aclSend(t, c, aclAdmin, "AclRead", uniq("acl")); err != nil || r.QueueOffset != 0 {
		t.Fatalf("admin send to AclRead: %v %v (queue offset 0 wants the refused send unwritten)", r, err)
	}

	col := newCollector("acl")
	startConsumer(t, c, "AclGroup", "AclTopic", "*", col, consumer.WithCredentials(aclUser))
	waitAll(t, col, ids, 30*time.Second, "consumer with the user's credentials")

	// A group without SUB: the pull is refused.
	pc, err := rocketmq.NewPullConsumer(consumer.WithNsResolver(resolver(c)), consumer.WithGroupName("AclOtherGroup"),
		consumer.WithInstance(uniq("pull")), consumer.WithCredentials(aclUser))
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Subscribe("AclTopic", consumer.MessageSelector{}); err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(); err != nil {
		t.Fatalf("pull consumer start: %v", err)
	}
	defer func() { _ = pc.Shutdown() }()
	_, err = pc.PullFrom(context.Background(), &primitive.MessageQueue{Topic: "AclTopic", BrokerName: c.brokerName}, 0, 8)
	if err == nil || !strings.Contains(err.Error(), "Response Code: 1,") ||
		!strings.HasSuffix(err.Error(), "AclException: No default permission for group:AclOtherGroup, "+frameCheck+"57)") {
		t.Fatalf("pull by a group without SUB: %v", err)
	}
}

// TestJavaACL: the Java 4.9.8 and 5.3.3 clients signing with AclClientRPCHook send,
// consume and administer with the right credentials; a user's admin
// request and a wrong secret are refused with Apache's answer (and 4.9.8's
// DefaultMQAdminExt runs the ACL admin commands); the Go
// side then checks the refused send was not written. With
// ROCKETGO_ACL_TARGETS=rocketgo,apache (make test-acl-apache) the same
// runs against Apache's 5.3.1 broker.
func TestJavaACL(t *testing.T) {
	requireJava(t)
	for _, target := range strings.Split(envOr("ROCKETGO_ACL_TARGETS", "rocketgo"), ",") {
		t.Run(target, func(t *testing.T) {
			var c *cluster
			var home string
			switch target {
			case "rocketgo":
				c = newACLCluster(t, "acl-java")
				home = filepath.Join(workDir, "acl-java-home")
			case "apache":
				c = startApacheACL(t, "acl-java-apache")
				home = c.dir
			default:
				t.Fatalf("ROCKETGO_ACL_TARGETS: unknown target %q", target)
			}
			for _, topic := range []string{"AclTopic", "AclRead"} {
				if err := aclAdminTopic(c, aclAdmin, topic); err != nil {
					t.Fatalf("CreateTopic %s as admin: %v", topic, err)
				}
				waitRoute(t, c, topic, 1)
			}
			// 4.9.8 also runs the admin commands, which 5.3.3's tools dropped.
			for _, line := range []struct{ profile, classes string }{{"rmq4", "AclTest,AclAdminTest"}, {"rmq5", "AclTest"}} {
				run := fmt.Sprintf("%s-acl-%d", line.profile, time.Now().UnixNano()%1_000_000)
				t.Run(line.profile, func(t *testing.T) {
					runMaven(t, mavenRun{profile: line.profile, serialize: "JSON", class: line.classes, props: map[string]string{
						"namesrv": c.nsAddr, "run": run, "cluster": clusterName, "brokerName": c.brokerName,
						"brokerAddr": c.brokerAddr, "go2javaTopic": "unused", "java2goTopic": "unused",
						"aclHome": home, "aclTarget": target,
					}})
				})
			}
			const javaSent = 5 + 1 + 5 // AclTest.N per line, and adminCodes' send by the account it creates
			if r, err := aclSend(t, c, aclUser, "AclTopic", uniq("acl")); err != nil || r.QueueOffset != javaSent {
				t.Fatalf("send after the Java run: %v %v (queue offset %d wants only the Java client's allowed sends written)", r, err, javaSent)
			}
		})
	}
}

// aclReload: the file changes under a running broker (127.0.0.1 becomes a
// global white address): within the 5 s watch an unsigned client is let
// in, without a restart.
func aclReload(t *testing.T, c *cluster, file string) {
	t.Helper()
	if err := os.WriteFile(file, []byte("globalWhiteRemoteAddresses:\n  - 127.0.0.1\n"+aclFile[strings.Index(aclFile, "accounts:"):]), 0o644); err != nil {
		t.Fatal(err)
	}
	p := newProducer(t, c, producer.WithRetry(0))
	defer p.shutdown()
	var last error
	if !waitFor(t, 20*time.Second, func() bool {
		_, last = p.sendSync(context.Background(), newMsg("AclRead", uniq("acl"), ""))
		if last != nil {
			time.Sleep(250 * time.Millisecond)
		}
		return last == nil
	}) {
		t.Fatalf("unsigned send still refused 20 s after the file let 127.0.0.1 in: %v", last)
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// startApacheACL runs the reference name server (5.3.3) and Apache's 5.3.1
// broker (reference/run.sh broker-acl1) with aclEnable=true and aclFile in
// its ROCKETMQ_HOME.
func startApacheACL(t *testing.T, name string) *cluster {
	t.Helper()
	began := time.Now()
	c, script := startApacheNamesrv(t, name, "")
	if err := os.MkdirAll(filepath.Join(c.dir, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.dir, "conf", "plain_acl.yml"), []byte(aclFile), 0o644); err != nil {
		t.Fatal(err)
	}
	props := fmt.Sprintf("brokerName=%s\nbrokerClusterName=%s\naclEnable=true\n", c.brokerName, clusterName)
	if err := os.WriteFile(filepath.Join(c.dir, "broker.extra.properties"), []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	if c.broker, err = startProc("apache-broker-5.3.1", script, []string{"broker-acl1", strconv.Itoa(c.brokerPort), c.nsAddr, c.dir, clusterName},
		filepath.Join(c.dir, "broker.log")); err != nil {
		t.Fatal(err)
	}
	if !waitFor(t, 90*time.Second, func() bool {
		code, rd, _, err := queryRoute(c.nsAddr, "TBW102")
		return err == nil && code == 0 && rd.hasBroker(c.brokerAddr)
	}) {
		t.Fatalf("apache 5.3.1 broker not routed within 90 s")
	}
	t.Logf("Apache 5.3.1 broker with ACL 1.0 up in %.1fs: namesrv %s, broker %s, files under %s",
		time.Since(began).Seconds(), c.nsAddr, c.brokerAddr, c.dir)
	return c
}
