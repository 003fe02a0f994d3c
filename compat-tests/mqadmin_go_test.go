package compattest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// TestMQAdminGo: the Go mqadmin (cmd/mqadmin) against Apache's mqadmin
// 5.3.3 (MQAdminStartup from the reference jars), the same subcommands with
// the same flags on the same cluster — a rocketgo one and the Apache
// reference: their outputs must be equal — line for line, or as sets of
// lines where Apache prints a Java hash container (the topic list, the
// properties of getBrokerConfig), whose order the Go tool sorts.
func TestMQAdminGo(t *testing.T) {
	requireJava(t)
	t.Parallel() // one JVM per command, not in java/target: beside the Maven tests
	cp := toolsClasspath(t)
	for _, kind := range []string{"rocketgo", "apache"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel() // two clusters of their own
			testMQAdminGo(t, kind, startTxBroker(t, kind, "mqadmin-go-"+kind).c, cp)
		})
	}
}

func testMQAdminGo(t *testing.T, kind string, c *cluster, cp string) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	topic, orderTopic, group, group2 := uniq("AdmGo"), uniq("AdmGoO"), uniq("AdmGoG"), uniq("AdmGoG2")
	steps := []mqadminStep{
		{args: []string{"updateTopic", "-n", c.nsAddr, "-c", clusterName, "-t", topic, "-r", "4", "-w", "4"}},
		{args: []string{"updateTopic", "-n", c.nsAddr, "-b", c.brokerAddr, "-t", orderTopic, "-p", "6", "-o", "true", "-a", "+message.type=FIFO"}},
		{args: []string{"updateTopic", "-n", c.nsAddr, "-c", clusterName, "-t", orderTopic, "-o", "true", "-u", "false", "-s", "true"}},
		{args: []string{"topicList", "-n", c.nsAddr}, sets: true},
		{args: []string{"getBrokerConfig", "-n", c.nsAddr, "-b", c.brokerAddr}, sets: true},
		{args: []string{"getBrokerConfig", "-n", c.nsAddr, "-c", clusterName}, sets: true},
		{args: []string{"updateSubGroup", "-n", c.nsAddr, "-c", clusterName, "-g", group, "-r", "3", "-q", "2"}},
		{args: []string{"updateSubGroup", "-n", c.nsAddr, "-b", c.brokerAddr, "-g", group2, "-o", "true", "-d", "true", "-m", "true", "-s", "false", "-i", "1", "-w", "2", "-a", "false"}},
		{args: []string{"updateSubGroup", "-n", c.nsAddr, "-b", c.brokerAddr, "-g", group2,
			"-p", `{"type":"EXPONENTIAL","exponentialRetryPolicy":{"initial":5000,"max":7200000,"multiplier":2}}`}},
		{args: []string{"updateSubGroup", "-n", c.nsAddr, "-b", c.brokerAddr, "-g", group2,
			"-p", `{"type":"CUSTOMIZED","customizedRetryPolicy":{"next":[1000,5000,10000]}}`}},
		{args: []string{"deleteSubGroup", "-n", c.nsAddr, "-c", clusterName, "-g", group2, "-r", "true"}},
	}
	java := startJavaAdmin(t, cp, home)
	runMQAdminSteps(t, java, steps)
	if t.Failed() {
		return
	}
	producerGroup := uniq("AdmGoP")
	producer, consumer, sent := mqadminTraffic(t, c, topic, group, producerGroup)
	runMQAdminSteps(t, java, []mqadminStep{
		{args: []string{"producerConnection", "-n", c.nsAddr, "-g", producerGroup, "-t", topic}, sets: true},
		{args: []string{"consumerConnection", "-n", c.nsAddr, "-g", group}, sets: true},
		{args: []string{"consumerProgress", "-n", c.nsAddr}, sets: true},
		{args: []string{"queryMsgByKey", "-n", c.nsAddr, "-t", topic, "-k", "AdmKey1"}, norm: indexKeyNorm},
		{args: []string{"queryMsgById", "-n", c.nsAddr, "-t", topic, "-i", sent.OffsetMsgID}, norm: javaTrackNorm},
		{args: []string{"queryMsgById", "-n", c.nsAddr, "-t", topic, "-i", sent.MsgID}, norm: javaTrackNorm}, // UNIQ_KEY
		{args: []string{"consumerProgress", "-n", c.nsAddr, "-g", group, "-t", topic}, norm: consumeTPSNorm},
		// the broker resets an online group itself and tells its consumer; -1: to the max offsets, as now
		{args: []string{"resetOffsetByTime", "-n", c.nsAddr, "-g", group, "-t", topic, "-s", "-1"}, sets: true},
		{args: []string{"queryMsgByOffset", "-n", c.nsAddr, "-t", topic, "-b", c.brokerName, "-i", strconv.Itoa(sent.MessageQueue.QueueId),
			"-o", strconv.FormatInt(sent.QueueOffset, 10), "-f", "UTF-8"}, norm: javaTrackNorm},
	})
	getConsumerStatus(t, c, topic, group)
	// One queue to where it is (2 of 8 messages over 4 queues): Apache 5.x's
	// server-side reset of queue 0.
	runMQAdminSteps(t, java, []mqadminStep{
		{args: []string{"resetOffsetByTime", "-n", c.nsAddr, "-g", group, "-t", topic, "-s", "0", "-b", c.brokerAddr, "-q", "0", "-o", "2"}},
	})
	producer.shutdown()
	consumer.shutdown() // its offsets committed: stable for both tools
	steps = []mqadminStep{
		{args: []string{"clusterList", "-n", c.nsAddr}, norm: clusterListNorm},
		{args: []string{"clusterList", "-n", c.nsAddr, "-m"}},
		{args: []string{"clusterList", "-n", c.nsAddr, "-c", clusterName}, norm: clusterListNorm},
		{args: []string{"brokerStatus", "-n", c.nsAddr, "-b", c.brokerAddr}, norm: brokerStatusNorm},
		{args: []string{"brokerStatus", "-n", c.nsAddr, "-c", clusterName}, norm: brokerStatusNorm},
		{args: []string{"topicRoute", "-n", c.nsAddr, "-t", topic}, norm: routeAddrsNorm},
		{args: []string{"topicRoute", "-n", c.nsAddr, "-t", topic, "-l"}},
		{args: []string{"topicStatus", "-n", c.nsAddr, "-t", topic}},
		{args: []string{"topicStatus", "-n", c.nsAddr, "-t", topic, "-c", clusterName}},
		{args: []string{"consumerProgress", "-n", c.nsAddr, "-g", group}, norm: consumeTPSNorm},
		// -1: to the max offsets, where the consumer already is (the same for both runs)
		{args: []string{"resetOffsetByTime", "-n", c.nsAddr, "-g", group, "-t", topic, "-s", "-1"}, sets: true},
		{args: []string{"updateBrokerConfig", "-n", c.nsAddr, "-b", c.brokerAddr, "-k", "maxMessageSize", "-v", "4194304"}},
		{args: []string{"updateBrokerConfig", "-n", c.nsAddr, "-c", clusterName, "-k", "maxMessageSize", "-v", "4194304"}},
		{args: []string{"deleteSubGroup", "-n", c.nsAddr, "-b", c.brokerAddr, "-g", group}},
		{args: []string{"deleteTopic", "-n", c.nsAddr, "-c", clusterName, "-t", topic}},
	}
	runMQAdminSteps(t, java, steps)
}

// getConsumerStatus checks INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223; no
// mqadmin command sends it, DefaultMQAdminExt.getConsumeStatus does) with
// the group's one Go consumer online, which has consumed the topic's 8
// messages over 4 queues: the broker relays GET_CONSUMER_STATUS_FROM_CLIENT
// to it and answers its offsets in fastjson's bytes, one entry per queue
// (their order is a Java HashMap's: the broker unit tests check it), 8 in
// all. Run on both brokers, the same pattern holds for Apache's bytes.
func getConsumerStatus(t *testing.T, c *cluster, topic, group string) {
	t.Helper()
	ids, err := consumerList(c.brokerAddr, group)
	if err != nil || len(ids) != 1 {
		t.Fatalf("consumers of %s: %v %v", group, ids, err)
	}
	for _, origin := range []string{"", ids[0]} {
		resp, err := rawInvoke(c.brokerAddr, javaRequest(223, map[string]string{"topic": topic, "group": group, "clientAddr": origin}, nil), 15*time.Second)
		if err != nil || resp.Code != 0 {
			t.Fatalf("INVOKE_BROKER_TO_GET_CONSUMER_STATUS: %v %+v", err, resp)
		}
		q := `\{"brokerName":"` + regexp.QuoteMeta(c.brokerName) + `","queueId":([0-3]),"topic":"` + regexp.QuoteMeta(topic) + `"\}:(\d+)`
		re := regexp.MustCompile(`^\{"consumerTable":\{"` + regexp.QuoteMeta(ids[0]) + `":\{` + q + `,` + q + `,` + q + `,` + q +
			`\}\},"messageQueueTable":\{\}\}$`)
		m := re.FindStringSubmatch(string(resp.Body))
		if m == nil {
			t.Fatalf("INVOKE_BROKER_TO_GET_CONSUMER_STATUS (clientAddr %q) body:\n%s", origin, resp.Body)
		}
		var total int64
		queues := map[string]bool{}
		for i := 1; i < len(m); i += 2 {
			queues[m[i]] = true
			n, _ := strconv.ParseInt(m[i+1], 10, 64)
			total += n
		}
		if len(queues) != 4 || total != 8 {
			t.Fatalf("consumer status: %d queues, offsets total %d, want 4 and 8: %s", len(queues), total, resp.Body)
		}
	}
}

// mqadminStep is one subcommand run by both tools; their outputs must be
// equal after norm (when set), as sets of lines when sets. between, when
// set, is a Go mqadmin command run after Java's and before the Go tool's,
// undoing what Java's changed (so that both start from the same state);
// settle, when set, waits before each tool's run until that state shows;
// want, when set, is a text both outputs must hold (two empty outputs are
// equal and prove nothing).
type mqadminStep struct {
	args    []string
	sets    bool
	norm    func(string) string
	between []string
	settle  func(t *testing.T)
	want    string
}

func runMQAdminSteps(t *testing.T, ja *javaAdmin, steps []mqadminStep) {
	for _, s := range steps {
		t.Run(s.args[0], func(t *testing.T) {
			if s.settle != nil {
				s.settle(t)
			}
			java := ja.run(t, s.args)
			if s.between != nil {
				runGoAdmin(t, s.between)
			}
			if s.settle != nil {
				s.settle(t)
			}
			goOut := runGoAdmin(t, s.args)
			if !strings.Contains(java, s.want) || !strings.Contains(goOut, s.want) {
				t.Errorf("mqadmin %s: an output lacks %q\nJava:\n%s\nGo:\n%s", strings.Join(s.args, " "), s.want, java, goOut)
			}
			j, g := java, goOut
			if s.norm != nil {
				j, g = s.norm(j), s.norm(g)
			}
			if s.sets {
				jl, gl := lines(j), lines(g)
				slices.Sort(jl)
				slices.Sort(gl)
				if !slices.Equal(jl, gl) {
					t.Errorf("mqadmin %s: line sets differ\nJava:\n%s\nGo:\n%s", strings.Join(s.args, " "), java, goOut)
				}
				return
			}
			if j != g {
				t.Errorf("mqadmin %s: outputs differ\nJava:\n%s\nGo:\n%s", strings.Join(s.args, " "), java, goOut)
			}
		})
	}
}

// mqadminTraffic gives the commands data: messages with keys on topic from
// producerGroup, all consumed by group (the official Go client's producer
// and push consumer, both left running) and the offsets committed (so that
// both tools see the same progress); it returns them and the last send.
func mqadminTraffic(t *testing.T, c *cluster, topic, group, producerGroup string) (*producerHandle, *consumerHandle, *primitive.SendResult) {
	p := newProducer(t, c, producer.WithGroupName(producerGroup))
	var ids []string
	var last *primitive.SendResult
	for i := 0; i < 8; i++ {
		id := fmt.Sprintf("adm-%d", i)
		m := newMsg(topic, id, "TagA")
		m.WithKeys([]string{"AdmKey" + strconv.Itoa(i%2)})
		last = p.mustSend(t, m)
		ids = append(ids, id)
	}
	col := newCollector(group)
	h := startConsumer(t, c, group, topic, "*", col)
	waitAll(t, col, ids, 30*time.Second, "mqadmin traffic")
	// The client commits offsets every few seconds: wait for all eight.
	if !waitFor(t, 30*time.Second, func() bool {
		out := runGoAdmin(t, []string{"consumerProgress", "-n", c.nsAddr, "-g", group})
		return strings.Contains(out, topic) && strings.Contains(out, "Consume Diff Total: 0\n")
	}) {
		t.Fatalf("group %s: offsets not committed within 30 s", group)
	}
	return p, h, last
}

// toolsClasspath resolves Apache's 5.3.3 tools (compat-tests/java, profile
// rmq5) into a classpath, once per run.
func toolsClasspath(t *testing.T) string {
	t.Helper()
	out := filepath.Join(workDir, "tools5.classpath")
	if b, err := os.ReadFile(out); err == nil && len(b) > 0 {
		return strings.TrimSpace(string(b))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "mvn", "-q", "-B", "-P", "rmq5", "-f", filepath.Join("java", "pom.xml"),
		"dependency:build-classpath", "-Dmdep.outputFile="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tools classpath: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// javaAdmin is one JVM running Apache's 5.3.3 mqadmin commands one after
// another (java/mqadmin/MQAdminBatch.java): a JVM start costs more than a
// command, and the test runs twenty of them per cluster.
type javaAdmin struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *lockedBuffer
}

const javaAdminEnd = "@@mqadmin-batch-end@@"

func startJavaAdmin(t *testing.T, cp, home string) *javaAdmin {
	t.Helper()
	cmd := exec.Command("java", "-Xmx128m", "-Duser.home="+home, "-Drocketmq.home.dir="+home,
		"-cp", cp, filepath.Join("java", "mqadmin", "MQAdminBatch.java"))
	cmd.Env = append(os.Environ(), "ROCKETMQ_HOME="+home)
	ja := &javaAdmin{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = ja.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ja.in, ja.out = in, bufio.NewReader(out)
	t.Cleanup(func() {
		_ = in.Close() // the batch ends at end of input
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return ja
}

// run runs one command in the JVM and returns its stdout.
func (ja *javaAdmin) run(t *testing.T, args []string) string {
	t.Helper()
	if _, err := io.WriteString(ja.in, strings.Join(args, "\t")+"\n"); err != nil {
		t.Fatalf("Java mqadmin %v: %v\n%s", args, err, ja.stderr.String())
	}
	type result struct {
		out string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		var b strings.Builder
		for {
			line, err := ja.out.ReadString('\n')
			if err != nil {
				ch <- result{b.String(), err}
				return
			}
			if line == javaAdminEnd+"\n" { // after the newline the batch adds
				ch <- result{strings.TrimSuffix(b.String(), "\n"), nil}
				return
			}
			b.WriteString(line)
		}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("Java mqadmin %v: %v\n%s%s", args, r.err, r.out, ja.stderr.String())
		}
		return r.out
	case <-time.After(60 * time.Second):
		_ = ja.cmd.Process.Kill()
		t.Fatalf("Java mqadmin %v: no answer in 60 s\n%s", args, ja.stderr.String())
		return ""
	}
}

// lockedBuffer is a bytes.Buffer written by exec's copier and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// clusterListNorm masks what moves between the two tools' runs of
// clusterList, seconds apart: the in and out TPS (rates over the last
// seconds), the timer's read and offset lag (Apache's timer wheel moves on
// every second), #Hour (the oldest message's age by the clock) and #SPACE
// (disk use, shared with every other test). Names, ids, addresses,
// versions, queue sizes and waits, timer congestion and rates and
// #ACTIVATED stay compared; columns are compared as fields (a masked number
// changes the padding).
func clusterListNorm(s string) string {
	s = clusterTPS.ReplaceAllString(s, "TPS(")
	s = clusterTimerLag.ReplaceAllString(s, " LAG(")
	s = clusterHourSpace.ReplaceAllString(s, " HOUR SPACE ")
	var out []string
	for _, l := range lines(s) {
		out = append(out, strings.Join(strings.Fields(l), " "))
	}
	return strings.Join(out, "\n")
}

var (
	clusterTPS       = regexp.MustCompile(`\d+\.\d{2}\(`)
	clusterTimerLag  = regexp.MustCompile(` -?\d+--?\d+\(`)
	clusterHourSpace = regexp.MustCompile(` \d+\.\d{2} +\d+\.\d{4} `)
)

// javaTrackNorm drops the message-track lines of a group whose state
// could not be read (trackType=UNKNOWN with an exceptionDesc: Apache prints
// a Java exception and its first stack frame, over two lines; the Go tool
// its error). Apache 5.3.3's broker names, among a topic's consumers, at
// times a group called like the topic itself (from its offset table; it has
// no route), whose track is that. The track of the test's own group
// (CONSUMED) and every field of the message stay compared.
func javaTrackNorm(s string) string {
	var out []string
	skip := false
	for _, l := range lines(s) {
		if strings.HasPrefix(l, "MessageTrack [") && strings.Contains(l, ", trackType=UNKNOWN, exceptionDesc=") &&
			!strings.HasSuffix(l, "exceptionDesc=null]") {
			skip = !strings.HasSuffix(l, "]")
			continue
		}
		if skip {
			skip = !strings.HasSuffix(l, "]")
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// routeAddrsNorm puts brokerAddrs' entries on its opening line, as
// 5.3.3's fastjson prints them (the Go tool prints them a line each, as
// 5.5's). Every key and value stays compared.
func routeAddrsNorm(s string) string { return routeAddrsLine.ReplaceAllString(s, "$1$2") }

var routeAddrsLine = regexp.MustCompile(`([{,])\n\t+(\d+:)`)

// indexKeyNorm drops the #IndexKey column Apache 5.5's queryMsgByKey
// added (the Go tool prints it; 5.3.3's, which this test runs, does not).
// The ids, queues and offsets stay compared.
func indexKeyNorm(s string) string { return indexKeyCol.ReplaceAllString(s, "") }

var indexKeyCol = regexp.MustCompile(`(?m) (#IndexKey|\d+@\S+) *$`)

// consumeTPSNorm masks consumerProgress's "Consume TPS" value, the
// group's consumption rate over the last seconds (Apache's broker keeps
// one; it decays between the two runs). Every queue line and total stays
// compared.
func consumeTPSNorm(s string) string {
	return consumeTPS.ReplaceAllString(s, "Consume TPS: *")
}

var consumeTPS = regexp.MustCompile(`(?m)^Consume TPS: [0-9.]+$`)

// brokerStatusNorm masks the values of the runtime keys that change
// between two reads seconds apart: rates (*Tps), the uptime (runtime),
// waits measured at the moment (*WaitTimeMills, pageCacheLockTimeMills), the
// timer wheel's lag (timerReadBehind, timerOffsetBehind: Apache's moves on
// every second) and disk use shared with other tests
// (commitLogDirCapacity, *DiskRatio*).
// Every key and every other value (offsets, totals, versions, capacities)
// stays compared.
func brokerStatusNorm(s string) string {
	var out []string
	for _, l := range lines(s) {
		if left, _, ok := strings.Cut(l, ": "); ok {
			f := strings.Fields(left)
			if len(f) > 0 && brokerStatusMoving.MatchString(f[len(f)-1]) {
				l = left + ": *"
			}
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

var brokerStatusMoving = regexp.MustCompile(`Tps$|^runtime$|WaitTimeMills$|^pageCacheLockTimeMills$|^timer(Read|Offset)Behind$|^commitLogDirCapacity$|DiskRatio`)

// runGoAdmin runs bin/mqadmin and returns its stdout.
func runGoAdmin(t *testing.T, args []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "mqadmin"), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("Go mqadmin %v: %v\n%s%s", args, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func lines(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }
