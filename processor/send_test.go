package processor

import (
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// sendProcs is a served broker with topic T (4 queues) and the send
// handlers, called directly.
func sendProcs(t *testing.T, edit func(*broker.Config)) *brokerProcs {
	t.Helper()
	b := sendBroker(t, edit)
	if err := b.Topics.Put(tables.TopicConfig{TopicName: "T", ReadQueueNums: 4, WriteQueueNums: 4,
		Perm: message.PermRead | message.PermWrite}); err != nil {
		t.Fatal(err)
	}
	return procsOf(ServicesOf(b), testutil.Logger())
}

var testConn = &remoting.Conn{Remote: "10.0.0.1:5", RemoteAddr: netip.MustParseAddrPort("10.0.0.1:5")}

// v2Send is SEND_MESSAGE_V2 (or code, with the compact keys) of body to
// topic, queue 0.
func v2Send(code int32, topic, props string, body []byte) *remoting.Command {
	return remoting.NewRequest(code, map[string]string{"a": "PG", "b": topic, "c": "TBW102", "d": "4", "e": "0",
		"f": "0", "g": "1700000000000", "h": "0", "i": props}, body)
}

// The handler answers a send with SendMessageResponseHeader (msgId,
// queueId, queueOffset, transactionId) plus MSG_REGION and TRACE_ON, for the
// long and the compact header, single and batch.
func TestSendHandlerEncodesResult(t *testing.T) {
	p := sendProcs(t, func(c *broker.Config) { c.RegionID = "R1" })
	long := remoting.NewRequest(remoting.SendMessage, map[string]string{"producerGroup": "PG", "topic": "T",
		"defaultTopic": "TBW102", "defaultTopicQueueNums": "4", "queueId": "0", "sysFlag": "0",
		"bornTimestamp": "1700000000000", "flag": "0", "properties": "UNIQ_KEY\x01U1\x02"}, []byte("a"))
	resp := p.send(testConn, long)
	if resp.Code != remoting.Success || resp.Str("queueId") != "0" || resp.Str("queueOffset") != "0" ||
		resp.Str("transactionId") != "U1" || resp.Str("MSG_REGION") != "R1" || resp.Str("TRACE_ON") != "true" {
		t.Fatalf("SEND_MESSAGE answer: %d %q %v", resp.Code, resp.Remark, resp.ExtFields)
	}
	if _, off, err := message.DecodeOffsetMsgID(resp.Str("msgId")); err != nil || off != 0 {
		t.Errorf("msgId %q: %d %v", resp.Str("msgId"), off, err)
	}
	resp = p.send(testConn, v2Send(remoting.SendMessageV2, "T", "", []byte("b")))
	if resp.Code != remoting.Success || resp.Str("queueOffset") != "1" || len(resp.Str("transactionId")) != 32 {
		t.Fatalf("SEND_MESSAGE_V2 answer: %d %q %v", resp.Code, resp.Remark, resp.ExtFields)
	}
	var body []byte
	for _, s := range []string{"x", "y"} {
		body, _ = message.AppendBatchMessage(body, 0, []byte(s), "")
	}
	resp = p.send(testConn, v2Send(remoting.SendBatchMessage, "T", "", body))
	if resp.Code != remoting.Success || resp.Str("queueOffset") != "2" || strings.Count(resp.Str("msgId"), ",") != 1 {
		t.Fatalf("SEND_BATCH_MESSAGE answer: %d %q %v", resp.Code, resp.Remark, resp.ExtFields)
	}
}

// A refusal is answered with the service's code and remark as they are,
// plus MSG_REGION and TRACE_ON (Apache's preSend); a header that does not
// decode is a bare SYSTEM_ERROR.
func TestSendHandlerEncodesRefusals(t *testing.T) {
	p := sendProcs(t, func(c *broker.Config) { c.Store.MaxMessageSize = 16 })
	for _, tc := range []struct {
		name   string
		req    *remoting.Command
		code   int32
		remark string
	}{
		{"topic not writable", v2Send(remoting.SendMessageV2, message.ScheduleTopic, "", []byte("a")),
			remoting.NoPermission, "Sending message to topic[SCHEDULE_TOPIC_XXXX] is forbidden."},
		{"illegal topic", v2Send(remoting.SendMessageV2, "a/b", "", []byte("a")),
			remoting.InvalidParameter, "The specified topic: a/b, contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"},
		{"too large", v2Send(remoting.SendMessageV2, "T", "", make([]byte, 17)), remoting.MessageIllegal,
			"the message is illegal, maybe msg body or properties length not matched. msg body length limit 16B, " +
				"msg properties length limit 32KB."},
		{"batch to retry", v2Send(remoting.SendBatchMessage, "%RETRY%G", "", nil), remoting.MessageIllegal,
			"batch request does not support retry group %RETRY%G"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := p.send(testConn, tc.req)
			if resp.Code != tc.code || resp.Remark != tc.remark || resp.Str("MSG_REGION") != "DefaultRegion" ||
				resp.Str("TRACE_ON") != "true" {
				t.Errorf("answer %d %q %v, want %d %q", resp.Code, resp.Remark, resp.ExtFields, tc.code, tc.remark)
			}
		})
	}
	bad := remoting.NewRequest(remoting.SendMessageV2, map[string]string{"a": "PG"}, nil)
	resp := p.send(testConn, bad)
	if _, ok := resp.Lookup("MSG_REGION"); resp.Code != remoting.SystemError || ok {
		t.Errorf("undecodable header: %d %q %v", resp.Code, resp.Remark, resp.ExtFields)
	}
}

// CONSUMER_SEND_MSG_BACK answers SUCCESS, or the service's refusal as is.
func TestSendBackHandler(t *testing.T) {
	p := sendProcs(t, nil)
	resp := p.send(testConn, v2Send(remoting.SendMessageV2, "T", "", []byte("a")))
	_, off, err := message.DecodeOffsetMsgID(resp.Str("msgId"))
	if err != nil {
		t.Fatal(err)
	}
	back := func(group string, offset int64) *remoting.Command {
		return p.sendBack(testConn, remoting.NewRequest(remoting.ConsumerSendMsgBack, map[string]string{
			"group": group, "offset": itoa64(offset), "delayLevel": "0", "maxReconsumeTimes": "16"}, nil))
	}
	if resp := back("G", off); resp.Code != remoting.Success {
		t.Errorf("send back: %d %q", resp.Code, resp.Remark)
	}
	if resp := back("G", 1<<40); resp.Code != remoting.SystemError ||
		resp.Remark != "look message by offset failed, 1099511627776" {
		t.Errorf("send back of nothing: %d %q", resp.Code, resp.Remark)
	}
	if resp := back("no group", off); resp.Code != remoting.SubscriptionGroupNotExist ||
		!strings.HasPrefix(resp.Remark, "subscription group not exist, no group ") {
		t.Errorf("send back of an unknown group: %d %q", resp.Code, resp.Remark)
	}
	if resp := p.sendBack(testConn, remoting.NewRequest(remoting.ConsumerSendMsgBack, nil, nil)); resp.Code != remoting.SystemError {
		t.Errorf("send back without a header: %d %q", resp.Code, resp.Remark)
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// With SYNC_FLUSH the handler answers nothing at once and the completion
// writes the whole answer on the connection once the commit log is flushed
// (over a real socket: the reply is the connection's async write).
func TestSendSyncFlushAnswersLater(t *testing.T) {
	b := sendBroker(t, func(c *broker.Config) { c.Store.FlushDiskType = store.SyncFlush })
	nc, err := net.Dial("tcp", b.Config().Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := nc.SetDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	const n = 4
	frames := sendFrames(t, "SyncTopic", n, 0)
	if _, err := nc.Write(frames); err != nil {
		t.Fatal(err)
	}
	for range n {
		var lp [4]byte
		if _, err := io.ReadFull(nc, lp[:]); err != nil {
			t.Fatal(err)
		}
		frame := make([]byte, binary.BigEndian.Uint32(lp[:]))
		if _, err := io.ReadFull(nc, frame); err != nil {
			t.Fatal(err)
		}
		resp, err := remoting.DecodeFrame(frame)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Code != remoting.Success || resp.Opaque != 7 || resp.Str("msgId") == "" || resp.Str("MSG_REGION") == "" {
			t.Errorf("answer %d opaque %d %v", resp.Code, resp.Opaque, resp.ExtFields)
		}
	}
}
