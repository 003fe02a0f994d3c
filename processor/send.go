package processor

import (
	"strconv"
	"sync"
	"unsafe"

	"github.com/rocketgo/rocketgo/broker/send"
	"github.com/rocketgo/rocketgo/remoting"
)

// registerSend serves the send codes, the reply codes (stored like sends)
// included, through the broker's send service.
func (p *brokerProcs) registerSend(t remoting.Table) {
	for _, code := range []int32{remoting.SendMessage, remoting.SendMessageV2, remoting.SendBatchMessage,
		remoting.SendReplyMessage, remoting.SendReplyMessageV2} {
		t[code] = p.send
	}
}

var (
	// SendMessageRequestHeader's keys; V2 requests (310, 320, 325) carry the
	// same fields under one-letter keys.
	sendKeysLong = [...]string{"producerGroup", "topic", "defaultTopic", "defaultTopicQueueNums", "queueId",
		"sysFlag", "bornTimestamp", "flag", "properties", "reconsumeTimes", "maxReconsumeTimes", "batch"}
	sendKeysV2 = [...]string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "l", "m"}
)

// decodeSend reads a send's header into r. Header strings are views into
// the request (see send.Request for how long they live).
func decodeSend(req *remoting.Command, r *send.Request) (err error) {
	keys := &sendKeysLong
	switch req.Code {
	case remoting.SendMessageV2, remoting.SendBatchMessage, remoting.SendReplyMessageV2:
		keys = &sendKeysV2
	}
	if r.ProducerGroup, err = req.RequireStr(keys[0]); err != nil {
		return err
	}
	if r.Topic, err = req.RequireStr(keys[1]); err != nil {
		return err
	}
	if r.DefaultTopic, err = req.RequireStr(keys[2]); err != nil {
		return err
	}
	if r.DefaultTopicQueueNums, err = req.Int32(keys[3]); err != nil {
		return err
	}
	if r.QueueID, err = req.Int32(keys[4]); err != nil {
		return err
	}
	if r.SysFlag, err = req.Int32(keys[5]); err != nil {
		return err
	}
	if r.BornTimestamp, err = req.Int64(keys[6]); err != nil {
		return err
	}
	if r.Flag, err = req.Int32(keys[7]); err != nil {
		return err
	}
	r.Properties = req.Str(keys[8])
	r.ReconsumeTimes = int32(req.OptInt64(keys[9], 0))
	r.MaxReconsumeTimes = int32(req.OptInt64(keys[10], 0))
	r.HasMaxReconsumeTimes = req.Str(keys[10]) != ""
	r.Batch = req.Bool(keys[11]) || req.Code == remoting.SendBatchMessage
	r.Body = req.Body
	return nil
}

// send serves SEND_MESSAGE (10), SEND_MESSAGE_V2 (310), SEND_BATCH_MESSAGE
// (320), SEND_REPLY_MESSAGE (324) and SEND_REPLY_MESSAGE_V2 (325): decode,
// Sender.Send, encode. With SYNC_FLUSH the answer is written later, by the
// completion the call's park makes, from the flush goroutine.
func (p *brokerProcs) send(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	sc := sendCalls.Get().(*sendCall)
	defer sc.release()
	r, res := &sc.r, &sc.res
	if err := decodeSend(req, r); err != nil {
		// A header Apache's decoder refuses gets a bare SYSTEM_ERROR: no
		// MSG_REGION, no TRACE_ON.
		return p.fail(req, err)
	}
	r.BornHost, r.Producer = c.RemoteAddr, c.Remote
	r.Scratch = req.Scratch(r.ScratchHint())
	// A one-way send has nobody to answer: no completion, no wait.
	var later func() func(send.Status)
	if !req.IsOneway() {
		sc.c, sc.req = c, req
		later = sc.later
	}
	err := p.sends.Send(r, res, later)
	if err != nil {
		// Apache's preSend puts MSG_REGION and TRACE_ON on every answer to
		// a send whose header decoded, refusals included (TestReference).
		resp := p.fail(req, err)
		setSendExtras(resp, res)
		return resp
	}
	if res.Parked {
		return nil
	}
	return sendResponse(req, res)
}

// sendCall is what one send hands its Sender. Through an interface all of
// it escapes to the heap; pooled, a send allocates nothing. The Sender
// keeps none of it once Send returns: it calls later, if at all, before.
type sendCall struct {
	r     send.Request
	res   send.Result
	c     *remoting.Conn
	req   *remoting.Command
	later func() func(send.Status) // sc.park, bound once per sendCall
}

var sendCalls = sync.Pool{New: func() any {
	sc := new(sendCall)
	sc.later = sc.park
	return sc
}}

// park is the completion of a send that waits for the flush: its answer,
// made now (req is recycled when the handler returns), written later.
func (sc *sendCall) park() func(send.Status) {
	resp := sendResponse(sc.req, &sc.res)
	c := sc.c
	return func(st send.Status) {
		// Apache answers FLUSH_DISK_TIMEOUT with the whole header and no remark.
		resp.Code = st.Code()
		c.Reply(resp)
	}
}

// release forgets the request (its body and texts) and pools sc.
func (sc *sendCall) release() {
	sc.r, sc.res, sc.c, sc.req = send.Request{}, send.Result{}, nil, nil
	sendCalls.Put(sc)
}

// sendResponse encodes a send's result: SendMessageResponseHeader (msgId,
// queueId, queueOffset, transactionId, recallHandle) and preSend's MSG_REGION and
// TRACE_ON. The texts in res live in the request: SetBytes copies them.
func sendResponse(req *remoting.Command, res *send.Result) *remoting.Command {
	resp := remoting.NewResponse(req, res.Status.Code(), "")
	resp.SetBytes("msgId", res.MsgID)
	resp.SetInt64("queueId", int64(res.QueueID))
	resp.SetInt64("queueOffset", res.QueueOffset)
	if res.TransactionID != "" {
		resp.SetBytes("transactionId", unsafe.Slice(unsafe.StringData(res.TransactionID), len(res.TransactionID)))
	}
	if res.RecallHandle != "" && req.Code != remoting.SendReplyMessage && req.Code != remoting.SendReplyMessageV2 {
		resp.Set("recallHandle", res.RecallHandle) // Apache's reply processor attaches none
	}
	setSendExtras(resp, res)
	return resp
}

func setSendExtras(resp *remoting.Command, res *send.Result) {
	resp.Set("MSG_REGION", res.Region)
	resp.Set("TRACE_ON", strconv.FormatBool(res.TraceOn))
}
