package compattest

// rocketmq-dashboard (the operators' web console, built from its public
// sources by dashboard/run.sh; nothing of it is committed) against rocketgo
// and against the Apache 5.3.3 reference: the same scenario on both — a
// topic with messages, an online producer and push consumer, trace records,
// a message in the DLQ — then the REST answers behind every page (cluster,
// topics, consumers, producers, messages, message trace, DLQ) are flattened
// into path=value lines, what cannot be equal masked, and compared. Every
// difference fails unless dashboardDiffs lists it. ROCKETGO_DASHBOARD=1
// (make test-dashboard); ROCKETGO_DASHBOARD_JAR names the jar.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// dashboardDiffs are the known differences ("endpoint: line", the line as
// flattened and masked, prefixed by the side that has it), on purpose or not
// yet fixed (docs/observability.md "Dashboard"), and why. A key ending in "*" matches every
// line that starts with it.
var dashboardDiffs = map[string]string{
	// Apache 5.3.3's ConsumerManager.registerConsumer puts the subscribed
	// topic's name into topicGroupTable where the group's belongs
	// (groups.add(subscriptionData.getTopic())), so QUERY_TOPIC_CONSUME_BY_WHO
	// (300) names the topic as a consumer group of itself and the dashboard
	// shows a group "dash-topic" (whose %RETRY% topic has no route). rocketgo
	// answers the groups.
	"topic consumers: apache .data.dash-topic.*":                              apacheTopicGroupBug,
	"topic consumer info: apache .data.groupList[]=dash-topic":                apacheTopicGroupBug,
	"message by id: apache .data.messageTrackList[].consumerGroup=dash-topic": apacheTopicGroupBug,
	"message by id: apache .data.messageTrackList[].exceptionDesc=org.apache.rocketmq.client.exception.MQClientException: " +
		"CODE: 17  DESC: No topic route info in name server for the topic: %RETRY%dash-topic*": apacheTopicGroupBug,
	"message by id: apache .data.messageTrackList[].trackType=UNKNOWN": apacheTopicGroupBug,
	// Timing, not behaviour: the push consumer takes its %RETRY% queue up
	// after the retry topic's route reaches it and its next rebalance (up
	// to 50 s after it starts); on the side where that happened before the
	// dashboard asks, the queue shows in the running info and, once its
	// offset is committed, in the group's topics.
	"consumer topics: rocketgo .data[topic=%RETRY%dash-cg]*":                              retryQueueTiming,
	"consumer topics: apache .data[topic=%RETRY%dash-cg]*":                                retryQueueTiming,
	"consumer running info: rocketgo .data.mqTable.MessageQueue [topic=%RETRY%dash-cg, *": retryQueueTiming,
	"consumer running info: apache .data.mqTable.MessageQueue [topic=%RETRY%dash-cg, *":   retryQueueTiming,
	// GET_BROKER_RUNTIME_INFO keeps 5.3.3's brokerVersion (docs/compatibility.md).
	"cluster list: rocketgo .data.brokerServer.<brokerName>.0.brokerVersion=<brokerVersion>": "Apache 5.3.3's " +
		"brokerVersion key, which 5.5 dropped (docs/compatibility.md)",
	// Apache 5.5's broker creates its RocksDB transaction store's topics at
	// start; rocketgo has no RocksDB store.
	"topic list: apache .data.topicList[]=%SYS%RMQ_SYS_ROCKSDB_TRANS_HALF_TOPIC":                       apacheRocksDBTopics,
	"topic list: apache .data.topicList[]=%SYS%RMQ_SYS_ROCKSDB_TRANS_OP_HALF_TOPIC":                    apacheRocksDBTopics,
	"topic list: apache .data.topicList[]=RMQ_SYS_ROCKSDB_TRANS_HALF_TOPIC":                            apacheRocksDBTopics,
	"topic list: apache .data.topicList[]=RMQ_SYS_ROCKSDB_TRANS_OP_HALF_TOPIC":                         apacheRocksDBTopics,
	"topic list (no system, retry, DLQ): apache .data.topicList[]=RMQ_SYS_ROCKSDB_TRANS_HALF_TOPIC":    apacheRocksDBTopics,
	"topic list (no system, retry, DLQ): apache .data.topicList[]=RMQ_SYS_ROCKSDB_TRANS_OP_HALF_TOPIC": apacheRocksDBTopics,
	// GET_BROKER_RUNTIME_INFO: the 4.9 tools' spelling rocketgo adds.
	"cluster list: rocketgo .data.brokerServer.<brokerName>.0.getTransferedTps=<getTransferedTps>": "the 4.9 tools' " +
		"spelling of getTransferredTps, read by their clusterList (docs/compatibility.md)",
}

const (
	apacheTopicGroupBug = "Apache 5.3.3 lists the subscribed topic as a consumer group of itself (topicGroupTable bug)"
	retryQueueTiming    = "the consumer takes its %RETRY% queue up after a route update and a rebalance: timing"
	apacheRocksDBTopics = "Apache 5.5 creates its RocksDB transaction store's topics at start; rocketgo has no RocksDB store"
)

const (
	dashTopic = "dash-topic"
	dashPG    = "dash-pg"
	dashCG    = "dash-cg"
	dashCount = 4
)

func requireDashboard(t *testing.T) string {
	t.Helper()
	requireJava(t)
	if os.Getenv("ROCKETGO_DASHBOARD") == "" {
		t.Skip("the dashboard comparison runs with ROCKETGO_DASHBOARD=1 (make test-dashboard)")
	}
	jar := os.Getenv("ROCKETGO_DASHBOARD_JAR")
	if jar == "" {
		jar = "/var/cache/rocketgo-dashboard/rocketmq-dashboard.jar"
	}
	if _, err := os.Stat(jar); err != nil {
		t.Fatalf("dashboard jar: %v (build it with compat-tests/dashboard/run.sh)", err)
	}
	return jar
}

// dashSide is one target's scenario: the ids its messages got.
type dashSide struct {
	tg       target
	ids      map[string]string // msgId / offsetMsgId → placeholder
	msgIDs   []string
	clientID string
	stop     []func()
	day      string // the scenario's date: a page read on another day shows its counts under "yesterday"
}

// dashScenario sends dashCount messages (producer kept online), consumes
// them with a push consumer (kept online), writes a Java-format trace for
// each (Pub, SubBefore, SubAfter, with fixed times) and sends one to the DLQ.
func dashScenario(t *testing.T, tg target) *dashSide {
	t.Helper()
	s := &dashSide{tg: tg, ids: map[string]string{}, day: time.Now().Format(time.DateOnly)}
	createTopic4(t, tg, dashTopic)
	resolver := primitive.NewPassthroughResolver([]string{tg.nsAddr})
	p, err := rocketmq.NewProducer(producer.WithNsResolver(resolver), producer.WithGroupName(dashPG),
		producer.WithInstanceName("dash-prod-"+tg.name))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	s.stop = append(s.stop, func() { _ = p.Shutdown() })
	var offsetIDs []string
	for i := 0; i < dashCount; i++ {
		m := primitive.NewMessage(dashTopic, []byte(fmt.Sprintf("dash-body-%d", i)))
		m.WithTag("TagD")
		m.WithKeys([]string{fmt.Sprintf("dkey-%d", i)})
		m.WithProperty("color", "blue")
		res, err := p.SendSync(context.Background(), m)
		if err != nil || res.Status != primitive.SendOK {
			t.Fatalf("%s: send %d: %v %v", tg.name, i, res, err)
		}
		s.ids[res.MsgID] = fmt.Sprintf("<msg%d>", i)
		s.ids[res.OffsetMsgID] = fmt.Sprintf("<offsetMsgId%d>", i)
		s.msgIDs = append(s.msgIDs, res.MsgID)
		offsetIDs = append(offsetIDs, res.OffsetMsgID)
	}
	var mu sync.Mutex
	seen := 0
	pc, err := rocketmq.NewPushConsumer(consumer.WithNsResolver(resolver), consumer.WithGroupName(dashCG),
		consumer.WithInstance("dash-cons-"+tg.name), consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Subscribe(dashTopic, consumer.MessageSelector{Type: consumer.TAG, Expression: "TagD"},
		func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			mu.Lock()
			seen += len(msgs)
			mu.Unlock()
			return consumer.ConsumeSuccess, nil
		}); err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(); err != nil {
		t.Fatal(err)
	}
	s.stop = append(s.stop, func() { _ = pc.Shutdown() })
	if !waitFor(t, 60*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return seen >= dashCount }) {
		t.Fatalf("%s: the consumer got %d of %d", tg.name, seen, dashCount)
	}
	// The trace a Java client would write, with fixed times and costs.
	for i, id := range s.msgIDs {
		key := fmt.Sprintf("dkey-%d", i)
		body := "Pub\x011700000000000\x01DefaultRegion\x01" + dashPG + "\x01" + dashTopic + "\x01" + id + "\x01TagD\x01" + key +
			"\x01" + tg.brokerAddr + "\x0111\x013\x010\x01" + offsetIDs[i] + "\x01true\x02" +
			"SubBefore\x011700000001000\x01DefaultRegion\x01" + dashCG + "\x01REQ" + strconv.Itoa(i) + "\x01" + id + "\x010\x01" + key + "\x02" +
			"SubAfter\x01REQ" + strconv.Itoa(i) + "\x01" + id + "\x015\x01true\x01" + key + "\x010\x011700000001005\x01" + dashCG + "\x02"
		resp, err := rawInvoke(tg.brokerAddr, javaRequest(310, map[string]string{
			"a": "_INNER_TRACE_PRODUCER-dash", "b": defaultTraceTopic, "c": "TBW102", "d": "4", "e": "0", "f": "0",
			"g": "1700000002000", "h": "0", "i": "KEYS\x01" + id + " " + key + "\x02UNIQ_KEY\x01" + fmt.Sprintf("%032X", 0xD000+i),
			"j": "0", "k": "false", "m": "false",
		}, []byte(body)), 5*time.Second)
		if err != nil || resp.Code != 0 {
			t.Fatalf("%s: trace send: %v %v", tg.name, err, resp)
		}
	}
	// The last message to the DLQ, as a consumer's send back past its retries.
	off, err := strconv.ParseInt(offsetIDs[dashCount-1][16:], 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rawInvoke(tg.brokerAddr, javaRequest(36, map[string]string{
		"offset": strconv.FormatInt(off, 10), "group": dashCG, "delayLevel": "-1",
		"originMsgId": s.msgIDs[dashCount-1], "originTopic": dashTopic, "unitMode": "false", "maxReconsumeTimes": "16",
	}, nil), 5*time.Second)
	if err != nil || resp.Code != 0 {
		t.Fatalf("%s: send back to the DLQ: %v %v", tg.name, err, resp)
	}
	return s
}

// dashboard is one running dashboard process.
type dashboard struct {
	base   string
	client *http.Client
	proc   *proc
	log    string
}

func startDashboard(t *testing.T, jar string, tg target) *dashboard {
	t.Helper()
	port, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(workDir, "dashboard-"+tg.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	d := &dashboard{base: fmt.Sprintf("http://127.0.0.1:%d", port), log: filepath.Join(dir, "dashboard.log")}
	jarPath, err := exec.LookPath("java")
	if err != nil {
		t.Fatal(err)
	}
	d.proc, err = startProc("dashboard-"+tg.name, jarPath, []string{"-Xmx256m", "-Duser.home=" + dir, "-jar", jar,
		"--server.port=" + strconv.Itoa(port), "--rocketmq.config.namesrvAddrs[0]=" + tg.nsAddr,
		"--rocketmq.config.dataPath=" + filepath.Join(dir, "data"), "--rocketmq.config.enableDashBoardCollect=false"}, d.log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.proc.stop() })
	jarJar, _ := cookiejar.New(nil)
	d.client = &http.Client{Timeout: 30 * time.Second, Jar: jarJar}
	if !waitFor(t, 180*time.Second, func() bool {
		code, _, err := d.get("/cluster/list.query")
		return err == nil && code == 200
	}) {
		t.Fatalf("dashboard for %s not up in 180 s:\n%s", tg.name, tailFile(d.log, 30))
	}
	return d
}

func (d *dashboard) get(path string) (int, []byte, error) {
	resp, err := d.client.Get(d.base + path)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// post sends a JSON body with the CSRF token Spring Security asks for.
func (d *dashboard) post(path string, body any) (int, []byte, error) {
	_, tok, err := d.get("/rocketmq-dashboard/csrf-token")
	if err != nil {
		return 0, nil, err
	}
	var token struct { // the dashboard wraps every answer: {"status":0,"data":...}
		Data struct {
			Token      string `json:"token"`
			HeaderName string `json:"headerName"`
		} `json:"data"`
	}
	_ = json.Unmarshal(tok, &token)
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, d.base+path, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	if token.Data.HeaderName != "" {
		req.Header.Set(token.Data.HeaderName, token.Data.Token)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// dashQuery is one REST call behind a dashboard page.
type dashQuery struct {
	name string
	call func(d *dashboard, s *dashSide) (int, []byte, error)
}

func dashQueries() []dashQuery {
	get := func(name, path string) dashQuery {
		return dashQuery{name, func(d *dashboard, _ *dashSide) (int, []byte, error) { return d.get(path) }}
	}
	end := strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)
	page := func(topic string) map[string]any {
		return map[string]any{"topic": topic, "begin": 0, "end": math.MaxInt64 / 2, "pageNum": 1, "pageSize": 10, "taskId": ""}
	}
	return []dashQuery{
		get("cluster list", "/cluster/list.query"),
		get("topic list", "/topic/list.query?skipSysProcess=false&skipRetryAndDlq=false"),
		get("topic list (no system, retry, DLQ)", "/topic/list.query?skipSysProcess=true&skipRetryAndDlq=true"),
		get("topic stats", "/topic/stats.query?topic="+dashTopic),
		get("topic route", "/topic/route.query?topic="+dashTopic),
		get("topic consumers", "/topic/queryConsumerByTopic.query?topic="+dashTopic),
		get("topic consumer info", "/topic/queryTopicConsumerInfo.query?topic="+dashTopic),
		get("topic config", "/topic/examineTopicConfig.query?topic="+dashTopic),
		get("consumer group list", "/consumer/groupList.query?skipSysGroup=false"),
		get("consumer group", "/consumer/group.query?consumerGroup="+dashCG),
		// The page passes the group's broker addresses (from the group list).
		{"consumer topics", func(d *dashboard, s *dashSide) (int, []byte, error) {
			return d.get("/consumer/queryTopicByConsumer.query?consumerGroup=" + dashCG + "&address=" + s.tg.brokerAddr)
		}},
		{"consumer connection", func(d *dashboard, s *dashSide) (int, []byte, error) {
			return d.get("/consumer/consumerConnection.query?consumerGroup=" + dashCG + "&address=" + s.tg.brokerAddr)
		}},
		get("consumer subscription config", "/consumer/examineSubscriptionGroupConfig.query?consumerGroup="+dashCG),
		get("consumer brokers", "/consumer/fetchBrokerNameList.query?consumerGroup="+dashCG),
		{"consumer running info", func(d *dashboard, s *dashSide) (int, []byte, error) {
			return d.get("/consumer/consumerRunningInfo.query?consumerGroup=" + dashCG + "&clientId=" + s.clientID + "&jstack=false")
		}},
		get("producer connection", "/producer/producerConnection.query?producerGroup="+dashPG+"&topic="+dashTopic),
		get("messages by topic", "/message/queryMessageByTopic.query?topic="+dashTopic+"&begin=0&end="+end),
		{"messages by topic, a page", func(d *dashboard, _ *dashSide) (int, []byte, error) {
			return d.post("/message/queryMessagePageByTopic.query", page(dashTopic))
		}},
		get("messages by key", "/message/queryMessageByTopicAndKey.query?topic="+dashTopic+"&key=dkey-0"),
		{"message by id", func(d *dashboard, s *dashSide) (int, []byte, error) {
			return d.get("/message/viewMessage.query?topic=" + dashTopic + "&msgId=" + s.msgIDs[0])
		}},
		{"message trace detail", func(d *dashboard, s *dashSide) (int, []byte, error) {
			return d.get("/messageTrace/viewMessageTraceDetail.query?msgId=" + s.msgIDs[0])
		}},
		{"message trace graph", func(d *dashboard, s *dashSide) (int, []byte, error) {
			return d.get("/messageTrace/viewMessageTraceGraph.query?msgId=" + s.msgIDs[0])
		}},
		get("DLQ messages by topic", "/message/queryMessageByTopic.query?topic=%25DLQ%25"+dashCG+"&begin=0&end="+end),
		{"DLQ messages", func(d *dashboard, _ *dashSide) (int, []byte, error) {
			return d.post("/dlqMessage/queryDlqMessageByConsumerGroup.query", page("%DLQ%"+dashCG))
		}},
	}
}

var (
	dashClientID = regexp.MustCompile(`^\d+\.\d+\.\d+\.\d+@[^"]+$`)
	dashHexID    = regexp.MustCompile(`^[0-9A-F]{32}$`)
	dashAddr     = regexp.MustCompile(`\d+\.\d+\.\d+\.\d+:\d+`)
	dashDate     = regexp.MustCompile(`\d{4}-\d\d-\d\d[ T#]\d\d:\d\d:\d\d`)
)

// dashVolatile names the keys whose values two brokers (or two runs) cannot
// share: their presence is compared, not their value.
var dashVolatile = regexp.MustCompile(`(?i)(tps|time|timestamp|runtime|ratio|mills|millis|offset|diskratio|version|` +
	`pid|jstack|startTimestamp|diff|hosts?|bodyCRC|sysFlag|storeSize|commitLog|dispatchBehind|earliest|count|total|taskId|` +
	`latency|averageSize)`)

// flatten renders a JSON value as sorted path=value lines.
func (s *dashSide) flatten(path string, v any, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			s.flatten(path+"."+s.mask("", k), val, out)
		}
	case []any:
		for _, val := range x {
			s.flatten(path+"["+s.elementID(val)+"]", val, out)
		}
	default:
		leaf := path[strings.LastIndex(path, ".")+1:]
		*out = append(*out, path+"="+s.mask(leaf, fmt.Sprint(x)))
	}
}

// elementID names an array element by the first of its identifying fields
// (group, topic, brokerName) so that an element only one side has shows as
// its own lines; "" for other elements.
func (s *dashSide) elementID(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	for _, k := range []string{"group", "topic", "brokerName"} {
		if id, ok := m[k].(string); ok {
			return k + "=" + s.mask("", id)
		}
	}
	return ""
}

// mask replaces what cannot be equal in a value (or a key, leaf "").
func (s *dashSide) mask(leaf, v string) string {
	if p, ok := s.ids[v]; ok {
		return p
	}
	if strings.HasPrefix(v, "commitLogDiskRatio_") { // Apache's key names the commit log's path
		return "commitLogDiskRatio_<commit log dir>"
	}
	if leaf != "" && dashVolatile.MatchString(leaf) {
		return "<" + leaf + ">"
	}
	v = strings.ReplaceAll(v, s.tg.brokerAddr, "<broker>")
	v = strings.ReplaceAll(v, s.tg.nsAddr, "<namesrv>")
	if s.tg.brokerName != "" {
		v = strings.ReplaceAll(v, s.tg.brokerName, "<brokerName>")
	}
	for id, p := range s.ids {
		v = strings.ReplaceAll(v, id, p)
	}
	switch {
	case dashClientID.MatchString(v):
		return "<clientId>"
	case dashHexID.MatchString(v):
		return "<msgid>"
	}
	v = dashAddr.ReplaceAllString(v, "<addr>")
	return dashDate.ReplaceAllString(v, "<date>")
}

// TestDashboard runs the scenario on both targets and compares the
// dashboard's answers.
func TestDashboard(t *testing.T) {
	jar := requireDashboard(t)
	// The pages are opened in the same run: the scenario and the
	// dashboards are what takes the time.
	bctx := newBrowser(t, requireChromium(t))
	results := dashResultsDir(t)
	views := map[string]map[string]dashView{} // page → target → view
	targets := traceTargets(t, "dashboard", "")
	got := map[string]map[string][]string{} // query → target → lines
	for _, tg := range targets {
		s := dashScenario(t, tg)
		d := startDashboard(t, jar, tg)
		// The consumer's client id (for the running-info query) and the
		// group's offsets with the client holding each queue come a little
		// after the scenario (the consumer's heartbeat, rebalance and first
		// offset commit): asked before, one side answers without them.
		waitFor(t, 60*time.Second, func() bool {
			if s.clientID == "" {
				s.clientID = dashConsumerClientID(d, tg)
			}
			_, b, err := d.get("/consumer/queryTopicByConsumer.query?consumerGroup=" + dashCG + "&address=" + tg.brokerAddr)
			return s.clientID != "" && err == nil && strings.Contains(string(b), `"clientInfo":"`)
		})
		for _, q := range dashQueries() {
			code, body, err := q.call(d, s)
			lines := []string{"http=" + strconv.Itoa(code)}
			if err != nil {
				lines = append(lines, "error="+err.Error())
			}
			var v any
			if json.Unmarshal(body, &v) == nil {
				s.flatten("", v, &lines)
			} else if len(body) > 0 {
				lines = append(lines, "body="+s.mask("", firstLines(string(body), 1)))
			}
			sort.Strings(lines)
			if got[q.name] == nil {
				got[q.name] = map[string][]string{}
			}
			got[q.name][tg.name] = lines
			// A call that failed on both sides compares nothing: every
			// call must succeed on rocketgo (HTTP 200, status 0).
			if tg.name == "rocketgo" && (code != 200 || !strings.Contains(string(body), `"status":0`)) {
				t.Errorf("%s on rocketgo: HTTP %d %v: %s", q.name, code, err, firstLines(string(body), 1))
			}
			t.Logf("%s on %s: %d lines, %.300s", q.name, tg.name, len(lines), body)
			if os.Getenv("ROCKETGO_DASHBOARD_DUMP") != "" {
				_ = os.WriteFile(filepath.Join(workDir, "dashboard-"+tg.name, strings.ReplaceAll(q.name, " ", "_")+".json"), body, 0o644)
			}
		}
		browsePages(t, bctx, d, s, results, views)
		d.proc.stop()
		for _, f := range s.stop {
			f()
		}
	}
	for _, q := range dashQueries() {
		t.Run(q.name, func(t *testing.T) {
			compareLines(t, q.name, got[q.name]["rocketgo"], got[q.name]["apache"], dashboardDiffs)
		})
	}
	comparePages(t, views, results)
}

// compareLines reports the lines only one side has, as multisets, unless
// allowed lists them ("name: side line").
func compareLines(t *testing.T, name string, ours, theirs []string, allowed map[string]string) {
	t.Helper()
	count := map[string]int{}
	for _, l := range ours {
		count[l]++
	}
	for _, l := range theirs {
		count[l]--
	}
	var diffs []string
	for l, n := range count {
		switch {
		case n > 0:
			diffs = append(diffs, "rocketgo "+l)
		case n < 0:
			diffs = append(diffs, "apache "+l)
		}
	}
	sort.Strings(diffs)
	for _, dl := range diffs {
		if why, ok := dashAllowed(allowed, name+": "+dl); ok {
			t.Logf("listed difference (%s): %s", why, dl)
			continue
		}
		t.Errorf("only %s", dl)
	}
	if len(diffs) == 0 {
		t.Logf("%d lines equal", len(ours))
	}
}

func dashAllowed(allowed map[string]string, id string) (string, bool) {
	if why, ok := allowed[id]; ok {
		return why, true
	}
	for k, why := range allowed {
		if strings.HasSuffix(k, "*") && strings.HasPrefix(id, strings.TrimSuffix(k, "*")) {
			return why, true
		}
	}
	return "", false
}
