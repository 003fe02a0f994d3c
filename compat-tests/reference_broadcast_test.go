package compattest

// What a broadcasting consumer receives, compared with the Apache reference
// (issue #18): a group registered by heartbeat as BROADCASTING pulls
// without its subscription (as the Java push consumer does) on the
// heartbeat's connection, committing an offset with the pull; the
// delivered record (recordFields), the pull answer's header and what
// QUERY_CONSUMER_OFFSET then answers for the group must be equal.

import (
	"fmt"
	"net"
	"sort"
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
	ours, theirs := got[targets[0].name], got[targets[1].name]
	keys := map[string]bool{}
	for k := range ours {
		keys[k] = true
	}
	for k := range theirs {
		keys[k] = true
	}
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		a, okA := ours[k]
		b, okB := theirs[k]
		if okA != okB || a != b {
			t.Errorf("broadcast/%s: rocketgo %q (%t), apache %q (%t)", k, a, okA, b, okB)
		}
	}
	t.Logf("broadcast: %d fields compared", len(names))
}

// broadcastPull registers the broadcasting group, pulls queue 0 from the
// start with the commit flag, and reads the group's offset afterwards.
func broadcastPull(t *testing.T, tg target, topic string) map[string]string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", tg.brokerAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	on := func(req *rawCmd) *rawCmd {
		resp, err := invokeOn(conn, req, 10*time.Second)
		if err != nil {
			t.Fatalf("%s: request %d: %v", tg.name, req.Code, err)
		}
		return resp
	}
	hb := on(javaRequest(34, nil, []byte(fmt.Sprintf(`{"clientID":"dlvbc@1","consumerDataSet":[{"groupName":%q,`+
		`"consumeType":"CONSUME_PASSIVELY","messageModel":"BROADCASTING","consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET",`+
		`"subscriptionDataSet":[{"topic":%q,"subString":"*","subVersion":1,"expressionType":"TAG"}],"unitMode":false}],`+
		`"producerDataSet":[]}`, broadcastGroup, topic))))
	if hb.Code != 0 {
		t.Fatalf("%s: heartbeat: %v", tg.name, hb)
	}
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
