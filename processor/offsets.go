package processor

import (
	"strings"

	"github.com/rocketgo/rocketgo/broker/send"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/remoting"
)

func (p *brokerProcs) registerOffsets(t remoting.Table) {
	t[remoting.QueryConsumerOffset] = p.queryConsumerOffset
	t[remoting.UpdateConsumerOffset] = p.updateConsumerOffset
	t[remoting.GetMaxOffset] = p.maxOffset
	t[remoting.GetMinOffset] = p.minOffset
	t[remoting.SearchOffsetByTimestamp] = p.searchOffset
	t[remoting.GetEarliestMsgStoreTime] = p.earliestMsgStoreTime
}

type queueHeader struct {
	topic   string
	queueID int32
}

// parseGroupQueueHeader is parseQueueHeader plus the required consumerGroup.
func parseGroupQueueHeader(req *remoting.Command) (r tables.QueueOffsetRequest, err error) {
	h, err := parseQueueHeader(req)
	if err != nil {
		return r, err
	}
	r.Topic, r.QueueID = h.topic, h.queueID
	r.Group, err = req.RequireStr("consumerGroup")
	return r, err
}

func parseQueueHeader(req *remoting.Command) (h queueHeader, err error) {
	if h.topic, err = req.RequireStr("topic"); err != nil {
		return
	}
	h.queueID, err = req.Int32("queueId")
	return
}

func offsetResponse(req *remoting.Command, offset int64) *remoting.Command {
	resp := remoting.NewResponse(req, remoting.Success, "")
	resp.SetInt64("offset", offset)
	return resp
}

// queryConsumerOffset is QUERY_CONSUMER_OFFSET (QueryConsumerOffsetRequestHeader:
// consumerGroup*, topic*, queueId*, setZeroIfNotFound).
func (p *brokerProcs) queryConsumerOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	r, err := parseGroupQueueHeader(req)
	if err != nil {
		return p.fail(req, err)
	}
	if v := req.Str("setZeroIfNotFound"); v != "" {
		zero := v == "true" // Boolean.parseBoolean
		r.SetZeroIfNotFound = &zero
	}
	off, err := p.offsets.QueryConsumerOffset(r)
	if err != nil {
		return p.fail(req, err)
	}
	return offsetResponse(req, off)
}

// updateConsumerOffset is UPDATE_CONSUMER_OFFSET (consumerGroup*, topic*,
// queueId*, commitOffset*).
func (p *brokerProcs) updateConsumerOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	r, err := parseGroupQueueHeader(req)
	if err != nil {
		return p.fail(req, err)
	}
	if r.Offset, err = req.Int64("commitOffset"); err != nil {
		return p.fail(req, err)
	}
	if err := p.offsets.CommitOffset(r); err != nil {
		return oneWayForGo(req, p.fail(req, err))
	}
	return oneWayForGo(req, remoting.NewResponse(req, remoting.Success, ""))
}

// oneWayForGo drops the answer to a Go client's UPDATE_CONSUMER_OFFSET. The Go
// client sends it one-way without the one-way bit and closes its connections
// right after its last commits at shutdown; an answer still unread in its
// socket turns that close into a reset, and the reset discards the commits the
// broker has not read yet.
func oneWayForGo(req, resp *remoting.Command) *remoting.Command {
	if req.Language == remoting.LangGo {
		return nil
	}
	return resp
}

func (p *brokerProcs) maxOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	h, err := parseQueueHeader(req)
	if err != nil {
		return p.fail(req, err)
	}
	return offsetResponse(req, p.offsets.QueueMaxOffset(h.topic, h.queueID))
}

func (p *brokerProcs) minOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	h, err := parseQueueHeader(req)
	if err != nil {
		return p.fail(req, err)
	}
	return offsetResponse(req, p.offsets.QueueMinOffset(h.topic, h.queueID))
}

func (p *brokerProcs) searchOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	h, err := parseQueueHeader(req)
	if err != nil {
		return p.fail(req, err)
	}
	ts, err := req.Int64("timestamp")
	if err != nil {
		return p.fail(req, err)
	}
	// BoundaryType.getType: UPPER in any case, else LOWER.
	upper := strings.EqualFold(req.Str("boundaryType"), "UPPER")
	if lite := req.Str("liteTopic"); strings.TrimSpace(lite) != "" {
		// Apache 5.5: the lite topic's LMQ, queue 0 only; 0 while it is
		// empty or does not exist.
		lmq := send.LMQName(h.topic, lite)
		if h.queueID != 0 || p.offsets.QueueMaxOffset(lmq, 0) <= 0 {
			return offsetResponse(req, 0)
		}
		return offsetResponse(req, p.offsets.SearchOffset(lmq, h.queueID, ts, upper))
	}
	return offsetResponse(req, p.offsets.SearchOffset(h.topic, h.queueID, ts, upper))
}

func (p *brokerProcs) earliestMsgStoreTime(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	h, err := parseQueueHeader(req)
	if err != nil {
		return p.fail(req, err)
	}
	resp := remoting.NewResponse(req, remoting.Success, "")
	resp.SetInt64("timestamp", p.offsets.EarliestMsgStoreTime(h.topic, h.queueID))
	return resp
}
