package compattest

// A store written by rocketgo opens in the Apache RocketMQ 5.3.1 broker and is
// consumed by the Java push consumer. The Java side is
// store/testdata/apache/gen/src/main/java/gen/ReadBack.java, built here with
// Maven (gen/pom.xml: rocketmq-broker + rocketmq-client 5.3.1) and javac.

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

const interopID = "interop_id" // user property naming a message in the manifest

// interopMsg is what rocketgo was sent, where it landed, and what the Java
// consumer must see.
type interopMsg struct {
	id, topic, tags, keys string
	props                 map[string]string // u_* user properties
	body                  []byte
	queueID               int
	queueOffset           int64
	offsetMsgID           string
}

func (m *interopMsg) line() string {
	var ks []string
	for k := range m.props {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var u []string
	for _, k := range ks {
		u = append(u, k+"="+m.props[k])
	}
	sum := sha256.Sum256(m.body)
	return strings.Join([]string{m.id, m.topic, strconv.Itoa(m.queueID), strconv.FormatInt(m.queueOffset, 10),
		m.tags, m.keys, strings.Join(u, ","), strconv.Itoa(len(m.body)), hex.EncodeToString(sum[:])}, "\t")
}

// buildReadBack compiles gen.Gen/gen.ReadBack against the Apache jars and
// returns the java classpath.
func buildReadBack(ctx context.Context, dir string) (string, error) {
	pom, err := filepath.Abs(filepath.Join("..", "store", "testdata", "apache", "gen", "pom.xml"))
	if err != nil {
		return "", err
	}
	cpFile := filepath.Join(dir, "cp.txt")
	out, err := exec.CommandContext(ctx, "mvn", "-q", "-f", pom, "dependency:build-classpath", "-Dmdep.outputFile="+cpFile).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("mvn dependency:build-classpath: %v\n%s", err, out)
	}
	cp, err := os.ReadFile(cpFile)
	if err != nil {
		return "", err
	}
	classes := filepath.Join(dir, "classes")
	src := filepath.Join(filepath.Dir(pom), "src", "main", "java", "gen", "ReadBack.java")
	if out, err := exec.CommandContext(ctx, "javac", "-nowarn", "-d", classes, "-cp", string(cp), src).CombinedOutput(); err != nil {
		return "", fmt.Errorf("javac ReadBack.java: %v\n%s", err, out)
	}
	return classes + ":" + strings.TrimSpace(string(cp)), nil
}

// TestApacheOpensRocketgoStore writes a store with rocketgo (1 MiB commit log
// files, 50-entry consume queue files, 400-entry index files, so all roll),
// consumes part of it, stops rocketgo with SIGTERM and opens the directory
// with the Apache 5.3.1 broker on the same port, name and config file. The
// Java push consumer in the same group must get exactly the messages after
// the committed offsets, intact; Apache must list the topics, serve a key
// query from rocketgo's index files and read a message at its physical offset.
func TestApacheOpensRocketgoStore(t *testing.T) {
	for _, tool := range []string{"java", "javac", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("Apache interop needs %s (Java 17 + Maven) on PATH: %v", tool, err)
		}
	}
	start := time.Now()
	javaDir := filepath.Join(workDir, "interop-java")
	javaLog := filepath.Join(javaDir, "readback.log")
	var (
		javaCP  string
		javaErr error
	)
	javaBuilt := make(chan struct{})
	buildCtx, stopBuild := context.WithCancel(context.Background())
	go func() {
		defer close(javaBuilt)
		javaCP, javaErr = buildReadBack(buildCtx, javaDir)
	}()
	t.Cleanup(func() {
		stopBuild()
		<-javaBuilt
		if _, err := os.Stat(javaLog); err == nil && t.Failed() {
			t.Logf("tail of %s:\n%s", javaLog, tailFile(javaLog, 40))
		}
	})

	c := newClusterConf(t, "interop", `mappedFileSizeCommitLog=1048576
mappedFileSizeConsumeQueue=1000
maxHashSlotNum=128
maxIndexNum=400
`)
	const (
		topic = "InteropTopic" // 4 queues, group consumes phase 1 here
		three = "InteropThree" // 3 queues, never consumed before Apache
		group = "InteropGroup"
	)
	createTopic(t, c, topic, admin.WithReadQueueNums(4), admin.WithWriteQueueNums(4))
	waitRoute(t, c, topic, 4)
	createTopic(t, c, three, admin.WithReadQueueNums(3), admin.WithWriteQueueNums(3))
	waitRoute(t, c, three, 3)

	p := newProducer(t, c)
	rnd := rand.New(rand.NewSource(4))
	var all []*interopMsg
	seq := 0
	newM := func(tp string, phase, bodyLen int, compressible bool) (*interopMsg, *primitive.Message) {
		seq++
		body := make([]byte, bodyLen)
		for i := range body {
			if compressible {
				body[i] = "rocketgo interop "[i%17]
			} else {
				body[i] = byte(' ' + rnd.Intn(95))
			}
		}
		im := &interopMsg{
			id: fmt.Sprintf("m%d", seq), topic: tp, tags: "Tag" + string(rune('A'+seq%3)),
			keys:  fmt.Sprintf("ik-%d shared-%d", seq, seq%5),
			props: map[string]string{"u_phase": strconv.Itoa(phase), "u_seq": strconv.Itoa(seq), "u_text": "a b=c"},
			body:  body,
		}
		m := primitive.NewMessage(tp, body)
		m.WithTag(im.tags)
		m.WithKeys(strings.Fields(im.keys))
		m.WithProperty(interopID, im.id)
		for k, v := range im.props {
			m.WithProperty(k, v)
		}
		all = append(all, im)
		return im, m
	}
	sendOne := func(tp string, phase, bodyLen int, compressible bool) {
		im, m := newM(tp, phase, bodyLen, compressible)
		r := p.mustSend(t, m)
		im.queueID, im.queueOffset, im.offsetMsgID = r.MessageQueue.QueueId, r.QueueOffset, r.OffsetMsgID
	}
	sendBatch := func(tp string, phase, n int) {
		var ims []*interopMsg
		var ms []*primitive.Message
		for i := 0; i < n; i++ {
			im, m := newM(tp, phase, 200, false)
			ims, ms = append(ims, im), append(ms, m)
		}
		r, err := p.sendSync(context.Background(), ms...)
		if err != nil || r.Status != primitive.SendOK {
			t.Fatalf("batch send: %v %v", r, err)
		}
		for i, im := range ims {
			im.queueID, im.queueOffset = r.MessageQueue.QueueId, r.QueueOffset+int64(i)
		}
	}
	// Phase 1: ~560 KiB, consumed by the group before Apache opens the store.
	for i := 0; i < 180; i++ {
		sendOne(topic, 1, 3000, false)
	}
	sendBatch(topic, 1, 8)
	sendOne(topic, 1, 20000, true) // compressed by the client (> 4 KiB)
	phase1 := len(all)

	col := newCollector("go-phase1")
	h := startConsumer(t, c, group, topic, "*", col)
	// The collector keys by compat_id; ours is interop_id: count deliveries.
	if !waitFor(t, 30*time.Second, func() bool { return col.deliveries() >= phase1 }) {
		t.Fatalf("go consumer got %d of %d phase 1 messages", col.deliveries(), phase1)
	}
	waitFor(t, 10*time.Second, func() bool {
		d, ok := h.pc.GetOffsetDiffMap()[topic]
		return ok && d == 0 && col.inflight.Load() == 0
	})
	h.shutdown()
	committedWant := map[int]int64{}
	for _, m := range all {
		if m.queueOffset+1 > committedWant[m.queueID] {
			committedWant[m.queueID] = m.queueOffset + 1
		}
	}
	var last string
	if !waitFor(t, 10*time.Second, func() bool {
		last = ""
		for q := 0; q < 4; q++ {
			code, off, err := queryConsumerOffset(c.brokerAddr, group, topic, q)
			if err != nil || code != 0 || off != committedWant[q] {
				last += fmt.Sprintf(" q%d: code=%d off=%d want %d err=%v", q, code, off, committedWant[q], err)
			}
		}
		return last == ""
	}) {
		t.Fatalf("committed offsets after the go consumer's shutdown:%s", last)
	}

	// Phase 2: after the committed offsets, so for the Java consumer; the
	// commit log rolls past its first 1 MiB file.
	for i := 0; i < 160; i++ {
		sendOne(topic, 2, 3000, false)
	}
	sendBatch(topic, 2, 10)
	sendOne(topic, 2, 20000, true)
	sendOne(topic, 2, 40000, false) // compressed flag, barely smaller
	for i := 0; i < 30; i++ {
		sendOne(three, 2, 500, false)
	}
	p.shutdown()

	if graceful, took := c.stopBroker(); !graceful {
		t.Fatalf("rocketgo broker did not stop on SIGTERM (after %s)", took)
	}
	storeDir := filepath.Join(c.dir, "store")
	if _, err := os.Stat(filepath.Join(storeDir, "abort")); err == nil {
		t.Fatalf("abort file left after a clean shutdown")
	}
	files, _ := filepath.Glob(filepath.Join(storeDir, "commitlog", "*"))
	idx, _ := filepath.Glob(filepath.Join(storeDir, "index", "*"))
	cqs, _ := filepath.Glob(filepath.Join(storeDir, "consumequeue", topic, "0", "*"))
	if len(files) < 2 || len(idx) < 2 || len(cqs) < 2 {
		t.Fatalf("store did not roll: %d commit log, %d index, %d consume queue (queue 0) files", len(files), len(idx), len(cqs))
	}
	var offsets struct {
		OffsetTable map[string]map[string]int64 `json:"offsetTable"`
	}
	if b, err := os.ReadFile(filepath.Join(storeDir, "config", "consumerOffset.json")); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(fastjsonKeys.ReplaceAll(b, []byte(`$1"$2":`)), &offsets); err != nil {
		t.Fatalf("consumerOffset.json: %v\n%s", err, b)
	}
	for q, want := range committedWant {
		if got := offsets.OffsetTable[topic+"@"+group][strconv.Itoa(q)]; got != want {
			t.Fatalf("consumerOffset.json %s@%s queue %d = %d, want %d", topic, group, q, got, want)
		}
	}

	// The Java side: Apache broker on the same port, store and config file.
	<-javaBuilt
	if javaErr != nil {
		t.Fatal(javaErr)
	}
	want := map[string]*interopMsg{}
	maxOff := map[string]int64{}
	for _, m := range all {
		k := m.topic + "/" + strconv.Itoa(m.queueID)
		if m.queueOffset+1 > maxOff[k] {
			maxOff[k] = m.queueOffset + 1
		}
		if m.topic == three || m.queueOffset >= committedWant[m.queueID] {
			want[m.id] = m
		}
	}
	old, view := all[0], all[1] // phase 1: first commit log, consume queue and index files
	outPath := filepath.Join(javaDir, "readback.out")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	home := filepath.Join(javaDir, "home")
	cmd := exec.CommandContext(ctx, "java", "-Xmx512m", "-Duser.home="+home, "-Drocketmq.home.dir="+home,
		"-cp", javaCP, "gen.ReadBack", filepath.Join(c.dir, "broker.properties"), group, topic+","+three,
		strconv.Itoa(len(want)), outPath, topic, strings.Fields(old.keys)[0], topic, view.offsetMsgID)
	lf, err := os.Create(javaLog)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = lf, lf
	javaStart := time.Now()
	err = cmd.Run()
	lf.Close()
	javaTook := time.Since(javaStart)
	if err != nil {
		t.Fatalf("java gen.ReadBack: %v\n%s", err, tailFile(javaLog, 60))
	}

	// Compare.
	f, err := os.Open(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := map[string]int{}
	topics := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var done bool
	queues := 0
	for sc.Scan() {
		fs := strings.Split(sc.Text(), "\t")
		switch fs[0] {
		case "TOPIC":
			topics[fs[1]] = fs[2] + "/" + fs[3]
		case "QUEUE":
			queues++
			k := fs[1] + "/" + fs[2]
			if fs[3] != "0" || fs[4] != strconv.FormatInt(maxOff[k], 10) {
				t.Errorf("Apache min/max offset of %s = %s/%s, rocketgo had 0/%d", k, fs[3], fs[4], maxOff[k])
			}
			if fs[1] == topic {
				q, _ := strconv.Atoi(fs[2])
				if fs[5] != strconv.FormatInt(committedWant[q], 10) {
					t.Errorf("Apache committed offset of %s@%s queue %d = %s, want %d", topic, group, q, fs[5], committedWant[q])
				}
			}
		case "PHY":
			t.Logf("Apache commit log min/max physical offset %s %s", fs[1], fs[2])
		case "MSG":
			got[fs[1]]++
			m := want[fs[1]]
			if m == nil {
				t.Errorf("Java consumer got %s (%s queue %s offset %s), which is before the committed offset", fs[1], fs[2], fs[3], fs[4])
				continue
			}
			if line := strings.Join(fs[1:10], "\t"); line != m.line() {
				t.Errorf("message %s differs:\n java %s\n want %s", m.id, line, m.line())
			}
		case "QUERY":
			if len(fs) < 3 || !contains(fs[2:], old.id) {
				t.Errorf("Apache QUERY_MESSAGE by key %s (index) = %v, want %s", fs[1], fs[2:], old.id)
			}
		case "VIEW":
			if fs[2] != view.id {
				t.Errorf("Apache viewMessage(%s) = %s, want %s", fs[1], fs[2], view.id)
			}
		case "DONE":
			done = true
		}
	}
	if !done {
		t.Fatalf("ReadBack output incomplete\n%s", tailFile(javaLog, 40))
	}
	if queues != 7 {
		t.Errorf("Apache reported %d queues of %s and %s, want 4+3", queues, topic, three)
	}
	if topics[topic] != "4/4" || topics[three] != "3/3" {
		t.Errorf("Apache topics from topics.json: %s=%q %s=%q, want 4/4 and 3/3", topic, topics[topic], three, topics[three])
	}
	missing := 0
	for id := range want {
		switch got[id] {
		case 0:
			missing++
		case 1:
		default:
			t.Errorf("%s delivered %d times", id, got[id])
		}
	}
	if missing > 0 {
		t.Errorf("Java consumer missed %d of %d messages after the committed offsets", missing, len(want))
	}
	report(t, start, len(all), len(got), fmt.Sprintf("apache-5.3.1 read back %d (commitlog files %d, index files %d, java %.1fs)",
		len(want), len(files), len(idx), javaTook.Seconds()))

}

// fastjsonKeys matches the unquoted integer map keys Apache's fastjson
// writes (and rocketgo too): {"offsetTable":{"t@g":{0:45,1:53}}}.
var fastjsonKeys = regexp.MustCompile(`([{,]\s*)(-?\d+):`)

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
