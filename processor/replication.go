package processor

import (
	"strconv"

	"github.com/rocketgo/rocketgo/broker/timer"
	"github.com/rocketgo/rocketgo/remoting"
)

// rejectRemark is Apache's answer to a request its processor's
// rejectRequest refuses (NettyRemotingAbstract), with SYSTEM_BUSY.
const rejectRemark = "[REJECTREQUEST]system busy, start flow control for a while"

// registerReplication serves what a slave asks its master for
// (SlaveSynchronize): GET_ALL_CONSUMER_OFFSET (43), GET_ALL_DELAY_OFFSET
// (45), GET_TIMER_CHECK_POINT (60), GET_TIMER_METRICS (61) and, for a
// 5.x slave, GET_ALL_MESSAGE_REQUEST_MODE (402)
// (GET_ALL_TOPIC_CONFIG and GET_ALL_SUBSCRIPTIONGROUP_CONFIG are in
// topics.go), and GET_BROKER_HA_STATUS (907). And it puts Apache 5.x's
// rejectRequest of a slave in front of the send and pull handlers: a slave
// refuses sends and send backs, and pulls unless slaveReadEnable, before
// reading them. It runs last in BrokerTable: it wraps what the others put.
func (p *brokerProcs) registerReplication(t remoting.Table) {
	t[remoting.GetAllConsumerOffset] = p.allConsumerOffsets
	t[remoting.GetAllDelayOffset] = p.allDelayOffsets
	t[remoting.GetBrokerHAStatus] = p.haStatus
	t[remoting.GetAllMessageRequestMode] = p.allMessageRequestModes
	t[remoting.GetTimerCheckPoint] = p.timerCheckpoint
	t[remoting.GetTimerMetrics] = p.timerMetrics
	for _, code := range []int32{remoting.SendMessage, remoting.SendMessageV2, remoting.SendBatchMessage,
		remoting.ConsumerSendMsgBack} {
		t[code] = rejectWhen(p.repl.RejectsSends, t[code])
	}
	for _, code := range []int32{remoting.PullMessage, remoting.LitePullMessage} {
		t[code] = rejectWhen(p.repl.RejectsPulls, t[code])
	}
}

// rejectWhen answers SYSTEM_BUSY without running h while reject reports
// true (Apache's rejectRequest, asked before the header is read). On a
// master it costs a call and a config load per request.
func rejectWhen(reject func() bool, h remoting.HandlerFunc) remoting.HandlerFunc {
	return func(c *remoting.Conn, req *remoting.Command) *remoting.Command {
		if reject() {
			return remoting.NewResponse(req, remoting.SystemBusy, rejectRemark)
		}
		return h(c, req)
	}
}

// allConsumerOffsets is GET_ALL_CONSUMER_OFFSET: the consumer offset table
// as consumerOffset.json holds it, plus a data version.
func (p *brokerProcs) allConsumerOffsets(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	resp := remoting.NewResponse(req, remoting.Success, "")
	resp.Body = p.repl.AllConsumerOffsets()
	return resp
}

// timerCheckpoint is GET_TIMER_CHECK_POINT: the timer's progress in
// Apache's TimerCheckpoint encoding, its lowOffset in an extField
// (broker/timer, sync.go), or the broker's refusal when the timer is off.
func (p *brokerProcs) timerCheckpoint(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	body, low, err := p.repl.TimerCheckpoint()
	if err != nil {
		return p.fail(req, err)
	}
	resp := remoting.NewResponse(req, remoting.Success, "")
	resp.Set(timer.LowOffsetField, strconv.FormatInt(low, 10))
	resp.Body = body
	return resp
}

// timerMetrics is GET_TIMER_METRICS: the messages waiting in the timer per
// topic, as Apache's TimerMetrics JSON.
func (p *brokerProcs) timerMetrics(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	body, err := p.repl.TimerMetrics()
	if err != nil {
		return p.fail(req, err)
	}
	resp := remoting.NewResponse(req, remoting.Success, "")
	resp.Body = body
	return resp
}

// allDelayOffsets is GET_ALL_DELAY_OFFSET: the delay levels' offsets as
// delayOffset.json holds them, plus a data version.
func (p *brokerProcs) allDelayOffsets(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	resp := remoting.NewResponse(req, remoting.Success, "")
	resp.Body = p.repl.AllDelayOffsets()
	return resp
}

// haStatus is GET_BROKER_HA_STATUS: Apache 5.x's HARuntimeInfo.
func (p *brokerProcs) haStatus(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	body, err := p.repl.HARuntimeInfo()
	if err != nil {
		return p.fail(req, err)
	}
	resp := remoting.NewResponse(req, remoting.Success, "")
	resp.Body = body
	return resp
}

// allMessageRequestModes is GET_ALL_MESSAGE_REQUEST_MODE (a 5.x slave's
// sync): none.
func (p *brokerProcs) allMessageRequestModes(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	resp := remoting.NewResponse(req, remoting.Success, "")
	resp.Body = p.repl.AllMessageRequestModes()
	return resp
}
