package compattest

// What a broker holds from its start, compared with the Apache reference in
// TestReference: the topics Apache 5.3.3's TopicConfigManager creates
// (system names, the benchmark topic, the broker-member sync topic, the
// cluster, broker, reply, revive and transaction topics) with their queue
// counts and permissions, the groups SubscriptionGroupManager creates, and
// StoreStatsService's runtime-info keys (the dashboard's broker status).

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// startupGroupName matches the start-up groups' style (MixAll's upper-case
// names); the groups the tests create are lower-case.
var startupGroupName = regexp.MustCompile(`^[A-Z][A-Z_-]*$`)

// storeStatsKeys are StoreStatsService.getRuntimeInfo's keys.
var storeStatsKeys = []string{"putMessageEntireTimeMax", "putMessageTimesTotal", "putMessageFailedTimes",
	"putMessageSizeTotal", "putMessageDistributeTime", "putMessageAverageSize", "dispatchMaxBuffer",
	"getMessageEntireTimeMax", "putLatency99", "putLatency999", "bootTimestamp", "runtime", "putTps",
	"getFoundTps", "getMissTps", "getTotalTps", "getTransferredTps"}

func startupProbes(invoke func(t *testing.T, addr string, req *rawCmd) *rawCmd) []probe {
	return []probe{
		{"start-up topics", func(t *testing.T, tg target, _ string) observation {
			resp := invoke(t, tg.brokerAddr, javaRequest(21, nil, nil))
			var v struct {
				TopicConfigTable map[string]struct {
					ReadQueueNums, WriteQueueNums, Perm int
				}
			}
			if err := json.Unmarshal(resp.Body, &v); err != nil {
				t.Fatalf("%s: GET_ALL_TOPIC_CONFIG: %v", tg.name, err)
			}
			var lines []string
			for name, tc := range v.TopicConfigTable {
				n := strings.ReplaceAll(name, tg.brokerName, "<broker>")
				if !startupTopic(n) {
					continue
				}
				lines = append(lines, fmt.Sprintf("%s r%d w%d perm%d", n, tc.ReadQueueNums, tc.WriteQueueNums, tc.Perm))
			}
			sort.Strings(lines)
			t.Logf("%s: %d start-up topics: %s", tg.name, len(lines), strings.Join(lines, "; "))
			return observation{Code: resp.Code, Body: strings.Join(lines, "; ")}
		}},
		{"start-up groups", func(t *testing.T, tg target, _ string) observation {
			resp := invoke(t, tg.brokerAddr, javaRequest(201, nil, nil))
			var v struct {
				SubscriptionGroupTable map[string]struct {
					ConsumeEnable, ConsumeBroadcastEnable, ConsumeFromMinEnable bool
					RetryQueueNums, RetryMaxTimes                               int
				}
			}
			if err := json.Unmarshal(resp.Body, &v); err != nil {
				t.Fatalf("%s: GET_ALL_SUBSCRIPTIONGROUP_CONFIG: %v", tg.name, err)
			}
			var lines []string
			for name, g := range v.SubscriptionGroupTable {
				if !startupGroupName.MatchString(name) {
					continue
				}
				lines = append(lines, fmt.Sprintf("%s %+v", name, g))
			}
			sort.Strings(lines)
			t.Logf("%s: %d start-up groups: %s", tg.name, len(lines), strings.Join(lines, "; "))
			return observation{Code: resp.Code, Body: strings.Join(lines, "; ")}
		}},
		{"store stats keys", func(t *testing.T, tg target, _ string) observation {
			var v struct{ Table map[string]string }
			resp := invoke(t, tg.brokerAddr, javaRequest(28, nil, nil))
			if err := json.Unmarshal(resp.Body, &v); err != nil {
				t.Fatalf("%s: runtime info: %v", tg.name, err)
			}
			o := observation{Code: resp.Code, Values: map[string]string{}}
			for _, k := range storeStatsKeys {
				val, ok := v.Table[k]
				switch {
				case !ok:
					o.Values[k] = "<absent>"
				case k == "dispatchMaxBuffer" || k == "putMessageFailedTimes":
					o.Values[k] = val // 0 on both: nothing failed
				default:
					o.Values[k] = "<present>"
				}
			}
			return o
		}},
	}
}

// startupTopic reports whether a topic name (the broker's name replaced)
// is one a broker creates at start: Apache's system names, the rmq_sys_
// prefix, the cluster's own topics.
func startupTopic(n string) bool {
	switch n {
	case "SELF_TEST_TOPIC", "TBW102", "BenchmarkTest", "OFFSET_MOVED_EVENT", "SCHEDULE_TOPIC_XXXX", "RMQ_SYS_TRACE_TOPIC",
		"RMQ_SYS_TRANS_HALF_TOPIC", "RMQ_SYS_TRANS_OP_HALF_TOPIC", "TRANS_CHECK_MAX_TIME_TOPIC", "<broker>",
		clusterName, clusterName + "_REPLY_TOPIC":
		return true
	}
	return strings.HasPrefix(n, "rmq_sys_")
}
