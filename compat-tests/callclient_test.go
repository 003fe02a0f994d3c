package compattest

// Requests relayed by the broker to a consumer:
// GET_CONSUMER_RUNNING_INFO (307) and CONSUME_MESSAGE_DIRECTLY (309), as
// mqadmin's consumerStatus and consumeMessage make them, answered by the
// official Go client through rocketgo, and Apache's refusal for a client
// that is not online.

import (
	"strings"
	"testing"
	"time"
)

func TestCallConsumer(t *testing.T) {
	c := sharedCluster(t)
	topic, group := uniq("callc"), uniq("CG_callc")
	createTopic(t, c, topic)
	p := newProducer(t, c)
	res := p.mustSend(t, newMsg(topic, "callc-1", "TagC"))
	col := newCollector("callc")
	startConsumer(t, c, group, topic, "*", col)
	waitAll(t, col, []string{"callc-1"}, 30*time.Second, "callc")
	var ids []string
	if !waitFor(t, 15*time.Second, func() bool {
		ids, _ = consumerList(c.brokerAddr, group)
		return len(ids) == 1
	}) {
		t.Fatalf("consumer of %s not registered: %v", group, ids)
	}
	invoke := func(code int, ext map[string]string) *rawCmd {
		t.Helper()
		resp, err := rawInvoke(c.brokerAddr, javaRequest(code, ext, nil), 15*time.Second)
		if err != nil {
			t.Fatalf("request %d: %v", code, err)
		}
		return resp
	}

	resp := invoke(307, map[string]string{"consumerGroup": group, "clientId": ids[0], "jstackEnable": "false"})
	// The Go client writes its mqTable with object keys (fastjson's form,
	// not JSON): the body is checked as text.
	if body := string(resp.Body); resp.Code != 0 || !strings.Contains(body, `"subscriptionSet"`) ||
		!strings.Contains(body, `"topic":"`+topic+`"`) || !strings.Contains(body, "PROP_CLIENT_VERSION") {
		t.Fatalf("GET_CONSUMER_RUNNING_INFO: %v %q", resp, resp.Body)
	}

	resp = invoke(309, map[string]string{"consumerGroup": group, "clientId": ids[0], "msgId": res.OffsetMsgID, "topic": topic})
	if resp.Code != 0 || !strings.Contains(string(resp.Body), "consumeResult") {
		t.Fatalf("CONSUME_MESSAGE_DIRECTLY: %v %q", resp, resp.Body)
	}
	t.Logf("consume directly: %s", resp.Body)
	if !waitFor(t, 10*time.Second, func() bool { return len(col.get("callc-1")) >= 2 }) {
		t.Errorf("the message consumed directly never reached the listener again: %d deliveries", len(col.get("callc-1")))
	}

	resp = invoke(307, map[string]string{"consumerGroup": group, "clientId": "nosuch@1", "jstackEnable": "false"})
	if want := "The Consumer <" + group + "> <nosuch@1> not online"; resp.Code != 1 || resp.Remark != want {
		t.Errorf("running info of a client not online: %v, want code 1 %q", resp, want)
	}
}
