package message

// Topic and group names as Apache's TopicValidator checks them: 5.3.3's topic
// rule (characters ^[%|a-zA-Z0-9_-]+$, at most 127), upstream's group rule
// (validateGroup: the same characters, at most 120, so that %RETRY%<group>
// and %DLQ%<group> are valid topics), the system topics and the topics
// clients may not send to. A name that passes contains no '/', '.', NUL or
// control character, so it is safe as a file name under the store.

import (
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rocketgo/rocketgo/remoting"
)

// Name limits (TopicValidator.TOPIC_MAX_LENGTH, upstream GROUP_MAX_LENGTH).
const (
	TopicMaxLength = 127
	// RetryOrDLQTopicMaxLength bounds retry and DLQ topics (Apache 5.5):
	// "%RETRY%" + a group of 120 + "_" + a topic of 127, a pop retry topic.
	RetryOrDLQTopicMaxLength = 255
	GroupMaxLength           = 120
)

// Topics the broker uses that are not created by rocketgo but are Apache's
// system topics (TopicValidator).
const (
	TransHalfTopic         = "RMQ_SYS_TRANS_HALF_TOPIC"
	TransOpHalfTopic       = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
	TransCheckMaxTimeTopic = "TRANS_CHECK_MAX_TIME_TOPIC"
	SystemTopicPrefix      = "rmq_sys_"
)

var (
	// ErrTopicInvalid: a topic name that breaks the topic rule.
	ErrTopicInvalid = errors.New("message: topic name invalid")
	// ErrGroupInvalid: a group name that breaks the group rule.
	ErrGroupInvalid = errors.New("message: group name invalid")
	// ErrQueueNumsInvalid: queue counts outside [1, maxTopicQueueNums].
	ErrQueueNumsInvalid = errors.New("message: queue nums invalid")
)

// invalidParam refuses a name or number: INVALID_PARAMETER with remark
// (Apache's words where Apache refuses the same), standing for kind
// (ErrTopicInvalid, ErrGroupInvalid, ErrQueueNumsInvalid, ErrSystemTopic).
func invalidParam(kind error, remark string) *remoting.Refusal {
	return &remoting.Refusal{Code: remoting.InvalidParameter, Remark: remark, Err: kind}
}

// RemarkTopicBlank is TopicValidator.validateTopic's remark for a blank
// name, and DELETE_TOPIC_IN_BROKER's.
const RemarkTopicBlank = "The specified topic is blank."

// RemarkTopicIllegal and RemarkTopicTooLong are validateTopic's other
// remarks (Apache 5.5's, which name the topic).
func RemarkTopicIllegal(name string) string {
	return "The specified topic: " + name + ", contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"
}

func RemarkTopicTooLong(name string) string {
	if IsRetryTopic(name) || strings.HasPrefix(name, DLQGroupPrefix) {
		return "The specified topic is DLQ or Retry topic: " + name + ", and it's longer than topic max length: " +
			strconv.Itoa(RetryOrDLQTopicMaxLength)
	}
	return "The specified topic: " + name + ", is longer than topic max length: " + strconv.Itoa(TopicMaxLength)
}

// validChar is TopicValidator.VALID_CHAR_BIT_MAP.
var validChar = func() (m [256]bool) {
	for c := '0'; c <= '9'; c++ {
		m[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		m[c] = true
		m[c-'a'+'A'] = true
	}
	m['%'], m['|'], m['_'], m['-'] = true, true, true, true
	return m
}()

// illegalName is TopicValidator.isTopicOrGroupIllegal. Any byte of a
// multi-byte UTF-8 sequence is illegal, as every non-ASCII char is in Java.
func illegalName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !validChar[s[i]] {
			return true
		}
	}
	return false
}

// IsBlank is Apache's UtilAll.isBlank: empty or only Java whitespace
// (Character.isWhitespace: the ASCII controls 9-13 and 28-31, and Unicode
// space separators other than the no-break ones).
func IsBlank(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c != ' ' && (c < '\t' || c > '\r') && (c < 0x1c || c > 0x1f) {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == 0xa0 || r == 0x2007 || r == 0x202f ||
			!(unicode.Is(unicode.Zs, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r)) {
			return false
		}
		i += size
	}
	return true
}

func topicMaxLength(name string) int {
	if IsRetryTopic(name) || strings.HasPrefix(name, DLQGroupPrefix) {
		return RetryOrDLQTopicMaxLength
	}
	return TopicMaxLength
}

// ValidTopicName applies TopicValidator.validateTopic (5.5), in its order:
// blank, characters, length (255 for retry and DLQ topics, else 127). The
// error is a *Refusal (INVALID_PARAMETER, Apache's remark) standing for
// ErrTopicInvalid.
func ValidTopicName(name string) error {
	switch {
	case IsBlank(name):
		return invalidParam(ErrTopicInvalid, RemarkTopicBlank)
	case illegalName(name):
		return invalidParam(ErrTopicInvalid, RemarkTopicIllegal(name))
	case len(name) > topicMaxLength(name):
		return invalidParam(ErrTopicInvalid, RemarkTopicTooLong(name))
	}
	return nil
}

// ValidGroupName applies upstream's TopicValidator.validateGroup (5.3.3 has
// no such check on the broker; see docs/compatibility.md). The error is a *Refusal
// (INVALID_PARAMETER, upstream's remark) standing for ErrGroupInvalid.
func ValidGroupName(name string) error {
	switch {
	case IsBlank(name):
		return invalidParam(ErrGroupInvalid, "The specified group is blank.")
	case illegalName(name):
		return invalidParam(ErrGroupInvalid, "The specified group: "+name+
			", contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$")
	case len(name) > GroupMaxLength:
		return invalidParam(ErrGroupInvalid, "The specified group: "+name+", is longer than group max length: 120")
	}
	return nil
}

// staticSystemTopics is TopicValidator.SYSTEM_TOPIC_SET before the broker
// adds its own (cluster name, broker name, trace and reply topics: see
// the broker's Topics.putSystem).
var staticSystemTopics = map[string]bool{
	AutoCreateTopicKey:     true,
	ScheduleTopic:          true,
	BenchmarkTopic:         true,
	TransHalfTopic:         true,
	"RMQ_SYS_TRACE_TOPIC":  true,
	TransOpHalfTopic:       true,
	TransCheckMaxTimeTopic: true,
	SelfTestTopic:          true,
	OffsetMovedEvent:       true,
	"CHECKPOINT_TOPIC":     true,
}

// notAllowedSend is TopicValidator.NOT_ALLOWED_SEND_TOPIC_SET plus the timer
// topic: a message staged there is delivered to the topic its REAL_TOPIC
// names, so a client that could write it directly could write anywhere.
var notAllowedSend = map[string]bool{
	ScheduleTopic:          true,
	TransHalfTopic:         true,
	TransOpHalfTopic:       true,
	TransCheckMaxTimeTopic: true,
	SelfTestTopic:          true,
	OffsetMovedEvent:       true,
	TimerTopic:             true,
}

// NotAllowedSend reports whether clients may not send to topic
// (TopicValidator.isNotAllowedSendTopic, plus rmq_sys_wheel_timer).
func NotAllowedSend(topic string) bool { return notAllowedSend[topic] }

// IsSystemTopicName is TopicValidator.isSystemTopic without the names a
// broker adds from its config (the broker's Topics.IsSystem has those): the
// static system topics and the rmq_sys_ prefix.
func IsSystemTopicName(topic string) bool {
	return staticSystemTopics[topic] || strings.HasPrefix(topic, SystemTopicPrefix)
}

// StaticSystemTopics lists TopicValidator.SYSTEM_TOPIC_SET before a broker
// adds its own names, in no order.
func StaticSystemTopics() []string {
	out := make([]string, 0, len(staticSystemTopics))
	for n := range staticSystemTopics {
		out = append(out, n)
	}
	return out
}

// System topic names (Apache TopicValidator / MixAll).
const (
	AutoCreateTopicKey = "TBW102"
	SelfTestTopic      = "SELF_TEST_TOPIC"
	OffsetMovedEvent   = "OFFSET_MOVED_EVENT"
	ScheduleTopic      = "SCHEDULE_TOPIC_XXXX"
	BenchmarkTopic     = "BenchmarkTest"
	// SyncBrokerMemberPrefix + broker name: TopicValidator.SYNC_BROKER_MEMBER_GROUP_PREFIX.
	SyncBrokerMemberPrefix = SystemTopicPrefix + "SYNC_BROKER_MEMBER_"
	RetryGroupPrefix       = "%RETRY%"
	DLQGroupPrefix         = "%DLQ%"
	// ScheduleConsumerGroup is the group Apache's metrics count delay
	// deliveries out of ScheduleTopic under (MixAll.SCHEDULE_CONSUMER_GROUP).
	ScheduleConsumerGroup = "SCHEDULE_CONSUMER"
	// TransGroup is the consumer group whose offsets on the half and op
	// topics track the transaction check (TransactionalMessageUtil).
	TransGroup = "CID_RMQ_SYS_TRANS"
)

// MasterID is MixAll.MASTER_ID: a master's brokerId, and the broker a pull
// answer suggests pulling from next unless it names a slave.
const MasterID = 0

// TimerTopic stages 5.x timer messages (Apache TimerMessageStore.TIMER_TOPIC).
const TimerTopic = "rmq_sys_wheel_timer"

// Perm bits (Apache PermName).
const (
	PermPriority int32 = 0x8
	PermRead     int32 = 0x4
	PermWrite    int32 = 0x2
	PermInherit  int32 = 0x1
)

// IsRetryTopic reports whether topic is a %RETRY% topic.
func IsRetryTopic(topic string) bool { return strings.HasPrefix(topic, RetryGroupPrefix) }
