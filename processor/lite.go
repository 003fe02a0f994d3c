package processor

// The lite-topic family (Apache 5.5, RIP-83): LITE_SUBSCRIPTION_CTL (the
// proxy pushes which client wants which lite topics), POP_LITE_MESSAGE
// (a client's pop across its lite topics), and the lite admin codes. The
// lite fields of ACK_MESSAGE and CHANGE_MESSAGE_INVISIBLETIME are decoded
// in pop.go. Every field is the client's: bounded here before the broker
// sees it.

import (
	"strings"

	jsoniter "github.com/json-iterator/go"

	"github.com/rocketgo/rocketgo/broker/lite"
	"github.com/rocketgo/rocketgo/broker/pop"
	"github.com/rocketgo/rocketgo/remoting"
)

// Lite is the lite subscription registry and its admin answers.
type Lite interface {
	Ctl(conn lite.Conn, entries []lite.Entry) error
	BrokerLiteInfo() ([]byte, error)
	ParentTopicInfo(topic string) ([]byte, error)
	LiteTopicInfo(parent, liteTopic string) ([]byte, error)
	LiteClientInfo(parent, group, clientID string, maxCount int) ([]byte, error)
	LiteGroupInfo(group, liteTopic string, topK int) ([]byte, error)
	TriggerLiteDispatch(group, clientID string) error
}

// LitePopper is the pop side of lite topics.
type LitePopper interface {
	PopLite(r *pop.LiteRequest, later func() pop.Completion) (pop.Result, error)
}

// Bounds of a LITE_SUBSCRIPTION_CTL body: entries per request, lite topics
// in all, and the length of each name (the proxy checks 64 bytes; the
// queue name a broker keeps is at most 255).
const (
	maxCtlEntries   = 1024
	maxCtlLiteNames = 100_000
	maxCtlNameLen   = 255
	// maxCtlPending bounds the LITE_SUBSCRIPTION_CTL requests waiting for a
	// broker goroutine (proxies send one per client change and a refresh
	// per client every 30 s).
	maxCtlPending = 64
)

func (p *brokerProcs) registerLite(t remoting.Table) {
	if p.lite == nil {
		return
	}
	t[remoting.LiteSubscriptionCtl] = p.liteSubscriptionCtl
	t[remoting.PopLiteMessage] = p.popLiteMessage
	t[remoting.GetBrokerLiteInfo] = p.getBrokerLiteInfo
	t[remoting.GetParentTopicInfo] = p.getParentTopicInfo
	t[remoting.GetLiteTopicInfo] = p.getLiteTopicInfo
	t[remoting.GetLiteClientInfo] = p.getLiteClientInfo
	t[remoting.GetLiteGroupInfo] = p.getLiteGroupInfo
	t[remoting.TriggerLiteDispatch] = p.triggerLiteDispatch
}

// ctlBody is LiteSubscriptionCtlRequestBody as fastjson2 writes it.
type ctlBody struct {
	SubscriptionSet []ctlEntry `json:"subscriptionSet"`
}

type ctlEntry struct {
	Action       jsoniter.RawMessage `json:"action"`
	ClientID     string              `json:"clientId"`
	Group        string              `json:"group"`
	Topic        string              `json:"topic"`
	LiteTopicSet []string            `json:"liteTopicSet"`
	OffsetOption *struct {
		Type  jsoniter.RawMessage `json:"type"`
		Value int64               `json:"value"`
	} `json:"offsetOption"`
	Version int64 `json:"version"`
}

var ctlActions = []string{"PARTIAL_ADD", "PARTIAL_REMOVE", "COMPLETE_ADD", "COMPLETE_REMOVE"}
var offsetTypes = []string{"POLICY", "OFFSET", "TAIL_N", "TIMESTAMP"}

// enumOf reads a Java enum as fastjson2 may write it: its name, or its ordinal.
func enumOf(raw jsoniter.RawMessage, names []string) (int, bool) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		for i, n := range names {
			if n == s {
				return i, true
			}
		}
		return 0, false
	}
	var n int
	if err := json.Unmarshal(raw, &n); err == nil && n >= 0 && n < len(names) {
		return n, true
	}
	return 0, false
}

// decodeCtl reads and bounds a LITE_SUBSCRIPTION_CTL body.
func decodeCtl(body []byte) ([]lite.Entry, error) {
	if len(body) == 0 {
		return nil, remoting.Refuse(remoting.IllegalOperation, nil, "Request body is null.")
	}
	var b ctlBody
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, remoting.Refuse(remoting.SystemError, nil, "com.alibaba.fastjson2.JSONException: %s", firstLine(err.Error()))
	}
	if len(b.SubscriptionSet) > maxCtlEntries {
		return nil, remoting.Refuse(remoting.IllegalOperation, nil, "LiteSubscriptionCtlRequestBody has more than %d entries.", maxCtlEntries)
	}
	out := make([]lite.Entry, 0, len(b.SubscriptionSet))
	names := 0
	for _, e := range b.SubscriptionSet {
		a, ok := enumOf(e.Action, ctlActions)
		if !ok {
			return nil, remoting.Refuse(remoting.SystemError, nil, "com.alibaba.fastjson2.JSONException: bad action %s", firstLine(string(e.Action)))
		}
		names += len(e.LiteTopicSet)
		if names > maxCtlLiteNames {
			return nil, remoting.Refuse(remoting.LiteSubscriptionQuotaExceeded, lite.ErrQuota,
				"org.apache.rocketmq.broker.lite.LiteQuotaException: lite subscription quota exceeded %d", maxCtlLiteNames)
		}
		if len(e.ClientID) > maxCtlNameLen || len(e.Group) > maxCtlNameLen || len(e.Topic) > maxCtlNameLen {
			continue // no such client, group or topic can exist: skipped as a blank one is
		}
		x := lite.Entry{Action: lite.Action(a), ClientID: e.ClientID, Group: e.Group, Topic: e.Topic, Version: e.Version}
		for _, l := range e.LiteTopicSet {
			if l != "" && len(l) <= maxCtlNameLen {
				x.Lite = append(x.Lite, l)
			}
		}
		if o := e.OffsetOption; o != nil {
			if t, ok := enumOf(o.Type, offsetTypes); ok {
				x.Offset = &lite.OffsetOption{Type: lite.OffsetType(t + 1), Value: o.Value}
			}
		}
		out = append(out, x)
	}
	return out, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// liteSubscriptionCtl serves LITE_SUBSCRIPTION_CTL.
func (p *brokerProcs) liteSubscriptionCtl(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	entries, err := decodeCtl(req.Body)
	if err != nil {
		return p.fail(req, err)
	}
	if c == nil { // no connection to answer later on: at once
		if err := p.lite.Ctl(nil, entries); err != nil {
			return p.fail(req, err)
		}
		return remoting.NewResponse(req, remoting.Success, "")
	}
	// A set of up to 100,000 lite topics is work for a broker goroutine,
	// not for the event loop; a flood past maxCtlPending is refused
	// SYSTEM_BUSY, as Apache's full executor queue is.
	if p.ctlPending.Add(1) > maxCtlPending {
		p.ctlPending.Add(-1)
		p.refused.Warn().Str("remote", c.Remote).Msg("LITE_SUBSCRIPTION_CTL refused: too many pending")
		return remoting.NewResponse(req, remoting.SystemBusy, "[TOO_MANY_REQUESTS]lite subscription requests pending")
	}
	head := &remoting.Command{Code: req.Code, Opaque: req.Opaque, Serialize: req.Serialize, Began: req.Began}
	if !p.host.Go(func() {
		defer p.ctlPending.Add(-1)
		if err := p.lite.Ctl(c, entries); err != nil {
			c.Reply(p.fail(head, err))
			return
		}
		c.Reply(remoting.NewResponse(head, remoting.Success, ""))
	}) {
		p.ctlPending.Add(-1)
		return remoting.NewResponse(req, remoting.SystemError, "broker shutting down")
	}
	return nil
}

// decodePopLite reads PopLiteMessageRequestHeader (the starred fields are
// @CFNotNull).
func decodePopLite(req *remoting.Command) (pop.LiteRequest, error) {
	var r pop.LiteRequest
	var err error
	str := func(k string) string {
		if err != nil {
			return ""
		}
		var v string
		v, err = req.RequireStr(k)
		return strings.Clone(v)
	}
	i64 := func(k string) int64 {
		if err != nil {
			return 0
		}
		var v int64
		v, err = req.Int64(k)
		return v
	}
	r.ClientID, r.Group, r.Topic = str("clientId"), str("consumerGroup"), str("topic")
	n := i64("maxMsgNum")
	r.InvisibleTime, r.PollTime, r.BornTime = i64("invisibleTime"), i64("pollTime"), i64("bornTime")
	if err != nil {
		return r, err
	}
	if n < 0 || n > 1<<31-1 {
		return r, remoting.Refuse(remoting.InvalidParameter, nil, "maxMsgNum %d out of range", n)
	}
	r.MaxMsgNum = int32(n)
	r.AttemptID = strings.Clone(req.Str("attemptId"))
	if len(r.ClientID) > maxCtlNameLen || len(r.AttemptID) > maxCtlNameLen {
		return r, remoting.Refuse(remoting.InvalidParameter, nil, "clientId or attemptId too long")
	}
	return r, nil
}

// popLiteMessage serves POP_LITE_MESSAGE: checks now, the pop on a broker
// goroutine, answered through Reply.
func (p *brokerProcs) popLiteMessage(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	r, err := decodePopLite(req)
	if err != nil {
		return p.fail(req, err)
	}
	if c != nil {
		r.Remote = c.Remote
	}
	_, err = p.litePops.PopLite(&r, replyLater(c, req, p.popLiteResponse))
	if err != nil {
		return p.fail(req, err)
	}
	return nil
}

// popLiteResponse encodes PopLiteMessageResponseHeader and the records.
func (p *brokerProcs) popLiteResponse(req *remoting.Command, res pop.Result, err error) *remoting.Command {
	if err != nil {
		return p.fail(req, err)
	}
	code, remark := popStatus(res.Status)
	out := remoting.NewResponse(req, code, remark)
	out.SetInt64("popTime", res.PopTime)
	out.SetInt64("invisibleTime", res.InvisibleTime)
	out.SetInt64("reviveQid", int64(res.ReviveQid))
	if res.OrderCountInfo != "" {
		out.Set("orderCountInfo", res.OrderCountInfo)
	}
	if res.Status == pop.Found {
		out.BodyVec = res.Vec
		out.ReleaseBody = res.Release
	}
	return out
}

// liteAdmin answers an admin code whose body the registry encodes, on a
// broker goroutine: a parent's lite topics may be 100,000, which the event
// loop must not walk. fn must hold no part of req (cloned header values):
// req goes back to its connection's buffer when the handler returns. The
// pending bound is LITE_SUBSCRIPTION_CTL's.
func (p *brokerProcs) liteAdmin(c *remoting.Conn, req *remoting.Command, fn func() ([]byte, error)) *remoting.Command {
	if c == nil {
		body, err := fn()
		return p.liteAnswer(req, body, err)
	}
	if p.ctlPending.Add(1) > maxCtlPending {
		p.ctlPending.Add(-1)
		return remoting.NewResponse(req, remoting.SystemBusy, "[TOO_MANY_REQUESTS]lite requests pending")
	}
	head := &remoting.Command{Code: req.Code, Opaque: req.Opaque, Serialize: req.Serialize, Began: req.Began}
	if !p.host.Go(func() {
		defer p.ctlPending.Add(-1)
		body, err := fn()
		c.Reply(p.liteAnswer(head, body, err))
	}) {
		p.ctlPending.Add(-1)
		return remoting.NewResponse(req, remoting.SystemError, "broker shutting down")
	}
	return nil
}

func (p *brokerProcs) liteAnswer(req *remoting.Command, body []byte, err error) *remoting.Command {
	if err != nil {
		return p.fail(req, err)
	}
	out := remoting.NewResponse(req, remoting.Success, "")
	out.Body = body
	return out
}

func (p *brokerProcs) getBrokerLiteInfo(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	return p.liteAdmin(c, req, p.lite.BrokerLiteInfo)
}

func (p *brokerProcs) getParentTopicInfo(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	topic, err := req.RequireStr("topic")
	if err != nil {
		return p.fail(req, err)
	}
	topic = strings.Clone(topic)
	return p.liteAdmin(c, req, func() ([]byte, error) { return p.lite.ParentTopicInfo(topic) })
}

func (p *brokerProcs) getLiteTopicInfo(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	parent, lt := strings.Clone(req.Str("parentTopic")), strings.Clone(req.Str("liteTopic"))
	return p.liteAdmin(c, req, func() ([]byte, error) { return p.lite.LiteTopicInfo(parent, lt) })
}

func (p *brokerProcs) getLiteClientInfo(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	maxCount := int(req.OptInt64("maxCount", 1000))
	parent, group, client := strings.Clone(req.Str("parentTopic")), strings.Clone(req.Str("group")), strings.Clone(req.Str("clientId"))
	return p.liteAdmin(c, req, func() ([]byte, error) { return p.lite.LiteClientInfo(parent, group, client, maxCount) })
}

func (p *brokerProcs) getLiteGroupInfo(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	group, err := req.RequireStr("group")
	if err != nil {
		return p.fail(req, err)
	}
	group, lt := strings.Clone(group), strings.Clone(req.Str("liteTopic"))
	topK := int(req.OptInt64("topK", 0)) // Apache's int default; mqadmin sends 20
	return p.liteAdmin(c, req, func() ([]byte, error) { return p.lite.LiteGroupInfo(group, lt, topK) })
}

func (p *brokerProcs) triggerLiteDispatch(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	group, err := req.RequireStr("group")
	if err != nil {
		return p.fail(req, err)
	}
	group, client := strings.Clone(group), strings.Clone(req.Str("clientId"))
	return p.liteAdmin(c, req, func() ([]byte, error) { return nil, p.lite.TriggerLiteDispatch(group, client) })
}
