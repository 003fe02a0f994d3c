package compattest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// mqadminClientSteps is TestMQAdminTable's part with clients online: a
// topic with eight messages from the official Go client's producer, all
// consumed by an Apache Java push consumer (PushConsumer.java), both left
// running; then the commands that ask the broker about them or ask them
// through it.
func mqadminClientSteps(t *testing.T, java *javaAdmin, c *cluster, cp string) {
	ns, b := c.nsAddr, c.brokerAddr
	topic, group, producerGroup := uniq("AdmCT"), uniq("AdmCG"), uniq("AdmCP")
	runGoAdmin(t, []string{"updateTopic", "-n", ns, "-c", clusterName, "-t", topic, "-r", "4", "-w", "4"})
	p := newProducer(t, c, producer.WithGroupName(producerGroup))
	t.Cleanup(p.shutdown)
	for i := 0; i < 8; i++ {
		p.mustSend(t, newMsg(topic, fmt.Sprintf("adm-%d", i), "TagA"))
	}
	clientID := startJavaPushConsumer(t, cp, ns, group, topic, "TagA || TagB || TagC")
	if !waitFor(t, 60*time.Second, func() bool {
		// fails until the consumer's heartbeat made the group's retry topic
		out, _, rc := runGoAdminRC(t, []string{"consumerProgress", "-n", ns, "-g", group})
		return rc == 0 && strings.Contains(out, topic) && strings.Contains(out, "Consume Diff Total: 0\n")
	}) {
		t.Fatalf("group %s: offsets not committed within 60 s", group)
	}
	runMQAdminSteps(t, java, []mqadminStep{
		{args: []string{"consumerStatus", "-n", ns, "-g", group, "-i", clientID}, norm: runningInfoNorm},
		{args: []string{"consumerStatus", "-n", ns, "--consumerGroup", group, "-i", clientID, "-b", b, "-s"}, norm: runningInfoNorm},
		{args: []string{"producer", "-n", ns, "-b", b}, norm: producerTimeNorm, want: "producer group (" + producerGroup + ") instance : clientId="},
		{args: []string{"queryCq", "-n", ns, "-t", topic, "-q", "0", "-i", "0"}, want: "idx: 1\n"},
		{args: []string{"queryCq", "-n", ns, "--topic", topic, "-q", "1", "-i", "1", "-c", "1", "-b", b, "-g", group}, want: "TagB"},
		{args: []string{"queryCq", "-n", ns, "-t", topic, "-q", "2", "-i", "0", "--consumer", group + "x"}, want: "is not online!"},
	})
	t.Run("consumerStatus", func(t *testing.T) { consumerStatusFiles(t, java, []string{"consumerStatus", "-n", ns, "-g", group}) })
}

// mqadminOpsSteps is TestMQAdminTable's part for the operators' commands
// that need no client online: consume modes, send times, the master flush
// offset, cold data, the commit log's read ahead, pop records, a commit
// log file's dump, exports, and the commands a rocketgo broker refuses as
// not supported.
func mqadminOpsSteps(t *testing.T, java *javaAdmin, c *cluster) {
	ns, b := c.nsAddr, c.brokerAddr
	topic, group := uniq("AdmOT"), uniq("AdmOG")
	runGoAdmin(t, []string{"updateTopic", "-n", ns, "-c", clusterName, "-t", topic, "-r", "2", "-w", "2", "-a", "+message.type=NORMAL"})
	runMQAdminSteps(t, java, []mqadminStep{
		{args: []string{"setConsumeMode", "-n", ns, "-b", b, "-t", topic, "-g", group, "-m", "POP", "-q", "2"}},
		{args: []string{"setConsumeMode", "-n", ns, "--clusterName", clusterName, "-t", topic, "-g", group, "--mode", "PULL"}, want: "success"},
		{args: []string{"checkMsgSendRT", "-n", ns, "-t", topic, "-a", "5", "--size", "64"}, norm: sendRTNorm, want: "  1     true "},
		// a master ignores it (a slave with a controller truncates to it)
		{args: []string{"resetMasterFlushOffset", "-n", ns, "-b", b, "--offset", "1234"}, want: "success"},
		{args: []string{"updateSubGroup", "-n", ns, "-b", b, "-g", group + "E",
			"-p", `{"type":"EXPONENTIAL","exponentialRetryPolicy":{"initial":5000,"max":7200000,"multiplier":2}}`}},
		{args: []string{"updateTopic", "-n", ns, "-b", b, "-t", "%RETRY%" + group + "E", "-r", "1", "-w", "1"}},
		{args: []string{"sendMsgStatus", "-n", ns, "-b", c.brokerName, "-c", "3", "-s", "30"}, norm: sendStatusNorm, want: "sendStatus=SEND_OK"},
		{args: []string{"updateColdDataFlowCtrGroupConfig", "-n", ns, "-b", b, "-g", group, "-v", "1024"}, want: "success"},
		{args: []string{"updateColdDataFlowCtrGroupConfig", "-n", ns, "--clusterName", clusterName, "-g", group + "2", "--threshold", "2048"}, want: "success"},
		{args: []string{"getColdDataFlowCtrInfo", "-n", ns, "-b", b}, want: `"` + group + `2":2048`},
		{args: []string{"removeColdDataFlowCtrGroupConfig", "-n", ns, "-c", clusterName, "-g", group + "2"}, want: "success"},
		{args: []string{"getColdDataFlowCtrInfo", "-n", ns, "-c", clusterName}, want: `"` + group + `":1024`},
		{args: []string{"setCommitLogReadAheadMode", "-n", ns, "-b", b, "-m", "1"}, want: "mode: 1"},
		{args: []string{"setCommitLogReadAheadMode", "-n", ns, "-c", clusterName, "--commitLogReadAheadMode", "0"}, want: "mode: 0"},
		{args: []string{"setCommitLogReadAheadMode", "-n", ns, "-c", clusterName, "-m", "2"}, want: "error"},
		{args: []string{"exportPopRecord", "-n", ns, "-b", b}, want: "dryRun=false"},
		{args: []string{"exportPopRecord", "-n", ns, "--clusterName", clusterName, "-d", "false"}, want: "dryRun=true"},
	})
	// the broker's first commit log file as it is now: both tools read the same bytes
	log := filepath.Join(t.TempDir(), "commitlog")
	data, err := os.ReadFile(filepath.Join(c.dir, "store", "commitlog", "00000000000000000000"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log, data, 0o644); err != nil {
		t.Fatal(err)
	}
	runMQAdminSteps(t, java, []mqadminStep{
		{args: []string{"dumpCompactionLog", "-n", ns, "-f", log}, want: "MessageExt [brokerName=null, queueId="},
		{args: []string{"dumpCompactionLog", "-n", ns}, want: "miss dump log file name"},
	})
	exportSteps(t, java, ns, b)
	unsupportedSteps(t, java, ns, b)
}

// mqadminLiteSteps is TestMQAdminTable's part for Apache 5.5's lite-topic
// commands: a LITE parent topic, a lite group, four messages for the lite
// topics a (three) and b (one) from the official Go client, and a client
// subscribed to both by LITE_SUBSCRIPTION_CTL from offset 1 of a and 0 of
// b (lags 2 and 1).
func mqadminLiteSteps(t *testing.T, java *javaAdmin, c *cluster) {
	ns, b := c.nsAddr, c.brokerAddr
	topic, group, group2 := uniq("AdmLP"), uniq("AdmLG"), uniq("AdmLG2")
	client := "127.0.0.1@adm-lite@1"
	createTypedTopic(t, c, topic, "LITE")
	createLiteGroup(t, c, group, topic, "")
	createLiteGroup(t, c, group2, topic, "")
	p := newProducer(t, c)
	t.Cleanup(p.shutdown)
	for i, lite := range []string{"a", "a", "a", "b"} {
		if lite == "b" {
			// b's message stored a millisecond or more after a's: the
			// broker orders lite topics stored in the same millisecond
			// as they come (its answers differ call to call)
			sent := time.Now().UnixMilli()
			waitFor(t, time.Second, func() bool { return time.Now().UnixMilli() > sent+1 })
		}
		m := primitive.NewMessage(topic, []byte(lite+strconv.Itoa(i)))
		m.WithProperty("__LITE_TOPIC", lite)
		p.mustSend(t, m)
	}
	// the subscription puts the group's offsets where its offset option says
	for lite, off := range map[string]string{"a": "1", "b": "0"} {
		body := `{"subscriptionSet":[{"action":"PARTIAL_ADD","clientId":"` + client + `","group":"` + group + `","topic":"` + topic +
			`","liteTopicSet":["` + lite + `"],"offsetOption":{"type":"OFFSET","value":` + off + `},"version":1}]}`
		if resp, err := rawInvoke(b, newRequest(200071, map[string]string{}, []byte(body)), 5*time.Second); err != nil || resp.Code != 0 {
			t.Fatalf("LITE_SUBSCRIPTION_CTL: %v %+v", err, resp)
		}
	}
	runMQAdminSteps(t, java, []mqadminStep{
		{args: []string{"getParentTopicInfo", "-n", ns, "-p", topic}, want: group2},
		{args: []string{"getLiteTopicInfo", "-n", ns, "-p", topic, "-l", "a", "-s"}, want: client + "@" + group},
		{args: []string{"getLiteTopicInfo", "-n", ns, "--parentTopic", topic, "--liteTopic", "none"}, want: "0              0"},
		{args: []string{"getLiteClientInfo", "-n", ns, "-p", topic, "-g", group, "-c", client, "-s"}, want: "Lite Topics: ["},
		{args: []string{"getLiteClientInfo", "-n", ns, "-p", topic, "-g", group + "x", "-c", client}, want: "error."},
		{args: []string{"getLiteGroupInfo", "-n", ns, "-p", topic, "-g", group}, norm: liteAgoNorm, want: "Total Lag Count: 3"},
		{args: []string{"getLiteGroupInfo", "-n", ns, "-p", topic, "-g", group, "-l", "a", "-k", "1"}, norm: liteAgoNorm, want: "Total Lag Count: 2"},
		{args: []string{"getBrokerLiteInfo", "-n", ns, "-b", b, "-d"}, want: "Group Meta: {"},
		{args: []string{"getBrokerLiteInfo", "-n", ns, "--cluster", clusterName}, want: b},
		{args: []string{"triggerLiteDispatch", "-n", ns, "-p", topic, "-g", group, "-c", client}, want: "dispatched"},
		{args: []string{"triggerLiteDispatch", "-n", ns, "-p", topic, "-g", group, "--brokerName", "no-such-broker"}},
	})
}

// liteAgoNorm masks how long ago getLiteGroupInfo's oldest unconsumed
// message was stored (seconds, by the clock); its time stays compared.
func liteAgoNorm(s string) string { return liteAgo.ReplaceAllString(s, "(* s ago)") }

var liteAgo = regexp.MustCompile(`\(\d+ s ago\)`)

// unsupportedSteps runs the commands whose requests a rocketgo broker
// answers REQUEST_CODE_NOT_SUPPORTED (broker containers, the timer engine
// switch, RocksDB stores) by both tools: stdout equal (what Apache's prints
// before the refusal), the refusal on stderr in both ("request type N not
// supported": Apache's stack trace, exit 0; the Go tool's error, exit 1,
// or 0 where Apache's goes on to the next broker); and the lines they print
// without asking the broker.
func unsupportedSteps(t *testing.T, java *javaAdmin, ns, b string) {
	for _, tc := range []struct {
		args []string
		code int // 0: no request refused
		rc   int // the Go tool's exit status: 0 where Apache's goes on past a refusal
	}{
		{[]string{"addBroker", "-n", ns, "-c", b, "-b", "/tmp/broker-a.conf"}, 902, 1},
		{[]string{"removeBroker", "-n", ns, "--brokerContainerAddr", b, "-b", clusterName + ":broker-a:1"}, 903, 1},
		{[]string{"removeBroker", "-n", ns, "-c", b, "-b", clusterName + ":broker-a:-1"}, 0, 0},
		{[]string{"switchTimerEngine", "-n", ns, "-b", b, "-e", "R"}, 5001, 1},
		{[]string{"switchTimerEngine", "-n", ns, "-c", clusterName, "--engineType", "F"}, 5001, 0},
		{[]string{"switchTimerEngine", "-n", ns, "-c", clusterName, "-e", "X"}, 0, 0},
		{[]string{"checkRocksdbCqWriteProgress", "-n", ns, "-c", clusterName, "-t", "T", "-cf", "0"}, 354, 1},
		{[]string{"checkRocksdbCqWriteProgress", "--nameserverAddr", ns, "-c", "NoSuchCluster"}, 0, 0},
		{[]string{"rocksDBConfigToJson", "-n", ns, "-c", clusterName}, 355, 1},
		{[]string{"rocksDBConfigToJson", "-b", b, "-t", "topics;consumerOffsets"}, 355, 1},
		{[]string{"rocksDBConfigToJson", "-t", "topics"}, 0, 0},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			before := len(java.stderr.String())
			jOut := java.run(t, tc.args)
			jErr := java.stderr.String()[before:]
			gOut, gErr, gRC := runGoAdminRC(t, tc.args)
			if jOut != gOut {
				t.Errorf("%v: outputs differ\nJava:\n%s\nGo:\n%s", tc.args, jOut, gOut)
			}
			if tc.code == 0 {
				if gRC != 0 || jOut == "" {
					t.Errorf("%v: Go exit %d, stdout %q\n%s", tc.args, gRC, gOut, gErr)
				}
				return
			}
			if gRC != tc.rc {
				t.Errorf("%v: Go exit %d, want %d\n%s", tc.args, gRC, tc.rc, gErr)
			}
			refusal := fmt.Sprintf("request type %d not supported", tc.code)
			// the JVM's stderr reaches the buffer through a pipe, maybe after its stdout
			waitFor(t, 5*time.Second, func() bool {
				jErr = java.stderr.String()[before:]
				return strings.Contains(jErr, refusal)
			})
			if !strings.Contains(gErr, refusal) || !strings.Contains(jErr, refusal) {
				t.Errorf("%v: stderr lacks %q\nJava:\n%s\nGo:\n%s", tc.args, refusal, jErr, gErr)
			}
		})
	}
}

// exportSteps runs the export commands by both tools, each into a
// directory of its own (-f): stdout equal with the directories named
// alike, and the files written equal but for exportNorm's values.
func exportSteps(t *testing.T, java *javaAdmin, ns, b string) {
	for _, tc := range []struct {
		args []string
		file string
	}{
		{[]string{"exportMetadata", "-n", ns, "-b", b, "-t"}, "topic.json"},
		{[]string{"exportMetadata", "-n", ns, "-b", b, "--subscriptionGroup", "-s"}, "subscriptionGroup.json"},
		{[]string{"exportMetadata", "-n", ns, "-c", clusterName, "-s"}, "metadata.json"},
		{[]string{"exportMetadata", "-n", ns, "-c", clusterName, "-g"}, "subscriptionGroup.json"},
		{[]string{"exportConfigs", "-n", ns, "-c", clusterName}, "configs.json"},
		{[]string{"exportMetrics", "-n", ns, "--clusterName", clusterName}, "metrics.json"},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			var outs, files [2]string
			for i, run := range []func(*testing.T, []string) string{java.run, runGoAdmin} {
				dir := t.TempDir()
				outs[i] = strings.ReplaceAll(run(t, append(tc.args, "-f", dir)), dir, "DIR")
				body, err := os.ReadFile(filepath.Join(dir, tc.file))
				if err != nil {
					t.Fatalf("%v: %v\n%s", tc.args, err, outs[i])
				}
				files[i] = string(body)
			}
			if outs[0] != outs[1] || !strings.Contains(outs[0], "export DIR/"+tc.file+" success") {
				t.Errorf("%v: outputs differ\nJava:\n%s\nGo:\n%s", tc.args, outs[0], outs[1])
			}
			if exportNorm(files[0]) != exportNorm(files[1]) {
				t.Errorf("%v: %s differs\nJava:\n%s\nGo:\n%s", tc.args, tc.file, files[0], files[1])
			}
		})
	}
}

// exportNorm masks what moves between the two tools' exports: the time of
// the export, rates and disk use. Every key, topic, group and count stays
// compared.
func exportNorm(s string) string { return exportMoving.ReplaceAllString(s, `"$1":*`) }

var exportMoving = regexp.MustCompile(`"(exportTime|\w+Tps|\w+DiskRatio)":("[^"]*"|[-0-9.E]+)`)

// startJavaPushConsumer starts PushConsumer.java on group and topic with
// the tag expression expr and returns its client id; the test's cleanup
// ends it.
func startJavaPushConsumer(t *testing.T, cp, ns, group, topic, expr string) string {
	t.Helper()
	cmd := exec.Command("java", "-Xmx128m", "-Duser.home="+t.TempDir(), "-Drocketmq.client.logRoot="+t.TempDir(),
		"-cp", cp, filepath.Join("java", "mqadmin", "PushConsumer.java"), ns, group, topic, expr)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = in.Close() // the consumer shuts down at the end of its input
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	id := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		id <- strings.TrimSpace(line)
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case s := <-id:
		if s == "" {
			t.Fatalf("Java push consumer: no client id\n%s", stderr.String())
		}
		return s
	case <-time.After(60 * time.Second):
		t.Fatalf("Java push consumer: not started in 60 s\n%s", stderr.String())
		return ""
	}
}

// consumerStatusFiles runs consumerStatus without -i by both tools: each
// prints a line per consumer naming the file (<ms>/<clientId>, under the
// working directory) it wrote the consumer's running info in, and the
// group's analysis. The lines are compared with the directory masked, then
// the files' contents as runningInfoNorm leaves them; the directories are
// removed.
func consumerStatusFiles(t *testing.T, java *javaAdmin, args []string) {
	outs := []string{java.run(t, args), runGoAdmin(t, args)}
	var files [2][]string
	for i, out := range outs {
		for _, m := range statusFile.FindAllStringSubmatch(out, -1) {
			t.Cleanup(func() { _ = os.RemoveAll(m[1]) })
			files[i] = append(files[i], filepath.Join(m[1], m[2]))
		}
	}
	if len(files[0]) != 1 || len(files[1]) != 1 {
		t.Fatalf("consumerStatus: consumer files Java %v Go %v\nJava:\n%s\nGo:\n%s", files[0], files[1], outs[0], outs[1])
	}
	if j, g := statusFile.ReplaceAllString(outs[0], "MS/$2"), statusFile.ReplaceAllString(outs[1], "MS/$2"); j != g {
		t.Errorf("consumerStatus: outputs differ\nJava:\n%s\nGo:\n%s", outs[0], outs[1])
	}
	var infos [2]string
	for i := range files {
		b, err := os.ReadFile(files[i][0])
		if err != nil {
			t.Fatal(err)
		}
		infos[i] = string(b)
	}
	if runningInfoNorm(infos[0]) != runningInfoNorm(infos[1]) {
		t.Errorf("consumerStatus: running info files differ\nJava:\n%s\nGo:\n%s", infos[0], infos[1])
	}
}

// statusFile is consumerStatus's file column: the time in ms, the client id.
var statusFile = regexp.MustCompile(`(?m) (\d{13})/(\S+)$`)

// runningInfoNorm leaves of ConsumerRunningInfo.formatString what does not
// move between the two tools' reads seconds apart: a queue's last lock,
// pull and consume times masked, of the RT&TPS table the topics only (rates
// over the last seconds), and of the consumer's thread dump (-s) its first
// line. Properties (in the order of the Java Properties Apache's tool
// decodes them into), subscriptions, offsets, cached counts and every
// other field stay compared.
func runningInfoNorm(s string) string {
	var out []string
	section := ""
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "#") && strings.HasSuffix(l, "#") {
			section = l
		}
		switch {
		case section == "#Consumer RT&TPS#" && l != section && !strings.HasPrefix(l, "#") && l != "":
			l = strings.Fields(l)[0]
		case section == "#Consumer jstack#" && l != section:
			continue
		}
		out = append(out, processQueueTimes.ReplaceAllString(l, "${1}=*"))
	}
	return strings.Join(out, "\n")
}

var processQueueTimes = regexp.MustCompile(`(last(Lock|Pull|Consume)Timestamp)=\d+`)

// producerTimeNorm masks ProducerInfo's lastUpdateTimestamp, the time of
// the producer's last heartbeat, which moves between the tools' runs.
func producerTimeNorm(s string) string { return producerTime.ReplaceAllString(s, "${1}*") }

var producerTime = regexp.MustCompile(`(lastUpdateTimestamp=)\d+`)

// sendRTNorm masks checkMsgSendRT's times: each send's and their mean.
// Queues and results stay compared.
func sendRTNorm(s string) string {
	s = sendRT.ReplaceAllString(s, "${1}*")
	return avgRT.ReplaceAllString(s, "Avg RT: *")
}

var (
	sendRT = regexp.MustCompile(`(?m)^(\S+\s+\d+\s+(true|false)\s+)\d+$`)
	avgRT  = regexp.MustCompile(`(?m)^Avg RT: \S+$`)
)

// sendStatusNorm masks what each send of sendMsgStatus makes anew: its
// time, the message's ids (the client's UNIQ_KEY, the broker's offset id)
// and its queue offset. Status, queue and recall handle stay compared.
func sendStatusNorm(s string) string { return sendStatusMoving.ReplaceAllString(s, "${1}*") }

var sendStatusMoving = regexp.MustCompile(`(rt=|msgId=|offsetMsgId=|queueOffset=)[0-9A-F]+`)
