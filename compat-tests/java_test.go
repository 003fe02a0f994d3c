package compattest

// The official Java client (4.9.8 and 5.3.3) and mqadmin against rocketgo.
// JUnit runs inside Maven (compat-tests/java); each surefire test case comes
// back as a Go subtest. Enabled by ROCKETGO_JAVA=1 (make test-java).

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// javaLines are the client lines under test: Maven profile and label.
var javaLines = []struct{ profile, label string }{
	{"rmq4", "4.9.8"},
	{"rmq5", "5.3.3"},
}

var serializations = []string{"JSON", "ROCKETMQ"}

const mixedCount = 5 // Env.MIXED_COUNT on the Java side

func requireJava(t *testing.T) {
	t.Helper()
	if os.Getenv("ROCKETGO_JAVA") == "" {
		t.Skip("Java compat tests run with ROCKETGO_JAVA=1 (make test-java)")
	}
	if _, err := exec.LookPath("mvn"); err != nil {
		t.Fatalf("ROCKETGO_JAVA=1 but mvn not found: %v", err)
	}
}

// surefire report XML, the parts we read.
type surefireSuite struct {
	Cases []struct {
		Name      string  `xml:"name,attr"`
		Classname string  `xml:"classname,attr"`
		Time      float64 `xml:"time,attr"`
		Failure   *struct {
			Message string `xml:"message,attr"`
			Text    string `xml:",chardata"`
		} `xml:"failure"`
		Error *struct {
			Message string `xml:"message,attr"`
			Text    string `xml:",chardata"`
		} `xml:"error"`
		Skipped *struct {
			Message string `xml:"message,attr"`
		} `xml:"skipped"`
		SystemOut string `xml:"system-out"`
	} `xml:"testcase"`
}

// mavenRun is one JVM: a client line, a header serialization, a JUnit class.
type mavenRun struct {
	profile   string
	serialize string // JSON or ROCKETMQ
	class     string // JUnit class (-Dtest)
	props     map[string]string
	dir       string // the Maven project, "java" when empty
}

// mavenRuns numbers the Maven runs of this process, so that each has its own
// surefire temporary directory.
var mavenRuns atomic.Int64

// runMaven runs the JUnit class and reports each test case as a subtest.
// It returns the captured stdout of each test case by name.
func runMaven(t *testing.T, r mavenRun) map[string]string {
	t.Helper()
	reports := t.TempDir()
	// Surefire keeps its booter jar in <build dir>/<tempDir> and deletes that
	// directory when its run ends; parallel runs of one profile sharing the
	// default "surefire" directory deleted each other's jar before the forked
	// JVM opened it ("unexpected error ... open file surefirebooter-*.jar").
	tempDir := fmt.Sprintf("surefire-%d-%d", os.Getpid(), mavenRuns.Add(1))
	args := []string{"-q", "-B", "test", "-Dtest=" + r.class,
		"-DreportsDir=" + reports, "-DtempDir=" + tempDir, "-Dsurefire.failIfNoSpecifiedTests=false",
		"-Drocketmq.serialize.type=" + r.serialize}
	keys := make([]string, 0, len(r.props))
	for k := range r.props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "-D"+k+"="+r.props[k])
	}
	if r.profile != "" {
		args = append([]string{"-P", r.profile}, args...)
	}
	cmd := exec.Command("mvn", args...)
	cmd.Dir = "java"
	if r.dir != "" {
		cmd.Dir = r.dir
	}
	cmd.Env = append(os.Environ(), "ROCKETMQ_SERIALIZE_TYPE="+r.serialize)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	runErr := cmd.Run()
	left, _ := filepath.Glob(filepath.Join(cmd.Dir, "target", "*", tempDir))
	for _, d := range left {
		os.RemoveAll(d)
	}
	t.Logf("mvn %s %s %s: %.1fs", r.profile, r.serialize, r.class, time.Since(start).Seconds())

	files, _ := filepath.Glob(filepath.Join(reports, "TEST-*.xml"))
	if len(files) == 0 {
		t.Fatalf("mvn %s produced no surefire report (err %v):\n%s", strings.Join(args, " "), runErr, tail(out.String(), 80))
	}
	outputs := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("read %s: %v", f, err)
		}
		var s surefireSuite
		if err := xml.Unmarshal(b, &s); err != nil {
			t.Fatalf("parse %s: %v", f, err)
		}
		for _, c := range s.Cases {
			c := c
			outputs[c.Name] = c.SystemOut
			t.Run(strings.TrimSuffix(c.Name, "()"), func(t *testing.T) {
				switch {
				case c.Failure != nil:
					t.Errorf("JUnit %s.%s failed: %s\n%s", c.Classname, c.Name, c.Failure.Message, tail(c.Failure.Text, 40))
				case c.Error != nil:
					t.Errorf("JUnit %s.%s error: %s\n%s", c.Classname, c.Name, c.Error.Message, tail(c.Error.Text, 40))
				case c.Skipped != nil:
					t.Skip(c.Skipped.Message)
				default:
					t.Logf("JUnit %s passed in %.2fs", c.Name, c.Time)
				}
				if t.Failed() && c.SystemOut != "" {
					t.Logf("stdout:\n%s", tail(c.SystemOut, 60))
				}
			})
		}
	}
	if runErr != nil && !t.Failed() {
		t.Errorf("mvn failed without a failing test case: %v\n%s", runErr, tail(out.String(), 60))
	}
	return outputs
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestJavaClients runs the Java client scenarios (sends, push consumers in
// both models, offsets after a consumer restart, the lite pull consumer) for
// each client line and header serialization, plus the mixed Go/Java exchange.
func TestJavaClients(t *testing.T) {
	requireJava(t)
	c := newCluster(t, "java")
	for _, line := range javaLines {
		for _, ser := range serializations {
			t.Run(line.label+"/"+ser, func(t *testing.T) { runJavaClientScenarios(t, c, line, ser) })
		}
	}
}

// runJavaClientScenarios runs ClientTest for one client line and serialization
// against c, with the Go side of the mixed-client exchange around it.
func runJavaClientScenarios(t *testing.T, c *cluster, line struct{ profile, label string }, ser string) {
	start := time.Now()
	run := strings.ToLower(fmt.Sprintf("%s-%s-%d", line.profile, ser, time.Now().UnixNano()%1_000_000))
	go2java := "go2java-" + run
	java2go := "java2go-" + run
	createTopic(t, c, go2java)
	createTopic(t, c, java2go)
	sendMixedFromGo(t, c, go2java)
	props := map[string]string{
		"namesrv": c.nsAddr, "run": run, "cluster": clusterName, "brokerName": c.brokerName,
		"brokerAddr": c.brokerAddr, "go2javaTopic": go2java, "java2goTopic": java2go,
	}
	if line.profile == "rmq5" && ser == "ROCKETMQ" {
		// The 5.x client's heartbeat V2 (fingerprints, lite heartbeats
		// without subscriptions) in one of the two runs.
		props["com.rocketmq.heartbeat.v2"] = "true"
	}
	runMaven(t, mavenRun{profile: line.profile, serialize: ser, class: "ClientTest", props: props})
	t.Run("javaProducerToGoConsumer", func(t *testing.T) { checkMixedInGo(t, c, java2go) })
	report(t, start, 0, 0, "")
}

// sendMixedFromGo sends the messages the Java goProducerToJavaConsumer case expects.
func sendMixedFromGo(t *testing.T, c *cluster, topic string) {
	t.Helper()
	p := newProducer(t, c)
	for i := 0; i < mixedCount; i++ {
		m := primitive.NewMessage(topic, []byte(fmt.Sprintf("go2java-%d", i)))
		m.WithTag("TagG")
		m.WithKeys([]string{fmt.Sprintf("gokey-%d", i), fmt.Sprintf("gokey2-%d", i)})
		m.WithProperty("color", fmt.Sprintf("go-%d", i))
		m.WithProperty("x-unicode", "ü中")
		p.mustSend(t, m)
	}
	p.shutdown()
}

// checkMixedInGo reads what the Java producer sent and compares every field.
func checkMixedInGo(t *testing.T, c *cluster, topic string) {
	var (
		mu  sync.Mutex
		got = map[string]*primitive.MessageExt{}
	)
	pc, err := consumer.NewPushConsumer(
		consumer.WithNsResolver(resolver(c)),
		consumer.WithGroupName(uniq("CG_java2go")),
		consumer.WithInstance(uniq("cons")),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		t.Fatalf("NewPushConsumer: %v", err)
	}
	err = pc.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"},
		func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range msgs {
				got[string(m.Body)] = m
			}
			return consumer.ConsumeSuccess, nil
		})
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	if err := pc.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer func() { _ = pc.Shutdown() }()
	if !waitFor(t, 30*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) >= mixedCount }) {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("Go consumer got %d of %d messages from the Java producer", len(got), mixedCount)
	}
	mu.Lock()
	defer mu.Unlock()
	for i := 0; i < mixedCount; i++ {
		m := got[fmt.Sprintf("java2go-%d", i)]
		if m == nil {
			t.Fatalf("java2go-%d missing", i)
		}
		if m.GetTags() != "TagJ" {
			t.Errorf("java2go-%d tags %q, want TagJ", i, m.GetTags())
		}
		if want := fmt.Sprintf("jkey-%d jkey2-%d", i, i); m.GetKeys() != want {
			t.Errorf("java2go-%d keys %q, want %q", i, m.GetKeys(), want)
		}
		if want := fmt.Sprintf("java-%d", i); m.GetProperty("color") != want {
			t.Errorf("java2go-%d color %q, want %q", i, m.GetProperty("color"), want)
		}
		if m.GetProperty("x-unicode") != "ü中" {
			t.Errorf("java2go-%d x-unicode %q", i, m.GetProperty("x-unicode"))
		}
	}
}

// TestMQAdmin runs the mqadmin subcommands (MqAdminTest, MQAdminStartup in
// one JVM per tools version) against a dedicated cluster.
func TestMQAdmin(t *testing.T) {
	requireJava(t)
	c := newCluster(t, "mqadmin")
	for _, line := range javaLines {
		t.Run(line.label, func(t *testing.T) { runMQAdmin(t, c, line) })
	}
}

// runMQAdmin runs MqAdminTest with one tools version against c.
func runMQAdmin(t *testing.T, c *cluster, line struct{ profile, label string }) {
	home := t.TempDir()
	// 4.9.x tools configure logback from $ROCKETMQ_HOME/conf/logback_tools.xml
	// and skip the command when it is missing.
	if err := os.MkdirAll(filepath.Join(home, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "conf", "logback_tools.xml"), []byte("<configuration/>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// queryMsgByKey needs QUERY_MESSAGE (12), which comes with the IndexFile:
	// the Java test skips itself when the broker does not serve it.
	probe, err := rawInvoke(c.brokerAddr, newRequest(12, map[string]string{"topic": "TBW102", "key": "k",
		"maxNum": "1", "beginTimestamp": "0", "endTimestamp": "1"}, nil), 5*time.Second)
	if err != nil {
		t.Fatalf("QUERY_MESSAGE probe: %v", err)
	}
	unsupported := strconv.FormatBool(probe.Code == 3)
	run := strings.ToLower(fmt.Sprintf("%s-adm-%d", line.profile, time.Now().UnixNano()%1_000_000))
	runMaven(t, mavenRun{profile: line.profile, serialize: "JSON", class: "MqAdminTest", props: map[string]string{
		"namesrv": c.nsAddr, "run": run, "cluster": clusterName, "brokerName": c.brokerName,
		"brokerAddr": c.brokerAddr, "go2javaTopic": "unused", "java2goTopic": "unused",
		"rocketmq.home.dir": home, "user.home": home, "queryMessageUnsupported": unsupported,
	}})
}
