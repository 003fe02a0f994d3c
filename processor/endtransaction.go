package processor

import (
	"strings"

	"github.com/rocketgo/rocketgo/broker/tx"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

func (p *brokerProcs) registerTransactions(t remoting.Table) {
	t[remoting.EndTransaction] = p.endTransaction
}

// endTransaction serves END_TRANSACTION (37, EndTransactionRequestHeader):
// producerGroup, tranStateTableOffset*, commitLogOffset*,
// commitOrRollback* (0, 8 or 12: checkFields), fromTransactionCheck,
// msgId, transactionId. The broker's workers serve it off the loop and
// answer through the completion made here; Java's one-way form gets no
// answer, and neither does the pending state (0) in any form (Apache
// returns no response for it).
func (p *brokerProcs) endTransaction(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	r, err := decodeEndTransaction(req)
	if err != nil {
		return p.fail(req, err)
	}
	r.Remote = c.Remote
	var done func(error)
	// A response is made only for an answer to come: not for the one-way
	// form, nor for the pending state, which is never answered.
	if !req.IsOneway() && r.CommitOrRollback != message.TransactionNot {
		// req is recycled when the handler returns: the answer is made
		// from a copy of what it needs, as a late pull's (pullLater).
		head := &remoting.Command{Code: req.Code, Opaque: req.Opaque, Serialize: req.Serialize, Began: req.Began}
		done = func(err error) {
			if err != nil {
				c.Reply(p.fail(head, err))
				return
			}
			c.Reply(remoting.NewResponse(head, remoting.Success, ""))
		}
	}
	// Queued: answered by done; the pending state: never answered.
	if _, err := p.txs.EndTransaction(&r, done); err != nil {
		return p.fail(req, err)
	}
	return nil
}

// decodeEndTransaction reads the header as Apache's decoder and checkFields
// do; the strings are copied, the request being recycled before a worker
// serves it.
func decodeEndTransaction(req *remoting.Command) (r tx.EndRequest, err error) {
	// Apache 5.3.3 does not enforce its @CFNotNull on the strings: a
	// missing msgId is served (it is only logged), a missing producerGroup
	// is "The producer group wrong". The numbers it cannot do without.
	r.ProducerGroup = strings.Clone(req.Str("producerGroup"))
	if r.TranStateTableOffset, err = req.Int64("tranStateTableOffset"); err != nil {
		return r, err
	}
	if r.CommitLogOffset, err = req.Int64("commitLogOffset"); err != nil {
		return r, err
	}
	if r.CommitOrRollback, err = req.Int32("commitOrRollback"); err != nil {
		return r, err
	}
	switch r.CommitOrRollback {
	case message.TransactionNot, message.TransactionCommit, message.TransactionRollbk:
	default:
		return r, &remoting.Refusal{Code: remoting.SystemError, Remark: "commitOrRollback field wrong"}
	}
	r.MsgID = strings.Clone(req.Str("msgId"))
	r.TransactionID = strings.Clone(req.Str("transactionId"))
	r.FromTransactionCheck = req.Bool("fromTransactionCheck")
	return r, nil
}
