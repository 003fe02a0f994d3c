package processor

// Operators' requests of Apache 5.3.3 that a plain broker serves, each
// answered as 5.3.3 answers it (TestReference's operators' probes): the
// group forbidden table (353), the master flush offset a controller gives
// a slave (908), message recall (370, off unless recallMessageEnable),
// static topics (513, the topic only), cold-data flow control (2001-2003), the commit
// log's read-ahead advice (2004) and resuming a half message's checks
// (323). The services are broker/admin's (ops.go, groupforbidden.go),
// broker/send's (recall) and broker/tx's (resume.go).

import (
	"errors"

	"github.com/rocketgo/rocketgo/broker/send"
	"github.com/rocketgo/rocketgo/remoting"
)

func (p *brokerProcs) registerOps(t remoting.Table) {
	t[remoting.UpdateAndGetGroupForbidden] = p.groupForbidden
	t[remoting.ResetMasterFlushOffset] = p.resetMasterFlushOffset
	t[remoting.RecallMessage] = p.recallMessage
	t[remoting.UpdateAndCreateStaticTopic] = p.updateAndCreateStaticTopic
	t[remoting.UpdateColdDataFlowCtrConfig] = p.updateColdDataFlowCtr
	t[remoting.RemoveColdDataFlowCtrConfig] = p.removeColdDataFlowCtr
	t[remoting.GetColdDataFlowCtrInfo] = p.coldDataFlowCtrInfo
	t[remoting.SetCommitLogReadMode] = p.setCommitLogReadMode
	t[remoting.ResumeCheckHalfMessage] = p.resumeCheckHalfMessage
}

// groupForbidden is UPDATE_AND_GET_GROUP_FORBIDDEN: readable (optional)
// sets or clears the group's read bit on the topic, and the answer is the
// bit as it now is. Without a group or topic 5.3.3 answers SUCCESS with no
// body (its header check does not stop it), and so does rocketgo.
func (p *brokerProcs) groupForbidden(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	group, topic := req.Str("group"), req.Str("topic")
	if group == "" || topic == "" {
		return remoting.NewResponse(req, remoting.Success, "")
	}
	var readable *bool
	if req.Str("readable") != "" {
		v := req.Bool("readable")
		readable = &v
	}
	gf, err := p.admin.UpdateGroupForbidden(group, topic, readable)
	if err != nil {
		return p.refuse(c, req, err)
	}
	if readable != nil {
		p.log.Info().Str("remote", connRemote(c)).Str("group", group).Str("topic", topic).Bool("readable", *readable).
			Msg("group forbidden updated")
	}
	return p.okJSON(req, gf)
}

// resetMasterFlushOffset is RESET_MASTER_FLUSH_OFFSET, which a controller
// sends a slave before it truncates: SUCCESS. A master ignores it, as
// Apache's; a rocketgo slave truncates to what its master confirms on the
// HA connection and keeps no separate master flush offset, so it logs the
// value and ignores it too.
func (p *brokerProcs) resetMasterFlushOffset(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	if p.repl.IsSlave() && req.Str("masterFlushOffset") != "" {
		p.log.Info().Str("remote", connRemote(c)).Str("masterFlushOffset", req.Str("masterFlushOffset")).
			Msg("reset master flush offset: not kept by a rocketgo slave")
	}
	return remoting.NewResponse(req, remoting.Success, "")
}

// recallMessage is RECALL_MESSAGE (the 5.3 producer's recallMessage of a
// timer message, broker/send/recall.go): the checks, then the delete marker
// stored as a send is (durable as configured before the answer). SUCCESS
// carries the recalled message's id (msgId), whatever the flush or the
// slaves answered, as Apache's.
func (p *brokerProcs) recallMessage(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	// Fields missing are the service's to judge: 5.3.3 answers a recall
	// while disabled NO_PERMISSION whatever the header holds.
	r, msgID, err := p.sends.Recall(send.RecallRequest{ProducerGroup: req.Str("producerGroup"),
		Topic: req.Str("topic"), Handle: req.Str("recallHandle")})
	if err != nil {
		return p.fail(req, err)
	}
	r.BornHost, r.Producer = c.RemoteAddr, c.Remote
	answer := func() *remoting.Command {
		resp := remoting.NewResponse(req, remoting.Success, "")
		resp.Set("msgId", msgID)
		return resp
	}
	var later func() func(send.Status)
	if !req.IsOneway() {
		later = func() func(send.Status) {
			resp := answer()
			return func(send.Status) { c.Reply(resp) }
		}
	}
	var res send.Result
	if err := p.sends.Send(&r, &res, later); err != nil {
		return p.fail(req, err)
	}
	if res.Parked {
		return nil
	}
	return answer()
}

// updateAndCreateStaticTopic is UPDATE_AND_CREATE_STATIC_TOPIC. rocketgo
// has no static topics (logic queues mapped over brokers): without a
// mapping body it creates the topic as UPDATE_AND_CREATE_TOPIC does, as
// 5.3.3 does (whose SUCCESS keeps the default remark "not set any response
// code"); with one it refuses, SYSTEM_ERROR, where 5.3.3 would record the
// mapping.
func (p *brokerProcs) updateAndCreateStaticTopic(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	if len(req.Body) > 0 {
		return p.refuse(c, req, errStaticTopic)
	}
	resp := p.updateAndCreateTopic(c, req)
	if resp.Code == remoting.Success {
		resp.Remark = "not set any response code"
	}
	return resp
}

var errStaticTopic = errors.New("static topics (logic queue mappings) are not supported by rocketgo")

func (p *brokerProcs) updateColdDataFlowCtr(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	if err := p.sw.UpdateColdDataFlowCtr(req.Body, p.log); err != nil {
		return p.refuse(c, req, err)
	}
	return remoting.NewResponse(req, remoting.Success, "")
}

func (p *brokerProcs) removeColdDataFlowCtr(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	p.sw.RemoveColdDataFlowCtr(req.Body)
	return remoting.NewResponse(req, remoting.Success, "")
}

func (p *brokerProcs) coldDataFlowCtrInfo(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	return okBody(req, p.sw.ColdDataFlowCtrInfo())
}

func (p *brokerProcs) setCommitLogReadMode(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	var fields map[string]string
	if req.Str("READ_AHEAD_MODE") != "" || len(req.ExtFields) > 0 {
		fields = map[string]string{"READ_AHEAD_MODE": req.Str("READ_AHEAD_MODE")}
	}
	remark, err := p.sw.SetCommitLogReadMode(fields)
	if err != nil {
		return p.refuse(c, req, err)
	}
	return remoting.NewResponse(req, remoting.Success, remark)
}

func (p *brokerProcs) resumeCheckHalfMessage(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	if err := p.txs.ResumeCheckHalfMessage(req.Str("msgId")); err != nil {
		return p.refuse(c, req, err)
	}
	p.log.Info().Str("remote", connRemote(c)).Str("msgId", req.Str("msgId")).Msg("half message put back for checks")
	return remoting.NewResponse(req, remoting.Success, "")
}

// connRemote is the peer's address for a log line ("" without a connection).
func connRemote(c *remoting.Conn) string {
	if c == nil {
		return ""
	}
	return c.Remote
}
