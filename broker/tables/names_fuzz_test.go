package tables

import (
	"testing"

	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/message"
)

// The config files a broker loads at start: no panic, and nothing that
// breaks the tables' invariants is loaded, whatever the file holds. Seeds
// are the files Apache 5.x writes (tables_test.go) and rocketgo's own.
func FuzzLoadConfigFiles(f *testing.F) {
	for _, s := range []string{
		apacheTopics, apacheOffsets, apacheGroups,
		`{"dataVersion":{"counter":0,"stateVersion":0,"timestamp":0},"topicConfigTable":{"T":{"attributes":{},` +
			`"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"T","topicSysFlag":0,"writeQueueNums":4}}}`,
		`{"offsetTable":{"%RETRY%G2@G2":{0:3},"T@G":{0:250,1:249}}}`,
		`{"topicConfigTable":{"../../x":{"readQueueNums":2147483647},"..":{}},"offsetTable":{"T@g\u0001":{0:1}},` +
			`"subscriptionGroupTable":{"../x":{"retryQueueNums":-1}}}`,
	} {
		f.Add([]byte(s))
	}
	const maxQueueNums = 64
	system := func(name string) bool { return name == "host.example.com" }
	f.Fuzz(func(t *testing.T, data []byte) {
		b := config.QuoteBareKeys(data)
		if tf, _, err := decodeTopicsFile(b, maxQueueNums, system); err == nil {
			for name, tc := range tf.TopicConfigTable {
				if tc == nil || tc.TopicName != name || (message.ValidTopicName(name) != nil && !system(name)) {
					t.Fatalf("loaded topic %q: %+v", name, tc)
				}
				if !system(name) && (tc.ReadQueueNums < 0 || tc.WriteQueueNums < 0 ||
					tc.ReadQueueNums > maxQueueNums || tc.WriteQueueNums > maxQueueNums) {
					t.Fatalf("loaded topic %q with queues read %d write %d", name, tc.ReadQueueNums, tc.WriteQueueNums)
				}
			}
		}
		if gf, _, err := decodeGroupsFile(b, maxQueueNums); err == nil {
			for name, gc := range gf.SubscriptionGroupTable {
				if gc == nil || gc.GroupName != name || message.ValidGroupName(name) != nil ||
					gc.RetryQueueNums < 0 || gc.RetryQueueNums > maxQueueNums {
					t.Fatalf("loaded group %q: %+v", name, gc)
				}
			}
		}
		if table, _, err := decodeOffsetsFile(b, maxQueueNums); err == nil {
			o := &Offsets{table: table}
			for key, queues := range table {
				topic, group, ok := cutOffsetKey(key)
				if !ok || message.ValidTopicName(topic) != nil || message.ValidGroupName(group) != nil {
					t.Fatalf("loaded offsets of %q", key)
				}
				for q := range queues {
					if q < 0 || q >= maxQueueNums {
						t.Fatalf("loaded queue %d of %q", q, key)
					}
				}
			}
			// What loaded is written back as a file that loads the same.
			again, _, err := decodeOffsetsFile(config.QuoteBareKeys(o.Marshal()), maxQueueNums)
			if err != nil || len(again) != len(table) {
				t.Fatalf("written offsets do not load back: %v (%d of %d keys)", err, len(again), len(table))
			}
		}
	})
}
