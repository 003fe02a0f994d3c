package processor

import (
	"fmt"

	"github.com/rocketgo/rocketgo/remoting"
)

func (p *brokerProcs) registerOffsets(t Table) {
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
func parseGroupQueueHeader(req *remoting.Command) (group string, h queueHeader, err error) {
	if h, err = parseQueueHeader(req); err != nil {
		return "", h, err
	}
	group, err = req.RequireStr("consumerGroup")
	return group, h, err
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

func (p *brokerProcs) queryConsumerOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	group, h, err := parseGroupQueueHeader(req)
	if err != nil {
		return p.fail(req, err)
	}
	if off, ok := p.b.Offsets.Query(group, h.topic, h.queueID); ok {
		return offsetResponse(req, off)
	}
	// Apache answers 0 for a new group while the queue still starts at 0 (and
	// its first message is in memory): a new group reads a young topic from the
	// start whatever its consumeFromWhere. rocketgo keeps that behaviour.
	if p.b.Store.MinOffset(h.topic, h.queueID) <= 0 || req.Bool("setZeroIfNotFound") {
		return offsetResponse(req, 0)
	}
	return remoting.NewResponse(req, remoting.QueryNotFound, "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first")
}

func (p *brokerProcs) updateConsumerOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	group, h, err := parseGroupQueueHeader(req)
	if err != nil {
		return p.fail(req, err)
	}
	off, err := req.Int64("commitOffset")
	if err != nil {
		return p.fail(req, err)
	}
	return oneWayForGo(req, p.commitOffset(req, group, h, off))
}

// commitOffset checks and stores one commit (UPDATE_CONSUMER_OFFSET).
func (p *brokerProcs) commitOffset(req *remoting.Command, group string, h queueHeader, off int64) *remoting.Command {
	// As Apache 5.x: the group must exist (a heartbeat or updateSubGroup creates it).
	if !p.b.Groups.Contains(group) {
		return remoting.NewResponse(req, remoting.SubscriptionGroupNotExist, "Group "+group+" not exist!")
	}
	if _, ok := p.b.Topics.Get(h.topic); !ok {
		return remoting.NewResponse(req, remoting.TopicNotExist, "Topic "+h.topic+" not exist!")
	}
	// The group and topic exist, so their names passed the rules when they
	// were created; the queue id bounds the entries one topic@group can hold.
	if limit := p.b.Config().MaxTopicQueueNums; h.queueID < 0 || h.queueID >= limit {
		return remoting.NewResponse(req, remoting.InvalidParameter, fmt.Sprintf(
			"queueId[%d] is illegal, topic:[%s] maxTopicQueueNums:[%d]", h.queueID, h.topic, limit))
	}
	p.b.Offsets.Commit(group, h.topic, h.queueID, off)
	return remoting.NewResponse(req, remoting.Success, "")
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
	return offsetResponse(req, p.b.Store.MaxOffset(h.topic, h.queueID))
}

func (p *brokerProcs) minOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	h, err := parseQueueHeader(req)
	if err != nil {
		return p.fail(req, err)
	}
	return offsetResponse(req, p.b.Store.MinOffset(h.topic, h.queueID))
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
	return offsetResponse(req, p.b.Store.OffsetByTime(h.topic, h.queueID, ts))
}

func (p *brokerProcs) earliestMsgStoreTime(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	h, err := parseQueueHeader(req)
	if err != nil {
		return p.fail(req, err)
	}
	ts, err := p.b.Store.EarliestMessageTime(h.topic, h.queueID)
	if err != nil {
		// Apache answers SUCCESS with -1 when the queue has no message.
		ts = -1
	}
	resp := remoting.NewResponse(req, remoting.Success, "")
	resp.SetInt64("timestamp", ts)
	return resp
}
