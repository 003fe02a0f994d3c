package proxy

import (
	"strconv"
	"strings"
	"time"

	v2 "github.com/rocketgo/rocketgo/apis/v2"
)

// A receipt handle is the POP_CK extra info a broker's pop answer gives a
// message plus, appended by the proxy, the message's commit-log offset
// (Apache's ReceiptHandle.encode), space separated:
//
//	ckQueueOffset popTime invisibleTime reviveQid topicType brokerName queueId queueOffset [commitLogOffset]
//
// topicType is 0 for the topic itself, 1 and 2 for the group's pop retry
// topic (%RETRY%group_topic, %RETRY%group+topic).
type receiptHandle struct {
	raw             string
	popTime         int64
	invisibleTime   int64
	topicType       string
	brokerName      string
	queueID         int32
	offset          int64
	commitLogOffset int64 // -1 when absent
}

// parseReceiptHandle is ReceiptHandle.decode. A handle that does not
// parse is, as in Apache's proxy (an IllegalArgumentException or
// NumberFormatException there), INTERNAL_SERVER_ERROR with Java's message;
// INVALID_RECEIPT_HANDLE is for an expired handle.
func parseReceiptHandle(s string) (receiptHandle, error) {
	f := strings.Split(s, " ")
	if len(f) < 8 {
		return receiptHandle{}, refuse(v2.Code_INTERNAL_SERVER_ERROR, "Parse failed, dataList size "+strconv.Itoa(len(f)))
	}
	h := receiptHandle{raw: s, topicType: f[4], brokerName: f[5], commitLogOffset: -1}
	var bad string
	num := func(i, bits int) int64 {
		v, err := strconv.ParseInt(f[i], 10, bits)
		if err != nil && bad == "" {
			bad = f[i]
		}
		return v
	}
	num(0, 64)
	h.popTime = num(1, 64)
	h.invisibleTime = num(2, 64)
	num(3, 32)
	h.queueID = int32(num(6, 32))
	h.offset = num(7, 64)
	if len(f) >= 9 {
		h.commitLogOffset = num(8, 64)
	}
	if bad != "" {
		return receiptHandle{}, refuse(v2.Code_INTERNAL_SERVER_ERROR, "For input string: \""+bad+"\"")
	}
	return h, nil
}

// errExpiredHandle is AbstractProcessor's EXPIRED_HANDLE_PROXY_EXCEPTION.
var errExpiredHandle = refuse(v2.Code_INVALID_RECEIPT_HANDLE, "receipt handle is expired")

// expired is ReceiptHandle.isExpired: the message is visible again.
func (h receiptHandle) expired(now time.Time) bool {
	return h.popTime+h.invisibleTime <= now.UnixMilli()
}

// realTopic is ExtraInfoUtil.getRealTopic: the topic the handle's message
// was popped from.
func (h receiptHandle) realTopic(topic, group string) string {
	switch h.topicType {
	case "1":
		return "%RETRY%" + group + "_" + topic
	case "2":
		return "%RETRY%" + group + "+" + topic
	}
	return topic
}

// offsetInfo parses a pop answer's startOffsetInfo / orderCountInfo
// ("type queueId value;...") into "type@queueId" → value.
func offsetInfo(s string) map[string]int64 {
	if s == "" {
		return nil
	}
	out := map[string]int64{}
	for _, one := range strings.Split(s, ";") {
		f := strings.Split(one, " ")
		if len(f) != 3 {
			continue
		}
		if v, err := strconv.ParseInt(f[2], 10, 64); err == nil {
			out[f[0]+"@"+f[1]] = v
		}
	}
	return out
}
