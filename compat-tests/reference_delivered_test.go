package compattest

// What a consumer receives, compared field by field with the Apache
// reference: for each way a message can reach a consumer — sent
// plainly, after a delay level, after a timer, committed from a transaction,
// sent back for a retry, sent to the DLQ — the same request is made to both
// brokers and the delivered record is decoded in full: every property, the
// flag, sysflag, born and store hosts and times, reconsume times, prepared
// transaction offset. Values that cannot be equal (times, addresses, ids
// that embed them) are reduced to their kind; everything else must be equal
// unless deliveredDiffs lists it.

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// deliveredDiffs names the record fields ("kind/field") that may differ on
// purpose, and why.
var deliveredDiffs = map[string]string{}

// deliveredKind is one way to reach a consumer: how the message is sent and
// where it is then read.
type deliveredKind struct {
	name      string
	topic     func(topic string) string
	queue     int
	sendQueue int
	props     string
	sysFlag   int
	then      func(t *testing.T, tg target, topic string, reply *rawCmd) // after the send
}

const (
	deliveredGroup    = "dlv-retry-cg"
	deliveredDLQGroup = "dlv-dlq-cg"
	deliveredBorn     = "1700000000000"
)

func deliveredKinds(deliverAt int64) []deliveredKind {
	same := func(topic string) string { return topic }
	sendBack := func(group string, level int) func(t *testing.T, tg target, topic string, reply *rawCmd) {
		return func(t *testing.T, tg target, topic string, reply *rawCmd) {
			resp, err := rawInvoke(tg.brokerAddr, javaRequest(36, map[string]string{
				"offset": strconv.FormatInt(commitLogOffset(t, reply), 10), "group": group,
				"delayLevel": strconv.Itoa(level), "originMsgId": reply.ExtFields["msgId"], "originTopic": topic,
				"unitMode": "false", "maxReconsumeTimes": "16",
			}, nil), 5*time.Second)
			if err != nil || resp.Code != 0 {
				t.Fatalf("%s: CONSUMER_SEND_MSG_BACK to %s: %v %v", tg.name, group, err, resp)
			}
		}
	}
	return []deliveredKind{
		{name: "plain", topic: same, queue: 0, sendQueue: 0, props: "COLOR\x01red"},
		{name: "delay level 1", topic: same, queue: 1, sendQueue: 1, props: "DELAY\x011"},
		{name: "timer", topic: same, queue: 2, sendQueue: 2, props: "TIMER_DELIVER_MS\x01" + strconv.FormatInt(deliverAt, 10)},
		{name: "transaction commit", topic: same, queue: 3, sendQueue: 3, props: "TRAN_MSG\x01true\x02PGROUP\x01dlv-pg",
			sysFlag: 4, then: func(t *testing.T, tg target, topic string, reply *rawCmd) {
				resp, err := rawInvoke(tg.brokerAddr, javaRequest(37, map[string]string{
					"producerGroup": "dlv-pg", "tranStateTableOffset": reply.ExtFields["queueOffset"],
					"commitLogOffset": strconv.FormatInt(commitLogOffset(t, reply), 10), "commitOrRollback": "8",
					"fromTransactionCheck": "false", "msgId": "DLV-TX", "transactionId": reply.ExtFields["transactionId"],
				}, nil), 5*time.Second)
				if err != nil || resp.Code != 0 {
					t.Fatalf("%s: END_TRANSACTION: %v %v", tg.name, err, resp)
				}
			}},
		{name: "retry", topic: func(string) string { return "%RETRY%" + deliveredGroup }, queue: 0, sendQueue: 0,
			props: "COLOR\x01blue", then: sendBack(deliveredGroup, 1)},
		{name: "dlq", topic: func(string) string { return "%DLQ%" + deliveredDLQGroup }, queue: 0, sendQueue: 0,
			props: "COLOR\x01green", then: sendBack(deliveredDLQGroup, -1)},
	}
}

// commitLogOffset reads the commit log offset from a send reply's msgId
// (Apache's offset message id: store host, then the offset in hex).
func commitLogOffset(t *testing.T, reply *rawCmd) int64 {
	t.Helper()
	id := reply.ExtFields["msgId"]
	if len(id) < 16 {
		t.Fatalf("send reply without an offset msgId: %v", reply)
	}
	off, err := strconv.ParseInt(id[len(id)-16:], 16, 64)
	if err != nil {
		t.Fatalf("msgId %q: %v", id, err)
	}
	return off
}

// sendDelivered sends kind's message to topic on tg.
func sendDelivered(t *testing.T, tg target, topic string, k deliveredKind) *rawCmd {
	t.Helper()
	req := javaRequest(310, map[string]string{
		"a": "dlv-pg", "b": topic, "c": "TBW102", "d": "4", "e": strconv.Itoa(k.sendQueue),
		"f": strconv.Itoa(k.sysFlag), "g": deliveredBorn, "h": "0",
		"i": "KEYS\x01dlv-key\x02TAGS\x01dlv-tag\x02UNIQ_KEY\x01" + fmt.Sprintf("%032X", len(k.name)*7919) + "\x02" + k.props,
		"j": "0", "k": "false", "m": "false",
	}, []byte("delivered-"+k.name))
	resp, err := rawInvoke(tg.brokerAddr, req, 5*time.Second)
	if err != nil || resp.Code != 0 {
		t.Fatalf("%s: send %s: %v %v", tg.name, k.name, err, resp)
	}
	return resp
}

// readDelivered pulls the first record of topic/queue, waiting for it. A
// DLQ topic is read by its key, as mqadmin's queryMsgByKey does.
func readDelivered(t *testing.T, tg target, topic string, queue int, group string) *primitive.MessageExt {
	t.Helper()
	var last *rawCmd
	var m *primitive.MessageExt
	if !waitFor(t, 20*time.Second, func() bool {
		req := pullReq(topic, group, queue, 0)
		req.ExtFields["sysFlag"] = "4" // FLAG_SUBSCRIPTION: the subscription comes with the pull, no heartbeat needed
		if strings.HasPrefix(topic, "%DLQ%") {
			req = javaRequest(12, map[string]string{"topic": topic, "key": "dlv-key", "maxNum": "32",
				"beginTimestamp": "0", "endTimestamp": strconv.FormatInt(math.MaxInt64, 10)}, nil)
		}
		resp, err := rawInvoke(tg.brokerAddr, req, 5*time.Second)
		if err != nil {
			return false
		}
		last = resp
		if resp.Code != 0 {
			return false
		}
		if ms := primitive.DecodeMessage(resp.Body); len(ms) > 0 {
			m = ms[0]
			return true
		}
		return false
	}) {
		t.Fatalf("%s: nothing delivered to %s-%d: last answer %v", tg.name, topic, queue, last)
	}
	return m
}

var (
	hostPort = regexp.MustCompile(`^\d+\.\d+\.\d+\.\d+:\d+$`)
	hexID    = regexp.MustCompile(`^[0-9A-F]{32}$`)
)

// recordFields flattens a delivered record into comparable fields, each
// value reduced to its kind where the two brokers cannot agree on it.
func recordFields(m *primitive.MessageExt, tg target) map[string]string {
	f := map[string]string{
		"flag":                      strconv.Itoa(int(m.Flag)),
		"sysFlag":                   strconv.Itoa(int(m.SysFlag)),
		"bornTimestamp":             strconv.FormatInt(m.BornTimestamp, 10),
		"bornHost":                  strings.Split(m.BornHost, ":")[0],
		"storeHost":                 strings.ReplaceAll(m.StoreHost, tg.brokerAddr, "<broker>"),
		"storeTimestamp":            kindOf(strconv.FormatInt(m.StoreTimestamp, 10)),
		"reconsumeTimes":            strconv.Itoa(int(m.ReconsumeTimes)),
		"preparedTransactionOffset": kindOf(strconv.FormatInt(m.PreparedTransactionOffset, 10)),
		"queueId":                   strconv.Itoa(int(m.Queue.QueueId)),
		"queueOffset":               strconv.FormatInt(m.QueueOffset, 10),
		"body":                      string(m.Body),
	}
	for k, v := range m.GetProperties() {
		switch k {
		case "MIN_OFFSET", "MAX_OFFSET": // added by the client's decoder from the pull answer
			continue
		}
		f["prop "+k] = kindOf(strings.ReplaceAll(v, tg.brokerAddr, "<broker>"))
	}
	return f
}

// kindOf reduces a value that differs between any two brokers or runs.
func kindOf(v string) string {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 1_000_000_000_000 {
		return "<time>"
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 && len(v) > 3 {
		return "<offset>"
	}
	if hostPort.MatchString(v) {
		return "<addr>"
	}
	if hexID.MatchString(v) {
		return "<msgid>"
	}
	return v
}

func compareDelivered(t *testing.T, targets []target) {
	topic := uniq("dlv")
	kinds := deliveredKinds(0)                       // names and queues; the sends below carry a time
	got := map[string]map[string]map[string]string{} // kind → target → fields
	for _, tg := range targets {
		createTopic4(t, tg, topic)
		// The timer's deliver time is taken per target: one taken before both
		// may have passed when a loaded machine reaches the second, and a
		// timer already due is stored plainly (HookUtils), without REAL_TOPIC.
		for _, k := range deliveredKinds(time.Now().Add(3 * time.Second).UnixMilli()) {
			reply := sendDelivered(t, tg, topic, k)
			if k.then != nil {
				k.then(t, tg, topic, reply)
			}
		}
	}
	for _, tg := range targets {
		for _, k := range kinds {
			m := readDelivered(t, tg, k.topic(topic), k.queue, uniq("dlv-reader"))
			if got[k.name] == nil {
				got[k.name] = map[string]map[string]string{}
			}
			got[k.name][tg.name] = recordFields(m, tg)
		}
	}
	for _, k := range kinds {
		compareFields(t, k.name, got[k.name][targets[0].name], got[k.name][targets[1].name])
	}
}

// compareFields reports every field whose value (or presence) differs
// between rocketgo's record and Apache's, unless deliveredDiffs lists
// "kind/field"; it returns how many fields were compared.
func compareFields(t *testing.T, kind string, ours, theirs map[string]string) int {
	t.Helper()
	keys := map[string]bool{}
	for f := range ours {
		keys[f] = true
	}
	for f := range theirs {
		keys[f] = true
	}
	var names []string
	for f := range keys {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		a, okA := ours[f]
		b, okB := theirs[f]
		if okA == okB && a == b {
			continue
		}
		show := func(v string, ok bool) string {
			if !ok {
				return "(absent)"
			}
			return strconv.Quote(v)
		}
		id := kind + "/" + f
		if why, ok := deliveredDiffs[id]; ok {
			t.Logf("%s differs on purpose (%s): rocketgo %s, apache %s", id, why, show(a, okA), show(b, okB))
			continue
		}
		t.Errorf("%s: rocketgo %s, apache %s", id, show(a, okA), show(b, okB))
	}
	return len(names)
}
