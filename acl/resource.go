package acl

import (
	"errors"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// need is one resource a request uses and the permission it needs
// (PlainAccessResource.resourcePermMap): a topic, or a group as its retry
// topic.
type need struct {
	res  string
	perm Perm
}

// needs is the resources of one request, as PlainAccessResource.parse
// (5.3.1, a superset of 4.9.8's) lists them:
//
//	SEND_MESSAGE (10)             topic: PUB (a retry topic: SUB)
//	SEND_MESSAGE_V2/BATCH (310/320) b: as above
//	CONSUMER_SEND_MSG_BACK (36)   group: SUB
//	PULL_MESSAGE (11)             topic: SUB, consumerGroup: SUB
//	QUERY_MESSAGE (12)            topic: SUB
//	HEART_BEAT (34)               each consumer group: SUB, each subscribed topic: SUB
//	UNREGISTER_CLIENT (35)        consumerGroup: SUB
//	GET_CONSUMER_LIST_BY_GROUP (38) consumerGroup: SUB
//	UPDATE_CONSUMER_OFFSET (15)   consumerGroup: SUB, topic: SUB
//
// Other codes need no resource (only the signature, and admin for the
// admin codes). An absent field adds nothing, as Apache's null.
func needsOf(req *remoting.Command, dst []need) ([]need, error) {
	add := func(res string, p Perm) {
		for i := range dst {
			if dst[i].res == res {
				dst[i].perm = p // HashMap.put: the later permission, the first place
				return
			}
		}
		dst = append(dst, need{res, p})
	}
	field := func(k string, p Perm) {
		if v, ok := req.Lookup(k); ok {
			add(v, p)
		}
	}
	group := func(k string) {
		if v, ok := req.Lookup(k); ok {
			add(message.RetryGroupPrefix+v, Sub)
		}
	}
	send := func(k string) {
		if v, ok := req.Lookup(k); ok {
			if isRetry(v) {
				add(v, Sub)
			} else {
				add(v, Pub)
			}
		}
	}
	switch req.Code {
	case remoting.SendMessage:
		send("topic")
	case remoting.SendMessageV2, remoting.SendBatchMessage:
		send("b")
	case remoting.ConsumerSendMsgBack:
		group("group")
	case remoting.PullMessage:
		field("topic", Sub)
		group("consumerGroup")
	case remoting.QueryMessage:
		field("topic", Sub)
	case remoting.HeartBeat:
		var hb heartbeatGroups
		if err := json.Unmarshal(req.Body, &hb); err != nil {
			return dst, errors.New("heartbeat body: " + err.Error())
		}
		for _, c := range hb.ConsumerDataSet {
			add(message.RetryGroupPrefix+c.GroupName, Sub)
			for _, s := range c.SubscriptionDataSet {
				add(s.Topic, Sub)
			}
		}
	case remoting.UnregisterClient, remoting.GetConsumerListByGroup:
		group("consumerGroup")
	case remoting.UpdateConsumerOffset:
		group("consumerGroup")
		field("topic", Sub)
	}
	return dst, nil
}

// heartbeatGroups is the part of HeartbeatData ACL reads.
type heartbeatGroups struct {
	ConsumerDataSet []struct {
		GroupName           string `json:"groupName"`
		SubscriptionDataSet []struct {
			Topic string `json:"topic"`
		} `json:"subscriptionDataSet"`
	} `json:"consumerDataSet"`
}

func isRetry(topic string) bool { return strings.HasPrefix(topic, message.RetryGroupPrefix) }

// javaOrder sorts needs into a java.util.HashMap's iteration order, which
// decides which refusal Apache reports when several resources fail: by
// bucket (spread String.hashCode masked by the table size), then by
// insertion within a bucket.
func javaOrder(ns []need) {
	if len(ns) < 2 {
		return
	}
	size := 16
	for len(ns) > size*3/4 {
		size *= 2
	}
	bucket := func(s string) int {
		h := javaHash(s)
		return int((h ^ h>>16) & uint32(size-1))
	}
	slices.SortStableFunc(ns, func(a, b need) int { return bucket(a.res) - bucket(b.res) })
}

// javaHash is String.hashCode: over UTF-16 code units.
func javaHash(s string) uint32 {
	var h uint32
	for _, r := range s {
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			h = 31*h + uint32(r1)
			h = 31*h + uint32(r2)
			continue
		}
		h = 31*h + uint32(r)
	}
	return h
}
