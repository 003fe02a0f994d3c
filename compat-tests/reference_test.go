package compattest

// Differential tests: the same raw requests against rocketgo and against the
// Apache reference (compat-tests/reference, started here), comparing what a
// client can observe — response codes, reply header fields, body JSON shapes,
// offsets. Differences kept on purpose are listed in intendedDiffs and in the
// docs/compatibility.md ("Where rocketgo differs from Apache on purpose").

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// reference is an Apache name server + broker pair run by reference/run.sh.
type reference struct {
	nsAddr, brokerAddr string
	ns, broker         *proc
	dir                string
}

func startReference(t *testing.T) *reference {
	t.Helper()
	return startReferenceConf(t, "reference", "")
}

// startReferenceConf starts a reference pair under workDir/name whose broker
// config gets the extra lines (broker.extra.properties).
func startReferenceConf(t *testing.T, name, extra string) *reference {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("reference", "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	r := &reference{dir: filepath.Join(workDir, name)}
	if err := os.MkdirAll(filepath.Join(r.dir, "broker"), 0o755); err != nil {
		t.Fatal(err)
	}
	if extra != "" {
		if err := os.WriteFile(filepath.Join(r.dir, "broker", "broker.extra.properties"), []byte(extra), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	nsPort, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	brokerPort, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	r.nsAddr = fmt.Sprintf("127.0.0.1:%d", nsPort)
	r.brokerAddr = fmt.Sprintf("127.0.0.1:%d", brokerPort)
	start := time.Now()
	r.ns, err = startProc("apache-namesrv", script, []string{"namesrv", strconv.Itoa(nsPort), filepath.Join(r.dir, "namesrv")},
		filepath.Join(r.dir, "namesrv.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.ns.stop() })
	if err := waitTCP(r.ns, r.nsAddr, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	r.broker, err = startProc("apache-broker", script, []string{"broker", strconv.Itoa(brokerPort), r.nsAddr,
		filepath.Join(r.dir, "broker"), clusterName}, filepath.Join(r.dir, "broker.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.broker.stop() })
	if err := waitTCP(r.broker, r.brokerAddr, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	if !waitFor(t, 60*time.Second, func() bool {
		code, rd, _, err := queryRoute(r.nsAddr, "TBW102")
		return err == nil && code == 0 && rd.hasBroker(r.brokerAddr)
	}) {
		t.Fatalf("Apache broker not routed within 60 s:\n%s", tailFile(filepath.Join(r.dir, "broker.log"), 30))
	}
	t.Logf("Apache reference up in %.1fs (namesrv %s, broker %s)", time.Since(start).Seconds(), r.nsAddr, r.brokerAddr)
	return r
}

// target is one side of the comparison.
type target struct {
	name, nsAddr, brokerAddr, brokerName string
}

// observation is what a client sees of one response.
type observation struct {
	Body    string // normalized body, for bodies compared verbatim
	Code    int
	ExtKeys []string // reply header fields present
	Shape   string   // JSON shape of the body ("" when not JSON)
	Values  map[string]string
	Remark  string // compared by the probes that set it (refusals)
}

func (o observation) String() string {
	return fmt.Sprintf("code=%d remark=%q ext=%v values=%v shape=%s body=%s", o.Code, o.Remark, o.ExtKeys, o.Values, o.Shape, o.Body)
}

// refusal is what a client sees of a refused request: its code and remark.
func refusal(resp *rawCmd) observation { return observation{Code: resp.Code, Remark: resp.Remark} }

// jsonShape renders a JSON value's structure: objects with their sorted keys,
// arrays by their first element, scalars by type.
func jsonShape(v any) string {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ":" + jsonShape(x[k])
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		if len(x) == 0 {
			return "[]"
		}
		return "[" + jsonShape(x[0]) + "]"
	case string:
		return "s"
	case float64:
		return "n"
	case bool:
		return "b"
	case nil:
		return "null"
	}
	return "?"
}

// topKeys lists a JSON object's top-level keys.
func topKeys(b []byte) string {
	var v map[string]json.RawMessage
	if json.Unmarshal(b, &v) != nil {
		return "not an object"
	}
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

func observe(resp *rawCmd, values ...string) observation {
	o := observation{Code: resp.Code, Values: map[string]string{}}
	for k := range resp.ExtFields {
		o.ExtKeys = append(o.ExtKeys, k)
	}
	sort.Strings(o.ExtKeys)
	var v any
	if len(resp.Body) > 0 && json.Unmarshal(resp.Body, &v) == nil {
		o.Shape = jsonShape(v)
	}
	for _, k := range values {
		o.Values[k] = resp.ExtFields[k]
	}
	return o
}

var timestampField = regexp.MustCompile(`"(lastUpdateTimestamp|lastTimestamp)":\d+`)

// normalizedBody is the body with the broker name and store timestamps
// replaced, for byte-exact comparison (fastjson object-key maps are not JSON).
// Entries of maps keyed by MessageQueue are sorted: their order is a Java
// HashMap's, which no client depends on.
func normalizedBody(b []byte, brokerName string) string {
	s := strings.ReplaceAll(string(b), `"`+brokerName+`"`, `"BROKER"`)
	s = timestampField.ReplaceAllString(s, `"$1":T`)
	// Rates depend on when each broker's sampler last ran: only the form
	// (a Java double) is compared.
	s = tpsField.ReplaceAllString(s, `"$1":TPS`)
	entries := mqEntry.FindAllString(s, -1)
	sort.Strings(entries)
	rest := mqEntry.ReplaceAllString(s, "E")
	return rest + " entries=" + strings.Join(entries, ";")
}

var tpsField = regexp.MustCompile(`"(topicPutTps|consumeTps)":-?\d+\.\d+(E-?\d+)?`)

var mqEntry = regexp.MustCompile(`\{"brokerName":"[^"]*","queueId":\d+,"topic":"[^"]*"\}:(\{[^}]*\}|-?\d+)`)

// javaRequest is a request as the 4.9.8/5.x Java client sends it (so both
// name servers answer routes in standard JSON).
func javaRequest(code int, ext map[string]string, body []byte) *rawCmd {
	r := newRequest(code, ext, body)
	r.Language, r.Version = "JAVA", 409
	return r
}

var bareIntKey = regexp.MustCompile(`([{,])(-?\d+):`)

var bareKeys = regexp.MustCompile(`"brokerAddrs":\{[^}]*\}`)

func sendV2(topic string, queueID int, body []byte) *rawCmd {
	return javaRequest(310, map[string]string{
		"a": "diff-producer", "b": topic, "c": "TBW102", "d": "4", "e": strconv.Itoa(queueID), "f": "0",
		"g": strconv.FormatInt(time.Now().UnixMilli(), 10), "h": "0",
		"i": "KEYS\x01k1\x02TAGS\x01t1\x02UNIQ_KEY\x01" + fmt.Sprintf("%032X", time.Now().UnixNano()),
		"j": "0", "k": "false", "m": "false",
	}, body)
}

func pullReq(topic, group string, queueID int, offset int64) *rawCmd {
	return javaRequest(11, map[string]string{
		"consumerGroup": group, "topic": topic, "queueId": strconv.Itoa(queueID),
		"queueOffset": strconv.FormatInt(offset, 10), "maxMsgNums": "32", "sysFlag": "0", "commitOffset": "0",
		"suspendTimeoutMillis": "0", "subscription": "*", "subVersion": "0", "expressionType": "TAG",
	}, nil)
}

// knownExtraKeys are keys rocketgo reports that the reference does not, on purpose.
var knownExtraKeys = map[string]bool{
	"getTransferedTps": true, // the 4.9 tools' spelling, read by their clusterList
	"brokerVersion":    true, // runtime info of Apache 5.3.3, dropped by 5.5: tools before it read it
	// rocketgo's own bounds, docs/limits.md "Registration, scheduled messages, caches and parked pulls".
	"filterCacheMaxBytes": true, "filterExpressionMaxLength": true, "maxParkedPulls": true,
	"maxTopicQueueNums":            true, // bound on the queues of a topic; Apache has none
	"registerBodyMaxInflatedBytes": true, // name-server bound on an inflated registration body
	// Connection, frame and output bounds (remoting.Limits, docs/limits.md).
	"serverMaxConnections":               true,
	"serverIncompleteFrameTimeoutMillis": true,
	"serverInputBufferMaxBytes":          true,
	"serverSlowConsumerTimeoutMillis":    true,
	"serverMaxHeaderBytes":               true,
	"serverMaxHeaderFields":              true,
	"maxMappedConsumeQueueFiles":         true, // bound on mapped consume queue files
	"metricsPromExporterMaxConnections":  true, // bound on the metrics endpoint, docs/observability.md
	// Replication, docs/replication.md: Apache has no key for either.
	"slaveSynchronizePeriod": true, "fastListenPort": true,
	"haSlaveFallbehindMax": true, // Apache 4.9's key; 5.x names the same bound haMaxGapNotInSync
	// Name-server authentication (docs/access-control.md); Apache's name server has none.
	"authenticationEnabled": true, "authConfigPath": true, "initAuthenticationUser": true,
	// The version reported (docs/compatibility.md "Reported version").
	"reportedVersion": true,
	// Apache 5.4's priority messages (docs/pop.md): keys of a reference from 5.4 on.
	"popFromRetryProbabilityForPriority": true, "priorityOrderAsc": true,
}

// createTopic4 creates topic with 4 queues on tg's broker, as the Java
// tools send UPDATE_AND_CREATE_TOPIC.
func createTopic4(t *testing.T, tg target, topic string) {
	t.Helper()
	resp, err := rawInvoke(tg.brokerAddr, javaRequest(17, map[string]string{
		"topic": topic, "defaultTopic": "TBW102", "readQueueNums": "4", "writeQueueNums": "4", "perm": "6",
		"topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false",
	}, nil), 5*time.Second)
	if err != nil || resp.Code != 0 {
		t.Fatalf("%s: UPDATE_AND_CREATE_TOPIC: %v %v", tg.name, err, resp)
	}
}

// probe is one scenario, run against each target.
type probe struct {
	name string
	run  func(t *testing.T, tg target, topic string) observation
}

// intendedDiffs names the probes whose observations may differ, and why.
var intendedDiffs = map[string]string{
	"route for a pre-4.9.4 client": "Apache writes fastjson's bare integer brokerAddrs keys for clients older " +
		"than V4_9_4, rocketgo always standard JSON (every client accepts it)",
	// Names and paths: where 5.3.3 accepts a name or count that
	// would break rocketgo, rocketgo refuses it.
	"delete topic ..": "Apache 5.3.3 answers SUCCESS to DELETE_TOPIC_IN_BROKER of a name that breaks the topic rule " +
		"(no such topic exists); rocketgo refuses it with INVALID_PARAMETER and the rule's remark: its consume queue " +
		"path is outside the store",
	"subscription group with a bad name": "Apache 5.3.3 takes any group name in UPDATE_AND_CREATE_SUBSCRIPTIONGROUP; " +
		"rocketgo applies upstream's validateGroup (INVALID_PARAMETER, upstream's remark): retry and DLQ topics are built from it",
	"send to rmq_sys_wheel_timer": "Apache 5.3.3 stores a client's message in its timer topic and delivers it to the " +
		"REAL_TOPIC the client chose; rocketgo refuses it as a topic clients may not send to (NO_PERMISSION, Apache's remark)",
	"create topic with 2147483647 write queues": "rocketgo bounds the queues of a topic (maxTopicQueueNums, 1024) with " +
		"INVALID_PARAMETER; Apache 5.3.3 has no bound, and its own GET_TOPIC_STATS_INFO then loops 2^31 times",
	"commit offset of queue 2147483647": "rocketgo refuses queue ids outside [0, maxTopicQueueNums) in " +
		"UPDATE_CONSUMER_OFFSET (INVALID_PARAMETER); Apache stores them",
	"lock a queue of a bad group": "Apache 5.3.3 locks queues of any group or topic name; rocketgo locks none whose " +
		"group or topic breaks the name rules (SUCCESS, empty lockOKMQSet)",
}

func TestReference(t *testing.T) {
	requireJava(t)
	ref := startReference(t)
	ours := sharedCluster(t)
	targets := []target{
		{"rocketgo", ours.nsAddr, ours.brokerAddr, ours.brokerName},
		{"apache", ref.nsAddr, ref.brokerAddr, "broker-ref"},
	}
	topic := uniq("diff")
	const sent = 3
	for _, tg := range targets {
		createTopic4(t, tg, topic)
		if !waitFor(t, 30*time.Second, func() bool {
			code, rd, _, err := queryRoute(tg.nsAddr, topic)
			return err == nil && code == 0 && rd.hasBroker(tg.brokerAddr)
		}) {
			t.Fatalf("%s: route of %s never appeared", tg.name, topic)
		}
		for i := 0; i < sent; i++ {
			resp, err := rawInvoke(tg.brokerAddr, sendV2(topic, 0, []byte("diff-body")), 5*time.Second)
			if err != nil || resp.Code != 0 {
				t.Fatalf("%s: SEND_MESSAGE_V2: %v %v", tg.name, err, resp)
			}
		}
	}
	invoke := func(t *testing.T, addr string, req *rawCmd) *rawCmd {
		t.Helper()
		resp, err := rawInvoke(addr, req, 10*time.Second)
		if err != nil {
			t.Fatalf("request %d to %s: %v", req.Code, addr, err)
		}
		return resp
	}
	probes := []probe{
		{"route", func(t *testing.T, tg target, topic string) observation {
			o := observe(invoke(t, tg.nsAddr, javaRequest(105, map[string]string{"topic": topic}, nil)))
			return o
		}},
		{"route for a pre-4.9.4 client", func(t *testing.T, tg target, topic string) observation {
			req := javaRequest(105, map[string]string{"topic": topic}, nil)
			req.Version = 317
			resp := invoke(t, tg.nsAddr, req)
			return observation{Code: resp.Code, Body: normalizedBody(bareKeys.Find(resp.Body), tg.brokerName)}
		}},
		{"route of unknown topic", func(t *testing.T, tg target, _ string) observation {
			return observe(invoke(t, tg.nsAddr, javaRequest(105, map[string]string{"topic": uniq("nosuch")}, nil)))
		}},
		{"send reply header", func(t *testing.T, tg target, topic string) observation {
			o := observe(invoke(t, tg.brokerAddr, sendV2(topic, 1, []byte("x"))), "queueId", "queueOffset")
			return o
		}},
		{"send to unknown topic without auto-create default", func(t *testing.T, tg target, _ string) observation {
			req := sendV2(uniq("nosuch"), 0, []byte("x"))
			req.ExtFields["c"] = uniq("nodefault")
			return observe(invoke(t, tg.brokerAddr, req))
		}},
		{"message too big", func(t *testing.T, tg target, topic string) observation {
			return observe(invoke(t, tg.brokerAddr, sendV2(topic, 0, make([]byte, 4*1024*1024+1))))
		}},
		{"bad request (send without topic)", func(t *testing.T, tg target, topic string) observation {
			req := sendV2(topic, 0, []byte("x"))
			delete(req.ExtFields, "b")
			return observe(invoke(t, tg.brokerAddr, req))
		}},
		{"unknown request code", func(t *testing.T, tg target, _ string) observation {
			return observe(invoke(t, tg.brokerAddr, javaRequest(9999, nil, nil)))
		}},
		{"max offset", func(t *testing.T, tg target, topic string) observation {
			return observe(invoke(t, tg.brokerAddr, javaRequest(30, map[string]string{"topic": topic, "queueId": "0"}, nil)), "offset")
		}},
		{"min offset", func(t *testing.T, tg target, topic string) observation {
			return observe(invoke(t, tg.brokerAddr, javaRequest(31, map[string]string{"topic": topic, "queueId": "0"}, nil)), "offset")
		}},
		{"pull found", func(t *testing.T, tg target, topic string) observation {
			o := observe(invoke(t, tg.brokerAddr, pullReq(topic, uniq("diffcg"), 0, 0)), "nextBeginOffset", "minOffset", "maxOffset")
			return o
		}},
		{"pull offset too big", func(t *testing.T, tg target, topic string) observation {
			return observe(invoke(t, tg.brokerAddr, pullReq(topic, uniq("diffcg"), 0, 100)), "nextBeginOffset", "minOffset", "maxOffset")
		}},
		{"pull at max offset", func(t *testing.T, tg target, topic string) observation {
			return observe(invoke(t, tg.brokerAddr, pullReq(topic, uniq("diffcg"), 0, sent)), "nextBeginOffset", "minOffset", "maxOffset")
		}},
		{"pull unknown topic", func(t *testing.T, tg target, _ string) observation {
			return observe(invoke(t, tg.brokerAddr, pullReq(uniq("nosuch"), uniq("diffcg"), 0, 0)))
		}},
		{"commit offset of unknown group", func(t *testing.T, tg target, topic string) observation {
			return observe(invoke(t, tg.brokerAddr, javaRequest(15, map[string]string{"consumerGroup": uniq("nosuch"),
				"topic": topic, "queueId": "0", "commitOffset": "1"}, nil)))
		}},
		{"consumer offset of new group", func(t *testing.T, tg target, topic string) observation {
			return observe(invoke(t, tg.brokerAddr, javaRequest(14, map[string]string{
				"consumerGroup": uniq("diffcg"), "topic": topic, "queueId": "0"}, nil)), "offset")
		}},
		{"topic stats", func(t *testing.T, tg target, topic string) observation {
			return observe(invoke(t, tg.brokerAddr, javaRequest(202, map[string]string{"topic": topic}, nil)))
		}},
		{"topic stats body", func(t *testing.T, tg target, topic string) observation {
			resp := invoke(t, tg.brokerAddr, javaRequest(202, map[string]string{"topic": topic}, nil))
			return observation{Code: resp.Code, Body: normalizedBody(resp.Body, tg.brokerName)}
		}},
		{"consume stats body", func(t *testing.T, tg target, topic string) observation {
			group := uniq("diffcg")
			body := []byte(`{"groupName":"` + group + `"}`)
			if resp := invoke(t, tg.brokerAddr, javaRequest(200, nil, body)); resp.Code != 0 {
				t.Fatalf("%s: UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: %v", tg.name, resp)
			}
			for q := 0; q < 4; q++ {
				resp := invoke(t, tg.brokerAddr, javaRequest(15, map[string]string{"consumerGroup": group, "topic": topic,
					"queueId": strconv.Itoa(q), "commitOffset": strconv.Itoa(min(q, sent-1))}, nil))
				if resp.Code != 0 {
					t.Fatalf("%s: UPDATE_CONSUMER_OFFSET: %v", tg.name, resp)
				}
			}
			resp := invoke(t, tg.brokerAddr, javaRequest(208, map[string]string{"consumerGroup": group, "topic": topic}, nil))
			return observation{Code: resp.Code, Body: normalizedBody(resp.Body, tg.brokerName)}
		}},
		{"cluster info shape", func(t *testing.T, tg target, _ string) observation {
			resp := invoke(t, tg.nsAddr, javaRequest(106, nil, nil))
			var v map[string]map[string]any
			// Apache writes fastjson's bare integer keys here (rocketgo quotes
			// them, see docs/compatibility.md): quote before parsing.
			if err := json.Unmarshal(bareIntKey.ReplaceAll(resp.Body, []byte(`$1"$2":`)), &v); err != nil {
				t.Fatalf("%s: cluster info: %v: %s", tg.name, err, resp.Body)
			}
			o := observation{Code: resp.Code}
			for _, bd := range v["brokerAddrTable"] { // one broker: its entry's shape
				o.Shape = jsonShape(bd)
			}
			return o
		}},
		{"all topic config top-level keys", func(t *testing.T, tg target, _ string) observation {
			resp := invoke(t, tg.brokerAddr, javaRequest(21, nil, nil))
			return observation{Code: resp.Code, Shape: topKeys(resp.Body)}
		}},
		{"heartbeat reply", func(t *testing.T, tg target, _ string) observation {
			return observe(invoke(t, tg.brokerAddr, javaRequest(34, nil, []byte(`{"clientID":"diff@1","consumerDataSet":[],"producerDataSet":[{"groupName":"diffpg"}]}`))),
				"IS_SUPPORT_HEART_BEAT_V2", "IS_SUB_CHANGE")
		}},
		{"heartbeat V2: same, then changed fingerprint", func(t *testing.T, tg target, topic string) observation {
			// A 5.x Java client with rocketmq.client.heartbeat.v2: a full
			// heartbeat with its fingerprint, the same again, then a lite
			// one (withoutSub) with another fingerprint.
			hb := func(print int, without bool) *rawCmd {
				return invoke(t, tg.brokerAddr, javaRequest(34, nil, []byte(fmt.Sprintf(`{"clientID":"diffv2@1",`+
					`"consumerDataSet":[{"groupName":"diffv2cg","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING",`+
					`"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","subscriptionDataSet":[{"topic":%q,"subString":"*",`+
					`"subVersion":1,"expressionType":"TAG"}],"unitMode":false}],"producerDataSet":[],`+
					`"heartbeatFingerprint":%d,"withoutSub":%t}`, topic, print, without))))
			}
			var o observation
			for i, step := range []struct {
				print   int
				without bool
			}{{11, false}, {11, true}, {12, true}} {
				r := hb(step.print, step.without)
				o.Values = map[string]string{}
				o.Code += r.Code
				o.Remark += fmt.Sprintf("%d:%s ", i, r.ExtFields["IS_SUB_CHANGE"])
			}
			return o
		}},
		{"consumer list of unknown group", func(t *testing.T, tg target, _ string) observation {
			return observe(invoke(t, tg.brokerAddr, javaRequest(38, map[string]string{"consumerGroup": uniq("nosuch")}, nil)))
		}},
		{"search offset by timestamp", func(t *testing.T, tg target, topic string) observation {
			now := strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)
			return observe(invoke(t, tg.brokerAddr, javaRequest(29, map[string]string{"topic": topic, "queueId": "0", "timestamp": now}, nil)), "offset")
		}},
		{"search offset by timestamp, both boundaries", func(t *testing.T, tg target, topic string) observation {
			o := observation{Values: map[string]string{}}
			for _, b := range []string{"LOWER", "UPPER", "upper"} {
				for name, ts := range map[string]int64{"past": 1, "future": time.Now().Add(time.Hour).UnixMilli()} {
					r := invoke(t, tg.brokerAddr, javaRequest(29, map[string]string{"topic": topic, "queueId": "0",
						"timestamp": strconv.FormatInt(ts, 10), "boundaryType": b}, nil))
					o.Code += r.Code
					o.Values[b+"/"+name] = r.ExtFields["offset"]
				}
			}
			return o
		}},
		{"consume time span", func(t *testing.T, tg target, topic string) observation {
			o := observe(invoke(t, tg.brokerAddr, javaRequest(303, map[string]string{"topic": topic, "group": uniq("diffcg")}, nil)))
			o.Body = ""
			return o
		}},
		{"consume time span of unknown topic", func(t *testing.T, tg target, _ string) observation {
			return observe(invoke(t, tg.brokerAddr, javaRequest(303, map[string]string{"topic": uniq("nosuch"), "group": "g"}, nil)))
		}},
		{"query consume queue", func(t *testing.T, tg target, topic string) observation {
			o := observe(invoke(t, tg.brokerAddr, javaRequest(321, map[string]string{"topic": topic, "queueId": "0",
				"index": "0", "count": "2", "consumerGroup": uniq("diffcg")}, nil)))
			o.Remark = ""
			return o
		}},
		{"query consume queue past its end", func(t *testing.T, tg target, topic string) observation {
			return observe(invoke(t, tg.brokerAddr, javaRequest(321, map[string]string{"topic": topic, "queueId": "0",
				"index": "1000", "count": "2"}, nil)))
		}},
		{"query consume queue of unknown queue", func(t *testing.T, tg target, _ string) observation {
			return observe(invoke(t, tg.brokerAddr, javaRequest(321, map[string]string{"topic": "nosuchq", "queueId": "3",
				"index": "0", "count": "2"}, nil)))
		}},
		{"earliest store time of an empty queue", func(t *testing.T, tg target, topic string) observation {
			return observe(invoke(t, tg.brokerAddr, javaRequest(32, map[string]string{"topic": topic, "queueId": "3"}, nil)), "timestamp")
		}},
		{"topic stats of unknown topic", func(t *testing.T, tg target, _ string) observation {
			return observe(invoke(t, tg.brokerAddr, javaRequest(202, map[string]string{"topic": uniq("nosuch")}, nil)))
		}},
		{"topic config of unknown topic", func(t *testing.T, tg target, _ string) observation {
			return observe(invoke(t, tg.brokerAddr, javaRequest(351, map[string]string{"topic": uniq("nosuch")}, nil)))
		}},
		{"consumer connections of unknown group", func(t *testing.T, tg target, _ string) observation {
			return observe(invoke(t, tg.brokerAddr, javaRequest(203, map[string]string{"consumerGroup": uniq("nosuch")}, nil)))
		}},
		{"view message at bad offset", func(t *testing.T, tg target, _ string) observation {
			return observe(invoke(t, tg.brokerAddr, javaRequest(33, map[string]string{"offset": "123456789"}, nil)))
		}},
		// Admin requests.
		{"stats of a topic's puts", func(t *testing.T, tg target, topic string) observation {
			return observe(invoke(t, tg.brokerAddr, javaRequest(315, map[string]string{"statsName": "TOPIC_PUT_NUMS", "statsKey": topic}, nil)))
		}},
		{"stats of nothing counted", func(t *testing.T, tg target, _ string) observation {
			return refusal(invoke(t, tg.brokerAddr, javaRequest(315, map[string]string{"statsName": "GROUP_GET_NUMS", "statsKey": "nosuch@nosuchg"}, nil)))
		}},
		{"system topics of the broker", func(t *testing.T, tg target, _ string) observation {
			return observe(invoke(t, tg.brokerAddr, javaRequest(305, nil, nil)))
		}},
		{"producer table", func(t *testing.T, tg target, _ string) observation {
			resp := invoke(t, tg.brokerAddr, javaRequest(328, nil, nil))
			return observation{Code: resp.Code, Body: topKeys(resp.Body)} // the groups: whoever is connected
		}},
		{"subscription of a group not online", func(t *testing.T, tg target, topic string) observation {
			resp := invoke(t, tg.brokerAddr, javaRequest(345, map[string]string{"group": "nosuchg345", "topic": topic}, nil))
			return observation{Code: resp.Code, Body: strings.ReplaceAll(string(resp.Body), topic, "T")}
		}},
		{"correction offsets of groups that committed nothing", func(t *testing.T, tg target, topic string) observation {
			resp := invoke(t, tg.brokerAddr, javaRequest(308, map[string]string{"topic": topic, "compareGroup": "nosuchg308"}, nil))
			return observation{Code: resp.Code, Body: string(resp.Body)}
		}},
		{"clone offsets of a group that committed nothing", func(t *testing.T, tg target, topic string) observation {
			return refusal(invoke(t, tg.brokerAddr, javaRequest(314, map[string]string{"srcGroup": "nosuchg314", "destGroup": "nosuchg314b",
				"topic": topic, "offline": "false"}, nil)))
		}},
		{"consumer status of a group not online", func(t *testing.T, tg target, topic string) observation {
			o := refusal(invoke(t, tg.brokerAddr, javaRequest(223, map[string]string{"topic": topic, "group": "nosuchg223"}, nil)))
			o.Remark = "" // Apache's is a NullPointerException's description
			return o
		}},
		{"reset of one queue of an unknown group", func(t *testing.T, tg target, topic string) observation {
			return refusal(invoke(t, tg.brokerAddr, javaRequest(222, map[string]string{"topic": topic, "group": "nosuchg222",
				"timestamp": "0", "isForce": "false", "queueId": "0", "offset": "1"}, nil)))
		}},
		{"clean expired consume queues", func(t *testing.T, tg target, _ string) observation {
			return refusal(invoke(t, tg.brokerAddr, javaRequest(306, nil, nil)))
		}},
		{"pop rollback", func(t *testing.T, tg target, _ string) observation {
			return refusal(invoke(t, tg.brokerAddr, javaRequest(200056, nil, nil)))
		}},
	}
	probes = append(probes, nameProbes(invoke)...)
	probes = append(probes, startupProbes(invoke)...)
	probes = append(probes, opsProbes(invoke)...)
	// Key sets where rocketgo may report fewer keys than Apache but never others.
	subsets := []struct {
		name string
		keys func(t *testing.T, tg target) map[string]bool
	}{
		{"runtime info keys", func(t *testing.T, tg target) map[string]bool {
			var v struct{ Table map[string]string }
			var last *rawCmd
			if !waitFor(t, 10*time.Second, func() bool {
				last = invoke(t, tg.brokerAddr, javaRequest(28, nil, nil))
				return last.Code == 0 && json.Unmarshal(last.Body, &v) == nil
			}) {
				t.Fatalf("%s: runtime info: %v %q", tg.name, last, last.Body)
			}
			out := map[string]bool{}
			for k := range v.Table {
				// commitLogDiskRatio_<commit log dir>: each broker names its own directory.
				if strings.HasPrefix(k, "commitLogDiskRatio_") {
					k = "commitLogDiskRatio_<dir>"
				}
				out[k] = true
			}
			return out
		}},
		{"name server config keys", func(t *testing.T, tg target) map[string]bool {
			out := map[string]bool{}
			for _, line := range strings.Split(string(invoke(t, tg.nsAddr, javaRequest(319, nil, nil)).Body), "\n") {
				if k, _, ok := strings.Cut(line, "="); ok {
					out[k] = true
				}
			}
			return out
		}},
		{"broker config keys", func(t *testing.T, tg target) map[string]bool {
			out := map[string]bool{}
			for _, line := range strings.Split(string(invoke(t, tg.brokerAddr, javaRequest(26, nil, nil)).Body), "\n") {
				if k, _, ok := strings.Cut(line, "="); ok {
					out[k] = true
				}
			}
			return out
		}},
	}
	for _, sc := range subsets {
		t.Run(sc.name, func(t *testing.T) {
			ours, theirs := sc.keys(t, targets[0]), sc.keys(t, targets[1])
			var extra []string
			for k := range ours {
				if !theirs[k] && !knownExtraKeys[k] {
					extra = append(extra, k)
				}
			}
			sort.Strings(extra)
			if len(extra) > 0 {
				t.Errorf("rocketgo reports keys the reference does not: %v", extra)
			}
			t.Logf("%d keys (Apache %d)", len(ours), len(theirs))
		})
	}
	for _, p := range probes {
		t.Run(p.name, func(t *testing.T) {
			got := map[string]observation{}
			for _, tg := range targets {
				got[tg.name] = p.run(t, tg, topic)
			}
			a, b := got["rocketgo"], got["apache"]
			if fmt.Sprint(a) == fmt.Sprint(b) {
				return
			}
			if why, ok := intendedDiffs[p.name]; ok {
				t.Logf("differs on purpose (%s):\n  rocketgo: %v\n  apache:   %v", why, a, b)
				return
			}
			t.Errorf("rocketgo and Apache differ:\n  rocketgo: %v\n  apache:   %v", a, b)
		})
	}

	t.Run("delivered records", func(t *testing.T) { compareDelivered(t, targets) })
	t.Run("delivered records, broadcast", func(t *testing.T) { compareBroadcastDelivered(t, targets) })

	// The Java scenarios themselves against Apache: every assertion the Java
	// tests make of rocketgo holds for the reference too.
	apache := &cluster{name: "reference", nsAddr: ref.nsAddr, brokerAddr: ref.brokerAddr, brokerName: "broker-ref"}
	t.Run("java client scenarios on Apache", func(t *testing.T) {
		runJavaClientScenarios(t, apache, javaLines[1], "JSON")
	})
	t.Run("mqadmin on Apache", func(t *testing.T) {
		runMQAdmin(t, apache, javaLines[1])
	})
}

// nameProbes are the refusals of names and queue counts: codes
// and remarks must be Apache's, or the difference is listed in intendedDiffs.
func nameProbes(invoke func(t *testing.T, addr string, req *rawCmd) *rawCmd) []probe {
	create := func(topic string, read, write int) *rawCmd {
		return javaRequest(17, map[string]string{"topic": topic, "defaultTopic": "TBW102",
			"readQueueNums": strconv.Itoa(read), "writeQueueNums": strconv.Itoa(write), "perm": "6",
			"topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false"}, nil)
	}
	createProbe := func(name, topic string) probe {
		return probe{name, func(t *testing.T, tg target, _ string) observation {
			return refusal(invoke(t, tg.brokerAddr, create(topic, 1, 1)))
		}}
	}
	deleteProbe := func(name, topic string) probe {
		return probe{name, func(t *testing.T, tg target, _ string) observation {
			return refusal(invoke(t, tg.brokerAddr, javaRequest(215, map[string]string{"topic": topic}, nil)))
		}}
	}
	sendProbe := func(name, topic string) probe {
		return probe{name, func(t *testing.T, tg target, _ string) observation {
			return refusal(invoke(t, tg.brokerAddr, sendV2(topic, 0, []byte("x"))))
		}}
	}
	const badGroup = "../diff-bad-group"
	return []probe{
		createProbe("create system topic SCHEDULE_TOPIC_XXXX", "SCHEDULE_TOPIC_XXXX"),
		createProbe("create system topic TBW102", "TBW102"),
		createProbe("create system topic rmq_sys_wheel_timer", "rmq_sys_wheel_timer"),
		createProbe("create system topic RMQ_SYS_TRANS_HALF_TOPIC", "RMQ_SYS_TRANS_HALF_TOPIC"),
		createProbe("create topic named after the cluster", clusterName),
		createProbe("create topic with a slash", "a/b"),
		createProbe("create topic ..", ".."),
		createProbe("create topic with a blank name", ""),
		createProbe("create topic longer than 127", strings.Repeat("t", 128)),
		deleteProbe("delete system topic SCHEDULE_TOPIC_XXXX", "SCHEDULE_TOPIC_XXXX"),
		deleteProbe("delete topic with a blank name", ""),
		deleteProbe("delete topic ..", ".."),
		{"create topic with 2147483647 write queues", func(t *testing.T, tg target, _ string) observation {
			topic := uniq("diffbig")
			o := refusal(invoke(t, tg.brokerAddr, create(topic, 8, 2147483647)))
			// Never asked for its stats; deleted again so nothing lists it.
			invoke(t, tg.brokerAddr, javaRequest(215, map[string]string{"topic": topic}, nil))
			return o
		}},
		{"subscription group with a bad name", func(t *testing.T, tg target, _ string) observation {
			return refusal(invoke(t, tg.brokerAddr, javaRequest(200, nil, []byte(`{"groupName":"`+badGroup+`"}`))))
		}},
		{"heartbeat with a bad group name", func(t *testing.T, tg target, _ string) observation {
			body := `{"clientID":"diff@2","producerDataSet":[],"consumerDataSet":[{"groupName":"../diff-hb-group",` +
				`"consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_LAST_OFFSET",` +
				`"subscriptionDataSet":[{"topic":"TBW102","subString":"*","expressionType":"TAG"}]}]}`
			return refusal(invoke(t, tg.brokerAddr, javaRequest(34, nil, []byte(body))))
		}},
		{"retry topic of a heartbeat's bad group", func(t *testing.T, tg target, _ string) observation {
			return refusal(invoke(t, tg.brokerAddr, javaRequest(351, map[string]string{"topic": "%RETRY%../diff-hb-group"}, nil)))
		}},
		{"consumers of a heartbeat's bad group", func(t *testing.T, tg target, _ string) observation {
			return refusal(invoke(t, tg.brokerAddr, javaRequest(203, map[string]string{"consumerGroup": "../diff-hb-group"}, nil)))
		}},
		{"pull with a bad group", func(t *testing.T, tg target, topic string) observation {
			return refusal(invoke(t, tg.brokerAddr, pullReq(topic, "../diff-pull-group", 0, 0)))
		}},
		{"send back with a bad group", func(t *testing.T, tg target, _ string) observation {
			return refusal(invoke(t, tg.brokerAddr, javaRequest(36, map[string]string{"group": "../diff-sb-group",
				"offset": "0", "delayLevel": "-1", "originTopic": "TBW102", "maxReconsumeTimes": "16"}, nil)))
		}},
		sendProbe("send to a topic with a slash", "a/b"),
		sendProbe("send to SELF_TEST_TOPIC", "SELF_TEST_TOPIC"),
		sendProbe("send to SCHEDULE_TOPIC_XXXX", "SCHEDULE_TOPIC_XXXX"),
		{"send to rmq_sys_wheel_timer", func(t *testing.T, tg target, _ string) observation {
			// Due in a second, to a fresh topic, so Apache's delivery
			// disturbs no other probe.
			due := strconv.FormatInt(time.Now().Add(time.Second).UnixMilli(), 10)
			req := sendV2("rmq_sys_wheel_timer", 0, []byte("x"))
			req.ExtFields["i"] = "TIMER_OUT_MS\x01" + due + "\x02REAL_TOPIC\x01" + uniq("diffreal") +
				"\x02REAL_QID\x010\x02UNIQ_KEY\x01" + fmt.Sprintf("%032X", time.Now().UnixNano())
			return refusal(invoke(t, tg.brokerAddr, req))
		}},
		{"commit offset of queue 2147483647", func(t *testing.T, tg target, topic string) observation {
			group := uniq("diffcg")
			if resp := invoke(t, tg.brokerAddr, javaRequest(200, nil, []byte(`{"groupName":"`+group+`"}`))); resp.Code != 0 {
				t.Fatalf("%s: UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: %v", tg.name, resp)
			}
			return refusal(invoke(t, tg.brokerAddr, javaRequest(15, map[string]string{"consumerGroup": group, "topic": topic,
				"queueId": "2147483647", "commitOffset": "1"}, nil)))
		}},
		{"lock a queue of a bad group", func(t *testing.T, tg target, topic string) observation {
			body := fmt.Sprintf(`{"consumerGroup":"../diff-lock","clientId":"diff@3","mqSet":[{"topic":%q,"brokerName":%q,"queueId":0}]}`,
				topic, tg.brokerName)
			resp := invoke(t, tg.brokerAddr, javaRequest(41, nil, []byte(body)))
			return observation{Code: resp.Code, Body: normalizedBody(resp.Body, tg.brokerName)}
		}},
	}
}
