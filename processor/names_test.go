package processor

import (
	"testing"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// The handlers that take a topic or group answer refused names with
// Apache's codes and remarks (5.3.3, or upstream's for groups), and nothing
// refused reaches a table.
func TestNameRefusals(t *testing.T) {
	p, br := newBrokerProcs(t)
	c := &remoting.Conn{Remote: "127.0.0.1:1"}
	create := func(topic, read, write string) *remoting.Command {
		return remoting.NewRequest(remoting.UpdateAndCreateTopic, map[string]string{"topic": topic,
			"readQueueNums": read, "writeQueueNums": write, "perm": "6"}, nil)
	}
	send := func(topic string) *remoting.Command {
		return remoting.NewRequest(remoting.SendMessageV2, map[string]string{"a": "PG", "b": topic, "c": "TBW102",
			"d": "4", "e": "0", "f": "0", "g": "1", "h": "0", "i": "", "j": "0", "k": "false", "m": "false"}, []byte("x"))
	}
	illegal := message.RemarkTopicIllegal
	tests := []struct {
		name   string
		serve  remoting.HandlerFunc
		req    *remoting.Command
		code   int32
		remark string
	}{
		{"create system topic", p.updateAndCreateTopic, create("SCHEDULE_TOPIC_XXXX", "1", "1"),
			remoting.InvalidParameter, "The topic[SCHEDULE_TOPIC_XXXX] is conflict with system topic."},
		{"create broker-name topic", p.updateAndCreateTopic, create("b", "1", "1"),
			remoting.InvalidParameter, "The topic[b] is conflict with system topic."},
		{"create ..", p.updateAndCreateTopic, create("..", "1", "1"), remoting.InvalidParameter, illegal("..")},
		{"create blank", p.updateAndCreateTopic, create(" ", "1", "1"), remoting.InvalidParameter, "The specified topic is blank."},
		{"create huge", p.updateAndCreateTopic, create("T", "8", "2147483647"), remoting.InvalidParameter,
			"The queue nums of topic[T] must be between 1 and 1024 (maxTopicQueueNums), read 8 write 2147483647."},
		{"create count beyond int32", p.updateAndCreateTopic, create("T", "8", "4294967297"), remoting.SystemError, ""},
		{"delete ..", p.deleteTopic, remoting.NewRequest(remoting.DeleteTopicInBroker, map[string]string{"topic": ".."}, nil),
			remoting.InvalidParameter, illegal("..")},
		{"delete TBW102", p.deleteTopic, remoting.NewRequest(remoting.DeleteTopicInBroker, map[string]string{"topic": "TBW102"}, nil),
			remoting.InvalidParameter, "The topic[TBW102] is conflict with system topic."},
		{"bad group", p.updateSubscriptionGroup, remoting.NewRequest(remoting.UpdateAndCreateSubscription, nil,
			[]byte(`{"groupName":"../g"}`)), remoting.InvalidParameter,
			"The specified group: ../g, contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"},
		{"send to the timer topic", p.send, send("rmq_sys_wheel_timer"), remoting.NoPermission,
			"Sending message to topic[rmq_sys_wheel_timer] is forbidden."},
		{"send to OFFSET_MOVED_EVENT", p.send, send("OFFSET_MOVED_EVENT"), remoting.NoPermission,
			"Sending message to topic[OFFSET_MOVED_EVENT] is forbidden."},
		{"send to ../x", p.send, send("../x"), remoting.InvalidParameter, illegal("../x")},
		{"send to the retry topic of ../g", p.send, send("%RETRY%../g"), remoting.InvalidParameter, illegal("%RETRY%../g")},
		{"send back of ../g", p.sendBack, remoting.NewRequest(remoting.ConsumerSendMsgBack, map[string]string{"group": "../g",
			"offset": "0", "delayLevel": "-1"}, nil), remoting.SubscriptionGroupNotExist,
			"subscription group not exist, ../g " + remoting.FAQGroupNotExist},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := tc.serve(c, tc.req)
			if resp.Code != tc.code || (tc.remark != "" && resp.Remark != tc.remark) {
				t.Fatalf("code %d remark %q, want %d %q", resp.Code, resp.Remark, tc.code, tc.remark)
			}
		})
	}
	for _, name := range br.Topics.Names() {
		if message.ValidTopicName(name) != nil {
			t.Errorf("topic %q in the table", name)
		}
	}
	if tc, _ := br.Topics.Get("SCHEDULE_TOPIC_XXXX"); tc.ReadQueueNums != 18 {
		t.Errorf("SCHEDULE_TOPIC_XXXX changed: %+v", tc)
	}
	if br.Groups.Contains("../g") {
		t.Error("group ../g in the table")
	}
}

// A heartbeat keeps its valid parts: a bad consumer group gets no retry
// topic and no registration, a bad subscription topic is dropped.
func TestHeartbeatDropsBadNames(t *testing.T) {
	p, br := newBrokerProcs(t)
	c := &remoting.Conn{Remote: "127.0.0.1:1"} // not connected: nothing may be sent to it
	gc := tables.DefaultGroupConfig("CG")
	gc.NotifyConsumerIdsChangedEnable = false
	if err := br.Groups.Put(gc); err != nil {
		t.Fatal(err)
	}
	body := `{"clientID":"c1","producerDataSet":[{"groupName":"PG"},{"groupName":"P/G"}],"consumerDataSet":[` +
		`{"groupName":"../../x","subscriptionDataSet":[{"topic":"T"}]},` +
		`{"groupName":"CG","subscriptionDataSet":[{"topic":"T","subString":"*"},{"topic":"../T","subString":"*"}]}]}`
	resp := p.heartbeat(c, remoting.NewRequest(remoting.HeartBeat, nil, []byte(body)))
	if resp.Code != remoting.Success {
		t.Fatalf("heartbeat: %d %q", resp.Code, resp.Remark)
	}
	if _, ok := br.Topics.Get("%RETRY%../../x"); ok || br.Groups.Contains("../../x") {
		t.Fatal("the bad group was created")
	}
	if _, ok := br.Topics.Get("%RETRY%CG"); !ok {
		t.Fatal("the good group's retry topic is missing")
	}
	st, ok := br.Clients.ConsumerGroup("CG")
	if !ok || len(st.Subscriptions) != 1 || st.Subscriptions["T"] == nil {
		t.Fatalf("CG registered with %+v", st.Subscriptions)
	}
	if len(br.Clients.ProducerConnections("P/G")) != 0 || len(br.Clients.ProducerConnections("PG")) != 1 {
		t.Fatal("producer groups")
	}
}
