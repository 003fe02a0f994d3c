package message

import (
	"strconv"
	"strings"
)

// Kind is a message's type as Apache 5.x reads it from the message's own
// properties (TopicMessageType.parseFromMessageProperty), whatever its
// topic's message.type says.
type Kind uint8

const (
	KindNormal Kind = iota
	KindTransaction
	KindDelay
	KindFIFO
	KindPriority
	KindLite
)

// KindOf reads the kind from props in Apache's order, which keeps the kinds
// exclusive: a prepared transaction message, then a delay or timer, then a
// message group, then a priority, then a lite topic.
func KindOf(props string) Kind {
	switch {
	case strings.EqualFold(Property(props, PropTransactionPrepared), "true"):
		return KindTransaction
	case Property(props, PropDelayTimeLevel) != "" || Property(props, PropTimerDeliverMs) != "" ||
		Property(props, PropTimerDelaySec) != "" || Property(props, PropTimerDelayMs) != "":
		return KindDelay
	case Property(props, PropShardingKey) != "":
		return KindFIFO
	case Property(props, PropPriority) != "":
		return KindPriority
	case Property(props, PropLiteTopic) != "":
		return KindLite
	}
	return KindNormal
}

// Priority is the message's priority (Apache 5.4's Message.getPriority):
// the value of _SYS_MSG_PRIORITY_ as a Java int, -1 when absent or not one.
// A substring search answers the messages without one, which are most,
// without parsing the properties.
func Priority(props string) int {
	if !strings.Contains(props, PropPriority) {
		return -1
	}
	p, err := strconv.ParseInt(Property(props, PropPriority), 10, 32)
	if err != nil {
		return -1
	}
	return int(p)
}
