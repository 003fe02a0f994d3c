package broker

import (
	"errors"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker/admin"
	"github.com/rocketgo/rocketgo/broker/send"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/remoting/remotingtest"
)

// Maps keyed by MessageQueue must be in fastjson's object-key form, which the
// Java clients and the Go client's reset-offset parser read.
func TestMessageQueueAppendJSON(t *testing.T) {
	tests := []struct {
		name string
		mq   tables.MessageQueue
		want string
	}{
		{"plain", tables.MessageQueue{BrokerName: "broker-a", Topic: "T", QueueID: 3}, `{"brokerName":"broker-a","queueId":3,"topic":"T"}`},
		{"retry topic", tables.MessageQueue{BrokerName: "b", Topic: "%RETRY%cg"}, `{"brokerName":"b","queueId":0,"topic":"%RETRY%cg"}`},
		{"quote escaped", tables.MessageQueue{BrokerName: `b"x`, Topic: "T", QueueID: 1}, `{"brokerName":"b\"x","queueId":1,"topic":"T"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(tc.mq.AppendJSON(nil)); got != tc.want {
				t.Fatalf("AppendJSON = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestRuntimeText(t *testing.T) {
	d := 26*time.Hour + 3*time.Minute + 4*time.Second
	if got, want := runtimeText(d), "[ 1 days, 2 hours, 3 minutes, 4 seconds ]"; got != want {
		t.Fatalf("runtimeText = %q, want %q", got, want)
	}
}

// putN stores n messages on queue q of topic and waits until they are
// dispatched.
func putN(t *testing.T, b *Broker, topic string, q int32, n int) {
	t.Helper()
	base := b.Store.MaxOffset(topic, q)
	for i := 0; i < n; i++ {
		m := testMsg(topic, "")
		m.QueueID = q
		if _, err := b.Store.Put(m); err != nil {
			t.Fatal(err)
		}
	}
	if !waitFor(t, 5*time.Second, func() bool { return b.Store.MaxOffset(topic, q) == base+int64(n) }) {
		t.Fatalf("%d messages not dispatched to %s-%d", n, topic, q)
	}
}

// Topic services: Apache's refusals (code and remark), an update equal to
// the table changes nothing, a delete takes the offsets with it.
func TestTopicServices(t *testing.T) {
	b, _ := testBroker(t, t.TempDir(), nil)
	rw := int32(message.PermRead | message.PermWrite)
	// The name rule's refusal is names.go's InvalidError (INVALID_PARAMETER in processor/errors.go).
	if err := b.Admin.UpdateTopic(tables.TopicConfig{TopicName: "bad topic", ReadQueueNums: 1, WriteQueueNums: 1, Perm: rw}); !errors.Is(err, message.ErrTopicInvalid) ||
		err.Error() != message.RemarkTopicIllegal("bad topic") {
		t.Fatalf("bad name: %v", err)
	}
	remotingtest.WantRefusal(t, b.Admin.UpdateTopic(tables.TopicConfig{TopicName: "SCHEDULE_TOPIC_XXXX", ReadQueueNums: 1, WriteQueueNums: 1, Perm: rw}),
		remoting.InvalidParameter, "The topic[SCHEDULE_TOPIC_XXXX] is conflict with system topic.")
	remotingtest.WantRefusal(t, b.Admin.UpdateTopic(tables.TopicConfig{TopicName: "T", ReadQueueNums: 0, WriteQueueNums: 1, Perm: rw}),
		remoting.InvalidParameter, "The queue nums of topic[T] must be between 1 and 1024 (maxTopicQueueNums), read 0 write 1.")
	_, err := b.Admin.TopicConfig("T")
	remotingtest.WantRefusal(t, err, remoting.TopicNotExist, "No topic in this broker. topic: T")

	tc := tables.TopicConfig{TopicName: "T", ReadQueueNums: 2, WriteQueueNums: 2, Perm: rw}
	if err := b.Admin.UpdateTopic(tc); err != nil {
		t.Fatal(err)
	}
	v := b.Admin.AllTopicConfig().DataVersion
	if err := b.Admin.UpdateTopic(tc); err != nil {
		t.Fatal(err)
	}
	if got := b.Admin.AllTopicConfig().DataVersion; got != v {
		t.Fatalf("an unchanged update moved the data version %+v -> %+v", v, got)
	}
	tc.WriteQueueNums = 1
	if err := b.Admin.UpdateTopic(tc); err != nil {
		t.Fatal(err)
	}
	all := b.Admin.AllTopicConfig()
	if all.DataVersion.Counter != v.Counter+1 || all.Topics["T"].WriteQueueNums != 1 {
		t.Fatalf("update: version %+v -> %+v, table %+v", v, all.DataVersion, all.Topics["T"])
	}
	if got, err := b.Admin.TopicConfig("T"); err != nil || got.WriteQueueNums != 1 {
		t.Fatalf("tables.TopicConfig = %+v, %v", got, err)
	}

	b.Offsets.Commit("G", "T", 0, 1)
	remotingtest.WantRefusal(t, b.Admin.DeleteTopic("  "), remoting.InvalidParameter, message.RemarkTopicBlank)
	remotingtest.WantRefusal(t, b.Admin.DeleteTopic(message.AutoCreateTopicKey), remoting.InvalidParameter, "The topic[TBW102] is conflict with system topic.")
	if err := b.Admin.DeleteTopic("T"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Admin.TopicConfig("T"); err == nil {
		t.Fatal("topic still there after DeleteTopic")
	}
	if _, ok := b.Offsets.Query("G", "T", 0); ok {
		t.Fatal("offsets kept after DeleteTopic")
	}
}

// Group services: the retry-queue bound, deletion with and without the
// group's offsets.
func TestGroupServices(t *testing.T) {
	b, _ := testBroker(t, t.TempDir(), nil)
	remotingtest.WantRefusal(t, b.Admin.UpdateGroup(tables.GroupConfig{GroupName: "G", RetryQueueNums: -1}), remoting.InvalidParameter,
		"The retryQueueNums of group[G] must be between 0 and 1024 (maxTopicQueueNums), got -1.")
	for _, g := range []string{"G1", "G2"} {
		if err := b.Admin.UpdateGroup(tables.DefaultGroupConfig(g)); err != nil {
			t.Fatal(err)
		}
		b.Offsets.Commit(g, "T", 0, 5)
	}
	if tbl := b.Admin.AllGroupConfig(); tbl.Groups["G1"] == nil || tbl.Groups["G2"] == nil {
		t.Fatalf("AllGroupConfig = %v", tbl.Groups)
	}
	if gc, err := b.Admin.GroupConfig("G1"); err != nil || gc.GroupName != "G1" {
		t.Fatalf("tables.GroupConfig(G1) = %+v, %v", gc, err)
	}
	if gc, err := b.Admin.GroupConfig("auto"); err != nil || gc.GroupName != "auto" { // autoCreateSubscriptionGroup
		t.Fatalf("tables.GroupConfig(auto) = %+v, %v", gc, err)
	}
	if _, err := b.UpdateConfig([]byte("autoCreateSubscriptionGroup=false")); err != nil {
		t.Fatal(err)
	}
	_, err := b.Admin.GroupConfig("unknown")
	remotingtest.WantRefusal(t, err, remoting.SubscriptionGroupNotExist, "No group in this broker")
	b.Admin.DeleteGroup("G1", false)
	b.Admin.DeleteGroup("G2", true)
	b.Admin.DeleteGroup("never-there", true) // succeeds, as in Apache
	if tbl := b.Admin.AllGroupConfig(); tbl.Groups["G1"] != nil || tbl.Groups["G2"] != nil {
		t.Fatalf("AllGroupConfig after delete = %v", tbl.Groups)
	}
	if _, ok := b.Offsets.Query("G1", "T", 0); !ok {
		t.Fatal("cleanOffset=false dropped the offsets")
	}
	if _, ok := b.Offsets.Query("G2", "T", 0); ok {
		t.Fatal("cleanOffset=true kept the offsets")
	}
}

// Client services and the statistics that read them: a heartbeat registers
// what passes the name rules (the rest dropped and counted), creates the
// retry topic; connections, ids, consume stats and who-consumes see it;
// unregistering removes it; the refusals carry Apache's codes and remarks.
func TestClientAndStatsServices(t *testing.T) {
	// Apache 4.x's reset path (the consumers told); broker/admin's server-side reset is
	// the processor tests'.
	b, _ := testBroker(t, t.TempDir(), func(c *Config) { c.UseServerSideResetOffset = false })
	rw := int32(message.PermRead | message.PermWrite)
	for _, tp := range []string{"T", "U"} {
		if err := b.Admin.UpdateTopic(tables.TopicConfig{TopicName: tp, ReadQueueNums: 2, WriteQueueNums: 2, Perm: rw}); err != nil {
			t.Fatal(err)
		}
	}
	// No NOTIFY_CONSUMER_IDS_CHANGED: the test's connection has no socket.
	gc := tables.DefaultGroupConfig("CG")
	gc.NotifyConsumerIdsChangedEnable = false
	if err := b.Admin.UpdateGroup(gc); err != nil {
		t.Fatal(err)
	}
	c := &remoting.Conn{ID: 7, Remote: "127.0.0.1:5555"}
	res := b.Members.Heartbeat(c, tables.Heartbeat{ClientID: "cid", Language: remoting.LanguageCode(0), Version: 409,
		Producers: []string{"PG", "bad/pg"},
		Consumers: []tables.HeartbeatConsumer{
			{Group: "CG", ConsumeType: "CONSUME_PASSIVELY", MessageModel: "CLUSTERING", Subscriptions: []tables.SubscriptionData{
				{Topic: "T", SubString: "A || B", ExpressionType: "TAG", SubVersion: 1},
				{Topic: "U", SubString: "a > 1", ExpressionType: "SQL92"},
				{Topic: "bad topic", SubString: "*"}}},
			{Group: "bad/cg"},
		}})
	if res.Consumers != 1 || res.Producers != 1 || res.Dropped != 3 || len(res.Named) != 3 {
		t.Fatalf("heartbeat result %+v", res)
	}
	if _, err := b.Admin.TopicConfig(message.RetryGroupPrefix + "CG"); err != nil {
		t.Fatalf("retry topic: %v", err)
	}
	if ids, err := b.Members.ConsumerIDs("CG"); err != nil || len(ids) != 1 || ids[0] != "cid" {
		t.Fatalf("ConsumerIDs = %v, %v", ids, err)
	}
	_, err := b.Members.ConsumerIDs("none")
	remotingtest.WantRefusal(t, err, remoting.SystemError, "no consumer for this group, none")
	st, err := b.Admin.ConsumerConnections("CG")
	if err != nil || len(st.Connections) != 1 || st.Connections[0].ClientAddr != c.Remote || len(st.Subscriptions) != 2 ||
		len(st.Subscriptions["T"].Tags) != 2 || st.Subscriptions["U"].ExpressionType != "SQL92" {
		t.Fatalf("ConsumerConnections = %+v, %v", st, err)
	}
	_, err = b.Admin.ConsumerConnections("none")
	remotingtest.WantRefusal(t, err, remoting.ConsumerNotOnline, "the consumer group[none] not online")
	if conns, err := b.Admin.ProducerConnections("PG"); err != nil || len(conns) != 1 || conns[0].ClientID != "cid" {
		t.Fatalf("ProducerConnections = %v, %v", conns, err)
	}
	_, err = b.Admin.ProducerConnections("bad/pg")
	remotingtest.WantRefusal(t, err, remoting.SystemError, "the producer group[bad/pg] not exist")

	// Stats: offsets committed on T (subscribed) and V (not subscribed).
	putN(t, b, "T", 0, 3)
	b.Offsets.Commit("CG", "T", 0, 2)
	b.Offsets.Commit("CG", "V", 0, 1)
	qs, err := b.Admin.TopicStats("T")
	if err != nil || len(qs) != 2 || qs[0].MaxOffset != 3 || qs[0].LastUpdateTimestamp == 0 || qs[1].MaxOffset != 0 {
		t.Fatalf("TopicStats = %+v, %v", qs, err)
	}
	_, err = b.Admin.TopicStats("none")
	remotingtest.WantRefusal(t, err, remoting.TopicNotExist, "topic[none] not exist")
	cs := b.Admin.ConsumeStats(admin.ConsumeStatsRequest{Group: "CG"}) // V is not subscribed by the online group
	if len(cs) != 2 || cs[0].Queue.Topic != "T" || cs[0].BrokerOffset != 3 || cs[0].ConsumerOffset != 2 || cs[0].LastTimestamp == 0 {
		t.Fatalf("ConsumeStats = %+v", cs)
	}
	if cs := b.Admin.ConsumeStats(admin.ConsumeStatsRequest{Group: "CG", Topics: []string{"T", "T", "", "U", "none"}}); len(cs) != 4 {
		t.Fatalf("ConsumeStats of a list = %+v", cs)
	}
	if got := b.Admin.TopicConsumers("T"); len(got) != 1 || got[0] != "CG" {
		t.Fatalf("TopicConsumers = %v", got)
	}
	if ct := b.Admin.ConsumerTopics("CG"); ct.BrokerAddr != "127.0.0.1:10911" || len(ct.Topics) != 2 {
		t.Fatalf("admin.ConsumerTopics = %+v", ct)
	}
	if ct := b.Admin.ConsumerTopics("none"); ct.Topics == nil || len(ct.Topics) != 0 {
		t.Fatalf("admin.ConsumerTopics of none = %+v", ct)
	}

	// Reset: Apache's refusals in its order.
	_, err = b.Admin.ResetOffset(admin.ResetOffsetRequest{Topic: "none", Group: "CG", Timestamp: -1})
	remotingtest.WantRefusal(t, err, remoting.TopicNotExist, "[reset-offset] reset offset failed, no topic in this broker. topic=none")
	_, err = b.Admin.ResetOffset(admin.ResetOffsetRequest{Topic: "T", Group: "CG", Timestamp: -1})
	remotingtest.WantRefusal(t, err, remoting.SystemError, "THe consumer group <CG> not exist")

	// Messages by offset.
	if rec, err := b.Admin.ViewMessage(0); err != nil || len(rec) == 0 {
		t.Fatalf("ViewMessage(0) = %d bytes, %v", len(rec), err)
	}
	_, err = b.Admin.ViewMessage(1 << 40)
	remotingtest.WantRefusal(t, err, remoting.SystemError, "can not find message by the offset, 1099511627776")

	// Puts are counted by the send path, as Apache's BROKER_PUT_NUMS; rates
	// are left out until 10 s of samples exist.
	if err := b.Sends.Send(sendReq("T", "", "counted"), &send.Result{}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, func() bool { return b.Store.MaxPhyOffset() == b.Store.DispatchedPhyOffset() })
	ri := b.RuntimeInfo()
	if ri["msgPutTotalTodayNow"] != "1" || ri["brokerVersion"] == "" || ri["earliestMessageTimeStamp"] == "-1" ||
		ri["putTps"] != "  " || ri["dispatchBehindBytes"] != "0" {
		t.Fatalf("RuntimeInfo = %v", ri)
	}
	// A put to a system topic counts in the store's totals, not in the
	// day's (Apache's BROKER_PUT_NUMS_WITHOUT_SYSTEM_TOPIC).
	b.Stats.In("RMQ_SYS_TRACE_TOPIC", 0, 1, 100)
	if ri = b.RuntimeInfo(); ri["msgPutTotalTodayNow"] != "1" || ri["putMessageTimesTotal"] != "2" {
		t.Fatalf("after a system topic's put: msgPutTotalTodayNow %s putMessageTimesTotal %s",
			ri["msgPutTotalTodayNow"], ri["putMessageTimesTotal"])
	}

	b.Members.UnregisterClient(c, "PG", "CG")
	if _, err := b.Members.ConsumerIDs("CG"); err == nil {
		t.Fatal("consumer still registered after UnregisterClient")
	}
	if _, err := b.Admin.ProducerConnections("PG"); err == nil {
		t.Fatal("producer still registered after UnregisterClient")
	}
	// Every member gone: a reset has nobody to tell.
	b.Offsets.Commit("CG", "T", 1, 0)
	_, err = b.Admin.ResetOffset(admin.ResetOffsetRequest{Topic: "T", Group: "CG", Timestamp: -1})
	remotingtest.WantRefusal(t, err, remoting.ConsumerNotOnline, "Consumer not online, so can not reset offset, Group: CG Topic: T Timestamp: -1")
}
