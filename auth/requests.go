package auth

import (
	"strings"

	"github.com/rocketgo/rocketgo/remoting"
)

// Request codes DefaultAuthorizationContextBuilder special-cases
// (RequestCode).
const (
	codeSendMessage          int32 = 10
	codePullMessage          int32 = 11
	codeQueryMessage         int32 = 12
	codeQueryConsumerOffset  int32 = 14
	codeUpdateConsumerOffset int32 = 15
	codeHeartBeat            int32 = 34
	codeUnregisterClient     int32 = 35
	codeConsumerSendMsgBack  int32 = 36
	codeEndTransaction       int32 = 37
	codeGetConsumerList      int32 = 38
	codeLockBatchMQ          int32 = 41
	codeUnlockBatchMQ        int32 = 42
	codeGetRouteInfo         int32 = 105
	codeSendMessageV2        int32 = 310
	codeSendBatchMessage     int32 = 320
	codeRecallMessage        int32 = 370
)

// clusterUpdateCodes need Cluster:Update on the broker's cluster (or a
// Super user), whatever the request carries. Apache's builder gives
// UPDATE_BROKER_CONFIG no resource at all (its request has no header, and
// RequestHeaderRegistry no class for it), so any authenticated user,
// one without a single policy included, may rewrite the broker's
// configuration; rocketgo asks for the right Apache's own admin codes ask
// for (UPDATE_KV_CONFIG, WIPE_WRITE_PERM_OF_BROKER: Cluster:Update).
// The same holds for the other broker-wide admin codes Apache leaves
// without a resource (no header, or a header RequestHeaderRegistry does
// not map to them): the ACL 1.0 edits, the cleanups, the cold-data and
// read-mode switches, the pop store rollback.
var clusterUpdateCodes = map[int32]bool{
	remoting.UpdateBrokerConfig: true,
	50:                          true, // UPDATE_AND_CREATE_ACL_CONFIG
	51:                          true, // DELETE_ACL_CONFIG
	53:                          true, // UPDATE_GLOBAL_WHITE_ADDRS_CONFIG
	306:                         true, // CLEAN_EXPIRED_CONSUMEQUEUE
	316:                         true, // CLEAN_UNUSED_TOPIC
	329:                         true, // DELETE_EXPIRED_COMMITLOG
	2001:                        true, // UPDATE_COLD_DATA_FLOW_CTR_CONFIG
	2002:                        true, // REMOVE_COLD_DATA_FLOW_CTR_CONFIG
	2004:                        true, // SET_COMMITLOG_READ_MODE
	200056:                      true, // POP_ROLLBACK
	// The lite registry's writes (Apache 5.5 annotates no action on their
	// headers): a subscription of any client to any lite topic, sent by a
	// proxy; a forced dispatch of a group's events.
	remoting.LiteSubscriptionCtl: true,
	remoting.TriggerLiteDispatch: true,
}

// Codes whose resources only the body names, which Apache's builder
// therefore never authorizes (any authenticated user may create or
// rewrite any group or topic with them); rocketgo asks for what the
// header-carrying twins ask: Update on each group (as
// UPDATE_AND_GET_GROUP_FORBIDDEN), Create on each topic (as
// UPDATE_AND_CREATE_TOPIC).
const (
	codeCreateTopicList   int32 = 18  // UPDATE_AND_CREATE_TOPIC_LIST
	codeCreateGroup       int32 = 200 // UPDATE_AND_CREATE_SUBSCRIPTIONGROUP
	codeCreateGroupList   int32 = 225 // UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST
	codeCreateStaticTopic int32 = 513 // UPDATE_AND_CREATE_STATIC_TOPIC
)

// bodyRequests lists what a body-only code needs; ok false: req is not one.
func bodyRequests(req *remoting.Command, dst []Request) (_ []Request, ok bool, err error) {
	switch req.Code {
	case codeCreateGroup:
		var g struct {
			GroupName string `json:"groupName"`
		}
		if json.Unmarshal(req.Body, &g) != nil {
			return dst, true, errParse
		}
		return append(dst, Request{Resource: OfGroup(g.GroupName), Actions: actUpdate}), true, nil
	case codeCreateGroupList:
		var l struct {
			GroupConfigList []struct {
				GroupName string `json:"groupName"`
			} `json:"groupConfigList"`
		}
		if json.Unmarshal(req.Body, &l) != nil {
			return dst, true, errParse
		}
		for _, g := range l.GroupConfigList {
			dst = append(dst, Request{Resource: OfGroup(g.GroupName), Actions: actUpdate})
		}
		return dst, true, nil
	case codeCreateTopicList:
		var l struct {
			TopicConfigList []struct {
				TopicName string `json:"topicName"`
			} `json:"topicConfigList"`
		}
		if json.Unmarshal(req.Body, &l) != nil {
			return dst, true, errParse
		}
		for _, t := range l.TopicConfigList {
			dst = append(dst, Request{Resource: OfTopic(t.TopicName), Actions: actCreate})
		}
		return dst, true, nil
	case codeCreateStaticTopic:
		return append(dst, Request{Resource: OfTopic(req.Str("topic")), Actions: actCreate}), true, nil
	}
	return dst, false, nil
}

// errParse is "parse authorization context error.": a request whose
// resources Apache cannot read (a bad body, a missing required field).
var errParse = refuse("parse authorization context error.")

// requests lists what req needs, as DefaultAuthorizationContextBuilder
// builds it for remoting; cluster names the Cluster resource. It appends
// to dst.
func requests(req *remoting.Command, cluster string, dst []Request) ([]Request, error) {
	if clusterUpdateCodes[req.Code] {
		return append(dst, Request{Resource: Resource{Type: TypeCluster, Name: cluster, Pattern: PatternLiteral}, Actions: actUpdate}), nil
	}
	if out, ok, err := bodyRequests(req, dst); ok {
		return out, err
	}
	if len(req.ExtFields) == 0 {
		return dst, nil // MapUtils.isEmpty(fields): nothing to authorize
	}
	add := func(r Resource, actions ...Action) { dst = append(dst, Request{Resource: r, Actions: actions}) }
	f := req.Str
	need := func(keys ...string) error {
		for _, k := range keys {
			if _, ok := req.Lookup(k); !ok {
				return errParse // @CFNotNull: "the custom field <k> is null"
			}
		}
		return nil
	}
	switch req.Code {
	case codeGetRouteInfo:
		if isRetry(f("topic")) {
			add(OfGroup(f("topic")), actSubGet...)
		} else {
			add(OfTopic(f("topic")), actPubSubGet...)
		}
	case codeSendMessage, codeSendMessageV2, codeSendBatchMessage:
		topicKey, groupKey := "topic", "group"
		if req.Code != codeSendMessage {
			topicKey, groupKey = "b", "a"
		}
		topic := f(topicKey)
		if isRetry(topic) {
			g := f(groupKey)
			if isBlank(g) {
				g = topic
			}
			add(OfGroup(g), actSub...)
		} else {
			add(OfTopic(topic), actPub...)
		}
	case codeRecallMessage:
		add(OfTopic(f("topic")), actPub...)
	case codeEndTransaction:
		if !isBlank(f("topic")) {
			add(OfTopic(f("topic")), actPub...)
		}
	case codeConsumerSendMsgBack:
		add(OfGroup(f("group")), actSub...)
	case codePullMessage:
		if !isRetry(f("topic")) {
			add(OfTopic(f("topic")), actSub...)
		}
		add(OfGroup(f("consumerGroup")), actSub...)
	case codeQueryMessage:
		add(OfTopic(f("topic")), actSubGet...)
	case codeHeartBeat:
		var hb heartbeat
		if err := json.Unmarshal(req.Body, &hb); err != nil {
			return dst, errParse
		}
		for _, c := range hb.ConsumerDataSet {
			add(OfGroup(c.GroupName), actSub...)
			for _, s := range c.SubscriptionDataSet {
				if !isRetry(s.Topic) {
					add(OfTopic(s.Topic), actSub...)
				}
			}
		}
	case codeUnregisterClient:
		if err := need("clientID"); err != nil {
			return dst, err
		}
		if !isBlank(f("consumerGroup")) {
			add(OfGroup(f("consumerGroup")), actSub...)
		}
	case codeGetConsumerList:
		if err := need("consumerGroup"); err != nil {
			return dst, err
		}
		add(OfGroup(f("consumerGroup")), actSubGet...)
	case codeQueryConsumerOffset:
		if err := need("consumerGroup", "topic", "queueId"); err != nil {
			return dst, err
		}
		if !isRetry(f("topic")) {
			add(OfTopic(f("topic")), actSubGet...)
		}
		add(OfGroup(f("consumerGroup")), actSubGet...)
	case codeUpdateConsumerOffset:
		if err := need("consumerGroup", "topic", "queueId", "commitOffset"); err != nil {
			return dst, err
		}
		if !isRetry(f("topic")) {
			add(OfTopic(f("topic")), actSubUpdate...)
		}
		add(OfGroup(f("consumerGroup")), actSubUpdate...)
	case codeLockBatchMQ, codeUnlockBatchMQ:
		var b lockBody
		if err := json.Unmarshal(req.Body, &b); err != nil {
			return dst, errParse
		}
		add(OfGroup(b.ConsumerGroup), actSub...)
		for _, mq := range b.MqSet {
			if !isRetry(mq.Topic) {
				add(OfTopic(mq.Topic), actSub...)
			}
		}
	default:
		return byAnnotation(req, cluster, dst), nil
	}
	return dst, nil
}

// byAnnotation is buildContextByAnnotation: each annotated field present
// gives a resource (a retry topic in a Topic field names its group);
// none, and the annotation names Cluster: the broker's cluster.
func byAnnotation(req *remoting.Command, cluster string, dst []Request) []Request {
	a, ok := annotated[req.Code]
	if !ok {
		return dst
	}
	n := len(dst)
	for _, fld := range a.fields {
		v, ok := req.Lookup(fld.key)
		if !ok {
			continue
		}
		vals := []string{v}
		if fld.splitter != "" {
			vals = strings.FieldsFunc(v, func(r rune) bool { return strings.ContainsRune(fld.splitter, r) })
		}
		for _, s := range vals {
			if fld.typ == TypeTopic && isRetry(s) {
				dst = append(dst, Request{Resource: OfGroup(s), Actions: a.actions})
				continue
			}
			dst = append(dst, Request{Resource: Resource{Type: fld.typ, Name: s, Pattern: PatternLiteral}, Actions: a.actions})
		}
	}
	if len(dst) == n && a.typ == TypeCluster {
		dst = append(dst, Request{Resource: Resource{Type: TypeCluster, Name: cluster, Pattern: PatternLiteral}, Actions: a.actions})
	}
	return dst
}

// The action lists the builder uses (shared, never changed).
var (
	actPub       = []Action{ActionPub}
	actSub       = []Action{ActionSub}
	actSubGet    = []Action{ActionSub, ActionGet}
	actPubSubGet = []Action{ActionPub, ActionSub, ActionGet}
	actSubUpdate = []Action{ActionSub, ActionUpdate}
	actUpdate    = []Action{ActionUpdate}
	actCreate    = []Action{ActionCreate}
)

// heartbeat is the part of HeartbeatData the builder reads.
type heartbeat struct {
	ConsumerDataSet []struct {
		GroupName           string `json:"groupName"`
		SubscriptionDataSet []struct {
			Topic string `json:"topic"`
		} `json:"subscriptionDataSet"`
	} `json:"consumerDataSet"`
}

// lockBody is LockBatchRequestBody's part the builder reads.
type lockBody struct {
	ConsumerGroup string `json:"consumerGroup"`
	MqSet         []struct {
		Topic string `json:"topic"`
	} `json:"mqSet"`
}
