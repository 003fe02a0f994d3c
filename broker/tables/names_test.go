package tables

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
)

func TestTopicsRefuseBadNamesAndQueueNums(t *testing.T) {
	topics := NewTopics(filepath.Join(t.TempDir(), "topics.json"), 64, func() {}, nil)
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
	topics.PutSystem(TopicConfig{TopicName: "BIG", ReadQueueNums: 128, WriteQueueNums: 128, Perm: 7})
	tc, err := topics.AutoCreate("Auto", "BIG", 1000)
	if err != nil || tc.ReadQueueNums != 64 || tc.WriteQueueNums != 64 {
		t.Fatalf("auto-created %+v %v, want 64 queues", tc, err)
	}
	if _, err := topics.AutoCreate("a/b", "BIG", 4); !errors.Is(err, message.ErrTopicInvalid) {
		t.Fatalf("auto-create of a/b: %v", err)
	}
}

func TestGroupsRefuseBadNames(t *testing.T) {
	groups := NewGroups(filepath.Join(t.TempDir(), "subscriptionGroup.json"), 64, func() bool { return true })
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
	topics := NewTopics(filepath.Join(dir, "topics.json"), 1024, func() {}, nil)
	topics.PutSystem(TopicConfig{TopicName: "host.example.com", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 1})
	if err := topics.Load(testutil.Logger()); err != nil {
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
	groups := NewGroups(filepath.Join(dir, "subscriptionGroup.json"), 1024, func() bool { return false })
	if err := groups.Load(testutil.Logger()); err != nil {
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
	offsets := NewOffsets(filepath.Join(dir, "consumerOffset.json"), 1024)
	if err := offsets.Load(testutil.Logger()); err != nil {
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
	o := NewOffsets(filepath.Join(t.TempDir(), "consumerOffset.json"), 1024)
	o.Commit("g\x01\"\\é", "T", 0, 1)
	var v map[string]map[string]map[string]int64
	b := o.Marshal()
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
	o := NewOffsets(path, 1024)
	if err := o.Load(testutil.Logger()); err != nil {
		t.Fatal(err)
	}
	if off, _ := o.Query("G", "T", 0); off != 2 {
		t.Fatalf("offset %d, want the backup's 2", off)
	}
	if err := os.Remove(path + ".bak"); err != nil {
		t.Fatal(err)
	}
	if err := NewOffsets(path, 1024).Load(testutil.Logger()); err == nil {
		t.Fatal("a corrupt file without backup must fail the load")
	}
}
