package processor

import (
	"fmt"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/filter"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

func (p *brokerProcs) registerPull(t Table) {
	t[remoting.PullMessage] = p.pull
	t[remoting.LitePullMessage] = p.pull
}

// Pull sysFlag bits (PullSysFlag).
const (
	pullCommitOffset = 0x1
	pullSuspend      = 0x2
	pullSubscription = 0x4
)

type pullHeader struct {
	group          string
	topic          string
	queueID        int32
	queueOffset    int64
	maxMsgNums     int32
	sysFlag        int32
	commitOffset   int64
	suspendTimeout int64
	subscription   string
	subVersion     int64
	expressionType string
	maxMsgBytes    int64
}

func parsePullHeader(req *remoting.Command) (h pullHeader, err error) {
	if h.group, err = req.RequireStr("consumerGroup"); err != nil {
		return
	}
	if h.topic, err = req.RequireStr("topic"); err != nil {
		return
	}
	if h.queueID, err = req.Int32("queueId"); err != nil {
		return
	}
	if h.queueOffset, err = req.Int64("queueOffset"); err != nil {
		return
	}
	if h.maxMsgNums, err = req.Int32("maxMsgNums"); err != nil {
		return
	}
	if h.sysFlag, err = req.Int32("sysFlag"); err != nil {
		return
	}
	h.commitOffset = req.OptInt64("commitOffset", 0)
	h.suspendTimeout = req.OptInt64("suspendTimeoutMillis", 0)
	h.subscription = req.Str("subscription")
	h.subVersion = req.OptInt64("subVersion", 0)
	h.expressionType = req.Str("expressionType")
	h.maxMsgBytes = req.OptInt64("maxMsgBytes", 0)
	return h, nil
}

func (p *brokerProcs) pull(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	return p.pullMessage(c, req, true)
}

// pullMessage serves PULL_MESSAGE / LITE_PULL_MESSAGE. With allowSuspend a
// request that finds nothing is parked in the broker's Holds and answered
// later; the re-run from Holds passes allowSuspend=false.
func (p *brokerProcs) pullMessage(c *remoting.Conn, req *remoting.Command, allowSuspend bool) *remoting.Command {
	h, err := parsePullHeader(req)
	if err != nil {
		return p.fail(req, err)
	}
	sub, expr, resp := p.checkPull(req, &h)
	if resp != nil {
		return resp
	}
	st := p.b.Store
	maxNums := min(int(h.maxMsgNums), p.b.Config().MaxTransferCountOnMessageInMemory)
	maxBytes := p.b.Config().MaxTransferBytesOnMessageInMemory
	if h.maxMsgBytes > 0 && h.maxMsgBytes < int64(maxBytes) {
		maxBytes = int(h.maxMsgBytes)
	}
	var match func(int64, []byte) bool
	if expr != nil {
		// SQL92: the tags code says nothing; evaluate against the properties.
		match = func(_ int64, record []byte) bool {
			v, _, err := message.DecodeRecordView(record)
			return err == nil && expr.Match(func(name string) (string, bool) {
				b := message.PropertyBytes(v.Properties, name)
				return string(b), len(b) > 0
			})
		}
	} else if !sub.All() {
		match = func(code int64, record []byte) bool {
			if !sub.MatchTagsCode(code) {
				return false
			}
			v, _, err := message.DecodeRecordView(record)
			return err == nil && sub.MatchTag(message.PropertyBytes(v.Properties, message.PropTags))
		}
	}
	// The answer's body is slices of the mapped commit log, pinned until the
	// connection has written them (ReleaseBody); nothing is copied here.
	res := st.GetMessageViews(h.topic, h.queueID, h.queueOffset, max(maxNums, 1), maxBytes, match, store.AnyPages)

	code := pullCode(res.Status, h.queueOffset)
	if code != remoting.Success && res.Release != nil {
		res.Release() // not sent, and a parked pull must pin nothing
		res.Release, res.Vec = nil, nil
	}
	if allowSuspend && h.sysFlag&pullCommitOffset != 0 {
		p.b.Offsets.Commit(h.group, h.topic, h.queueID, h.commitOffset)
	}
	if code == remoting.PullNotFound && allowSuspend && h.sysFlag&pullSuspend != 0 {
		timeout := time.Duration(h.suspendTimeout) * time.Millisecond
		if !p.b.Config().LongPollingEnable {
			timeout = time.Duration(p.b.Config().ShortPollingTimeMills) * time.Millisecond
		}
		if p.b.Holds.Reserve(c.Remote) { // else maxParkedPulls: answered now, as a pull not suspended
			held := req.Clone() // req is recycled when this handler returns
			p.b.Holds.Park(c, h.topic, h.queueID, h.queueOffset, timeout, func() *remoting.Command {
				return p.pullMessage(c, held, false)
			})
			return nil
		}
	}
	out := remoting.NewResponse(req, code, "")
	out.SetInt64("nextBeginOffset", res.NextBeginOffset)
	out.SetInt64("minOffset", res.MinOffset)
	out.SetInt64("maxOffset", res.MaxOffset)
	out.Set("suggestWhichBrokerId", "0")
	if code != remoting.Success {
		return out
	}
	out.BodyVec = res.Vec
	out.ReleaseBody = res.Release
	return out
}

// pullCode maps the store's result to Apache's response code
// (PullMessageProcessor; remoting.md §6.5).
func pullCode(s store.GetStatus, requested int64) int32 {
	switch s {
	case store.Found:
		return remoting.Success
	case store.NoMatchedMessage, store.MessageWasRemoving:
		return remoting.PullRetryImmediately
	case store.NoMessageInQueue, store.NoMatchedLogicQueue:
		if requested != 0 {
			return remoting.PullOffsetMoved
		}
		return remoting.PullNotFound
	case store.OffsetFoundNull, store.OffsetOverflowOne:
		return remoting.PullNotFound
	case store.OffsetOverflowBadly, store.OffsetTooSmall:
		return remoting.PullOffsetMoved
	}
	return remoting.PullNotFound
}

// checkPull applies the broker's permission, group, topic and subscription
// checks, returning the subscription to filter with (and its compiled
// expression for SQL92) or an error response.
func (p *brokerProcs) checkPull(req *remoting.Command, h *pullHeader) (*broker.Subscription, *filter.Expr, *remoting.Command) {
	sub, resp := p.checkPullSub(req, h)
	if resp != nil || isTagType(sub.ExpressionType) {
		return sub, nil, resp
	}
	if !strings.EqualFold(sub.ExpressionType, "SQL92") || !p.b.Config().EnablePropertyFilter {
		return nil, nil, sql92Unsupported(req)
	}
	expr, err := p.b.Filters.Compile(sub.SubString)
	if err != nil {
		return nil, nil, remoting.NewResponse(req, remoting.SubscriptionParseFailed,
			"parse the consumer's subscription failed: "+err.Error())
	}
	return sub, expr, nil
}

func (p *brokerProcs) checkPullSub(req *remoting.Command, h *pullHeader) (*broker.Subscription, *remoting.Command) {
	if p.b.Config().BrokerPermission&broker.PermRead == 0 {
		return nil, remoting.NewResponse(req, remoting.NoPermission,
			fmt.Sprintf("the broker[%s] pulling message is forbidden", p.b.Config().Addr()))
	}
	gc, ok := p.b.Groups.Get(h.group)
	if !ok {
		// An invalid name is never created (Groups.Get), as Apache's
		// findSubscriptionGroupConfig: the same answer as for a missing group.
		return nil, remoting.NewResponse(req, remoting.SubscriptionGroupNotExist,
			fmt.Sprintf("subscription group [%s] does not exist, %s", h.group, broker.FAQGroupNotExist))
	}
	if !gc.ConsumeEnable {
		return nil, remoting.NewResponse(req, remoting.NoPermission, "subscription group no permission, "+h.group)
	}
	if !gc.ConsumeBroadcastEnable {
		if info, ok := p.b.Clients.ConsumerInfo(h.group); ok && info.MessageModel == "BROADCASTING" {
			return nil, remoting.NewResponse(req, remoting.NoPermission,
				fmt.Sprintf("the consumer group[%s] can not consume by broadcast way", h.group))
		}
	}
	tc, ok := p.b.Topics.Get(h.topic)
	if !ok {
		return nil, remoting.NewResponse(req, remoting.TopicNotExist,
			fmt.Sprintf("topic[%s] not exist, apply first please!", h.topic))
	}
	if !tc.Readable() {
		return nil, remoting.NewResponse(req, remoting.NoPermission,
			fmt.Sprintf("the topic[%s] pulling message is forbidden", h.topic))
	}
	if h.queueID < 0 || h.queueID >= tc.ReadQueueNums {
		return nil, remoting.NewResponse(req, remoting.SystemError,
			fmt.Sprintf("queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d] consumer:[%s]",
				h.queueID, h.topic, tc.ReadQueueNums, h.group))
	}
	var sub *broker.Subscription
	if h.sysFlag&pullSubscription != 0 {
		if !isTagType(h.expressionType) {
			sub = &broker.Subscription{Topic: h.topic, SubString: h.subscription, ExpressionType: h.expressionType,
				SubVersion: h.subVersion}
		} else {
			s, err := p.b.Filters.Tags(h.subscription)
			if err != nil { // filterExpressionMaxLength
				return nil, remoting.NewResponse(req, remoting.SubscriptionParseFailed,
					"parse the consumer's subscription failed")
			}
			sub = s
		}
	} else {
		s, known := p.b.Clients.Subscription(h.group, h.topic)
		if !known {
			return nil, remoting.NewResponse(req, remoting.SubscriptionNotExist,
				fmt.Sprintf("the consumer's group info not exist, group: %s", h.group))
		}
		if s == nil {
			return nil, remoting.NewResponse(req, remoting.SubscriptionNotExist,
				fmt.Sprintf("the consumer's subscription not exist, group: %s, topic: %s", h.group, h.topic))
		}
		if s.SubVersion < h.subVersion {
			return nil, remoting.NewResponse(req, remoting.SubscriptionNotLatest,
				fmt.Sprintf("the consumer's subscription not latest, group: %s", h.group))
		}
		sub = s
	}
	return sub, nil
}

func isTagType(t string) bool { return t == "" || strings.EqualFold(t, "TAG") }

func sql92Unsupported(req *remoting.Command) *remoting.Command {
	return remoting.NewResponse(req, remoting.SystemError, "The broker does not support consumer to filter message by SQL92")
}
