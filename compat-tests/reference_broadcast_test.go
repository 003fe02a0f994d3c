package compattest

// What a broadcasting consumer receives, compared with the Apache reference:
// a group registered by heartbeat as BROADCASTING pulls
// without its subscription (as the Java push consumer does) on the
// heartbeat's connection, committing an offset with the pull; the
// delivered record (recordFields), the pull answer's header and what
// QUERY_CONSUMER_OFFSET then answers for the group must be equal.

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
)

const broadcastGroup = "dlv-bc-cg"

func compareBroadcastDelivered(t *testing.T, targets []target) {
	topic := uniq("dlvbc")
	got := map[string]map[string]string{}
	for _, tg := range targets {
		createTopic4(t, tg, topic)
		sendDelivered(t, tg, topic, deliveredKind{name: "broadcast", sendQueue: 0, props: "COLOR\x01violet"})
		got[tg.name] = broadcastPull(t, tg, topic)
	}
	n := compareFields(t, "broadcast", got[targets[0].name], got[targets[1].name])
	t.Logf("broadcast: %d fields compared", n)
}

// broadcastPull registers the broadcasting group, pulls queue 0 from the
// start with the commit flag, and reads the group's offset afterwards.
func broadcastPull(t *testing.T, tg target, topic string) map[string]string {
	t.Helper()
	on := consumerConn(t, tg, "dlvbc@1", broadcastGroup, "BROADCASTING", topic)
	var resp *rawCmd
	var m *primitive.MessageExt
	if !waitFor(t, 20*time.Second, func() bool {
		r := pullReq(topic, broadcastGroup, 0, 0)
		r.ExtFields["sysFlag"] = "1" // FLAG_COMMIT_OFFSET, no subscription: the heartbeat's is used
		r.ExtFields["commitOffset"] = "0"
		r.ExtFields["subVersion"] = "1"
		resp = on(r)
		if ms := primitive.DecodeMessage(resp.Body); resp.Code == 0 && len(ms) > 0 {
			m = ms[0]
			return true
		}
		return false
	}) {
		t.Fatalf("%s: the broadcasting group got nothing: %v %q", tg.name, resp, resp.Remark)
	}
	f := recordFields(m, tg)
	for _, k := range []string{"nextBeginOffset", "minOffset", "maxOffset", "suggestWhichBrokerId"} {
		f["pull "+k] = resp.ExtFields[k]
	}
	// The next pull commits the offset the first one reached.
	r := pullReq(topic, broadcastGroup, 0, 1)
	r.ExtFields["sysFlag"] = "1"
	r.ExtFields["commitOffset"] = "1"
	r.ExtFields["subVersion"] = "1"
	next := on(r)
	f["second pull code"] = fmt.Sprint(next.Code)
	q := on(javaRequest(14, map[string]string{"consumerGroup": broadcastGroup, "topic": topic, "queueId": "0"}, nil))
	f["offset code"] = fmt.Sprint(q.Code)
	f["offset"] = q.ExtFields["offset"]
	f["offset remark"] = strings.ReplaceAll(q.Remark, topic, "<topic>")
	return f
}

// consumerConn opens a connection, registers group (messageModel, one
// subscription to topic, subVersion 1) on it by heartbeat and returns a
// function that sends a request on it; the connection closes with the
// test. A broker forgets the group when the connection closes, so the
// pulls that need it go on the same one.
func consumerConn(t *testing.T, tg target, clientID, group, model, topic string) func(*rawCmd) *rawCmd {
	t.Helper()
	conn, err := net.DialTimeout("tcp", tg.brokerAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	on := func(req *rawCmd) *rawCmd {
		resp, err := invokeOn(conn, req, 10*time.Second)
		if err != nil {
			t.Fatalf("%s: request %d: %v", tg.name, req.Code, err)
		}
		return resp
	}
	hb := on(javaRequest(34, nil, []byte(fmt.Sprintf(`{"clientID":%q,"consumerDataSet":[{"groupName":%q,`+
		`"consumeType":"CONSUME_PASSIVELY","messageModel":%q,"consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET",`+
		`"subscriptionDataSet":[{"topic":%q,"subString":"*","subVersion":1,"expressionType":"TAG"}],"unitMode":false}],`+
		`"producerDataSet":[]}`, clientID, group, model, topic))))
	if hb.Code != 0 {
		t.Fatalf("%s: heartbeat of %s: %v", tg.name, group, hb)
	}
	return on
}
