package processor

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
)

// adminFixture is a broker served over TCP and the client that talks to it.
type adminFixture struct {
	t  *testing.T
	b  *broker.Broker
	cl *remoting.Client
}

func (f *adminFixture) do(code int32, ext map[string]string, body []byte) *remoting.Command {
	f.t.Helper()
	return invoke(f.t, f.cl, f.b, remoting.NewRequest(code, ext, body))
}

// ok fails unless resp is SUCCESS and returns its body.
func (f *adminFixture) ok(what string, resp *remoting.Command) []byte {
	f.t.Helper()
	if resp.Code != remoting.Success {
		f.t.Fatalf("%s: %d %q", what, resp.Code, resp.Remark)
	}
	return resp.Body
}

func (f *adminFixture) refused(what string, resp *remoting.Command, code int32, remark string) {
	f.t.Helper()
	if resp.Code != code || resp.Remark != remark {
		f.t.Errorf("%s: %d %q, want %d %q", what, resp.Code, resp.Remark, code, remark)
	}
}

func (f *adminFixture) decode(what string, resp *remoting.Command, v any) {
	f.t.Helper()
	if err := json.Unmarshal(f.ok(what, resp), v); err != nil {
		f.t.Fatalf("%s: %v: %s", what, err, resp.Body)
	}
}

func heartbeatBody(client, consumerGroup, producerGroup, topic string) []byte {
	body, _ := json.Marshal(map[string]any{
		"clientID":        client,
		"producerDataSet": []map[string]any{{"groupName": producerGroup}, {"groupName": "bad/group"}},
		"consumerDataSet": []map[string]any{{"groupName": consumerGroup, "consumeType": "CONSUME_PASSIVELY",
			"messageModel": "CLUSTERING", "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET",
			"subscriptionDataSet": []map[string]any{{"topic": topic, "subString": "TagA || TagB", "subVersion": 1, "expressionType": "TAG"},
				{"topic": "bad topic", "subString": "*"}}}},
	})
	return body
}

func commitOffset(f *adminFixture, group, topic string, q int, off int64) {
	f.t.Helper()
	f.ok("UPDATE_CONSUMER_OFFSET", f.do(remoting.UpdateConsumerOffset, map[string]string{"consumerGroup": group,
		"topic": topic, "queueId": strconv.Itoa(q), "commitOffset": strconv.FormatInt(off, 10)}, nil))
}

// The admin and client services through their handlers, over TCP: what each
// answers (in Apache's shape), its refusals (code and remark), and its
// effects on the tables seen by the next request.
func TestAdminServices(t *testing.T) {
	// The reset checked here is Apache 4.x's (the consumers told); the
	// server-side one, Apache 5.x's default, in TestAdminTables.
	// configBlackList: Apache's default, so that brokerPermission is
	// changeable over the wire (rocketgo's default refuses it).
	b, cl := serveBroker(t, func(c *broker.Config) {
		c.UseServerSideResetOffset = false
		c.ConfigBlackList = "configBlackList;brokerConfigPath"
	}, nil)
	f := &adminFixture{t: t, b: b, cl: cl}
	const topic, group, pgroup, client = "AdmTopic", "CG_adm", "PG_adm", "127.0.0.1@adm"

	// Topics: create, read back, refuse.
	f.ok("UPDATE_AND_CREATE_TOPIC", f.do(remoting.UpdateAndCreateTopic, map[string]string{"topic": topic,
		"readQueueNums": "4", "writeQueueNums": "4", "perm": "6"}, nil))
	var tc tables.TopicConfig
	f.decode("GET_TOPIC_CONFIG", f.do(remoting.GetTopicConfig, map[string]string{"topic": topic}, nil), &tc)
	if tc.TopicName != topic || tc.ReadQueueNums != 4 || tc.WriteQueueNums != 4 || tc.Perm != 6 {
		t.Fatalf("GET_TOPIC_CONFIG = %+v", tc)
	}
	f.refused("GET_TOPIC_CONFIG missing", f.do(remoting.GetTopicConfig, map[string]string{"topic": "NoSuch"}, nil),
		remoting.TopicNotExist, "No topic in this broker. topic: NoSuch")
	f.refused("UPDATE_AND_CREATE_TOPIC system topic", f.do(remoting.UpdateAndCreateTopic,
		map[string]string{"topic": "TBW102"}, nil), remoting.InvalidParameter, "The topic[TBW102] is conflict with system topic.")
	f.refused("UPDATE_AND_CREATE_TOPIC queue nums", f.do(remoting.UpdateAndCreateTopic,
		map[string]string{"topic": "Wide", "readQueueNums": "5000", "writeQueueNums": "1"}, nil), remoting.InvalidParameter,
		"The queue nums of topic[Wide] must be between 1 and 1024 (maxTopicQueueNums), read 5000 write 1.")
	var all struct {
		TopicConfigTable   map[string]tables.TopicConfig `json:"topicConfigTable"`
		MappingDataVersion *remoting.DataVersion         `json:"mappingDataVersion"`
	}
	f.decode("GET_ALL_TOPIC_CONFIG", f.do(remoting.GetAllTopicConfig, nil, nil), &all)
	if all.TopicConfigTable[topic].ReadQueueNums != 4 || all.TopicConfigTable["TBW102"].TopicName != "TBW102" || all.MappingDataVersion == nil {
		t.Fatalf("GET_ALL_TOPIC_CONFIG = %+v", all)
	}

	// Three messages on queue 0: topic stats.
	for i := 0; i < 3; i++ {
		f.ok("send", invoke(t, cl, b, sendV2(topic, []byte("m"+strconv.Itoa(i)))))
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return b.Store.MaxOffset(topic, 0) == 3 }) // dispatched
	stats := f.ok("GET_TOPIC_STATS_INFO", f.do(remoting.GetTopicStatsInfo, map[string]string{"topic": topic}, nil))
	q0 := `{"brokerName":"b","queueId":0,"topic":"AdmTopic"}:{"lastUpdateTimestamp":`
	if !strings.HasPrefix(string(stats), `{"offsetTable":{`+q0) || !strings.Contains(string(stats), `"maxOffset":3,"minOffset":0}`) ||
		strings.Count(string(stats), `"brokerName"`) != 4 || !strings.HasSuffix(string(stats), `},"topicPutTps":0.0}`) {
		t.Fatalf("GET_TOPIC_STATS_INFO = %s", stats)
	}
	f.refused("GET_TOPIC_STATS_INFO missing", f.do(remoting.GetTopicStatsInfo, map[string]string{"topic": "NoSuch"}, nil),
		remoting.TopicNotExist, "topic[NoSuch] not exist")

	// Heartbeat: the valid groups registered, the bad names dropped; the
	// group's retry topic created.
	f.ok("HEART_BEAT", f.do(remoting.HeartBeat, nil, heartbeatBody(client, group, pgroup, topic)))
	var ids struct {
		ConsumerIDList []string `json:"consumerIdList"`
	}
	f.decode("GET_CONSUMER_LIST_BY_GROUP", f.do(remoting.GetConsumerListByGroup, map[string]string{"consumerGroup": group}, nil), &ids)
	if len(ids.ConsumerIDList) != 1 || ids.ConsumerIDList[0] != client {
		t.Fatalf("consumer ids %v", ids.ConsumerIDList)
	}
	f.refused("GET_CONSUMER_LIST_BY_GROUP none", f.do(remoting.GetConsumerListByGroup, map[string]string{"consumerGroup": "CG_none"}, nil),
		remoting.SystemError, "no consumer for this group, CG_none")
	f.ok("retry topic", f.do(remoting.GetTopicConfig, map[string]string{"topic": "%RETRY%" + group}, nil))

	var conns struct {
		ConnectionSet []struct {
			ClientID string `json:"clientId"`
		} `json:"connectionSet"`
		ConsumeType       string `json:"consumeType"`
		SubscriptionTable map[string]struct {
			SubString string   `json:"subString"`
			TagsSet   []string `json:"tagsSet"`
			CodeSet   []int32  `json:"codeSet"`
		} `json:"subscriptionTable"`
	}
	f.decode("GET_CONSUMER_CONNECTION_LIST", f.do(remoting.GetConsumerConnectionList, map[string]string{"consumerGroup": group}, nil), &conns)
	sub := conns.SubscriptionTable[topic]
	if len(conns.ConnectionSet) != 1 || conns.ConnectionSet[0].ClientID != client || conns.ConsumeType != "CONSUME_PASSIVELY" ||
		len(conns.SubscriptionTable) != 1 || len(sub.TagsSet) != 2 || len(sub.CodeSet) != 2 {
		t.Fatalf("GET_CONSUMER_CONNECTION_LIST = %+v", conns)
	}
	f.refused("GET_CONSUMER_CONNECTION_LIST none", f.do(remoting.GetConsumerConnectionList, map[string]string{"consumerGroup": "CG_none"}, nil),
		remoting.ConsumerNotOnline, "the consumer group[CG_none] not online")
	var pconns struct {
		ConnectionSet []struct {
			ClientID string `json:"clientId"`
		} `json:"connectionSet"`
	}
	f.decode("GET_PRODUCER_CONNECTION_LIST", f.do(remoting.GetProducerConnectionList, map[string]string{"producerGroup": pgroup}, nil), &pconns)
	if len(pconns.ConnectionSet) != 1 || pconns.ConnectionSet[0].ClientID != client {
		t.Fatalf("GET_PRODUCER_CONNECTION_LIST = %+v", pconns)
	}
	f.refused("GET_PRODUCER_CONNECTION_LIST bad name dropped", f.do(remoting.GetProducerConnectionList,
		map[string]string{"producerGroup": "bad/group"}, nil), remoting.SystemError, "the producer group[bad/group] not exist")

	// Offsets: consume stats, who consumes, reset.
	commitOffset(f, group, topic, 0, 2)
	cs := f.ok("GET_CONSUME_STATS", f.do(remoting.GetConsumeStats, map[string]string{"consumerGroup": group, "topic": topic}, nil))
	if !strings.Contains(string(cs), q0[:len(q0)-len(`"lastUpdateTimestamp":`)]+`"brokerOffset":3,"consumerOffset":2,"lastTimestamp":`) ||
		strings.Count(string(cs), `"brokerName"`) != 4 {
		t.Fatalf("GET_CONSUME_STATS = %s", cs)
	}
	var who struct {
		GroupList []string `json:"groupList"`
	}
	f.decode("QUERY_TOPIC_CONSUME_BY_WHO", f.do(remoting.QueryTopicConsumeByWho, map[string]string{"topic": topic}, nil), &who)
	if len(who.GroupList) != 1 || who.GroupList[0] != group {
		t.Fatalf("QUERY_TOPIC_CONSUME_BY_WHO = %v", who.GroupList)
	}
	var byConsumer struct {
		BrokerAddr string   `json:"brokerAddr"`
		TopicList  []string `json:"topicList"`
	}
	f.decode("QUERY_TOPICS_BY_CONSUMER", f.do(remoting.QueryTopicsByConsumer, map[string]string{"group": group}, nil), &byConsumer)
	if byConsumer.BrokerAddr != b.Config().Addr() || len(byConsumer.TopicList) != 1 || byConsumer.TopicList[0] != topic {
		t.Fatalf("QUERY_TOPICS_BY_CONSUMER = %+v", byConsumer)
	}

	reset := func(g, tp string) *remoting.Command {
		return f.do(remoting.InvokeBrokerToResetOffset, map[string]string{"topic": tp, "group": g, "timestamp": "-1", "isForce": "true"}, nil)
	}
	f.refused("reset: no such topic", reset(group, "NoSuch"), remoting.TopicNotExist,
		"[reset-offset] reset offset failed, no topic in this broker. topic=NoSuch")
	f.refused("reset: queue 1 never committed", reset(group, topic), remoting.SystemError, "THe consumer group <CG_adm> not exist")
	for q := 1; q < 4; q++ {
		commitOffset(f, group, topic, q, 0)
	}
	rb := f.ok("reset", reset(group, topic))
	if !strings.HasPrefix(string(rb), `{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"AdmTopic"}:3,`) {
		t.Fatalf("reset = %s", rb)
	}
	f.ok("UPDATE_AND_CREATE_SUBSCRIPTIONGROUP", f.do(remoting.UpdateAndCreateSubscription, nil, []byte(`{"groupName":"CG_offline"}`)))
	for q := 0; q < 4; q++ {
		commitOffset(f, "CG_offline", topic, q, 0)
	}
	f.refused("reset: offline group", reset("CG_offline", topic), remoting.ConsumerNotOnline,
		"Consumer not online, so can not reset offset, Group: CG_offline Topic: AdmTopic Timestamp: -1")

	// One queue (Apache 5.x's server-side reset, mqadmin 5.x resetOffsetByTime
	// -b -q): the offset is set on the broker, the group's commits for the
	// queue ignored until its next pull, which is answered OFFSET_MOVED.
	resetQ := func(g, q, off string) *remoting.Command {
		return f.do(remoting.InvokeBrokerToResetOffset, map[string]string{"topic": topic, "group": g, "timestamp": "0",
			"isForce": "false", "queueId": q, "offset": off}, nil)
	}
	f.refused("reset queue: no such group", resetQ("CG_nosuch", "0", "1"), remoting.SubscriptionGroupNotExist, "Group CG_nosuch does not exist")
	f.refused("reset queue: past the end", resetQ(group, "0", "9"), remoting.SystemError, "Target offset 9 not in consume queue range [0-3]")
	f.refused("reset queue: queue id", resetQ(group, "99999", "1"), remoting.InvalidParameter,
		"queueId[99999] is illegal, topic:[AdmTopic] maxTopicQueueNums:[1024]")
	if rb := f.ok("reset queue", resetQ(group, "0", "1")); string(rb) != `{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"AdmTopic"}:1}}` {
		t.Fatalf("reset queue = %s", rb)
	}
	commitOffset(f, group, topic, 0, 3) // the consumer's own, before it pulled: ignored
	if off, _ := b.Offsets.Query(group, topic, 0); off != 1 {
		t.Fatalf("offset after reset and commit = %d, want 1", off)
	}
	pr := pullReq(topic, 3, 0, "*")
	pr.Set("consumerGroup", group)
	moved := f.do(remoting.PullMessage, pr.FieldMap(), nil)
	if moved.Code != remoting.PullOffsetMoved || moved.Str("nextBeginOffset") != "1" {
		t.Fatalf("pull after reset: %d %q nextBeginOffset %q", moved.Code, moved.Remark, moved.Str("nextBeginOffset"))
	}
	commitOffset(f, group, topic, 0, 1)
	if b.Offsets.ResetPending(group, topic, 0) {
		t.Fatal("reset still pending after the pull that told it")
	}

	// Unregister: the group has no members left.
	f.ok("UNREGISTER_CLIENT", f.do(remoting.UnregisterClient, map[string]string{"clientID": client,
		"producerGroup": pgroup, "consumerGroup": group}, nil))
	f.refused("consumers after unregister", f.do(remoting.GetConsumerListByGroup, map[string]string{"consumerGroup": group}, nil),
		remoting.SystemError, "no consumer for this group, CG_adm")
	f.refused("producers after unregister", f.do(remoting.GetProducerConnectionList, map[string]string{"producerGroup": pgroup}, nil),
		remoting.SystemError, "the producer group[PG_adm] not exist")

	// Messages by offset.
	if rec := f.ok("VIEW_MESSAGE_BY_ID", f.do(remoting.ViewMessageByID, map[string]string{"offset": "0"}, nil)); len(rec) == 0 ||
		!strings.Contains(string(rec), "AdmTopic") {
		t.Fatalf("VIEW_MESSAGE_BY_ID = %q", rec)
	}
	f.refused("VIEW_MESSAGE_BY_ID past the end", f.do(remoting.ViewMessageByID, map[string]string{"offset": "999999"}, nil),
		remoting.SystemError, "can not find message by the offset, 999999")

	// Runtime info.
	var ri struct {
		Table map[string]string `json:"table"`
	}
	f.decode("GET_BROKER_RUNTIME_INFO", f.do(remoting.GetBrokerRuntimeInfo, nil, nil), &ri)
	if ri.Table["msgPutTotalTodayNow"] != "3" || ri.Table["brokerVersionDesc"] != remoting.VersionName(remoting.ServerVersion()) ||
		ri.Table["commitLogMinOffset"] != "0" || !strings.HasPrefix(ri.Table["runtime"], "[ 0 days") {
		t.Fatalf("GET_BROKER_RUNTIME_INFO = %v", ri.Table)
	}

	// Groups: update refused and accepted, listed, deleted with offsets.
	f.refused("UPDATE_AND_CREATE_SUBSCRIPTIONGROUP retry queues", f.do(remoting.UpdateAndCreateSubscription, nil,
		[]byte(`{"groupName":"CG_wide","retryQueueNums":5000}`)), remoting.InvalidParameter,
		"The retryQueueNums of group[CG_wide] must be between 0 and 1024 (maxTopicQueueNums), got 5000.")
	f.ok("UPDATE_AND_CREATE_SUBSCRIPTIONGROUP", f.do(remoting.UpdateAndCreateSubscription, nil,
		[]byte(`{"groupName":"CG_made","retryQueueNums":2,"consumeEnable":true}`)))
	var one tables.GroupConfig
	f.decode("GET_SUBSCRIPTIONGROUP_CONFIG", f.do(remoting.GetSubscriptionGroupConfig, map[string]string{"group": "CG_made"}, nil), &one)
	if one.GroupName != "CG_made" || one.RetryQueueNums != 2 {
		t.Fatalf("GET_SUBSCRIPTIONGROUP_CONFIG = %+v", one)
	}
	var groups struct {
		SubscriptionGroupTable map[string]tables.GroupConfig `json:"subscriptionGroupTable"`
	}
	f.decode("GET_ALL_SUBSCRIPTIONGROUP_CONFIG", f.do(remoting.GetAllSubscriptionGroupConfig, nil, nil), &groups)
	if groups.SubscriptionGroupTable["CG_made"].RetryQueueNums != 2 || groups.SubscriptionGroupTable[group].GroupName != group {
		t.Fatalf("GET_ALL_SUBSCRIPTIONGROUP_CONFIG = %+v", groups.SubscriptionGroupTable)
	}
	f.ok("DELETE_SUBSCRIPTIONGROUP", f.do(remoting.DeleteSubscriptionGroup, map[string]string{"groupName": group, "cleanOffset": "true"}, nil))
	groups.SubscriptionGroupTable = nil
	f.decode("GET_ALL_SUBSCRIPTIONGROUP_CONFIG", f.do(remoting.GetAllSubscriptionGroupConfig, nil, nil), &groups)
	if _, ok := groups.SubscriptionGroupTable[group]; ok {
		t.Fatal("group still listed after DELETE_SUBSCRIPTIONGROUP")
	}
	byConsumer.TopicList = nil
	f.decode("QUERY_TOPICS_BY_CONSUMER after delete", f.do(remoting.QueryTopicsByConsumer, map[string]string{"group": group}, nil), &byConsumer)
	if len(byConsumer.TopicList) != 0 {
		t.Fatalf("offsets kept after cleanOffset: %v", byConsumer.TopicList)
	}

	// Broker config: read, refused update, applied update in force.
	cfgResp := f.do(remoting.GetBrokerConfig, nil, nil)
	if body := f.ok("GET_BROKER_CONFIG", cfgResp); !strings.Contains(string(body), "\nbrokerName=b\n") || !strings.Contains(cfgResp.Str("version"), `"counter":1`) {
		t.Fatalf("GET_BROKER_CONFIG version %q body:\n%s", cfgResp.Str("version"), body)
	}
	f.refused("UPDATE_BROKER_CONFIG black list", f.do(remoting.UpdateBrokerConfig, nil, []byte("brokerConfigPath=/x\n")),
		remoting.NoPermission, "Can not update config in black list.")
	f.ok("UPDATE_BROKER_CONFIG", f.do(remoting.UpdateBrokerConfig, nil, []byte("brokerPermission=4\nautoCreateSubscriptionGroup=false\n")))
	f.refused("GET_SUBSCRIPTIONGROUP_CONFIG with autoCreateSubscriptionGroup=false", f.do(remoting.GetSubscriptionGroupConfig,
		map[string]string{"group": "CG_unknown"}, nil), remoting.SubscriptionGroupNotExist, "No group in this broker")
	if r := invoke(t, cl, b, sendV2(topic, []byte("x"))); r.Code != remoting.NoPermission {
		t.Fatalf("send with brokerPermission=4: %d %q", r.Code, r.Remark)
	}

	// Delete the topic.
	f.ok("DELETE_TOPIC_IN_BROKER", f.do(remoting.DeleteTopicInBroker, map[string]string{"topic": topic}, nil))
	f.refused("GET_TOPIC_CONFIG deleted", f.do(remoting.GetTopicConfig, map[string]string{"topic": topic}, nil),
		remoting.TopicNotExist, "No topic in this broker. topic: AdmTopic")
}

// A request missing a required header field, or whose field does not parse,
// is answered SYSTEM_ERROR naming the field (Apache's header decoder), before
// any service runs; a heartbeat body that is not JSON is SYSTEM_ERROR too.
func TestAdminBadHeaders(t *testing.T) {
	_, br := newBrokerProcs(t)
	tbl := BrokerTable(ServicesOf(br), testutil.Logger())
	tests := []struct {
		code  int32
		ext   map[string]string
		field string
	}{
		{remoting.GetTopicStatsInfo, nil, "topic"},
		{remoting.GetConsumeStats, nil, "consumerGroup"},
		{remoting.GetConsumerConnectionList, nil, "consumerGroup"},
		{remoting.GetProducerConnectionList, nil, "producerGroup"},
		{remoting.QueryTopicConsumeByWho, nil, "topic"},
		{remoting.QueryTopicsByConsumer, nil, "group"},
		{remoting.GetTopicConfig, nil, "topic"},
		{remoting.InvokeBrokerToResetOffset, nil, "topic"},
		{remoting.InvokeBrokerToResetOffset, map[string]string{"topic": "T"}, "group"},
		{remoting.InvokeBrokerToResetOffset, map[string]string{"topic": "T", "group": "G", "timestamp": "soon"}, "timestamp"},
		{remoting.ViewMessageByID, map[string]string{"offset": "x"}, "offset"},
		{remoting.GetConsumerListByGroup, nil, "consumerGroup"},
		{remoting.UpdateAndCreateTopic, nil, "topic"},
		{remoting.UpdateAndCreateTopic, map[string]string{"topic": "T", "readQueueNums": "99999999999"}, "readQueueNums"},
		{remoting.DeleteTopicInBroker, nil, "topic"},
		{remoting.DeleteSubscriptionGroup, nil, "groupName"},
		{remoting.GetSubscriptionGroupConfig, nil, "group"},
	}
	for _, tc := range tests {
		resp := tbl.Serve(nil, remoting.NewRequest(tc.code, tc.ext, nil))
		if resp.Code != remoting.SystemError || !strings.Contains(resp.Remark, tc.field) {
			t.Errorf("code %d %v: %d %q, want SYSTEM_ERROR naming %s", tc.code, tc.ext, resp.Code, resp.Remark, tc.field)
		}
	}
	if _, err := br.Admin.TopicConfig("T"); err == nil {
		t.Error("a refused UPDATE_AND_CREATE_TOPIC created the topic")
	}
	for _, body := range []string{"{", "[1,2]"} {
		resp := tbl.Serve(nil, remoting.NewRequest(remoting.HeartBeat, nil, []byte(body)))
		if resp.Code != remoting.SystemError || !strings.HasPrefix(resp.Remark, "decode heartbeat body: ") {
			t.Errorf("heartbeat %q: %d %q", body, resp.Code, resp.Remark)
		}
	}
	resp := tbl.Serve(nil, remoting.NewRequest(remoting.UpdateAndCreateSubscription, nil, []byte("not json")))
	if resp.Code != remoting.SystemError || !strings.HasPrefix(resp.Remark, "decode subscription group config: ") {
		t.Errorf("bad group body: %d %q", resp.Code, resp.Remark)
	}
}
