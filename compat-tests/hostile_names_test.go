package compattest

// Names and paths: topic and group names a hostile client sends
// on raw sockets must never name a file outside the store, remove one, make
// a config file the broker cannot read back, or make a request loop over
// queues that do not exist. Each test runs its own name server and broker,
// plants sentinels next to the store (the store is <dir>/store, consume
// queues <dir>/store/consumequeue/<topic>/<queueId>, so "../../sentinel" is
// <dir>/sentinel), attacks, then checks that nothing beside the store
// changed, that the broker is alive, restarts on its store, and still serves
// the official Go client.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
)

const (
	codeInvalidParameter          = 29
	codeNoPermission              = 16
	codeSubscriptionGroupNotExist = 26
)

// remarkTopicIllegal is Apache 5.5's remark for a topic name with a
// character outside ^[%|a-zA-Z0-9_-]+$.
func remarkTopicIllegal(topic string) string {
	return "The specified topic: " + topic + ", contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"
}

// hostile is a dedicated cluster with sentinels beside its store.
type hostile struct {
	*cluster
	before   []string // entries of the cluster directory after planting
	sentinel string   // <dir>/sentinel/keep, must survive
	topic    string   // a topic holding messages sent before the attacks
	early    []string // their ids
}

func newHostile(t *testing.T, name, extraConf string) *hostile {
	t.Helper()
	c := newClusterConf(t, name, extraConf)
	h := &hostile{cluster: c, sentinel: filepath.Join(c.dir, "sentinel", "keep")}
	if err := os.MkdirAll(filepath.Dir(h.sentinel), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.sentinel, []byte("sentinel"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.before = dirNames(t, c.dir)
	// Messages stored before the attacks must still be there after them.
	h.topic = uniq("HostileKeep")
	createTopic(t, c, h.topic, admin.WithReadQueueNums(2), admin.WithWriteQueueNums(2))
	p := newProducer(t, c)
	for i := 0; i < 4; i++ {
		m := newMsg(h.topic, fmt.Sprintf("early-%s-%d", name, i), "")
		p.mustSend(t, m)
		h.early = append(h.early, m.GetProperty(idProp))
	}
	p.shutdown()
	return h
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// checkOutside fails if anything beside the store was created or removed:
// the cluster directory holds what it held after planting, the sentinel is
// intact, the store and its commit log exist, and no escape-* entry
// appeared in the store's root or one level further up (the run's work
// directory).
func (h *hostile) checkOutside(t *testing.T) {
	t.Helper()
	if got := dirNames(t, h.dir); !slices.Equal(got, h.before) {
		t.Errorf("the directory beside the store changed: %v, was %v", got, h.before)
	}
	if b, err := os.ReadFile(h.sentinel); err != nil || string(b) != "sentinel" {
		t.Errorf("sentinel beside the store: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "store", "commitlog")); err != nil {
		t.Errorf("the store's commit log: %v", err)
	}
	for _, dir := range []string{workDir, filepath.Join(h.dir, "store")} {
		for _, name := range dirNames(t, dir) {
			if strings.HasPrefix(name, "escape") {
				t.Errorf("created outside the consume queues: %s", filepath.Join(dir, name))
			}
		}
	}
}

// survive checks the broker is alive, restarts it on its store, and checks
// that the official Go client sends and consumes, old messages included.
func (h *hostile) survive(t *testing.T) {
	t.Helper()
	if h.broker.exited() {
		t.Fatalf("broker exited: %v\n%s", h.broker.waitErr, tailFile(h.broker.logPath, 30))
	}
	if _, err := getMaxOffset(h.brokerAddr, h.topic, 0); err != nil {
		t.Fatalf("broker does not answer: %v", err)
	}
	if graceful, _ := h.stopBroker(); !graceful {
		t.Errorf("broker did not stop on SIGTERM")
	}
	if err := h.startBroker(); err != nil {
		t.Fatalf("broker does not restart on its store: %v", err)
	}
	h.checkOutside(t)
	waitRoute(t, h.cluster, h.topic, 2)
	p := newProducer(t, h.cluster)
	ids := append([]string(nil), h.early...)
	for i := 0; i < 4; i++ {
		m := newMsg(h.topic, fmt.Sprintf("late-%d", i), "")
		p.mustSend(t, m)
		ids = append(ids, m.GetProperty(idProp))
	}
	col := newCollector("hostile")
	startConsumer(t, h.cluster, uniq("CG_hostile"), h.topic, "*", col)
	waitAll(t, col, ids, 30*time.Second, "official Go client after the attacks and a restart")
}

func invokeBroker(t *testing.T, addr string, req *rawCmd) *rawCmd {
	t.Helper()
	resp, err := rawInvoke(addr, req, 10*time.Second)
	if err != nil {
		t.Fatalf("request %d %v: %v", req.Code, req.ExtFields, err)
	}
	return resp
}

func expectRefused(t *testing.T, what string, resp *rawCmd, code int, remark string) {
	t.Helper()
	if resp.Code != code || (remark != "" && resp.Remark != remark) {
		t.Errorf("%s: code %d remark %q, want %d %q", what, resp.Code, resp.Remark, code, remark)
	}
}

func createTopicReq(topic string, read, write int) *rawCmd {
	return javaRequest(17, map[string]string{"topic": topic, "defaultTopic": "TBW102",
		"readQueueNums": strconv.Itoa(read), "writeQueueNums": strconv.Itoa(write), "perm": "6",
		"topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false"}, nil)
}

func heartbeatReq(group string) *rawCmd {
	body, _ := json.Marshal(map[string]any{
		"clientID": "hostile@1",
		"consumerDataSet": []any{map[string]any{"groupName": group, "consumeType": "CONSUME_PASSIVELY",
			"messageModel": "CLUSTERING", "consumeFromWhere": "CONSUME_FROM_FIRST_OFFSET",
			"subscriptionDataSet": []any{map[string]any{"topic": "T", "subString": "*", "expressionType": "TAG"}}}},
		"producerDataSet": []any{},
	})
	return javaRequest(codeHeartbeat, nil, body)
}

func subscriptionGroupReq(group string, retryQueueNums int) *rawCmd {
	body, _ := json.Marshal(map[string]any{"groupName": group, "consumeEnable": true, "retryQueueNums": retryQueueNums,
		"retryMaxTimes": 16})
	return javaRequest(200, nil, body)
}

// sendRaw stores one message with SEND_MESSAGE_V2 and returns the response.
func sendRaw(addr, topic, props string) (*rawCmd, error) {
	return rawInvoke(addr, javaRequest(310, map[string]string{
		"a": "hostile-pg", "b": topic, "c": "TBW102", "d": "4", "e": "0", "f": "0",
		"g": strconv.FormatInt(time.Now().UnixMilli(), 10), "h": "0", "i": props, "j": "0", "k": "false", "m": "false",
	}, []byte("hostile")), 10*time.Second)
}

func propsOf(kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		b.WriteString(kv[i] + "\x01" + kv[i+1] + "\x02")
	}
	return b.String()
}

// Item 1: DELETE_TOPIC_IN_BROKER (215) of "../../sentinel" removed the
// directory beside the store, of ".." the whole store, while the broker ran.
func TestHostileDeleteTopic(t *testing.T) {
	start := time.Now()
	h := newHostile(t, "hostile-delete", "")
	for _, topic := range []string{"../../sentinel", "..", "../..", "../store", "/tmp", ".", "a/../.."} {
		resp := invokeBroker(t, h.brokerAddr, javaRequest(215, map[string]string{"topic": topic}, nil))
		expectRefused(t, "DELETE_TOPIC_IN_BROKER "+topic, resp, codeInvalidParameter, remarkTopicIllegal(topic))
	}
	// A real deletion goes through the same asynchronous path: once its
	// files are gone, any deletion the attacks had scheduled ran too.
	victim := uniq("HostileVictim")
	createTopic(t, h.cluster, victim)
	p := newProducer(t, h.cluster)
	p.mustSend(t, newMsg(victim, "v", ""))
	p.shutdown()
	victimDir := filepath.Join(h.dir, "store", "consumequeue", victim)
	if !waitFor(t, 10*time.Second, func() bool { _, err := os.Stat(victimDir); return err == nil }) {
		t.Fatalf("%s never dispatched", victim)
	}
	if resp := invokeBroker(t, h.brokerAddr, javaRequest(215, map[string]string{"topic": victim}, nil)); resp.Code != 0 {
		t.Fatalf("delete %s: %v", victim, resp)
	}
	if !waitFor(t, 10*time.Second, func() bool { _, err := os.Stat(victimDir); return os.IsNotExist(err) }) {
		t.Fatalf("%s's consume queues not deleted", victim)
	}
	h.checkOutside(t)
	h.survive(t)
	report(t, start, 0, 0, "")
}

// Item 2: a group named with "../" (made by UPDATE_AND_CREATE_SUBSCRIPTIONGROUP
// or a heartbeat) gave CONSUMER_SEND_MSG_BACK (36) retry and DLQ topics whose
// consume queues were created outside the store; so did a send straight to
// the timer topic with REAL_TOPIC=../../escape.
func TestHostileGroupPaths(t *testing.T) {
	start := time.Now()
	h := newHostile(t, "hostile-groups", shortDelays)
	// A message to send back.
	resp, err := sendRaw(h.brokerAddr, h.topic, propsOf("UNIQ_KEY", uniq("u")))
	if err != nil || resp.Code != 0 {
		t.Fatalf("send: %v %v", err, resp)
	}
	msgID := resp.ExtFields["msgId"]
	phy, err := strconv.ParseInt(msgID[len(msgID)-16:], 16, 64)
	if err != nil {
		t.Fatalf("offset message id %q: %v", msgID, err)
	}

	// <dir>/store/consumequeue/%RETRY%../../../../escape-admin is
	// <dir>/escape-admin ("%RETRY%.." is one component); escape-deep is one
	// level higher, in the run's work directory.
	byAdmin, byHeartbeat, deep := "../../../../escape-admin", "../../../../escape-heartbeat", "../../../../../escape-deep"
	expectRefused(t, "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP "+byAdmin, invokeBroker(t, h.brokerAddr,
		subscriptionGroupReq(byAdmin, 1)), codeInvalidParameter,
		"The specified group: "+byAdmin+", contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$")
	for _, g := range []string{byHeartbeat, deep} {
		if resp := invokeBroker(t, h.brokerAddr, heartbeatReq(g)); resp.Code != 0 {
			t.Errorf("heartbeat: %v (Apache skips a group it cannot create and answers SUCCESS)", resp)
		}
	}
	for _, g := range []string{byAdmin, byHeartbeat, deep} {
		for _, prefix := range []string{"%RETRY%", "%DLQ%"} {
			resp := invokeBroker(t, h.brokerAddr, javaRequest(351, map[string]string{"topic": prefix + g}, nil))
			if resp.Code != codeTopicNotExist {
				t.Errorf("topic %s%s exists: %v", prefix, g, resp)
			}
		}
		for _, level := range []string{"1", "-1"} { // retry through a delay level; straight to the DLQ
			resp := invokeBroker(t, h.brokerAddr, javaRequest(36, map[string]string{"group": g,
				"offset": strconv.FormatInt(phy, 10), "delayLevel": level, "originMsgId": msgID,
				"originTopic": h.topic, "maxReconsumeTimes": "16"}, nil))
			expectRefused(t, "CONSUMER_SEND_MSG_BACK group "+g+" level "+level, resp, codeSubscriptionGroupNotExist,
				"subscription group not exist, "+g+" \nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.")
		}
		resp := invokeBroker(t, h.brokerAddr, javaRequest(15, map[string]string{"consumerGroup": g, "topic": h.topic,
			"queueId": "0", "commitOffset": "1"}, nil))
		expectRefused(t, "UPDATE_CONSUMER_OFFSET group "+g, resp, codeSubscriptionGroupNotExist, "")
	}
	// Straight into the timer topic, due at once.
	due := strconv.FormatInt(time.Now().Add(300*time.Millisecond).UnixMilli(), 10)
	resp, err = sendRaw(h.brokerAddr, "rmq_sys_wheel_timer", propsOf("TIMER_OUT_MS", due,
		"REAL_TOPIC", "../../escape-timer", "REAL_QID", "0", "UNIQ_KEY", uniq("u")))
	if err != nil {
		t.Fatal(err)
	}
	expectRefused(t, "send to rmq_sys_wheel_timer", resp, codeNoPermission,
		"Sending message to topic[rmq_sys_wheel_timer] is forbidden.")
	// Into a retry topic named after the group: its name is no topic.
	resp, err = sendRaw(h.brokerAddr, "%RETRY%"+byAdmin, propsOf("UNIQ_KEY", uniq("u")))
	if err != nil {
		t.Fatal(err)
	}
	expectRefused(t, "send to %RETRY%"+byAdmin, resp, codeInvalidParameter, remarkTopicIllegal("%RETRY%"+byAdmin))

	// The delay level and timer loops have gone past anything the attacks
	// staged once a delayed and a timer message sent after them arrive.
	p := newProducer(t, h.cluster)
	d := newMsg(h.topic, "after-delay", "")
	d.WithDelayTimeLevel(1)
	p.mustSend(t, d)
	tm := newMsg(h.topic, "after-timer", "")
	tm.WithProperty("TIMER_DELAY_MS", "500")
	p.mustSend(t, tm)
	p.shutdown()
	col := newCollector("hostile-groups")
	startConsumer(t, h.cluster, uniq("CG_after"), h.topic, "*", col)
	waitAll(t, col, []string{"after-delay", "after-timer"}, 30*time.Second, "delayed and timer messages after the attacks")
	h.checkOutside(t)
	h.survive(t)
	report(t, start, 0, 0, "")
}

var bareQueueKey = regexp.MustCompile(`([{,])(-?\d+):`)

// Item 4: a group name with a control character reached consumerOffset.json
// in Go's escapes (\x01), which is not JSON: the broker could not restart.
func TestHostileOffsetsFile(t *testing.T) {
	start := time.Now()
	h := newHostile(t, "hostile-offsets", "")
	for _, g := range []string{"g\x01ctl", "g\"q", "g\\b", "g\u2028x", "g\x00nul"} {
		if resp := invokeBroker(t, h.brokerAddr, heartbeatReq(g)); resp.Code != 0 {
			t.Errorf("heartbeat %q: %v", g, resp)
		}
		resp := invokeBroker(t, h.brokerAddr, javaRequest(15, map[string]string{"consumerGroup": g, "topic": h.topic,
			"queueId": "0", "commitOffset": "1"}, nil))
		expectRefused(t, fmt.Sprintf("UPDATE_CONSUMER_OFFSET group %q", g), resp, codeSubscriptionGroupNotExist, "")
		expectRefused(t, fmt.Sprintf("UPDATE_AND_CREATE_SUBSCRIPTIONGROUP %q", g),
			invokeBroker(t, h.brokerAddr, subscriptionGroupReq(g, 1)), codeInvalidParameter, "")
	}
	// A legitimate group's commit, so the file is written.
	if resp := invokeBroker(t, h.brokerAddr, heartbeatReq("CG_legit")); resp.Code != 0 {
		t.Fatal(resp)
	}
	if resp := invokeBroker(t, h.brokerAddr, javaRequest(15, map[string]string{"consumerGroup": "CG_legit",
		"topic": h.topic, "queueId": "0", "commitOffset": "1"}, nil)); resp.Code != 0 {
		t.Fatalf("legitimate commit: %v", resp)
	}
	h.stopBroker() // writes consumerOffset.json
	for _, f := range []string{"consumerOffset.json", "subscriptionGroup.json", "topics.json"} {
		b, err := os.ReadFile(filepath.Join(h.dir, "store", "config", f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var v map[string]any
		if err := json.Unmarshal(bareQueueKey.ReplaceAll(b, []byte(`$1"$2":`)), &v); err != nil {
			t.Errorf("%s is not JSON: %v\n%s", f, err, b)
		}
		if strings.Contains(string(b), "g\\u0001") || strings.Contains(string(b), `g\x01`) {
			t.Errorf("%s names the hostile group: %s", f, b)
		}
	}
	if err := h.startBroker(); err != nil {
		t.Fatalf("broker does not restart on its store: %v", err)
	}
	if code, off, err := queryConsumerOffset(h.brokerAddr, "CG_legit", h.topic, 0); err != nil || code != 0 || off != 1 {
		t.Errorf("CG_legit's offset after the restart: code %d offset %d %v", code, off, err)
	}
	h.survive(t)
	report(t, start, 0, 0, "")
}

// Item 7: UPDATE_AND_CREATE_TOPIC (17) with writeQueueNums=2147483647, then
// GET_TOPIC_STATS_INFO (202), which looped over every queue id.
func TestHostileQueueNums(t *testing.T) {
	start := time.Now()
	h := newHostile(t, "hostile-queues", "")
	big := uniq("HostileBig")
	remark := func(topic string, r, w int) string {
		return fmt.Sprintf("The queue nums of topic[%s] must be between 1 and 1024 (maxTopicQueueNums), read %d write %d.", topic, r, w)
	}
	for _, q := range [][2]int{{8, 2147483647}, {2147483647, 1}, {1025, 1025}, {0, 4}, {4, -1}} {
		expectRefused(t, fmt.Sprintf("UPDATE_AND_CREATE_TOPIC read %d write %d", q[0], q[1]),
			invokeBroker(t, h.brokerAddr, createTopicReq(big, q[0], q[1])), codeInvalidParameter, remark(big, q[0], q[1]))
		resp := invokeBroker(t, h.brokerAddr, javaRequest(202, map[string]string{"topic": big}, nil))
		if resp.Code != codeTopicNotExist {
			t.Errorf("GET_TOPIC_STATS_INFO %s after a refused create: %v", big, resp)
		}
	}
	// Not an int32: a bad header, never truncated to a small count.
	if resp := invokeBroker(t, h.brokerAddr, createTopicReq(big, 8, 8)); resp.Code != 0 {
		t.Fatalf("create %s: %v", big, resp)
	}
	req := createTopicReq(big, 8, 8)
	req.ExtFields["writeQueueNums"] = "4294967297"
	if resp := invokeBroker(t, h.brokerAddr, req); resp.Code == 0 {
		t.Errorf("writeQueueNums 4294967297 accepted")
	}
	// The largest allowed: the stats answer lists every queue, at once.
	if resp := invokeBroker(t, h.brokerAddr, createTopicReq(big, 1024, 1024)); resp.Code != 0 {
		t.Fatalf("1024 queues: %v", resp)
	}
	resp := invokeBroker(t, h.brokerAddr, javaRequest(202, map[string]string{"topic": big}, nil))
	if resp.Code != 0 || strings.Count(string(resp.Body), `"maxOffset"`) != 1024 {
		t.Errorf("GET_TOPIC_STATS_INFO of 1024 queues: code %d, %d queues", resp.Code, strings.Count(string(resp.Body), `"maxOffset"`))
	}
	// A group's retry topic is sized by retryQueueNums.
	group := uniq("CG_big")
	expectRefused(t, "retryQueueNums 2147483647", invokeBroker(t, h.brokerAddr, subscriptionGroupReq(group, 2147483647)),
		codeInvalidParameter, fmt.Sprintf("The retryQueueNums of group[%s] must be between 0 and 1024 (maxTopicQueueNums), got 2147483647.", group))
	if resp := invokeBroker(t, h.brokerAddr, heartbeatReq(group)); resp.Code != 0 {
		t.Fatal(resp)
	}
	resp = invokeBroker(t, h.brokerAddr, javaRequest(202, map[string]string{"topic": "%RETRY%" + group}, nil))
	if resp.Code != 0 || strings.Count(string(resp.Body), `"maxOffset"`) != 1 {
		t.Errorf("stats of the auto-created group's retry topic: code %d body %s", resp.Code, resp.Body)
	}
	// Committed offsets are bounded by queue id too.
	resp = invokeBroker(t, h.brokerAddr, javaRequest(15, map[string]string{"consumerGroup": group, "topic": big,
		"queueId": "2147483647", "commitOffset": "1"}, nil))
	expectRefused(t, "UPDATE_CONSUMER_OFFSET queue 2147483647", resp, codeInvalidParameter, "")
	h.checkOutside(t)
	h.survive(t)
	report(t, start, 0, 0, "")
}

// Item 11: anyone could redefine the system topics with code 17 (e.g.
// SCHEDULE_TOPIC_XXXX with one write-only queue: delay levels broken; TBW102
// without its inherit bit: auto-creation broken) or delete them with 215.
func TestHostileSystemTopics(t *testing.T) {
	start := time.Now()
	h := newHostile(t, "hostile-system", shortDelays)
	system := []string{"SCHEDULE_TOPIC_XXXX", "RMQ_SYS_TRANS_HALF_TOPIC", "RMQ_SYS_TRANS_OP_HALF_TOPIC",
		"rmq_sys_wheel_timer", "TBW102", "SELF_TEST_TOPIC", "OFFSET_MOVED_EVENT", "BenchmarkTest",
		"RMQ_SYS_TRACE_TOPIC", clusterName, clusterName + "_REPLY_TOPIC", h.brokerName, "rmq_sys_anything"}
	for _, topic := range system {
		want := "The topic[" + topic + "] is conflict with system topic."
		expectRefused(t, "UPDATE_AND_CREATE_TOPIC "+topic, invokeBroker(t, h.brokerAddr, createTopicReq(topic, 1, 1)),
			codeInvalidParameter, want)
		expectRefused(t, "DELETE_TOPIC_IN_BROKER "+topic, invokeBroker(t, h.brokerAddr,
			javaRequest(215, map[string]string{"topic": topic}, nil)), codeInvalidParameter, want)
	}
	check := func() {
		t.Helper()
		for topic, want := range map[string]string{"SCHEDULE_TOPIC_XXXX": `"readQueueNums":18`, "TBW102": `"perm":7`} {
			resp := invokeBroker(t, h.brokerAddr, javaRequest(351, map[string]string{"topic": topic}, nil))
			if resp.Code != 0 || !strings.Contains(string(resp.Body), want) {
				t.Errorf("GET_TOPIC_CONFIG %s: code %d body %s, want %s", topic, resp.Code, resp.Body, want)
			}
		}
		// Auto-creation through TBW102 and delay levels still work.
		topic := uniq("HostileAuto")
		p := newProducer(t, h.cluster)
		p.mustSend(t, newMsg(topic, "auto", ""))
		d := newMsg(topic, "delayed", "")
		d.WithDelayTimeLevel(2)
		p.mustSend(t, d)
		p.shutdown()
		waitRoute(t, h.cluster, topic, 0) // registered after the auto-creation
		col := newCollector("hostile-system")
		startConsumer(t, h.cluster, uniq("CG_sys"), topic, "*", col)
		waitAll(t, col, []string{"auto", "delayed"}, 30*time.Second, "auto-created topic and delay level")
	}
	check()
	h.checkOutside(t)
	h.survive(t)
	check()
	report(t, start, 0, 0, "")
}
