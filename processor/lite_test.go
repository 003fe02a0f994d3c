package processor

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/broker/send"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

func liteOn(c *broker.Config) {
	c.Store.EnableLmq = true
	c.Store.EnableMultiDispatch = true
}

func liteProps(lite string) string {
	return message.PropLiteTopic + "\x01" + lite + "\x02"
}

// A single send with __LITE_TOPIC is stored in its topic and, with both
// flags on, in the lite topic's LMQ, which PULL_MESSAGE with liteTopic and
// SEARCH_OFFSET_BY_TIMESTAMP with liteTopic read; a client's own
// INNER_MULTI_DISPATCH is replaced; batches are stored in the topic only.
func TestLiteSendPullSearch(t *testing.T) {
	p := sendProcs(t, liteOn)
	b := p.ops.(*broker.Broker)
	lmq := "%LMQ%$T$l1"
	for i := range 3 {
		props := liteProps("l1")
		if i == 1 {
			props += message.PropInnerMultiDispatch + "\x01%LMQ%$X$evil\x02"
		}
		resp := p.send(testConn, v2Send(remoting.SendMessageV2, "T", props, []byte("m"+strconv.Itoa(i))))
		expectCode(t, resp, remoting.Success)
	}
	var batch []byte
	for _, s := range []string{"x", "y"} {
		batch, _ = message.AppendBatchMessage(batch, 0, []byte(s), liteProps("l1"))
	}
	expectCode(t, p.send(testConn, v2Send(remoting.SendBatchMessage, "T", "", batch)), remoting.Success)
	testutil.WaitFor(t, 5*time.Second, func() bool { return b.Store.DispatchedPhyOffset() == b.Store.MaxPhyOffset() })
	if got := b.Store.MaxOffset(lmq, 0); got != 3 {
		t.Fatalf("LMQ max offset %d, want 3", got)
	}
	if b.Store.LmqExists("%LMQ%$X$evil") || b.Store.LmqNum() != 1 {
		t.Fatalf("LmqNum %d", b.Store.LmqNum())
	}

	// PULL_MESSAGE with liteTopic reads the LMQ, from offset 1.
	req := pullReq("T", 1, pullSubscription, "*")
	req.Set("liteTopic", "l1")
	resp := p.pull(testConn, req)
	expectCode(t, resp, remoting.Success)
	var body []byte
	for _, v := range resp.BodyVec {
		body = append(body, v...)
	}
	if resp.ReleaseBody != nil {
		resp.ReleaseBody()
	}
	n := 0
	for rest := body; len(rest) > 0; n++ {
		r, next, err := message.DecodeRecord(rest)
		if err != nil || r.Topic != "T" || string(r.Body) != "m"+strconv.Itoa(n+1) ||
			message.Property(r.Properties, message.PropInnerMultiDispatch) != lmq ||
			message.Property(r.Properties, message.PropInnerMultiQueueOffset) != strconv.Itoa(n+1) {
			t.Fatalf("record %d: %+v %v", n, r, err)
		}
		rest = next
	}
	if n != 2 || resp.Str("maxOffset") != "3" || resp.Str("nextBeginOffset") != "3" {
		t.Fatalf("%d records, header %v", n, resp.ExtFields)
	}

	search := func(lite string, queueID int32, ts int64) string {
		req := remoting.NewRequest(remoting.SearchOffsetByTimestamp, map[string]string{"topic": "T",
			"queueId": strconv.Itoa(int(queueID)), "timestamp": strconv.FormatInt(ts, 10), "liteTopic": lite}, nil)
		resp := p.searchOffset(testConn, req)
		expectCode(t, resp, remoting.Success)
		return resp.Str("offset")
	}
	future := time.Now().Add(time.Hour).UnixMilli()
	if got := search("l1", 0, future); got != "3" {
		t.Errorf("search l1 future: %s, want 3", got)
	}
	if got := search("l1", 0, 0); got != "0" {
		t.Errorf("search l1 0: %s", got)
	}
	if got := search("nope", 0, future); got != "0" {
		t.Errorf("search of a lite topic without messages: %s", got)
	}
	if got := search("l1", 1, future); got != "0" {
		t.Errorf("search of queue 1: %s", got)
	}
	if got := search("", 0, future); got != "5" { // the parent topic's queue 0: all five
		t.Errorf("search without liteTopic: %s", got)
	}
}

// A lite topic that cannot name an LMQ directory is refused with
// MESSAGE_ILLEGAL; nothing is stored.
func TestLiteSendRefusesBadNames(t *testing.T) {
	p := sendProcs(t, liteOn)
	b := p.ops.(*broker.Broker)
	for _, lite := range []string{"a$b", "../x", "a/b", strings.Repeat("x", 300), "sp ace"} {
		resp := p.send(testConn, v2Send(remoting.SendMessageV2, "T", liteProps(lite), []byte("m")))
		if resp.Code != remoting.MessageIllegal || !strings.Contains(resp.Remark, "lite topic") {
			t.Errorf("lite %q: %d %q", lite, resp.Code, resp.Remark)
		}
	}
	if b.Store.MaxPhyOffset() != 0 {
		t.Fatal("a refused message was stored")
	}
}

// With enableLmqQuota, a message for a new LMQ is refused with
// LMQ_QUOTA_EXCEEDED once maxLmqConsumeQueueNum LMQs exist; existing ones
// still take messages.
func TestLiteQuota(t *testing.T) {
	p := sendProcs(t, func(c *broker.Config) {
		liteOn(c)
		c.Store.EnableLmqQuota = true
		c.Store.MaxLmqConsumeQueueNum = 2
	})
	b := p.ops.(*broker.Broker)
	for _, lite := range []string{"a", "b"} {
		expectCode(t, p.send(testConn, v2Send(remoting.SendMessageV2, "T", liteProps(lite), []byte("m"))), remoting.Success)
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { return b.Store.LmqNum() == 2 })
	resp := p.send(testConn, v2Send(remoting.SendMessageV2, "T", liteProps("c"), []byte("m")))
	if resp.Code != remoting.LmqQuotaExceeded || resp.Remark != send.LmqQuotaRemark {
		t.Fatalf("over quota: %d %q", resp.Code, resp.Remark)
	}
	expectCode(t, p.send(testConn, v2Send(remoting.SendMessageV2, "T", liteProps("a"), []byte("m"))), remoting.Success)
	expectCode(t, p.send(testConn, v2Send(remoting.SendMessageV2, "T", "", []byte("m"))), remoting.Success)
}

// With enableLmq the offsets live in lmqConsumerOffset.json, which starts
// from consumerOffset.json; LMQ offsets (queue 0) are kept and written
// under Apache's keys.
func TestLiteOffsetsFile(t *testing.T) {
	dir := t.TempDir()
	cfgDir := filepath.Join(dir, "config")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	old := `{"offsetTable":{"T@G":{0:7,1:8},"%LMQ%$T$l@G":{0:3},"%LMQ%$T$l@H":{0:4},"%LMQ%$../x@G":{0:1}}}`
	if err := os.WriteFile(filepath.Join(cfgDir, "consumerOffset.json"), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	b := sendBroker(t, func(c *broker.Config) {
		liteOn(c)
		c.Store.StorePathRootDir = dir
	})
	for _, tc := range []struct {
		group, topic string
		queueID      int32
		want         int64
		ok           bool
	}{
		{"G", "T", 1, 8, true}, {"G", "%LMQ%$T$l", 0, 3, true}, {"H", "%LMQ%$T$l", 0, 4, true},
		{"G", "%LMQ%$../x", 0, 0, false},
	} {
		if off, ok := b.Offsets.Query(tc.group, tc.topic, tc.queueID); off != tc.want || ok != tc.ok {
			t.Errorf("%s@%s/%d: %d %v", tc.topic, tc.group, tc.queueID, off, ok)
		}
	}
	b.Offsets.Commit("G", "%LMQ%$T$m", 0, 9)
	if err := b.Offsets.PersistIfDirty(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(cfgDir, "lmqConsumerOffset.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"offsetTable":{"%LMQ%$T$l@G":{0:3},"%LMQ%$T$l@H":{0:4},"%LMQ%$T$m@G":{0:9},"T@G":{0:7,1:8}}}`
	if string(got) != want {
		t.Fatalf("lmqConsumerOffset.json:\n%s\nwant\n%s", got, want)
	}
	if groups := b.Offsets.Groups("%LMQ%$T$l"); strings.Join(groups, ",") != "G,H" {
		t.Errorf("groups %v", groups)
	}
	b.Offsets.DeleteGroup("G")
	if _, ok := b.Offsets.Query("H", "%LMQ%$T$l", 0); !ok {
		t.Error("H's offset went with G's")
	}
	b.Offsets.DeleteTopic("%LMQ%$T$l")
	if _, ok := b.Offsets.Query("H", "%LMQ%$T$l", 0); ok {
		t.Error("offset of a deleted LMQ")
	}
}
