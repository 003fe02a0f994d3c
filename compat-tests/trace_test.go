package compattest

// Message trace end to end, compared with the Apache reference:
// the official clients with their trace hooks on (Java 4.9.8 and 5.3.3
// enableMsgTrace, to the default trace topic and to a custom one) produce
// and consume against rocketgo and against Apache 5.3.3 (both with
// traceTopicEnable=true); the records that land in the trace topic are
// decoded (TraceDataEncoder's format: records end with FIELD_SPLITOR \x02,
// fields are joined by CONTENT_SPLITOR \x01) and compared field by field,
// with what must differ masked (times, costs, message ids, request ids,
// hosts); mqadmin's queryMsgTraceById output is compared the same way.
// make test-trace (ROCKETGO_JAVA=1 ROCKETGO_TRACE=1; ROCKETGO_TRACE_JAVA_LINE=5.3.3
// runs one Java client line only).

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
)

const (
	traceContentSplitter = "\x01"
	traceFieldSplitter   = "\x02"
	defaultTraceTopic    = "RMQ_SYS_TRACE_TOPIC"
)

func requireTrace(t *testing.T) {
	t.Helper()
	requireJava(t)
	if os.Getenv("ROCKETGO_TRACE") == "" {
		t.Skip("message trace tests run with ROCKETGO_TRACE=1 (make test-trace)")
	}
}

// traceTargets starts the Apache reference and a rocketgo cluster, both with
// traceTopicEnable=true (extra broker lines: more of both brokers' config).
func traceTargets(t *testing.T, name, extra string) []target {
	t.Helper()
	conf := "traceTopicEnable=true\n" + extra
	ref := startReferenceConf(t, "reference-"+name, conf)
	ours := newClusterConf(t, name, conf)
	return []target{
		{"rocketgo", ours.nsAddr, ours.brokerAddr, ours.brokerName},
		{"apache", ref.nsAddr, ref.brokerAddr, "broker-ref"},
	}
}

// decodeTrace splits a trace message body into records, each into fields.
func decodeTrace(body []byte) [][]string {
	var out [][]string
	for _, rec := range strings.Split(string(body), traceFieldSplitter) {
		if rec == "" {
			continue
		}
		out = append(out, strings.Split(rec, traceContentSplitter))
	}
	return out
}

// traceMasks are the fields (by index, per record type) whose values cannot
// be equal across brokers and runs: times, costs, request ids.
var traceMasks = map[string]map[int]string{
	"Pub":       {1: "<time>", 10: "<cost>"},
	"SubBefore": {1: "<time>", 4: "<requestId>"},
	"SubAfter":  {1: "<requestId>", 3: "<cost>", 7: "<time>"},
}

// traceRun is what one client run on one target left behind.
type traceRun struct {
	tg      target
	run     string            // the run id in group and topic names
	ids     map[string]string // msgId or offsetMsgId → its placeholder
	records []string          // decoded, masked records, sorted
	keys    []string          // the trace messages' KEYS, masked, sorted and deduplicated
	admin   map[string]string // placeholder → queryMsgTraceById output, normalized
}

// mask renders a record with the differing values replaced.
func (r *traceRun) mask(rec []string) string {
	out := make([]string, len(rec))
	for i, v := range rec {
		if m, ok := traceMasks[rec[0]][i]; ok {
			out[i] = m
			continue
		}
		out[i] = r.maskValue(v)
	}
	return strings.Join(out, " | ")
}

// maskValue replaces ids, the run and the broker address inside v.
func (r *traceRun) maskValue(v string) string {
	if p, ok := r.ids[v]; ok {
		return p
	}
	if r.tg.brokerAddr != "" {
		v = strings.ReplaceAll(v, r.tg.brokerAddr, "<broker>")
	}
	if r.run != "" {
		v = strings.ReplaceAll(v, r.run, "<run>")
	}
	return v
}

// mentions reports whether rec is about one of r's messages.
func (r *traceRun) mentions(rec []string) bool {
	for _, v := range rec {
		if _, ok := r.ids[v]; ok {
			return true
		}
	}
	return false
}

// readTraceTopic pulls every message of topic on tg (all queues of its
// route) from the start.
func readTraceTopic(t *testing.T, tg target, topic string) ([]*primitive.MessageExt, error) {
	t.Helper()
	code, rd, remark, err := queryRoute(tg.nsAddr, topic)
	if err != nil || code != 0 {
		return nil, fmt.Errorf("route of %s: code %d %q %v", topic, code, remark, err)
	}
	var all []*primitive.MessageExt
	for _, q := range rd.queues {
		addr := rd.brokers[q.BrokerName][0]
		for qid := 0; qid < q.ReadQueueNums; qid++ {
			for off := int64(0); ; {
				req := pullReq(topic, "trace-reader", qid, off)
				req.ExtFields["sysFlag"] = "4" // the subscription comes with the pull
				resp, err := rawInvoke(addr, req, 5*time.Second)
				if err != nil {
					return all, fmt.Errorf("pull %s-%d: %w", topic, qid, err)
				}
				if resp.Code != 0 {
					break
				}
				ms := primitive.DecodeMessage(resp.Body)
				if len(ms) == 0 {
					break
				}
				all = append(all, ms...)
				next, _ := strconv.ParseInt(resp.ExtFields["nextBeginOffset"], 10, 64)
				if next <= off {
					break
				}
				off = next
			}
		}
	}
	return all, nil
}

// collect reads the trace topic until every type in want has a record for
// each of r's messages, and fills r.records and r.keys.
func (r *traceRun) collect(t *testing.T, topic string, want []string) {
	t.Helper()
	var msgs []*primitive.MessageExt
	var recs [][]string
	var readErr error
	complete := func() bool {
		msgs = msgs[:0]
		recs = recs[:0]
		seen := map[string]int{}
		var all []*primitive.MessageExt
		all, readErr = readTraceTopic(t, r.tg, topic)
		for _, m := range all {
			mine := false
			for _, rec := range decodeTrace(m.Body) {
				if r.mentions(rec) {
					recs = append(recs, rec)
					seen[rec[0]]++
					mine = true
				}
			}
			if mine {
				msgs = append(msgs, m)
			}
		}
		n := 0
		for _, v := range r.ids {
			if strings.HasPrefix(v, "<msg") {
				n++
			}
		}
		for _, w := range want {
			if seen[w] < n {
				return false
			}
		}
		return true
	}
	if !waitFor(t, 30*time.Second, complete) {
		t.Errorf("%s: trace topic %s lacks records (want %v for each message; last read error %v); found:\n%s",
			r.tg.name, topic, want, readErr, r.render(recs))
	}
	for _, rec := range recs {
		r.records = append(r.records, r.mask(rec))
	}
	sort.Strings(r.records)
	keys := map[string]bool{}
	for _, m := range msgs {
		for _, k := range strings.Fields(m.GetKeys()) {
			keys[r.maskValue(k)] = true
		}
		if m.Topic != topic {
			t.Errorf("%s: trace message in %s says topic %q", r.tg.name, topic, m.Topic)
		}
	}
	for k := range keys {
		r.keys = append(r.keys, k)
	}
	sort.Strings(r.keys)
}

func (r *traceRun) render(recs [][]string) string {
	var b strings.Builder
	for _, rec := range recs {
		b.WriteString("  " + r.mask(rec) + "\n")
	}
	return b.String()
}

// adminRow matches a queryMsgTraceById row: type, group, client host, date
// and time, cost, status.
var adminRow = regexp.MustCompile(`^(Pub|Sub)(\s+)(\S+)(\s+)(\S+)(\s+)\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\s+)\d+ms(\s+)(\S+)\s*$`)

// normalizeAdmin masks the times and costs of queryMsgTraceById's rows and
// the run in the group names (column widths are kept: the run has the same
// length on both sides).
func (r *traceRun) normalizeAdmin(out string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if m := adminRow.FindStringSubmatch(l); m != nil {
			l = m[1] + " " + r.maskValue(m[3]) + " " + m[5] + " <time> <cost> " + m[9]
		}
		lines = append(lines, strings.TrimRight(l, " "))
	}
	return strings.Join(lines, "\n")
}

// compareTraceRuns reports every difference between the two targets' runs.
func compareTraceRuns(t *testing.T, ours, theirs *traceRun) {
	t.Helper()
	diffList(t, "trace records", ours.records, theirs.records)
	diffList(t, "trace message keys", ours.keys, theirs.keys)
	for id, a := range ours.admin {
		if b := theirs.admin[id]; a != b {
			t.Errorf("queryMsgTraceById %s: rocketgo\n%s\napache\n%s", id, a, b)
		}
	}
	if len(ours.admin) != len(theirs.admin) {
		t.Errorf("queryMsgTraceById ran for %d messages on rocketgo, %d on apache", len(ours.admin), len(theirs.admin))
	}
	if len(ours.records) == 0 {
		t.Errorf("no trace records to compare")
		return
	}
	t.Logf("%d trace records equal, the first: %s", len(ours.records), ours.records[0])
	for id, a := range ours.admin {
		t.Logf("queryMsgTraceById %s, equal:\n%s", id, a)
		break
	}
}

// diffList fails with both lists when they differ.
func diffList(t *testing.T, what string, a, b []string) {
	t.Helper()
	if strings.Join(a, "\n") == strings.Join(b, "\n") {
		return
	}
	t.Errorf("%s differ:\nrocketgo (%d):\n  %s\napache (%d):\n  %s", what, len(a), strings.Join(a, "\n  "),
		len(b), strings.Join(b, "\n  "))
}

var (
	traceMsgLine  = regexp.MustCompile(`(?m)^MSG (\S+) (\S+) (\d+) (\S+) (\S+)$`)
	traceAdminOut = regexp.MustCompile(`(?s)@@trace-begin (\S+) (\S+) (\S+)\n(.*?)@@trace-end`)
)

// TestTraceDisabled: with traceTopicEnable=false (both brokers' default) no
// broker has the trace topic; a Java client with trace on sends to it with
// TBW102 as its template, as to any topic it has no route for.
func TestTraceDisabled(t *testing.T) {
	requireTrace(t)
	ref := startReferenceConf(t, "reference-trace-off", "")
	ours := newCluster(t, "trace-off")
	targets := []target{
		{"rocketgo", ours.nsAddr, ours.brokerAddr, ours.brokerName},
		{"apache", ref.nsAddr, ref.brokerAddr, "broker-ref"},
	}
	route := func(tg target) string {
		code, rd, _, err := queryRoute(tg.nsAddr, defaultTraceTopic)
		if err != nil {
			t.Fatalf("%s: route of %s: %v", tg.name, defaultTraceTopic, err)
		}
		if code != 0 {
			return "code " + strconv.Itoa(code)
		}
		return fmt.Sprintf("queues %+v", rd.queues)
	}
	for _, tg := range targets {
		if a := route(tg); a != "code 17" {
			t.Errorf("%s: route of %s before any trace: %s, want code 17 (Apache's)", tg.name, defaultTraceTopic, a)
		}
	}
	line := javaLines[len(javaLines)-1]
	runs := runJavaTraceCases(t, targets, line, []string{"default"})
	compareTraceRuns(t, runs["default"]["rocketgo"], runs["default"]["apache"])
	a, b := route(targets[0]), route(targets[1])
	a = strings.ReplaceAll(a, targets[0].brokerName, "<broker>")
	b = strings.ReplaceAll(b, targets[1].brokerName, "<broker>")
	if a != b {
		t.Errorf("route of %s after the trace: rocketgo %s, apache %s", defaultTraceTopic, a, b)
	}
	t.Logf("route of %s after the trace: %s", defaultTraceTopic, a)
}

// traceCases are the trace topics the Java clients write to: the default
// one and a custom one (customizedTraceTopic), which nothing creates first.
var traceCases = []string{"default", "custom"}

// TestTrace: the Java clients' trace hooks, to the default trace topic and
// to a custom one, the Go client's, and hostile trace messages, on rocketgo
// and on Apache.
func TestTrace(t *testing.T) {
	requireTrace(t)
	targets := traceTargets(t, "trace", "")
	ja := startJavaAdmin(t, toolsClasspath(t), t.TempDir())
	t.Run("hostile", func(t *testing.T) { testTraceHostile(t, targets, ja) })
	t.Run("go", func(t *testing.T) {
		run := fmt.Sprintf("go%06d", time.Now().UnixNano()%1_000_000)
		ours, theirs := runGoTrace(t, targets[0], run, ja), runGoTrace(t, targets[1], run, ja)
		compareTraceRuns(t, ours, theirs)
	})
	for _, line := range javaLines {
		if only := os.Getenv("ROCKETGO_TRACE_JAVA_LINE"); only != "" && only != line.label {
			continue
		}
		t.Run(line.label, func(t *testing.T) {
			runs := runJavaTrace(t, targets, line)
			for _, cs := range traceCases {
				t.Run(cs+"-topic", func(t *testing.T) {
					compareTraceRuns(t, runs[cs]["rocketgo"], runs[cs]["apache"])
				})
			}
		})
	}
}

// runJavaTrace runs TraceTest with one client line against the targets
// (one JVM) and reads what it left in the trace topics: case → target → run.
func runJavaTrace(t *testing.T, targets []target, line struct{ profile, label string }) map[string]map[string]*traceRun {
	t.Helper()
	return runJavaTraceCases(t, targets, line, traceCases)
}

// runJavaTraceCases is runJavaTrace for some of the cases.
func runJavaTraceCases(t *testing.T, targets []target, line struct{ profile, label string }, traceCases []string) map[string]map[string]*traceRun {
	t.Helper()
	// The same on both targets: groups and topics are named after it.
	run := fmt.Sprintf("%s%06d", line.profile, time.Now().UnixNano()%1_000_000)
	var tgs, cases []string
	for _, tg := range targets {
		for _, cs := range traceCases {
			createTopic4(t, tg, "trace-biz-"+run+"-"+cs)
		}
		tgs = append(tgs, tg.name+"="+tg.nsAddr)
	}
	for _, cs := range traceCases {
		cases = append(cases, cs+"="+customTraceTopic(cs, run))
	}
	// Kept with the stores: the clients log under user.home.
	home := filepath.Join(workDir, "trace-home-"+run)
	// 4.9.x tools skip a command without $ROCKETMQ_HOME/conf/logback_tools.xml.
	if err := os.MkdirAll(filepath.Join(home, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "conf", "logback_tools.xml"), []byte("<configuration/>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outs := runMaven(t, mavenRun{profile: line.profile, serialize: "JSON", class: "TraceTest", props: map[string]string{
		"namesrv": targets[0].nsAddr, "run": run, "cluster": clusterName, "brokerName": targets[0].brokerName,
		"brokerAddr": targets[0].brokerAddr, "go2javaTopic": "unused", "java2goTopic": "unused",
		"traceTargets": strings.Join(tgs, ","), "traceCases": strings.Join(cases, ","),
		"rocketmq.home.dir": home, "user.home": home,
	}})
	var out string
	for _, o := range outs {
		out += o
	}
	runs := map[string]map[string]*traceRun{}
	for _, cs := range traceCases {
		runs[cs] = map[string]*traceRun{}
		for _, tg := range targets {
			runs[cs][tg.name] = &traceRun{tg: tg, run: run, ids: map[string]string{}, admin: map[string]string{}}
		}
	}
	for _, m := range traceMsgLine.FindAllStringSubmatch(out, -1) {
		if r := runs[m[2]][m[1]]; r != nil {
			r.ids[m[4]] = "<msg" + m[3] + ">"
			r.ids[m[5]] = "<offsetMsgId" + m[3] + ">"
		}
	}
	for _, m := range traceAdminOut.FindAllStringSubmatch(out, -1) {
		if r := runs[m[2]][m[1]]; r != nil {
			r.admin[r.ids[m[3]]] = r.normalizeAdmin(m[4])
		}
	}
	for _, cs := range traceCases {
		for _, tg := range targets {
			r := runs[cs][tg.name]
			if len(r.ids) == 0 {
				t.Errorf("%s %s: TraceTest printed no message ids", tg.name, cs)
				continue
			}
			topic := customTraceTopic(cs, run)
			if topic == "" {
				topic = defaultTraceTopic
			}
			r.collect(t, topic, []string{"Pub", "SubBefore", "SubAfter"})
			t.Logf("%s %s %s: %d trace records, %d queryMsgTraceById outputs", tg.name, line.label, cs,
				len(r.records), len(r.admin))
		}
	}
	return runs
}

// customTraceTopic is the trace topic of a case ("" for the default).
func customTraceTopic(cs, run string) string {
	if cs == "custom" {
		return "trace-custom-" + run
	}
	return ""
}
