package compattest

// mqadmin 5.3.3 on the transaction system topics: the same
// transactional sends against rocketgo and against the Apache reference
// broker, then topicStatus of RMQ_SYS_TRANS_HALF_TOPIC and
// RMQ_SYS_TRANS_OP_HALF_TOPIC and queryMsgById of an unresolved half message,
// compared line by line after normalising what must differ (addresses,
// times, commit log offsets, ids).

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// txAdminConf keeps the unresolved half message unchecked for the test's
// life (no re-put moves the half offsets) while the check service runs every
// second, so it records CID_RMQ_SYS_TRANS offsets past the resolved ones.
const txAdminConf = `transactionTimeOut=600000
transactionCheckInterval=1000
transactionOpBatchInterval=200
`

// referenceClasspath is the Apache 5.3.3 classpath (broker, client, tools)
// reference/run.sh resolves.
func referenceClasspath(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(filepath.Join("reference", "run.sh"), "classpath").Output()
	if err != nil {
		t.Fatalf("reference/run.sh classpath: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// mqadmin runs MQAdminStartup (the mqadmin script's class) in its own JVM.
func mqadmin(t *testing.T, cp, home string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", append([]string{"-Xmx128m", "-Duser.home=" + home, "-Drocketmq.home.dir=" + home,
		"-cp", cp, "org.apache.rocketmq.tools.command.MQAdminStartup"}, args...)...)
	cmd.Env = append(os.Environ(), "ROCKETMQ_HOME="+home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mqadmin %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

var (
	adminTime      = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}`)
	adminAddr      = regexp.MustCompile(`\d+\.\d+\.\d+\.\d+:\d+`)
	adminHexID     = regexp.MustCompile(`\b[0-9A-Fa-f]{32}\b`)
	adminCLOff     = regexp.MustCompile(`(CommitLog Offset:\s+)\d+`)
	adminTPS       = regexp.MustCompile(`(Topic Put TPS: )\S+`)
	adminOpQueue   = regexp.MustCompile(`(?m)^(\S+\s+\d+\s+)(\d+)(\s+)(\d+)`)
	adminSpaces    = regexp.MustCompile(`[ \t]+`)
	adminMsgTime   = regexp.MustCompile(`(Timestamp:\s+)\S+ \S+`)
	adminSendProps = regexp.MustCompile(`(MSG_REGION=DefaultRegion|TRACE_ON=true)(, )?`)
	// logback's status lines ("02:49:55,371 |-INFO in ..."), not mqadmin's output
	adminLogStatus = regexp.MustCompile(`^\d\d:\d\d:\d\d,\d{3} \|-`)
)

// normaliseAdmin replaces what differs between two brokers by nature. The
// op topic's offsets differ too: Apache batches op records by time.
func normaliseAdmin(out, brokerName string, opOffsets bool) []string {
	s := strings.ReplaceAll(out, brokerName, "BROKER")
	s = adminTime.ReplaceAllString(s, "TIME")
	s = adminMsgTime.ReplaceAllString(s, "${1}TIME")
	s = adminAddr.ReplaceAllString(s, "ADDR")
	s = adminHexID.ReplaceAllString(s, "ID")
	s = adminCLOff.ReplaceAllString(s, "${1}N")
	s = adminTPS.ReplaceAllString(s, "${1}N")
	if opOffsets {
		s = adminOpQueue.ReplaceAllString(s, "${1}N${3}N")
	}
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(adminSpaces.ReplaceAllString(l, " "))
		// JVM and logging noise a loaded machine may add.
		if l == "" || strings.HasPrefix(l, "OpenJDK") || strings.Contains(l, "logback") || strings.Contains(l, "SLF4J") ||
			adminLogStatus.MatchString(l) {
			continue
		}
		lines = append(lines, l)
	}
	return lines
}

// txAdminSide is what one broker shows mqadmin.
type txAdminSide struct {
	halfStatus, opStatus, queryByID []string
}

func runTxAdminSide(t *testing.T, kind, cp string) txAdminSide {
	t.Helper()
	// The same broker name on both sides: it is in the output.
	b := newTxBrokerIdentity(t, "txadm-"+kind, txAdminConf, "broker-txadm")
	c := b.c
	b.start(t, kind)
	const topic = "TxAdmin"
	createTopic(t, c, topic, admin.WithReadQueueNums(4), admin.WithWriteQueueNums(4))
	waitRoute(t, c, topic, 4)

	l := &txInteropListener{plan: map[string]string{"adm-c": txCommitNow, "adm-r": txRollbackNow, "adm-u": txCommitLater},
		checks: map[string][]txInteropCheck{}}
	l.phase.Store(txPhaseBefore)
	p, err := rocketmq.NewTransactionProducer(l, producer.WithNsResolver(resolver(c)), producer.WithGroupName("PG_txadmin"),
		producer.WithInstanceName(uniq("txadm")), producer.WithSendMsgTimeout(5*time.Second),
		producer.WithQueueSelector(producer.NewManualQueueSelector()))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown() })
	var halfID string
	for _, id := range []string{"adm-c", "adm-r", "adm-u"} {
		m := primitive.NewMessage(topic, []byte("txadmin-body-"+id))
		m.WithProperty(idProp, id)
		m.WithTag("TagAdm")
		m.WithKeys([]string{"admkey-" + id})
		// The real queue is the producer's choice: fixed, so that both
		// brokers' REAL_QID properties match.
		m.Queue = &primitive.MessageQueue{Topic: topic, BrokerName: c.brokerName, QueueId: 1}
		r, err := p.SendMessageInTransaction(context.Background(), m)
		if err != nil || r.Status != primitive.SendOK {
			t.Fatalf("%s: SendMessageInTransaction(%s): %v %v", kind, id, r, err)
		}
		halfID = r.OffsetMsgID
	}
	// The check service passed the two resolved half messages and stopped
	// at the unresolved one (too young to check).
	if !waitFor(t, 60*time.Second, func() bool {
		code, off, err := queryConsumerOffset(c.brokerAddr, txCheckGroup, txHalfTopic, 0)
		return err == nil && code == 0 && off == 2
	}) {
		code, off, err := queryConsumerOffset(c.brokerAddr, txCheckGroup, txHalfTopic, 0)
		t.Fatalf("%s: %s offset of %s never became 2 (the unresolved one): code %d offset %d %v", kind, txCheckGroup, txHalfTopic, code, off, err)
	}
	home := t.TempDir()
	s := txAdminSide{
		halfStatus: normaliseAdmin(mqadmin(t, cp, home, "topicStatus", "-n", c.nsAddr, "-t", txHalfTopic), c.brokerName, false),
		opStatus:   normaliseAdmin(mqadmin(t, cp, home, "topicStatus", "-n", c.nsAddr, "-t", txOpTopic), c.brokerName, true),
		queryByID:  normaliseAdmin(mqadmin(t, cp, home, "queryMsgById", "-n", c.nsAddr, "-t", txHalfTopic, "-i", halfID), c.brokerName, false),
	}
	t.Logf("%s topicStatus %s:\n%s", kind, txHalfTopic, strings.Join(s.halfStatus, "\n"))
	t.Logf("%s topicStatus %s:\n%s", kind, txOpTopic, strings.Join(s.opStatus, "\n"))
	t.Logf("%s queryMsgById %s:\n%s", kind, halfID, strings.Join(s.queryByID, "\n"))
	return s
}

// TestTxAdminOutput compares mqadmin's view of the transaction system topics
// and of a half message on rocketgo and on Apache 5.3.3.
func TestTxAdminOutput(t *testing.T) {
	requireApache(t)
	cp := referenceClasspath(t)
	apache := runTxAdminSide(t, "apache", cp)
	ours := runTxAdminSide(t, "rocketgo", cp)
	// Known, not a transaction matter (board 02:49, core): Apache 5.3.3
	// adds MSG_REGION and TRACE_ON to the properties of every message it is
	// sent (AbstractSendMessageProcessor.buildMsgContext), rocketgo's send
	// path does not. Removed from both sides, logged when they differ.
	for _, side := range []*txAdminSide{&ours, &apache} {
		for i, l := range side.queryByID {
			if strings.HasPrefix(l, "Properties: ") {
				side.queryByID[i] = adminSendProps.ReplaceAllString(l, "")
				if side.queryByID[i] != l {
					t.Logf("queryMsgById: %s removed before comparing (known difference of the send path)", adminSendProps.FindAllString(l, -1))
				}
			}
		}
	}
	for _, cmp := range []struct {
		what         string
		ours, apache []string
	}{
		{"topicStatus " + txHalfTopic, ours.halfStatus, apache.halfStatus},
		{"topicStatus " + txOpTopic, ours.opStatus, apache.opStatus},
		{"queryMsgById of a half message", ours.queryByID, apache.queryByID},
	} {
		if a, b := strings.Join(cmp.ours, "\n"), strings.Join(cmp.apache, "\n"); a != b {
			t.Errorf("%s differs (normalised):\n--- rocketgo\n%s\n--- apache 5.3.3\n%s\n(quoted: %q\n        %q)", cmp.what, a, b, a, b)
		}
	}
}
