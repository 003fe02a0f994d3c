package compattest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// popRaw is POP_MESSAGE for queue 0 of topic as the Java client sends it.
func popRaw(group, topic string, invisible int64) *rawCmd {
	return javaRequest(200050, map[string]string{"consumerGroup": group, "topic": topic, "queueId": "0",
		"maxMsgNums": "1", "invisibleTime": strconv.FormatInt(invisible, 10), "pollTime": "0",
		"bornTime": strconv.FormatInt(time.Now().UnixMilli(), 10), "initMode": "0", "order": "false"}, nil)
}

// Invisible times outside [0, 12 h] are refused INVALID_PARAMETER by
// POP_MESSAGE and CHANGE_MESSAGE_INVISIBLETIME, and the message stays
// poppable; an ordinary one is served.
func TestPopInvisibleTimeBounds(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "pop-bounds")
	topic := uniq("PopBounds")
	createTopic(t, c, topic)
	if resp := invokeBroker(t, c.brokerAddr, sendReq(topic)); resp.Code != 0 {
		t.Fatalf("send: %d %q", resp.Code, resp.Remark)
	}
	const group = "CID_pop_bounds"
	for _, it := range []int64{1<<63 - 1, -5, 12*3600*1000 + 1} {
		expectRefused(t, "pop invisibleTime "+strconv.FormatInt(it, 10), invokeBroker(t, c.brokerAddr, popRaw(group, topic, it)), 29, "")
		ch := javaRequest(200053, map[string]string{"consumerGroup": group, "topic": topic, "queueId": "0", "offset": "0",
			"extraInfo":     "0 " + strconv.FormatInt(time.Now().UnixMilli(), 10) + " 60000 0 0 broker-pop-bounds 0 0",
			"invisibleTime": strconv.FormatInt(it, 10)}, nil)
		expectRefused(t, "change invisibleTime "+strconv.FormatInt(it, 10), invokeBroker(t, c.brokerAddr, ch), 29, "")
	}
	var resp *rawCmd
	waitFor(t, 5*time.Second, func() bool {
		resp = invokeBroker(t, c.brokerAddr, popRaw(group, topic, 60000))
		return resp.Code == 0
	})
	if resp.Code != 0 || resp.Remark != "FOUND" {
		t.Fatalf("pop with 60 s: %d %q, want FOUND", resp.Code, resp.Remark)
	}
}

// TestPopReviveLongGroup: the pop retry topic of the longest group,
// "%RETRY%" + 120 characters + "_" + the topic, is a valid retry topic
// (Apache 5.5 allows 255): a message popped and not acked revives into it
// and is popped again, and nothing goes to the DLQ.
func TestPopReviveLongGroup(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "pop-revive-long")
	topic := uniq("PopRevive")
	createTopic(t, c, topic)
	if resp := invokeBroker(t, c.brokerAddr, sendReq(topic)); resp.Code != 0 {
		t.Fatalf("send: %d %q", resp.Code, resp.Remark)
	}
	group := strings.Repeat("g", 120) // the longest valid group
	var resp *rawCmd
	waitFor(t, 5*time.Second, func() bool {
		resp = invokeBroker(t, c.brokerAddr, popRaw(group, topic, 1000))
		return resp.Code == 0
	})
	if resp.Code != 0 {
		t.Fatalf("pop: %d %q", resp.Code, resp.Remark)
	}
	began := time.Now()
	retry := "%RETRY%" + group + "_" + topic
	var last string
	if !waitFor(t, 15*time.Second, func() bool {
		r := invokeBroker(t, c.brokerAddr, javaRequest(30, map[string]string{"topic": retry, "queueId": "0"}, nil))
		last = fmt.Sprintf("%d %q %v", r.Code, r.Remark, r.ExtFields)
		return r.Code == 0 && r.ExtFields["offset"] == "1"
	}) {
		t.Fatalf("message not in %s within 15 s: GET_MAX_OFFSET %s", retry, last)
	}
	t.Logf("in the %d-character retry topic %.1f s after the pop (invisible time 1 s)", len(retry), time.Since(began).Seconds())
	if !waitFor(t, 15*time.Second, func() bool {
		return invokeBroker(t, c.brokerAddr, popRaw(group, topic, 60000)).Code == 0
	}) {
		t.Fatal("the revived message was not popped again")
	}
	if r := invokeBroker(t, c.brokerAddr, javaRequest(30, map[string]string{"topic": "%DLQ%" + group, "queueId": "0"}, nil)); r.Code == 0 && r.ExtFields["offset"] != "0" {
		t.Errorf("%%DLQ%%%s holds %s messages", group, r.ExtFields["offset"])
	}
	log, err := os.ReadFile(filepath.Join(c.dir, "broker.log"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), "pop revive failed"); n > 0 {
		t.Errorf("%d revive failure lines", n)
	}
}
