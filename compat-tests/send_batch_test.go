package compattest

import (
	"encoding/binary"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
)

// batchBody is a SEND_BATCH_MESSAGE body (MessageDecoder.encodeMessages):
// per message totalSize, magic, bodyCRC, flag, bodyLen, body, propsLen,
// properties; each message carries id=<body>.
func batchBody(bodies ...string) []byte {
	var out []byte
	be := binary.BigEndian
	for _, b := range bodies {
		props := "id\x01" + b + "\x02"
		out = be.AppendUint32(out, uint32(4*5+len(b)+2+len(props)))
		out = be.AppendUint32(out, 0)
		out = be.AppendUint32(out, 0)
		out = be.AppendUint32(out, 0)
		out = be.AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
		out = be.AppendUint16(out, uint16(len(props)))
		out = append(out, props...)
	}
	return out
}

// sendBatchRaw sends a SEND_BATCH_MESSAGE of bodies to topic-0 with the
// batch's own properties and returns the answer's code and remark.
func sendBatchRaw(t *testing.T, addr, topic, props string, bodies ...string) (int, string) {
	t.Helper()
	req := javaRequest(320, map[string]string{
		"a": "batch-producer", "b": topic, "c": "TBW102", "d": "4", "e": "0", "f": "0",
		"g": strconv.FormatInt(time.Now().UnixMilli(), 10), "h": "0", "i": props,
		"j": "0", "k": "false", "m": "true",
	}, batchBody(bodies...))
	resp, err := rawInvoke(addr, req, 10*time.Second)
	if err != nil {
		t.Fatalf("batch to %s: %v", topic, err)
	}
	return resp.Code, resp.Remark
}

// pulledCount is how many messages topic-0 holds for a pull from offset 0
// (the records in the answer's body).
func pulledCount(t *testing.T, addr, topic string) int {
	t.Helper()
	resp, err := rawInvoke(addr, hsPull(topic, "batch-consumer", "*", 0), 10*time.Second)
	if err != nil {
		t.Fatalf("pull %s: %v", topic, err)
	}
	n := 0
	for body := resp.Body; len(body) >= 4; n++ {
		size := int(binary.BigEndian.Uint32(body))
		if size <= 0 || size > len(body) {
			t.Fatalf("pull %s: bad record size %d", topic, size)
		}
		body = body[size:]
	}
	return n
}

// A batch goes through the broker's schedule hook as a single send does
// (Apache's asyncPutMessages runs its put hooks): a batch whose properties
// ask for a timer is held back whole and delivered when due; a delayed batch
// and a batch into a retry topic are refused MESSAGE_ILLEGAL with Apache's
// remarks.
func TestBatchThroughScheduleHook(t *testing.T) {
	c := newCluster(t, "batchsched")
	topic := uniq("BatchTimer")
	createTopic(t, c, topic, admin.WithReadQueueNums(1), admin.WithWriteQueueNums(1))

	if code, remark := sendBatchRaw(t, c.brokerAddr, topic, "", "p1", "p2"); code != 0 {
		t.Fatalf("plain batch: code %d %s", code, remark)
	}
	if !waitFor(t, 10*time.Second, func() bool { return pulledCount(t, c.brokerAddr, topic) == 2 }) {
		t.Fatalf("plain batch not stored")
	}
	sent := time.Now()
	if code, remark := sendBatchRaw(t, c.brokerAddr, topic, hsProps("TIMER_DELAY_MS", "2000"), "t1", "t2", "t3"); code != 0 {
		t.Fatalf("timer batch: code %d %s", code, remark)
	}
	if !waitFor(t, 15*time.Second, func() bool { return pulledCount(t, c.brokerAddr, topic) == 5 }) {
		t.Fatalf("timer batch not delivered")
	}
	if d := time.Since(sent); d < 1500*time.Millisecond {
		t.Errorf("timer batch of 2 s delivered after %s", d)
	}

	code, remark := sendBatchRaw(t, c.brokerAddr, topic, hsProps("DELAY", "1"), "d1")
	if code != 13 || !strings.HasPrefix(remark, "the message is illegal, maybe msg body or properties length not matched.") {
		t.Errorf("delayed batch: code %d %q, want MESSAGE_ILLEGAL", code, remark)
	}
	code, remark = sendBatchRaw(t, c.brokerAddr, "%RETRY%batch-consumer", "", "r1")
	if code != 13 || remark != "batch request does not support retry group %RETRY%batch-consumer" {
		t.Errorf("batch to a retry topic: code %d %q", code, remark)
	}
}
