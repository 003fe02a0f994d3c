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

// A popped message of a group whose pop retry topic (%RETRY%<group>_<topic>)
// would be over 127 characters is not retried for ever: its revive moves it
// to %DLQ%<group> within seconds, with at most a few log lines.
func TestPopReviveLongGroupToDLQ(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "pop-revive-dlq")
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
	dlq := "%DLQ%" + group
	var last string
	if !waitFor(t, 15*time.Second, func() bool {
		r := invokeBroker(t, c.brokerAddr, javaRequest(30, map[string]string{"topic": dlq, "queueId": "0"}, nil))
		last = fmt.Sprintf("%d %q %v", r.Code, r.Remark, r.ExtFields)
		return r.Code == 0 && r.ExtFields["offset"] == "1"
	}) {
		t.Fatalf("message not in %s within 15 s: GET_MAX_OFFSET %s", dlq, last)
	}
	t.Logf("in the DLQ %.1f s after the pop (invisible time 1 s)", time.Since(began).Seconds())
	time.Sleep(time.Second) // passes after the move must not fail again
	log, err := os.ReadFile(filepath.Join(c.dir, "broker.log"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), "pop revive failed"); n > 2 {
		t.Errorf("%d revive failure lines", n)
	}
}
