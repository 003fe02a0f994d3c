package proxy

import (
	"strconv"
	"strings"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
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

func parseReceiptHandle(s string) (receiptHandle, error) {
	f := strings.Split(s, " ")
	if len(f) < 8 {
		return receiptHandle{}, refuse(v2.Code_INVALID_RECEIPT_HANDLE, "receipt handle is not valid")
	}
	h := receiptHandle{raw: s, topicType: f[4], brokerName: f[5], commitLogOffset: -1}
	var err error
	bad := func(e error) bool {
		if e != nil {
			err = e
		}
		return err != nil
	}
	var q int64
	_, e0 := strconv.ParseInt(f[0], 10, 64)
	h.popTime, _ = strconv.ParseInt(f[1], 10, 64)
	h.invisibleTime, _ = strconv.ParseInt(f[2], 10, 64)
	_, e3 := strconv.ParseInt(f[3], 10, 32)
	q, e6 := strconv.ParseInt(f[6], 10, 32)
	var e7 error
	h.offset, e7 = strconv.ParseInt(f[7], 10, 64)
	h.queueID = int32(q)
	if len(f) >= 9 {
		var e8 error
		h.commitLogOffset, e8 = strconv.ParseInt(f[8], 10, 64)
		bad(e8)
	}
	if bad(e0) || bad(e3) || bad(e6) || bad(e7) || h.brokerName == "" {
		return receiptHandle{}, refuse(v2.Code_INVALID_RECEIPT_HANDLE, "receipt handle is not valid")
	}
	return h, nil
}

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

// topicType is ExtraInfoUtil.getRetry of a topic name.
func topicType(topic string) string {
	if strings.HasPrefix(topic, "%RETRY%") {
		if strings.Contains(topic, "+") {
			return "2"
		}
		return "1"
	}
	return "0"
}

// extraInfo is ExtraInfoUtil.buildExtraInfo with the message's queue offset.
func extraInfo(ckOffset, popTime, invisibleTime int64, reviveQid int32, topic, brokerName string, queueID int32, msgOffset int64) string {
	b := make([]byte, 0, 96)
	b = strconv.AppendInt(b, ckOffset, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, popTime, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, invisibleTime, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(reviveQid), 10)
	b = append(b, ' ')
	b = append(b, topicType(topic)...)
	b = append(b, ' ')
	b = append(b, brokerName...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(queueID), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, msgOffset, 10)
	return string(b)
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
