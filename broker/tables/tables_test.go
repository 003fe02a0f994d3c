package tables

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
)

// Files as Apache 5.x writes them: fastjson, tabs, bare integer keys, extra fields.
const (
	apacheTopics = "{\n\t\"dataVersion\":{\n\t\t\"counter\":3,\n\t\t\"stateVersion\":0,\n\t\t\"timestamp\":1700000000000\n\t},\n" +
		"\t\"topicConfigTable\":{\n\t\t\"TopicTest\":{\n\t\t\t\"attributes\":{},\n\t\t\t\"order\":false,\n\t\t\t\"perm\":6,\n" +
		"\t\t\t\"readQueueNums\":4,\n\t\t\t\"topicFilterType\":\"SINGLE_TAG\",\n\t\t\t\"topicName\":\"TopicTest\",\n" +
		"\t\t\t\"topicSysFlag\":0,\n\t\t\t\"writeQueueNums\":4\n\t\t}\n\t}\n}"
	apacheOffsets = "{\n\t\"offsetTable\":{\n\t\t\"TopicTest@groupA\":{0:250,1:250,2:249,3:250},\n" +
		"\t\t\"%RETRY%groupA@groupA\":{0:3}\n\t},\n\t\"dataVersion\":{\"counter\":1,\"timestamp\":1},\n" +
		"\t\"groupTopicMap\":{\"groupA\":[\"TopicTest\"]}\n}"
	apacheGroups = "{\n\t\"dataVersion\":{\"counter\":1,\"stateVersion\":0,\"timestamp\":1},\n\t\"forbiddenTable\":{},\n" +
		"\t\"subscriptionGroupTable\":{\n\t\t\"groupA\":{\n\t\t\t\"attributes\":{},\n\t\t\t\"brokerId\":0,\n" +
		"\t\t\t\"consumeBroadcastEnable\":true,\n\t\t\t\"consumeEnable\":true,\n\t\t\t\"consumeFromMinEnable\":true,\n" +
		"\t\t\t\"consumeMessageOrderly\":false,\n\t\t\t\"consumeTimeoutMinute\":15,\n\t\t\t\"groupName\":\"groupA\",\n" +
		"\t\t\t\"groupRetryPolicy\":{\"type\":\"CUSTOMIZED\"},\n\t\t\t\"groupSysFlag\":0,\n" +
		"\t\t\t\"notifyConsumerIdsChangedEnable\":true,\n\t\t\t\"retryMaxTimes\":16,\n\t\t\t\"retryQueueNums\":1,\n" +
		"\t\t\t\"whichBrokerWhenConsumeSlowly\":1\n\t\t}\n\t}\n}"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadApacheConfigFiles(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "topics.json"), apacheTopics)
	writeFile(t, filepath.Join(dir, "consumerOffset.json"), apacheOffsets)
	writeFile(t, filepath.Join(dir, "subscriptionGroup.json"), apacheGroups)

	topics := NewTopics(filepath.Join(dir, "topics.json"), 1024, func() {}, nil)
	if err := topics.Load(testutil.Logger()); err != nil {
		t.Fatal(err)
	}
	if tc, ok := topics.Get("TopicTest"); !ok || tc.ReadQueueNums != 4 || tc.Perm != 6 {
		t.Fatalf("TopicTest: %+v %v", tc, ok)
	}
	offsets := NewOffsets(filepath.Join(dir, "consumerOffset.json"), 1024)
	if err := offsets.Load(testutil.Logger()); err != nil {
		t.Fatal(err)
	}
	if off, ok := offsets.Query("groupA", "TopicTest", 2); !ok || off != 249 {
		t.Fatalf("offset q2: %d %v", off, ok)
	}
	if off, ok := offsets.Query("groupA", "%RETRY%groupA", 0); !ok || off != 3 {
		t.Fatalf("retry offset: %d %v", off, ok)
	}
	groups := NewGroups(filepath.Join(dir, "subscriptionGroup.json"), 1024, func() bool { return false })
	if err := groups.Load(testutil.Logger()); err != nil {
		t.Fatal(err)
	}
	if gc, ok := groups.Get("groupA"); !ok || gc.RetryMaxTimes != 16 || !gc.ConsumeEnable {
		t.Fatalf("groupA: %+v %v", gc, ok)
	}
}

func TestOffsetsFileShape(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config", "consumerOffset.json")
	o := NewOffsets(path, 1024)
	o.Commit("G", "T", 1, 249)
	o.Commit("G", "T", 0, 250)
	o.Commit("G2", "%RETRY%G2", 0, 3)
	if err := o.PersistIfDirty(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// fastjson's form: integer keys unquoted.
	want := `{"offsetTable":{"%RETRY%G2@G2":{0:3},"T@G":{0:250,1:249}}}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	o.Commit("G", "T", 0, 251)
	if err := o.PersistIfDirty(); err != nil {
		t.Fatal(err)
	}
	if bak, _ := os.ReadFile(path + ".bak"); string(bak) != want {
		t.Fatalf(".bak holds %q, want the previous content", bak)
	}
	again := NewOffsets(path, 1024)
	if err := again.Load(testutil.Logger()); err != nil {
		t.Fatal(err)
	}
	if off, _ := again.Query("G", "T", 0); off != 251 {
		t.Fatalf("reloaded offset %d, want 251", off)
	}
}

func TestTopicsWrapperShape(t *testing.T) {
	topics := NewTopics(filepath.Join(t.TempDir(), "topics.json"), 1024, func() {}, nil)
	topics.PutSystem(TopicConfig{TopicName: "T", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6})
	got, err := topics.MarshalWrapper()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"dataVersion":{"counter":0,"stateVersion":0,"timestamp":0},"topicConfigTable":{"T":{"attributes":{},` +
		`"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"T","topicSysFlag":0,"writeQueueNums":4}}}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestAutoCreateFromTemplate(t *testing.T) {
	changes := 0
	topics := NewTopics(filepath.Join(t.TempDir(), "topics.json"), 1024, func() { changes++ }, nil)
	topics.PutSystem(TopicConfig{TopicName: message.AutoCreateTopicKey, ReadQueueNums: 8, WriteQueueNums: 8, Perm: 7})
	tc, err := topics.AutoCreate("New", message.AutoCreateTopicKey, 4)
	if err != nil || tc.WriteQueueNums != 4 || tc.Perm != 6 || changes != 1 {
		t.Fatalf("auto-create: %+v %v changes=%d", tc, err, changes)
	}
	if _, err := topics.AutoCreate("Other", "NoSuchTemplate", 4); err == nil {
		t.Fatal("want error without a template")
	}
}
