package tables

import (
	"strconv"
)

// Topic attributes Apache 5.5 verifies (TopicAttributes.ALL) that rocketgo
// acts on.
const (
	AttrMessageType = "message.type"
	// AttrLiteExpiration is how long, in minutes, a lite topic of a LITE
	// topic lives without a new message (≤ 0: forever).
	AttrLiteExpiration = "lite.topic.expiration"
)

// messageTypes is TopicMessageType's set, in the order Apache prints its
// HashSet when it refuses a value.
const messageTypes = "[UNSPECIFIED, MIXED, TRANSACTION, PRIORITY, FIFO, DELAY, LITE, NORMAL]"

var liteExpiration = longRange{changeable: true, min: -1, max: 30 * 24 * 60, def: -1}

// VerifyTopicAttribute is Apache's verification of one topic attribute
// value: "" or the text Apache's attribute throws. Keys Apache does not
// verify here pass.
func VerifyTopicAttribute(key, value string) string {
	switch key {
	case AttrMessageType:
		switch value {
		case "UNSPECIFIED", "NORMAL", "FIFO", "DELAY", "TRANSACTION", "PRIORITY", "LITE", "MIXED":
			return ""
		}
		return "value is not in set: " + messageTypes
	case AttrLiteExpiration:
		return liteExpiration.verify(value)
	}
	return ""
}

// Priority reports a topic of message.type PRIORITY, whose pops take the
// highest queue first.
func (tc *TopicConfig) Priority() bool { return tc.Attributes[AttrMessageType] == "PRIORITY" }

// Lite reports a topic of message.type LITE, a parent of lite topics.
func (tc *TopicConfig) Lite() bool { return tc.Attributes[AttrMessageType] == "LITE" }

// LiteExpiration is the topic's lite.topic.expiration in minutes: -1 unless
// the topic is LITE and the value is set (TopicConfig.getLiteTopicExpiration).
func (tc *TopicConfig) LiteExpiration() int64 {
	if !tc.Lite() {
		return -1
	}
	v, err := strconv.ParseInt(tc.Attributes[AttrLiteExpiration], 10, 64)
	if err != nil {
		return -1
	}
	return v
}
