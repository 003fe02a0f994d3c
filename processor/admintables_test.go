package processor

import (
	"strings"
	"testing"

	"github.com/rocketgo/rocketgo/remoting"
)

// The smaller admin tables in Apache's shapes: system topics, producers,
// a group's subscription, offsets cloned and the correction offsets.
func TestAdminTables(t *testing.T) {
	b, cl := serveBroker(t, nil, nil)
	f := &adminFixture{t: t, b: b, cl: cl}
	const topic, group, pgroup, client = "AdmTopic", "CG_adm", "PG_adm", "127.0.0.1@adm"
	f.ok("UPDATE_AND_CREATE_TOPIC", f.do(remoting.UpdateAndCreateTopic, map[string]string{"topic": topic, "readQueueNums": "2",
		"writeQueueNums": "2", "perm": "6", "topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false"}, nil))
	f.ok("HEART_BEAT", f.do(remoting.HeartBeat, nil, heartbeatBody(client, group, pgroup, topic)))

	if body := string(f.ok("system topics", f.do(remoting.GetSystemTopicListFromBroker, nil, nil))); !strings.HasPrefix(body, `{"topicList":[`) ||
		!strings.Contains(body, `"TBW102"`) || !strings.Contains(body, `"SCHEDULE_TOPIC_XXXX"`) || !strings.Contains(body, `"`+b.Config().BrokerName+`"`) {
		t.Fatalf("system topics = %s", body)
	}
	body := string(f.ok("producers", f.do(remoting.GetAllProducerInfo, nil, nil)))
	if !strings.HasPrefix(body, `{"data":{"PG_adm":[{"clientId":"127.0.0.1@adm","remoteIP":"/127.0.0.1:`) ||
		!strings.Contains(body, `"language":"JAVA","version":`) || !strings.Contains(body, `"lastUpdateTimestamp":`) {
		t.Fatalf("producers = %s", body)
	}
	body = string(f.ok("subscription", f.do(remoting.QuerySubscriptionByConsumer, map[string]string{"group": group, "topic": topic}, nil)))
	if !strings.HasPrefix(body, `{"group":"CG_adm","subscriptionData":{"classFilterMode":false,`) || !strings.HasSuffix(body, `,"topic":"AdmTopic"}`) ||
		!strings.Contains(body, `"subString":"TagA || TagB"`) {
		t.Fatalf("subscription = %s", body)
	}
	if body := string(f.ok("no subscription", f.do(remoting.QuerySubscriptionByConsumer, map[string]string{"group": "G_none", "topic": topic}, nil))); body != `{"group":"G_none","topic":"AdmTopic"}` {
		t.Fatalf("subscription of no group = %s", body)
	}
	f.refused("subscription without topic", f.do(remoting.QuerySubscriptionByConsumer, map[string]string{"group": group}, nil),
		remoting.SystemError, "remoting: missing header field: topic")

	commitOffset(f, group, topic, 0, 0)
	commitOffset(f, group, topic, 1, 0)
	f.ok("clone", f.do(remoting.CloneGroupOffset, map[string]string{"srcGroup": group, "destGroup": "CG_copy", "topic": topic}, nil))
	if off, ok := b.Offsets.Query("CG_copy", topic, 1); !ok || off != 0 {
		t.Fatalf("cloned offset %d %v", off, ok)
	}
	f.refused("clone to a bad name", f.do(remoting.CloneGroupOffset, map[string]string{"srcGroup": group, "destGroup": "bad/group", "topic": topic}, nil),
		remoting.InvalidParameter, "The specified group: bad/group, contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$")
	if body := string(f.ok("correction", f.do(remoting.QueryCorrectionOffset, map[string]string{"topic": topic, "compareGroup": "CG_copy",
		"filterGroups": "CG_none"}, nil))); body != `{"correctionOffsets":{0:0,1:0}}` {
		t.Fatalf("correction offsets = %s", body)
	}

	f.ok("group list", f.do(remoting.UpdateAndCreateSubscriptionGroupList, nil,
		[]byte(`{"groupConfigList":[{"groupName":"CG_l1","retryMaxTimes":3},{"groupName":"CG_l2"}]}`)))
	if !b.Groups.Contains("CG_l1") || !b.Groups.Contains("CG_l2") {
		t.Fatal("groups of the list not created")
	}
	f.refused("group list with a bad name", f.do(remoting.UpdateAndCreateSubscriptionGroupList, nil,
		[]byte(`{"groupConfigList":[{"groupName":"bad/g"}]}`)), remoting.InvalidParameter,
		"The specified group: bad/g, contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$")

	body = string(f.ok("broker consume stats", f.do(remoting.GetBrokerConsumeStats, map[string]string{"isOrder": "false"}, nil)))
	if !strings.HasPrefix(body, `{"brokerAddr":"`+b.Config().Addr()+`","consumeStatsList":[`) ||
		!strings.Contains(body, `{"CG_adm":[{"consumeTps":0.0,"offsetTable":{{"brokerName":"b","queueId":0,"topic":"AdmTopic"}:{"brokerOffset":0,"consumerOffset":0,`) ||
		!strings.Contains(body, `{"CG_l1":[]}`) || !strings.HasSuffix(body, `],"totalDiff":0,"totalInflightDiff":0}`) {
		t.Fatalf("broker consume stats = %s", body)
	}
	if body := string(f.ok("order topics only", f.do(remoting.GetBrokerConsumeStats, map[string]string{"isOrder": "true"}, nil))); strings.Contains(body, "AdmTopic") {
		t.Fatalf("broker consume stats of order topics = %s", body)
	}

	f.refused("stats of nothing counted", f.do(remoting.ViewBrokerStatsData, map[string]string{"statsName": "TOPIC_PUT_NUMS", "statsKey": "none"}, nil),
		remoting.SystemError, "The stats <TOPIC_PUT_NUMS> <none> not exist")

	f.ok("topic list", f.do(remoting.UpdateAndCreateTopicList, nil, []byte(`{"topicConfigList":[`+
		`{"attributes":{"+message.type":"FIFO"},"order":false,"perm":6,"readQueueNums":3,"topicFilterType":"SINGLE_TAG","topicName":"TL1","topicSysFlag":0,"writeQueueNums":3},`+
		`{"topicName":"TL2","readQueueNums":2,"writeQueueNums":2,"perm":6}]}`)))
	if tc, ok := b.Topics.Get("TL1"); !ok || tc.ReadQueueNums != 3 || tc.Attributes["message.type"] != "FIFO" {
		t.Fatalf("TL1 = %+v %v", tc, ok)
	}
	if _, ok := b.Topics.Get("TL2"); !ok {
		t.Fatal("TL2 not created")
	}
	f.refused("topic list with bad attributes", f.do(remoting.UpdateAndCreateTopicList, nil,
		[]byte(`{"topicConfigList":[{"topicName":"TL3","attributes":{"message.type":"FIFO"}}]}`)),
		remoting.InvalidParameter, "attributes format error: message.type=FIFO")
	f.ok("POP_ROLLBACK", f.do(remoting.PopRollback, nil, nil))

	// INVOKE_BROKER_TO_RESET_OFFSET on the broker (useServerSideResetOffset,
	// Apache 5.x's default): every read queue, an offline group too, the
	// queues in HashMap order.
	rb := f.ok("reset on the broker", f.do(remoting.InvokeBrokerToResetOffset, map[string]string{"topic": topic, "group": "CG_l1",
		"timestamp": "-1", "isForce": "true", "queueId": "-1"}, nil))
	if string(rb) != `{"offsetTable":{{"brokerName":"b","queueId":1,"topic":"AdmTopic"}:0,{"brokerName":"b","queueId":0,"topic":"AdmTopic"}:0}}` {
		t.Fatalf("reset on the broker = %s", rb)
	}
	if !b.Offsets.ResetPending("CG_l1", topic, 1) {
		t.Fatal("no reset pending after the reset")
	}
	f.refused("reset on the broker: unknown group", f.do(remoting.InvokeBrokerToResetOffset, map[string]string{"topic": topic, "group": "CG_none",
		"timestamp": "-1", "isForce": "true"}, nil), remoting.SubscriptionGroupNotExist, "Group CG_none does not exist")
}
