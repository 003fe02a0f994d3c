package message

import (
	"strconv"
	"strings"
)

// Lite topics (Apache 5.5, RIP-83) are light message queues (LMQ) of one
// queue, named after a parent topic of message type LITE and the lite topic
// a producer put in the message's __LITE_TOPIC property. The store fills
// them by multi-dispatch; nothing else names them.
const (
	// LMQPrefix starts every light message queue's name (MixAll.LMQ_PREFIX).
	LMQPrefix = "%LMQ%"
	// LitePrefix starts the queue name of a lite topic: %LMQ%$<parent>$<lite>.
	LitePrefix = LMQPrefix + "$"
	// MaxLiteTopicSize is the proxy's default bound on a lite topic's UTF-8
	// length (Apache ProxyConfig.maxLiteTopicSize).
	MaxLiteTopicSize = 64
)

// LiteQueue is the queue name of lite topic lite under parent, or "" when
// either is empty (LiteUtil.toLmqName).
func LiteQueue(parent, lite string) string {
	if parent == "" || lite == "" {
		return ""
	}
	return LitePrefix + parent + "$" + lite
}

// IsLiteQueue reports whether name is a lite topic's queue by its prefix
// only, as Apache's LiteUtil.isLiteTopicQueue does.
func IsLiteQueue(name string) bool { return strings.HasPrefix(name, LitePrefix) }

// ParseLiteQueue splits a lite topic's queue name into its parent and lite
// topic; ok is false unless exactly one '$' separates two non-empty parts
// after the prefix (LiteUtil.getParentTopic and getLiteTopic).
func ParseLiteQueue(name string) (parent, lite string, ok bool) {
	rest, found := strings.CutPrefix(name, LitePrefix)
	if !found {
		return "", "", false
	}
	i := strings.IndexByte(rest, '$')
	if i <= 0 || i == len(rest)-1 || strings.IndexByte(rest[i+1:], '$') >= 0 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

// LiteQueueOf reports whether name is the queue of a lite topic of parent
// (LiteUtil.belongsTo: a prefix check).
func LiteQueueOf(name, parent string) bool {
	return len(name) > len(LitePrefix)+len(parent) && strings.HasPrefix(name, LitePrefix) &&
		strings.HasPrefix(name[len(LitePrefix):], parent) && name[len(LitePrefix)+len(parent)] == '$'
}

// LiteTopicProblem is Apache's proxy check of a lite topic a client names
// (GrpcValidator.validateLiteTopic): the text of the ILLEGAL_LITE_TOPIC
// status, or "" when the name is valid. maxSize bounds its UTF-8 length.
func LiteTopicProblem(lite string, maxSize int) string {
	if strings.TrimFunc(lite, isJavaWhitespace) == "" {
		return "lite topic cannot be the char sequence of whitespace"
	}
	if len(lite) > maxSize {
		return "lite topic exceed the max size " + strconv.Itoa(maxSize)
	}
	for i := 0; i < len(lite); i++ {
		c := lite[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return "lite topic can only contain alphanumeric characters, hyphens(-), and underscores(_)"
		}
	}
	return ""
}

// isJavaWhitespace is Character.isWhitespace, which StringUtils.isBlank uses.
func isJavaWhitespace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f, 0x1680, 0x2028, 0x2029, 0x205f, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x2006 || r >= 0x2008 && r <= 0x200a
}

// ConsistentHash is Guava's Hashing.consistentHash, with which Apache 5.5's
// proxy picks the queue of a message group or lite topic and its broker
// decides which lite topics it owns: both sides must agree bit for bit, so
// Java's double-to-int conversion is reproduced, not Go's.
func ConsistentHash(input int64, buckets int) int {
	if buckets <= 0 {
		return 0
	}
	state := input
	candidate := 0
	for {
		state = 2862933555777941757*state + 1
		d := float64(int32(uint64(state)>>33)+1) / (1 << 31)
		v := float64(candidate+1) / d
		if v >= float64(buckets) {
			return candidate
		}
		candidate = int(v)
	}
}
