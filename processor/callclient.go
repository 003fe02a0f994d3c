package processor

// Requests an operator's tool makes of a consumer through the broker
// (AdminBrokerProcessor.callConsumer): GET_CONSUMER_RUNNING_INFO (307) and
// CONSUME_MESSAGE_DIRECTLY (309) are relayed to the consumer's connection,
// found by group and client id, and its answer is relayed back as it is.
// The handler returns at once; the answer comes from remoting's call table
// (calls.go), which bounds what a client that never answers can hold.

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// callClientTimeout is Apache's Broker2Client.callClient timeout.
const callClientTimeout = 10 * time.Second

func (p *brokerProcs) consumerRunningInfo(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	return p.callConsumer(c, req, nil)
}

// consumeMessageDirectly adds what Apache adds before relaying: brokerName,
// the topic's and group's sysflags, and the message's record as the body.
func (p *brokerProcs) consumeMessageDirectly(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	id, err := req.RequireStr("msgId")
	if err != nil {
		return p.fail(req, err)
	}
	_, off, err := message.DecodeOffsetMsgID(id)
	if err != nil {
		return remoting.NewResponse(req, remoting.SystemError, fmt.Sprintf("bad msgId %s: %v", id, err))
	}
	rec, err := p.reads.ViewMessage(off)
	if err != nil {
		return p.fail(req, err)
	}
	extra := []remoting.Field{{Key: "brokerName", Value: p.host.Config().BrokerName}}
	if topic := req.Str("topic"); topic != "" {
		if tc, err := p.admin.TopicConfig(topic); err == nil {
			extra = append(extra, remoting.Field{Key: "topicSysFlag", Value: strconv.Itoa(int(tc.TopicSysFlag))})
		}
	}
	if group := req.Str("consumerGroup"); group != "" {
		if _, err := p.admin.GroupConfig(group); err == nil {
			extra = append(extra, remoting.Field{Key: "groupSysFlag", Value: "0"})
		}
	}
	return p.callConsumer(c, req, rec, extra...)
}

// callConsumer relays req (with body and extra fields) to the consumer it
// names and answers c with the consumer's answer, or Apache's refusal.
func (p *brokerProcs) callConsumer(c *remoting.Conn, req *remoting.Command, body []byte, extra ...remoting.Field) *remoting.Command {
	group, clientID := req.Str("consumerGroup"), req.Str("clientId")
	to, err := p.clients.ConsumerConn(group, clientID)
	if err != nil {
		return p.fail(req, err)
	}
	fields := make(map[string]string, len(req.ExtFields)+len(extra))
	for _, f := range req.ExtFields {
		fields[f.Key] = f.Value
	}
	for _, f := range extra {
		fields[f.Key] = f.Value
	}
	if body == nil && req.Body != nil {
		body = append([]byte(nil), req.Body...)
	}
	relay := remoting.NewRequest(req.Code, fields, body)
	// req is recycled when the handler returns: the answer is made from a
	// copy of what it needs.
	head := &remoting.Command{Code: req.Code, Opaque: req.Opaque, Serialize: req.Serialize, Began: req.Began}
	err = to.Invoke(relay, callClientTimeout, func(ans *remoting.Command, err error) {
		if err != nil {
			c.Reply(callFailed(head, group, clientID, to.Remote, err))
			return
		}
		resp := remoting.NewResponse(head, ans.Code, ans.Remark)
		resp.ExtFields = append(resp.ExtFields, ans.ExtFields...)
		resp.Body = ans.Body
		c.Reply(resp)
	})
	if err != nil {
		return callFailed(req, group, clientID, to.Remote, err)
	}
	return nil // answered by the call
}

// callFailed is Apache's answer when the consumer could not be asked or did
// not answer: CONSUME_MSG_TIMEOUT after the timeout, else SYSTEM_ERROR.
func callFailed(req *remoting.Command, group, clientID, remote string, err error) *remoting.Command {
	if errors.Is(err, remoting.ErrCallTimeout) {
		return remoting.NewResponse(req, remoting.ConsumeMsgTimeout, fmt.Sprintf(
			"consumer <%s> <%s> Timeout: RemotingTimeoutException: wait response on the channel <%s> timeout, %d(ms)",
			group, clientID, remote, callClientTimeout.Milliseconds()))
	}
	return remoting.NewResponse(req, remoting.SystemError, fmt.Sprintf("invoke consumer <%s> <%s> Exception: %v", group, clientID, err))
}
