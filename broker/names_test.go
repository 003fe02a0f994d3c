package broker

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
)

func TestSystemTopics(t *testing.T) {
	topics := newTopics(filepath.Join(t.TempDir(), "topics.json"), 1024, func() {})
	cfg := DefaultConfig()
	cfg.BrokerClusterName, cfg.BrokerName = "C1", "host.example.com"
	for _, tc := range systemTopics(&cfg) {
		topics.putSystem(tc)
	}
	for _, name := range []string{"SCHEDULE_TOPIC_XXXX", "TBW102", "RMQ_SYS_TRANS_HALF_TOPIC", "RMQ_SYS_TRANS_OP_HALF_TOPIC",
		"rmq_sys_wheel_timer", "rmq_sys_anything", "BenchmarkTest", "SELF_TEST_TOPIC", "C1", "C1_REPLY_TOPIC", "host.example.com"} {
		if !topics.IsSystem(name) {
			t.Errorf("%s is a system topic", name)
		}
	}
	for _, name := range []string{"TopicTest", "%RETRY%g", "C2"} {
		if topics.IsSystem(name) {
			t.Errorf("%s is no system topic", name)
		}
	}
	if tc, _ := topics.Get("host.example.com"); !tc.NameInvalid() {
		t.Error("a broker-name topic with a dot keeps its name but is marked invalid for sends")
	}
	for _, name := range []string{message.ScheduleTopic, message.TimerTopic, message.SelfTestTopic, message.OffsetMovedEvent, message.TransHalfTopic} {
		if !message.NotAllowedSend(name) {
			t.Errorf("sends to %s must be refused", name)
		}
	}
	if tc, _ := topics.Get(message.ScheduleTopic); !tc.SendRefused() {
		t.Error("SCHEDULE_TOPIC_XXXX in the table must carry the send refusal")
	}
}

func TestTopicsRefuseBadNamesAndQueueNums(t *testing.T) {
	topics := newTopics(filepath.Join(t.TempDir(), "topics.json"), 64, func() {})
	for _, tc := range []TopicConfig{
		{TopicName: "..", ReadQueueNums: 1, WriteQueueNums: 1},
		{TopicName: "a/b", ReadQueueNums: 1, WriteQueueNums: 1},
		{TopicName: "T", ReadQueueNums: 1, WriteQueueNums: 2147483647},
		{TopicName: "T", ReadQueueNums: 65, WriteQueueNums: 1},
		{TopicName: "T", ReadQueueNums: 0, WriteQueueNums: 1},
		{TopicName: "T", ReadQueueNums: 1, WriteQueueNums: -1},
	} {
		if err := topics.Put(tc); err == nil {
			t.Errorf("Put(%s r%d w%d) accepted", tc.TopicName, tc.ReadQueueNums, tc.WriteQueueNums)
		}
		if _, _, err := topics.CreateIfAbsent(tc); err == nil {
			t.Errorf("CreateIfAbsent(%s r%d w%d) accepted", tc.TopicName, tc.ReadQueueNums, tc.WriteQueueNums)
		}
	}
	if n := len(topics.Names()); n != 0 {
		t.Fatalf("%d topics in the table", n)
	}
	if err := topics.Put(TopicConfig{TopicName: "T", ReadQueueNums: 64, WriteQueueNums: 64}); err != nil {
		t.Fatal(err)
	}
	// Auto-creation from a template with more queues than the bound.
	topics.putSystem(TopicConfig{TopicName: "BIG", ReadQueueNums: 128, WriteQueueNums: 128, Perm: 7})
	tc, err := topics.AutoCreate("Auto", "BIG", 1000)
	if err != nil || tc.ReadQueueNums != 64 || tc.WriteQueueNums != 64 {
		t.Fatalf("auto-created %+v %v, want 64 queues", tc, err)
	}
	if _, err := topics.AutoCreate("a/b", "BIG", 4); !errors.Is(err, message.ErrTopicInvalid) {
		t.Fatalf("auto-create of a/b: %v", err)
	}
}

func TestGroupsRefuseBadNames(t *testing.T) {
	groups := newGroups(filepath.Join(t.TempDir(), "subscriptionGroup.json"), true, 64)
	for _, name := range []string{"../../../tmp/x", "", "g\x01", strings.Repeat("g", 121)} {
		if _, ok := groups.Get(name); ok {
			t.Errorf("Get(%q) auto-created it", name)
		}
		if err := groups.Put(DefaultGroupConfig(name)); !errors.Is(err, message.ErrGroupInvalid) {
			t.Errorf("Put(%q) = %v", name, err)
		}
	}
	gc := DefaultGroupConfig("G")
	gc.RetryQueueNums = 2147483647
	if err := groups.Put(gc); !errors.Is(err, message.ErrQueueNumsInvalid) {
		t.Errorf("retryQueueNums 2147483647: %v", err)
	}
	gc.RetryQueueNums = -1
	if err := groups.Put(gc); !errors.Is(err, message.ErrQueueNumsInvalid) {
		t.Errorf("retryQueueNums -1: %v", err)
	}
	if _, ok := groups.Get("G"); !ok {
		t.Error("a valid group is auto-created")
	}
}

// Files written by anyone (an older rocketgo hit by the attacks, a hand
// edit): bad names are skipped, out-of-bound counts lowered, the rest loads.
func TestLoadSkipsBadEntries(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "topics.json"), `{"dataVersion":{"counter":2},"topicConfigTable":{`+
		`"ok":{"readQueueNums":4,"writeQueueNums":4,"perm":6},`+
		`"../../x":{"readQueueNums":1,"writeQueueNums":1,"perm":6},`+
		`"..":{"readQueueNums":1,"writeQueueNums":1,"perm":6},`+
		`"huge":{"readQueueNums":2147483647,"writeQueueNums":2147483647,"perm":6},`+
		`"neg":{"readQueueNums":-1,"writeQueueNums":1,"perm":6},`+
		`"host.example.com":{"readQueueNums":1,"writeQueueNums":1,"perm":7}}}`)
	topics := newTopics(filepath.Join(dir, "topics.json"), 1024, func() {})
	topics.putSystem(TopicConfig{TopicName: "host.example.com", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 1})
	if err := topics.load(testutil.Logger()); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(topics.Names(), ","); got != "host.example.com,huge,ok" {
		t.Fatalf("topics %s", got)
	}
	if tc, _ := topics.Get("huge"); tc.ReadQueueNums != 1024 || tc.WriteQueueNums != 1024 {
		t.Fatalf("huge: %+v", tc)
	}
	if tc, _ := topics.Get("host.example.com"); tc.Perm != 7 {
		t.Fatalf("the broker-name topic from the file: %+v", tc)
	}

	writeFile(t, filepath.Join(dir, "subscriptionGroup.json"), `{"subscriptionGroupTable":{`+
		`"G":{"retryQueueNums":1,"consumeEnable":true},"../../../tmp/x":{"retryQueueNums":1},`+
		`"g\u0001":{"retryQueueNums":1},"Big":{"retryQueueNums":99999}}}`)
	groups := newGroups(filepath.Join(dir, "subscriptionGroup.json"), false, 1024)
	if err := groups.load(testutil.Logger()); err != nil {
		t.Fatal(err)
	}
	if !groups.Contains("G") || groups.Contains("../../../tmp/x") || groups.Contains("g\x01") {
		t.Fatal("bad groups loaded")
	}
	if gc, _ := groups.Get("Big"); gc.RetryQueueNums != 1024 {
		t.Fatalf("Big: %+v", gc)
	}

	writeFile(t, filepath.Join(dir, "consumerOffset.json"), `{"offsetTable":{"T@G":{0:5,1:6,2147483647:7,-1:8},`+
		`"T@g\u0001":{0:1},"../x@G":{0:1},"nokey":{0:1}}}`)
	offsets := newOffsets(filepath.Join(dir, "consumerOffset.json"), 1024)
	if err := offsets.load(testutil.Logger()); err != nil {
		t.Fatal(err)
	}
	if got := offsets.Table("G", "T"); len(got) != 2 || got[0] != 5 || got[1] != 6 {
		t.Fatalf("T@G: %v", got)
	}
	if len(offsets.table) != 1 {
		t.Fatalf("offset keys %v", offsets.table)
	}
}

// A name that slipped into the offsets table must still be written as JSON
// (strconv.AppendQuote wrote \x01, which no JSON reader takes).
func TestOffsetsFileIsJSON(t *testing.T) {
	o := newOffsets(filepath.Join(t.TempDir(), "consumerOffset.json"), 1024)
	o.Commit("g\x01\"\\é", "T", 0, 1)
	var v map[string]map[string]map[string]int64
	b := o.marshal()
	if err := json.Unmarshal(quoteKeys(b), &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if v["offsetTable"]["T@g\x01\"\\é"]["0"] != 1 {
		t.Fatalf("round trip: %v", v)
	}
}

func quoteKeys(b []byte) []byte { return []byte(strings.ReplaceAll(string(b), "{0:", `{"0":`)) }

// A corrupt file falls back to its .bak, as Apache's ConfigManager does.
func TestLoadFallsBackToBak(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "consumerOffset.json")
	writeFile(t, path, `{"offsetTable":{"T@G":{0:1}`)
	writeFile(t, path+".bak", `{"offsetTable":{"T@G":{0:2}}}`)
	o := newOffsets(path, 1024)
	if err := o.load(testutil.Logger()); err != nil {
		t.Fatal(err)
	}
	if off, _ := o.Query("G", "T", 0); off != 2 {
		t.Fatalf("offset %d, want the backup's 2", off)
	}
	if err := os.Remove(path + ".bak"); err != nil {
		t.Fatal(err)
	}
	if err := newOffsets(path, 1024).load(testutil.Logger()); err == nil {
		t.Fatal("a corrupt file without backup must fail the load")
	}
}

// A staged record whose REAL_TOPIC could leave the store is refused for
// good (ErrTopicInvalid), and nothing is written.
func TestReputRefusesBadRealTopic(t *testing.T) {
	dir := t.TempDir()
	b, _ := testBroker(t, filepath.Join(dir, "store"), nil)
	for _, tc := range []struct{ topic, qid string }{
		{"../../x", "0"}, {"..", "0"}, {"a/b", "0"}, {message.ScheduleTopic, "0"}, {message.TimerTopic, "0"},
		{"T", "-1"}, {"T", "2147483647"},
	} {
		res, err := b.Store.Put(testMsg("T", props(message.PropRealTopic, tc.topic, message.PropRealQueueID, tc.qid)))
		if err != nil {
			t.Fatal(err)
		}
		rec, err := b.Store.MessageAt(res.PhysicalOffset)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := b.reputReal(rec); !errors.Is(err, message.ErrTopicInvalid) {
			t.Errorf("reput to %s-%s: %v, want message.ErrTopicInvalid", tc.topic, tc.qid, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); !os.IsNotExist(err) {
		t.Fatalf("a file outside the store: %v", err)
	}
	for topic := range b.Store.Topics() {
		if topic != "T" {
			t.Errorf("reput wrote to %q", topic)
		}
	}
}
