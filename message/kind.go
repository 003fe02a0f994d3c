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
	return kindBy(func(name string) string { return Property(props, name) })
}

// KindOfMap is KindOf over parsed properties.
func KindOfMap(props map[string]string) Kind {
	return kindBy(func(name string) string { return props[name] })
}

func kindBy(get func(name string) string) Kind {
	switch {
	case strings.EqualFold(get(PropTransactionPrepared), "true"):
		return KindTransaction
	case get(PropDelayTimeLevel) != "" || get(PropTimerDeliverMs) != "" ||
		get(PropTimerDelaySec) != "" || get(PropTimerDelayMs) != "":
		return KindDelay
	case get(PropShardingKey) != "":
		return KindFIFO
	case get(PropPriority) != "":
		return KindPriority
	case get(PropLiteTopic) != "":
		return KindLite
	}
	return KindNormal
}

// String is the kind's name in Apache's TopicMessageType.
func (k Kind) String() string {
	switch k {
	case KindTransaction:
		return "TRANSACTION"
	case KindDelay:
		return "DELAY"
	case KindFIFO:
		return "FIFO"
	case KindPriority:
		return "PRIORITY"
	case KindLite:
		return "LITE"
	}
	return "NORMAL"
}

// Priority is the message's priority (Apache 5.4's Message.getPriority):
// the value of _SYS_MSG_PRIORITY_ as a Java int, -1 when absent or not one.
// A substring search answers the messages without one, which are most,
// without parsing the properties.
func Priority(props string) int {
	if !strings.Contains(props, PropPriority) {
		return -1
	}
	return ParsePriority(Property(props, PropPriority))
}

// ParsePriority reads a _SYS_MSG_PRIORITY_ value: -1 when it is not a Java
// int.
func ParsePriority(v string) int {
	p, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return -1
	}
	return int(p)
}
