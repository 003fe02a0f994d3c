package processor

import (
	"github.com/rocketgo/rocketgo/broker/send"
	"github.com/rocketgo/rocketgo/remoting"
)

func (p *brokerProcs) registerSendBack(t remoting.Table) {
	t[remoting.ConsumerSendMsgBack] = p.sendBack
}

// sendBack serves CONSUMER_SEND_MSG_BACK (ConsumerSendMsgBackRequestHeader):
// group*, offset*, delayLevel*, originMsgId, originTopic, unitMode,
// maxReconsumeTimes. SUCCESS carries no header.
func (p *brokerProcs) sendBack(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var r send.BackRequest
	var err error
	if r.Group, err = req.RequireStr("group"); err != nil {
		return p.fail(req, err)
	}
	if r.Offset, err = req.Int64("offset"); err != nil {
		return p.fail(req, err)
	}
	if r.DelayLevel, err = req.Int32("delayLevel"); err != nil {
		return p.fail(req, err)
	}
	if req.Str("maxReconsumeTimes") != "" {
		if r.MaxReconsumeTimes, err = req.Int32("maxReconsumeTimes"); err != nil {
			return p.fail(req, err)
		}
		r.HasMax = true
	}
	r.UnitMode = req.Bool("unitMode")
	if err := p.sends.SendBack(r); err != nil {
		return p.fail(req, err)
	}
	return remoting.NewResponse(req, remoting.Success, "")
}
