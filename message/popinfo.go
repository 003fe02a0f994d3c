package message

// ExtraInfo: the handle of a popped message, Apache's ExtraInfoUtil. The
// client keeps it in the message's POP_CK property and sends it back with
// ACK_MESSAGE and CHANGE_MESSAGE_INVISIBLETIME. Space-separated fields:
//
//	ckQueueOffset popTime invisibleTime reviveQid retry brokerName queueId [msgQueueOffset]
//
// ckQueueOffset is the checkpoint's start offset in the queue the message was
// popped from; retry is "0" for the topic itself, "1" for the pop retry topic
// %RETRY%<group>_<topic>, "2" for the V2 form %RETRY%<group>+<topic>. The
// response header's startOffsetInfo, msgOffsetInfo and orderCountInfo are
// ";"-joined "retry queueId value" triples, from which the client builds
// the handle of each message that does not carry one.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// PopOrderReviveQueue is KeyBuilder.POP_ORDER_REVIVE_QUEUE: the reviveQid
// of a message popped in order.
const PopOrderReviveQueue = 999

// ErrBadExtraInfo: an extraInfo that does not parse.
var ErrBadExtraInfo = errors.New("message: bad extraInfo")

// ExtraInfo is a parsed handle.
type ExtraInfo struct {
	CkQueueOffset  int64
	PopTime        int64
	InvisibleTime  int64
	ReviveQid      int32
	Retry          string // "0", "1" or "2"
	BrokerName     string
	QueueID        int32
	MsgQueueOffset int64 // -1 when the handle has only seven fields
}

// ParseExtraInfo parses a handle as ExtraInfoUtil's getters do: the
// fields are read by position and must be numbers where Apache's are.
// Seven fields at least; the eighth (the message's queue offset) is optional.
func ParseExtraInfo(s string) (ExtraInfo, error) {
	f := strings.Split(s, " ")
	if len(f) < 7 {
		return ExtraInfo{}, fmt.Errorf("%w: %d fields in %q", ErrBadExtraInfo, len(f), s)
	}
	var e ExtraInfo
	var err error
	num := func(i int) int64 {
		if err != nil {
			return 0
		}
		var v int64
		v, err = strconv.ParseInt(f[i], 10, 64)
		return v
	}
	num32 := func(i int) int32 {
		if err != nil {
			return 0
		}
		var v int64
		v, err = strconv.ParseInt(f[i], 10, 32)
		return int32(v)
	}
	e.CkQueueOffset = num(0)
	e.PopTime = num(1)
	e.InvisibleTime = num(2)
	e.ReviveQid = num32(3)
	e.Retry = f[4]
	e.BrokerName = f[5]
	e.QueueID = num32(6)
	e.MsgQueueOffset = -1
	if len(f) > 7 {
		e.MsgQueueOffset = num(7)
	}
	if err != nil {
		return ExtraInfo{}, fmt.Errorf("%w: %q: %w", ErrBadExtraInfo, s, err)
	}
	if e.Retry != "0" && e.Retry != "1" && e.Retry != "2" {
		return ExtraInfo{}, fmt.Errorf("%w: retry flag %q", ErrBadExtraInfo, e.Retry)
	}
	return e, nil
}

// RealTopic is the topic the handle's message was popped from (ExtraInfoUtil.getRealTopic).
func (e *ExtraInfo) RealTopic(topic, group string) string {
	switch e.Retry {
	case "1":
		return PopRetryTopic(topic, group)
	case "2":
		return PopRetryTopicV2(topic, group)
	}
	return topic
}

// AppendExtraInfo appends the eight-field handle of a message (ExtraInfoUtil.buildExtraInfo).
func AppendExtraInfo(dst []byte, ckQueueOffset, popTime, invisibleTime int64, reviveQid int32, topic, brokerName string,
	queueID int32, msgQueueOffset int64) []byte {
	dst = strconv.AppendInt(dst, ckQueueOffset, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, popTime, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, invisibleTime, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(reviveQid), 10)
	dst = append(dst, ' ')
	dst = append(dst, PopRetryMark(topic)...)
	dst = append(dst, ' ')
	dst = append(dst, brokerName...)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(queueID), 10)
	dst = append(dst, ' ')
	return strconv.AppendInt(dst, msgQueueOffset, 10)
}

// AppendOffsetInfo appends one "retry queueId values" triple of
// startOffsetInfo / msgOffsetInfo (values ","-joined), ";" before all but the first.
func AppendOffsetInfo(dst []byte, topic string, queueID int32, values ...int64) []byte {
	if len(dst) > 0 {
		dst = append(dst, ';')
	}
	dst = append(dst, PopRetryMark(topic)...)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(queueID), 10)
	dst = append(dst, ' ')
	for i, v := range values {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, v, 10)
	}
	return dst
}

// PopRetryMark is ExtraInfoUtil.getRetry(topic): the retry field of a handle and of offset infos.
func PopRetryMark(topic string) string {
	switch {
	case IsRetryTopic(topic) && strings.Contains(topic, "+"):
		return "2"
	case IsRetryTopic(topic):
		return "1"
	}
	return "0"
}

// PopRetryTopic is the pop retry topic of topic for group, V1
// (KeyBuilder.buildPopRetryTopicV1; Apache's default, enableRetryTopicV2 false).
func PopRetryTopic(topic, group string) string { return RetryGroupPrefix + group + "_" + topic }

// PopRetryTopicV2 is KeyBuilder.buildPopRetryTopicV2.
func PopRetryTopicV2(topic, group string) string { return RetryGroupPrefix + group + "+" + topic }
