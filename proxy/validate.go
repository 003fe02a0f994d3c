package proxy

import (
	"strconv"
	"strings"
	"unicode"

	v2 "github.com/rocketgo/rocketgo/apis/v2"
	"github.com/rocketgo/rocketgo/message"
)

// Apache's GrpcValidator: names and message fields a client sends are
// checked here, before anything reaches a broker.

func validateTopic(r *v2.Resource) error {
	name := r.GetName()
	if err := message.ValidTopicName(name); err != nil {
		return refuse(v2.Code_ILLEGAL_TOPIC, err.Error())
	}
	if message.IsSystemTopicName(name) {
		return refuse(v2.Code_ILLEGAL_TOPIC, "cannot access system topic")
	}
	return nil
}

// sysConsumerGroupPrefix is MixAll.CID_SYS_RMQ_TRANS's family prefix
// (MixAll.isSysConsumerGroup).
const sysConsumerGroupPrefix = "CID_RMQ_SYS_"

func validateGroup(r *v2.Resource) error {
	name := r.GetName()
	if err := message.ValidGroupName(name); err != nil {
		return refuse(v2.Code_ILLEGAL_CONSUMER_GROUP, err.Error())
	}
	if strings.HasPrefix(name, sysConsumerGroupPrefix) {
		return refuse(v2.Code_ILLEGAL_CONSUMER_GROUP, "cannot use system consumer group")
	}
	return nil
}

func validateTag(tag string) error {
	if tag == "" {
		return nil
	}
	switch {
	case strings.TrimSpace(tag) == "":
		return refuse(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot be the char sequence of whitespace")
	case strings.Contains(tag, "|"):
		return refuse(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot contain '|'")
	case hasControl(tag):
		return refuse(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot contain control character")
	}
	return nil
}

// hasControl is Guava's CharMatcher.javaIsoControl over the string.
func hasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}

// maxClientIDLength bounds x-mq-client-id: the proxy keeps one entry per
// client id (up to maxClients), so the id's length bounds that memory. The
// SDKs' ids are host@pid@index@time, well under it.
const maxClientIDLength = 1024

// validateClientID is Apache's validateContext (a blank id is
// CLIENT_ID_REQUIRED) plus rocketgo's bound on the id's length and its
// characters (BAD_REQUEST).
func validateClientID(id string) *v2.Status {
	switch {
	case strings.TrimSpace(id) == "":
		return &v2.Status{Code: v2.Code_CLIENT_ID_REQUIRED, Message: "client id cannot be empty"}
	case len(id) > maxClientIDLength:
		return &v2.Status{Code: v2.Code_BAD_REQUEST, Message: "client id is longer than " + strconv.Itoa(maxClientIDLength) + " bytes"}
	case hasControl(id):
		return &v2.Status{Code: v2.Code_BAD_REQUEST, Message: "client id cannot contain control character"}
	}
	return nil
}
