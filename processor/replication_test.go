package processor

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	jsoniter "github.com/json-iterator/go"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/broker/pull"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/ha"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// slaveOf makes a broker configuration a slave (brokerId 1).
func slaveOf(edit func(*broker.Config)) func(*broker.Config) {
	return func(c *broker.Config) {
		c.BrokerID = 1
		c.HA.BrokerRole = ha.Slave
		if edit != nil {
			edit(c)
		}
	}
}

// A slave refuses what Apache 5.3.3's slave refuses, with its codes and
// remarks: sends and send backs before they are read (rejectRequest:
// SYSTEM_BUSY), pulls likewise unless slaveReadEnable, END_TRANSACTION
// with SLAVE_NOT_AVAILABLE, a reply message (stored like a send) with the
// store's SERVICE_NOT_AVAILABLE; nothing reaches its commit log.
func TestSlaveRefusesWrites(t *testing.T) {
	b, cl := serveBroker(t, slaveOf(nil), nil)
	if err := b.Topics.Put(tables.TopicConfig{TopicName: "T", ReadQueueNums: 1, WriteQueueNums: 1,
		Perm: message.PermRead | message.PermWrite}); err != nil {
		t.Fatal(err)
	}
	if err := b.Groups.Put(tables.DefaultGroupConfig("G")); err != nil {
		t.Fatal(err)
	}
	for _, code := range []int32{remoting.SendMessageV2, remoting.SendBatchMessage, remoting.SendMessage} {
		req := sendV2("T", []byte("x"))
		req.Code = code
		expectAnswer(t, invoke(t, cl, b, req), remoting.SystemBusy, rejectRemark)
	}
	back := remoting.NewRequest(remoting.ConsumerSendMsgBack, map[string]string{"group": "G", "offset": "0",
		"delayLevel": "0", "originMsgId": "X", "originTopic": "T"}, nil)
	expectAnswer(t, invoke(t, cl, b, back), remoting.SystemBusy, rejectRemark)
	expectAnswer(t, invoke(t, cl, b, pullReq("T", 0, pull.FlagSubscription, "*")), remoting.SystemBusy, rejectRemark)

	reply := sendV2("T", []byte("x"))
	reply.Code = remoting.SendReplyMessageV2
	resp := invoke(t, cl, b, reply)
	if resp.Code != remoting.ServiceNotAvailable || !strings.Contains(resp.Remark, "messages are put to the slave") {
		t.Errorf("reply on a slave: %d %q", resp.Code, resp.Remark)
	}
	end := remoting.NewRequest(remoting.EndTransaction, map[string]string{"producerGroup": "PG",
		"tranStateTableOffset": "0", "commitLogOffset": "0", "commitOrRollback": "8", "msgId": "U-1"}, nil)
	expectAnswer(t, invoke(t, cl, b, end), remoting.SlaveNotAvailable, "")
	if n := b.Store.MaxPhyOffset(); n != 0 {
		t.Errorf("a slave's commit log grew to %d", n)
	}
	// Topic and group changes (Apache 4.9's validateSlave): the slave's
	// tables are its master's.
	const slaveAdmin = "Can't modify topic or subscription group from slave broker, please execute it from master broker."
	create := remoting.NewRequest(remoting.UpdateAndCreateTopic, map[string]string{"topic": "U", "defaultTopic": "TBW102",
		"readQueueNums": "1", "writeQueueNums": "1", "perm": "6", "topicFilterType": "SINGLE_TAG"}, nil)
	expectAnswer(t, invoke(t, cl, b, create), remoting.SystemError, slaveAdmin)
	del := remoting.NewRequest(remoting.DeleteTopicInBroker, map[string]string{"topic": "T"}, nil)
	expectAnswer(t, invoke(t, cl, b, del), remoting.SystemError, slaveAdmin)
	delGroup := remoting.NewRequest(remoting.DeleteSubscriptionGroup, map[string]string{"groupName": "G"}, nil)
	expectAnswer(t, invoke(t, cl, b, delGroup), remoting.SystemError, slaveAdmin)
	if _, ok := b.Topics.Get("T"); !ok || !b.Groups.Contains("G") {
		t.Error("a slave's table changed")
	}
}

// With slaveReadEnable a slave serves pulls; the answer suggests the
// group's brokerId (0: the master) for the next one.
func TestSlaveReadEnable(t *testing.T) {
	b, cl := serveBroker(t, slaveOf(func(c *broker.Config) { c.SlaveReadEnable = true }), nil)
	if err := b.Topics.Put(tables.TopicConfig{TopicName: "T", ReadQueueNums: 1, WriteQueueNums: 1,
		Perm: message.PermRead | message.PermWrite}); err != nil {
		t.Fatal(err)
	}
	if err := b.Groups.Put(tables.DefaultGroupConfig("G")); err != nil {
		t.Fatal(err)
	}
	resp := invoke(t, cl, b, pullReq("T", 0, pull.FlagSubscription, "*"))
	if resp.Code != remoting.PullNotFound || resp.Str("suggestWhichBrokerId") != "0" {
		t.Fatalf("pull on a readable slave: %d %q %v", resp.Code, resp.Remark, resp.ExtFields)
	}
}

// A SYNC_MASTER without a usable slave stores the message and answers
// SLAVE_NOT_AVAILABLE at once, with the whole send header (msgId,
// queueOffset), as Apache's handlePutMessageResult; WAIT=false is answered
// SEND_OK, and an ASYNC_MASTER does not wait at all.
func TestSyncMasterWithoutSlave(t *testing.T) {
	b, cl := serveBroker(t, func(c *broker.Config) { c.HA.BrokerRole = ha.SyncMaster }, nil)
	resp := invoke(t, cl, b, sendV2("T", []byte("x")))
	if resp.Code != remoting.SlaveNotAvailable || resp.Str("msgId") == "" || resp.Str("queueOffset") != "0" ||
		resp.Str("MSG_REGION") == "" {
		t.Fatalf("SYNC_MASTER without slave: %d %q %v", resp.Code, resp.Remark, resp.ExtFields)
	}
	noWait := sendV2("T", []byte("y"))
	noWait.Set("i", string(message.AppendProperty(nil, message.PropWaitStoreMsgOK, "false")))
	if resp := invoke(t, cl, b, noWait); resp.Code != remoting.Success || resp.Str("queueOffset") != "1" {
		t.Fatalf("WAIT=false: %d %q %v", resp.Code, resp.Remark, resp.ExtFields)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return b.Store.MaxOffset("T", 0) == 2 })

	async, acl := serveBroker(t, nil, nil)
	if resp := invoke(t, acl, async, sendV2("T", []byte("x"))); resp.Code != remoting.Success {
		t.Fatalf("ASYNC_MASTER: %d %q", resp.Code, resp.Remark)
	}
}

// A slave copies its master's metadata over Remoting (SlaveSynchronize):
// topics and groups (replaced, at the master's data version), consumer
// offsets (merged) and delay offsets; the master answers
// GET_ALL_CONSUMER_OFFSET and GET_ALL_DELAY_OFFSET as Apache encodes them.
func TestSlaveSynchronize(t *testing.T) {
	m, mcl := svcBroker(t)
	if err := m.Admin.CommitOffset(tables.QueueOffsetRequest{Group: "G", Topic: "T", QueueID: 1, Offset: 42}); err != nil {
		t.Fatal(err)
	}
	resp := invoke(t, mcl, m, remoting.NewRequest(remoting.GetAllConsumerOffset, nil, nil))
	// fastjson's form: queue ids unquoted.
	if resp.Code != remoting.Success || !strings.HasPrefix(string(resp.Body), `{"offsetTable":{"T@G":{1:42}},"dataVersion":{`) {
		t.Fatalf("GET_ALL_CONSUMER_OFFSET: %d %s", resp.Code, resp.Body)
	}
	resp = invoke(t, mcl, m, remoting.NewRequest(remoting.GetAllDelayOffset, nil, nil))
	if resp.Code != remoting.Success || !strings.HasPrefix(string(resp.Body), `{"offsetTable":{`) ||
		!strings.Contains(string(resp.Body), `"dataVersion":{`) {
		t.Fatalf("GET_ALL_DELAY_OFFSET: %d %s", resp.Code, resp.Body)
	}

	resp = invoke(t, mcl, m, remoting.NewRequest(remoting.GetAllMessageRequestMode, nil, nil))
	expectCode(t, resp, remoting.Success)
	if string(resp.Body) != `{"messageRequestModeMap":{}}` {
		t.Errorf("GET_ALL_MESSAGE_REQUEST_MODE: %s", resp.Body)
	}

	s, _ := serveBroker(t, slaveOf(nil), nil)
	if err := s.Topics.Put(tables.TopicConfig{TopicName: "OnlyOnSlave", ReadQueueNums: 1, WriteQueueNums: 1,
		Perm: message.PermRead | message.PermWrite}); err != nil {
		t.Fatal(err)
	}
	if err := s.Admin.CommitOffset(tables.QueueOffsetRequest{Group: "G2", Topic: "OnlyOnSlave", QueueID: 0, Offset: 7}); err == nil {
		t.Fatal("commit for an unknown group accepted")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Role.SyncFromMaster(ctx, m.Config().Addr()); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Topics.Get("T"); !ok {
		t.Error("topic T not synced")
	}
	if _, ok := s.Topics.Get("OnlyOnSlave"); ok {
		t.Error("a topic the master lacks survived the sync")
	}
	if !s.Groups.Contains("G") {
		t.Error("group G not synced")
	}
	if off, ok := s.Offsets.Query("G", "T", 1); !ok || off != 42 {
		t.Errorf("offset T@G/1 on the slave: %d %t", off, ok)
	}
	if got, want := s.Admin.AllTopicConfig().DataVersion, m.Admin.AllTopicConfig().DataVersion; got != want {
		t.Errorf("slave topic data version %+v, master's %+v", got, want)
	}
	// A dead master: the sync fails and changes nothing.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	if err := s.Role.SyncFromMaster(ctx2, "127.0.0.1:1"); err == nil {
		t.Error("sync from a dead master succeeded")
	}
	if _, ok := s.Topics.Get("T"); !ok {
		t.Error("failed sync dropped topic T")
	}
}

// GET_BROKER_CONFIG shows the replication keys, the role by name.
func TestBrokerConfigShowsRole(t *testing.T) {
	b, cl := serveBroker(t, slaveOf(func(c *broker.Config) { c.BrokerIP2 = "127.0.0.2" }), nil)
	resp := invoke(t, cl, b, remoting.NewRequest(remoting.GetBrokerConfig, nil, nil))
	body := string(resp.Body)
	for _, kv := range []string{"brokerRole=SLAVE", "brokerId=1", "brokerIP2=127.0.0.2",
		"haListenPort=" + strconv.Itoa(b.Config().HA.HAListenPort), "slaveReadEnable=false", "slaveTimeout=3000"} {
		if !strings.Contains(body, kv+"\n") {
			t.Errorf("GET_BROKER_CONFIG lacks %q", kv)
		}
	}
}

// GET_BROKER_RUNTIME_INFO shows a slave inactive (Apache: its special
// services do not run), GET_BROKER_HA_STATUS a master with its slaves or a
// slave with its master (Apache 5.x's HARuntimeInfo).
func TestSlaveRuntimeInfo(t *testing.T) {
	for _, slave := range []bool{false, true} {
		edit := func(*broker.Config) {}
		if slave {
			edit = slaveOf(nil)
		}
		b, cl := serveBroker(t, edit, nil)
		resp := invoke(t, cl, b, remoting.NewRequest(remoting.GetBrokerRuntimeInfo, nil, nil))
		var kv struct {
			Table map[string]string `json:"table"`
		}
		if err := json.Unmarshal(resp.Body, &kv); err != nil {
			t.Fatal(err)
		}
		if got := kv.Table["brokerActive"]; got != strconv.FormatBool(!slave) {
			t.Errorf("slave %t: brokerActive %q", slave, got)
		}
		resp = invoke(t, cl, b, remoting.NewRequest(remoting.GetBrokerHAStatus, nil, nil))
		var info struct {
			Master           bool                  `json:"master"`
			HAConnectionInfo []jsoniter.RawMessage `json:"haConnectionInfo"`
			Client           struct {
				MasterAddr *string `json:"masterAddr"`
			} `json:"haClientRuntimeInfo"`
		}
		if resp.Code != remoting.Success || json.Unmarshal(resp.Body, &info) != nil || info.Master == slave ||
			info.Client.MasterAddr == nil {
			t.Errorf("slave %t: GET_BROKER_HA_STATUS %d %s", slave, resp.Code, resp.Body)
		}
	}
}

// With slaveReadEnable a pull answer suggests the group's
// whichBrokerWhenConsumeSlowly after a read far behind the commit log end
// (accessMessageInMemoryMaxRatio 0 here: every read is), its brokerId
// otherwise; without it, always the master.
func TestSuggestWhichBrokerID(t *testing.T) {
	for _, enable := range []bool{false, true} {
		b, cl := serveBroker(t, func(c *broker.Config) { c.SlaveReadEnable = enable }, nil)
		if err := b.Topics.Put(tables.TopicConfig{TopicName: "T", ReadQueueNums: 1, WriteQueueNums: 1,
			Perm: message.PermRead | message.PermWrite}); err != nil {
			t.Fatal(err)
		}
		gc := tables.DefaultGroupConfig("G")
		gc.BrokerID, gc.WhichBrokerWhenConsumeSlowly = 2, 3
		if err := b.Groups.Put(gc); err != nil {
			t.Fatal(err)
		}
		empty := invoke(t, cl, b, pullReq("T", 0, pull.FlagSubscription, "*"))
		putBig(t, b, "T", 0, 2)
		found := invoke(t, cl, b, pullReq("T", 0, pull.FlagSubscription, "*"))
		wantEmpty, wantFound := "0", "0"
		if enable {
			wantEmpty, wantFound = "2", "3"
		}
		if empty.Str("suggestWhichBrokerId") != wantEmpty || found.Code != remoting.Success ||
			found.Str("suggestWhichBrokerId") != wantFound {
			t.Errorf("slaveReadEnable %t: empty queue suggests %q, found %d suggests %q; want %s, %s", enable,
				empty.Str("suggestWhichBrokerId"), found.Code, found.Str("suggestWhichBrokerId"), wantEmpty, wantFound)
		}
	}
}

// The VIP channel (fastListenPort, Apache's listenPort-2) serves the same
// requests: an Apache slave's metadata sync asks its master there.
func TestVIPChannel(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	_, cl := serveBroker(t, func(c *broker.Config) { c.FastListenPort = port }, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cl.Invoke(ctx, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		remoting.NewRequest(remoting.GetAllConsumerOffset, nil, nil))
	if err != nil || resp.Code != remoting.Success || !strings.HasPrefix(string(resp.Body), `{"offsetTable":{`) {
		t.Fatalf("GET_ALL_CONSUMER_OFFSET on the VIP channel: %v %v", resp, err)
	}
}
