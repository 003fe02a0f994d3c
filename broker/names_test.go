package broker

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
)

func TestSystemTopics(t *testing.T) {
	topics := tables.NewTopics(filepath.Join(t.TempDir(), "topics.json"), 1024, func() {}, nil)
	cfg := DefaultConfig()
	cfg.BrokerClusterName, cfg.BrokerName = "C1", "host.example.com"
	for _, tc := range systemTopics(&cfg) {
		topics.PutSystem(tc)
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
		if _, _, err := b.Sends.ReputReal(rec); !errors.Is(err, message.ErrTopicInvalid) {
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
