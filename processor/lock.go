package processor

import (
	"time"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/remoting"
)

func (p *brokerProcs) registerLocks(t remoting.Table) {
	t[remoting.LockBatchMQ] = p.lockBatch
	t[remoting.UnlockBatchMQ] = p.unlockBatch
}

// lockBatchBody is LockBatchRequestBody / UnlockBatchRequestBody.
type lockBatchBody struct {
	ConsumerGroup  string                `json:"consumerGroup"`
	ClientID       string                `json:"clientId"`
	MQSet          []tables.MessageQueue `json:"mqSet"`
	OnlyThisBroker bool                  `json:"onlyThisBroker"`
}

func decodeLockBody(req *remoting.Command) (lockBatchBody, *remoting.Command) {
	var b lockBatchBody
	if err := json.Unmarshal(req.Body, &b); err != nil {
		return b, remoting.NewResponse(req, remoting.SystemError, "decode lock batch body: "+err.Error())
	}
	return b, nil
}

// lockBatch serves LOCK_BATCH_MQ (41): body {"lockOKMQSet":[...]} lists the
// queues the client holds after the call.
func (p *brokerProcs) lockBatch(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	b, resp := decodeLockBody(req)
	if resp != nil {
		return resp
	}
	locked := p.clients.LockBatch(tables.LockBatchRequest{Group: b.ConsumerGroup, ClientID: b.ClientID, ConnID: c.ID,
		Queues: b.MQSet, Now: time.Now()})
	body, err := json.Marshal(struct {
		LockOKMQSet []tables.MessageQueue `json:"lockOKMQSet"`
	}{locked})
	if err != nil {
		return p.fail(req, err)
	}
	resp = remoting.NewResponse(req, remoting.Success, "")
	resp.Body = body
	return resp
}

// unlockBatch serves UNLOCK_BATCH_MQ (42).
func (p *brokerProcs) unlockBatch(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	b, resp := decodeLockBody(req)
	if resp != nil {
		return resp
	}
	p.clients.UnlockBatch(tables.LockBatchRequest{Group: b.ConsumerGroup, ClientID: b.ClientID, Queues: b.MQSet})
	return remoting.NewResponse(req, remoting.Success, "")
}
