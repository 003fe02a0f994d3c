package processor

// The pop request family (Apache 5.x): POP_MESSAGE, ACK_MESSAGE,
// BATCH_ACK_MESSAGE, CHANGE_MESSAGE_INVISIBLETIME, PEEK_MESSAGE,
// NOTIFICATION, POLLING_INFO. Decode → broker pop service → encode; a pop
// is always answered later, from the broker goroutine that runs it.

import (
	"encoding/base64"
	"fmt"
	"strings"

	jsoniter "github.com/json-iterator/go"

	"github.com/rocketgo/rocketgo/broker/pop"
	"github.com/rocketgo/rocketgo/remoting"
)

func (p *brokerProcs) registerPop(t remoting.Table) {
	t[remoting.PopMessage] = p.popMessage
	t[remoting.AckMessage] = p.ackMessage
	t[remoting.BatchAckMessage] = p.batchAckMessage
	t[remoting.ChangeMessageInvisibleTime] = p.changeInvisibleTime
	t[remoting.PeekMessage] = p.peekMessage
	t[remoting.Notification] = p.notification
	t[remoting.PollingInfo] = p.pollingInfo
	t[remoting.QueryAssignment] = p.queryAssignment
	t[remoting.SetMessageRequestMode] = p.setMessageRequestMode
}

// queryAssignment serves QUERY_ASSIGNMENT (body QueryAssignmentRequestBody).
func (p *brokerProcs) queryAssignment(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	body, err := p.clients.QueryAssignment(req.Body)
	if err != nil {
		return p.fail(req, err)
	}
	out := remoting.NewResponse(req, remoting.Success, "")
	out.Body = body
	return out
}

// setMessageRequestMode serves SET_MESSAGE_REQUEST_MODE (mqadmin setConsumeMode).
func (p *brokerProcs) setMessageRequestMode(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	if err := p.admin.SetMessageRequestMode(req.Body); err != nil {
		return p.fail(req, err)
	}
	return remoting.NewResponse(req, remoting.Success, "")
}

// popMessage serves POP_MESSAGE: checks now, the pop itself on a broker
// goroutine, answered through Reply.
func (p *brokerProcs) popMessage(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.PopMessageRequestHeader
	if _, ok := req.Lookup("bornTime"); !ok {
		req.SetInt64("bornTime", 0) // Apache fills a missing bornTime with now (Broker.Pop does for 0)
	}
	if err := h.Decode(req); err != nil {
		return p.fail(req, err)
	}
	r := pop.Request{Group: strings.Clone(h.ConsumerGroup), Topic: strings.Clone(h.Topic), QueueID: h.QueueID,
		MaxMsgNums: h.MaxMsgNums, InvisibleTime: h.InvisibleTime, PollTime: h.PollTime, BornTime: h.BornTime,
		InitMode: h.InitMode, ExpType: strings.Clone(h.ExpType), Exp: strings.Clone(h.Exp), Order: h.Order,
		AttemptID: strings.Clone(h.AttemptID)}
	if c != nil {
		r.Remote = c.Remote
	}
	_, err := p.pops.Pop(&r, replyLater(c, req, p.popResponse))
	if err != nil {
		return p.fail(req, err)
	}
	return nil
}

// replyLater is the completion of a pop that may park: its answer,
// encoded by encode on the goroutine that finishes it, goes to c; a
// closed c gives its place back. head keeps what the answer needs of req,
// which belongs to the connection's buffer.
func replyLater(c *remoting.Conn, req *remoting.Command,
	encode func(head *remoting.Command, res pop.Result, err error) *remoting.Command) func() pop.Completion {
	head := &remoting.Command{Code: req.Code, Opaque: req.Opaque, Serialize: req.Serialize, Began: req.Began}
	return func() pop.Completion {
		return pop.Completion{
			Done: func(res pop.Result, err error) { c.Reply(encode(head, res, err)) },
			Gone: c.Closed,
		}
	}
}

// popStatus is the code and remark (the GetMessageStatus name Apache
// writes) of a pop's answer.
func popStatus(s pop.Status) (int32, string) {
	switch s {
	case pop.Found:
		return remoting.Success, "FOUND"
	case pop.PollingFull:
		return remoting.PollingFull, "NO_MESSAGE_IN_QUEUE"
	}
	return remoting.PollingTimeout, "NO_MESSAGE_IN_QUEUE"
}

// popResponse encodes a pop's answer: PopMessageResponseHeader, remark the
// GetMessageStatus name Apache writes, and the records.
func (p *brokerProcs) popResponse(req *remoting.Command, res pop.Result, err error) *remoting.Command {
	if err != nil {
		return p.fail(req, err)
	}
	code, remark := popStatus(res.Status)
	out := remoting.NewResponse(req, code, remark)
	h := remoting.PopMessageResponseHeader{PopTime: res.PopTime, InvisibleTime: res.InvisibleTime,
		ReviveQid: res.ReviveQid, RestNum: res.RestNum, StartOffsetInfo: res.StartOffsetInfo,
		MsgOffsetInfo: res.MsgOffsetInfo, OrderCountInfo: res.OrderCountInfo}
	h.Encode(out)
	if res.Status == pop.Found {
		out.BodyVec = res.Vec
		out.ReleaseBody = res.Release
	}
	return out
}

func decodeAck(c *remoting.Conn, req *remoting.Command) (pop.AckRequest, error) {
	var h remoting.AckMessageRequestHeader
	if err := h.Decode(req); err != nil {
		return pop.AckRequest{}, err
	}
	r := pop.AckRequest{Group: strings.Clone(h.ConsumerGroup), Topic: strings.Clone(h.Topic), QueueID: h.QueueID,
		ExtraInfo: strings.Clone(h.ExtraInfo), Offset: h.Offset, LiteTopic: strings.Clone(req.Str("liteTopic"))}
	if c != nil {
		r.Remote = c.Remote
	}
	return r, nil
}

// ackMessage serves ACK_MESSAGE.
func (p *brokerProcs) ackMessage(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	r, err := decodeAck(c, req)
	if err != nil {
		return p.fail(req, err)
	}
	if err := p.pops.Ack(&r); err != nil {
		return p.fail(req, err)
	}
	return remoting.NewResponse(req, remoting.Success, "")
}

// changeInvisibleTime serves CHANGE_MESSAGE_INVISIBLETIME.
func (p *brokerProcs) changeInvisibleTime(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.ChangeInvisibleTimeRequestHeader
	if err := h.Decode(req); err != nil {
		return p.fail(req, err)
	}
	r := pop.AckRequest{Group: strings.Clone(h.ConsumerGroup), Topic: strings.Clone(h.Topic), QueueID: h.QueueID,
		ExtraInfo: strings.Clone(h.ExtraInfo), Offset: h.Offset, InvisibleTime: h.InvisibleTime,
		LiteTopic: strings.Clone(req.Str("liteTopic")), Suspend: req.Bool("suspend")}
	if c != nil {
		r.Remote = c.Remote
	}
	res, err := p.pops.ChangeInvisibleTime(&r)
	if err != nil {
		return p.fail(req, err)
	}
	out := remoting.NewResponse(req, remoting.Success, "")
	rh := remoting.ChangeInvisibleTimeResponseHeader{PopTime: res.PopTime, InvisibleTime: res.InvisibleTime, ReviveQid: res.ReviveQid}
	rh.Encode(out)
	return out
}

// batchAckBody is BatchAckMessageRequestBody; each ack's keys have a short
// and a long name (fastjson alternateNames), the bitSet is Java's
// BitSet.toByteArray in base64.
type batchAckBody struct {
	BrokerName string                `json:"brokerName"`
	Acks       []jsoniter.RawMessage `json:"acks"`
}

type batchAckJSON struct {
	C  *string `json:"c"`
	T  *string `json:"t"`
	R  *string `json:"r"`
	SO *int64  `json:"so"`
	Q  *int32  `json:"q"`
	RQ *int32  `json:"rq"`
	PT *int64  `json:"pt"`
	IT *int64  `json:"it"`
	B  *string `json:"b"`

	ConsumerGroup *string `json:"consumerGroup"`
	Topic         *string `json:"topic"`
	Retry         *string `json:"retry"`
	StartOffset   *int64  `json:"startOffset"`
	QueueID       *int32  `json:"queueId"`
	ReviveQueueID *int32  `json:"reviveQueueId"`
	PopTime       *int64  `json:"popTime"`
	InvisibleTime *int64  `json:"invisibleTime"`
	BitSet        *string `json:"bitSet"`
}

func pick[T any](a, b *T) T {
	var zero T
	switch {
	case a != nil:
		return *a
	case b != nil:
		return *b
	}
	return zero
}

// maxBatchAckBits bounds the offsets one batch ack entry may name (a
// hostile bitSet must not make the broker allocate without limit).
const maxBatchAckBits = 1 << 16

func decodeBatchAck(body []byte) ([]pop.BatchAck, error) {
	if len(body) == 0 {
		return nil, nil
	}
	var b batchAckBody
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, fmt.Errorf("%w: batch ack body: %w", remoting.ErrBadField, err)
	}
	out := make([]pop.BatchAck, 0, len(b.Acks))
	for _, raw := range b.Acks {
		var j batchAckJSON
		if err := json.Unmarshal(raw, &j); err != nil {
			return nil, fmt.Errorf("%w: batch ack: %w", remoting.ErrBadField, err)
		}
		a := pop.BatchAck{Group: pick(j.C, j.ConsumerGroup), Topic: pick(j.T, j.Topic), Retry: pick(j.R, j.Retry),
			StartOffset: pick(j.SO, j.StartOffset), QueueID: pick(j.Q, j.QueueID), ReviveQueueID: pick(j.RQ, j.ReviveQueueID),
			PopTime: pick(j.PT, j.PopTime), InvisibleTime: pick(j.IT, j.InvisibleTime)}
		bits, err := base64.StdEncoding.DecodeString(pick(j.B, j.BitSet))
		if err != nil {
			return nil, fmt.Errorf("%w: batch ack bitSet: %w", remoting.ErrBadField, err)
		}
		if len(bits)*8 > maxBatchAckBits {
			return nil, fmt.Errorf("%w: batch ack bitSet of %d bytes", remoting.ErrBadField, len(bits))
		}
		for i, x := range bits {
			for k := 0; k < 8; k++ {
				if x&(1<<k) != 0 {
					a.Offsets = append(a.Offsets, a.StartOffset+int64(i*8+k))
				}
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// batchAckMessage serves BATCH_ACK_MESSAGE.
func (p *brokerProcs) batchAckMessage(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	acks, err := decodeBatchAck(req.Body)
	if err != nil {
		return p.fail(req, err)
	}
	if err := p.pops.BatchAckMessages(acks); err != nil {
		return p.fail(req, err)
	}
	return remoting.NewResponse(req, remoting.Success, "")
}

// peekMessage serves PEEK_MESSAGE: answered later, from a broker
// goroutine, SUCCESS with the records or PULL_NOT_FOUND.
func (p *brokerProcs) peekMessage(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.PeekMessageRequestHeader
	if err := h.Decode(req); err != nil {
		return p.fail(req, err)
	}
	head := &remoting.Command{Code: req.Code, Opaque: req.Opaque, Serialize: req.Serialize, Began: req.Began}
	err := p.pops.Peek(strings.Clone(h.ConsumerGroup), strings.Clone(h.Topic), h.QueueID, h.MaxMsgNums, c.Remote,
		func(res pop.Result) {
			if c.Closed() {
				if res.Release != nil {
					res.Release()
				}
				return
			}
			code, remark := remoting.PullNotFound, "NO_MESSAGE_IN_QUEUE"
			if res.Status == pop.Found {
				code, remark = remoting.Success, "FOUND"
			}
			out := remoting.NewResponse(head, code, remark)
			rh := remoting.PopMessageResponseHeader{RestNum: res.RestNum}
			rh.Encode(out)
			if res.Status == pop.Found {
				out.BodyVec, out.ReleaseBody = res.Vec, res.Release
			}
			c.Reply(out)
		})
	if err != nil {
		return p.fail(req, err)
	}
	return nil
}

// notification serves NOTIFICATION: SUCCESS with hasMsg, now or when a
// message arrives or the poll time ends.
func (p *brokerProcs) notification(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	if _, ok := req.Lookup("bornTime"); !ok {
		req.SetInt64("bornTime", 0)
	}
	var h remoting.NotificationRequestHeader
	if err := h.Decode(req); err != nil {
		return p.fail(req, err)
	}
	r := pop.NotificationRequest{Group: strings.Clone(h.ConsumerGroup), Topic: strings.Clone(h.Topic), QueueID: h.QueueID,
		PollTime: h.PollTime, BornTime: h.BornTime, Order: h.Order, Remote: c.Remote, Gone: c.Closed}
	head := &remoting.Command{Code: req.Code, Opaque: req.Opaque, Serialize: req.Serialize, Began: req.Began}
	answer := func(req *remoting.Command, res pop.NotificationResult) *remoting.Command {
		out := remoting.NewResponse(req, remoting.Success, "")
		rh := remoting.NotificationResponseHeader{HasMsg: res.HasMsg, PollingFull: res.PollingFull}
		rh.Encode(out)
		return out
	}
	res, later, err := p.pops.Notification(&r, func(res pop.NotificationResult) {
		if !c.Closed() {
			c.Reply(answer(head, res))
		}
	})
	if err != nil {
		return p.fail(req, err)
	}
	if later {
		return nil
	}
	return answer(req, res)
}

// pollingInfo serves POLLING_INFO.
func (p *brokerProcs) pollingInfo(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.PollingInfoRequestHeader
	if err := h.Decode(req); err != nil {
		return p.fail(req, err)
	}
	n, err := p.pops.PollingInfo(h.ConsumerGroup, h.Topic, h.QueueID, c.Remote)
	if err != nil {
		return p.fail(req, err)
	}
	out := remoting.NewResponse(req, remoting.Success, "")
	rh := remoting.PollingInfoResponseHeader{PollingNum: n}
	rh.Encode(out)
	return out
}
