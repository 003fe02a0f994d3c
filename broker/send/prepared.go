package send

import (
	"strconv"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// The prepared send: a send with TRAN_MSG=true (and the PREPARED sysFlag)
// is stored as a half message in RMQ_SYS_TRANS_HALF_TOPIC queue 0, as
// Apache's TransactionalMessageBridge.parseHalfMessageInner does; ending
// and checking transactions is package broker/tx's.

// toHalf turns a single send into a half message when Apache's
// SendMessageProcessor would: TRAN_MSG=true, unless it is a pre-4.6.1
// client's retry (reconsumeTimes > 0 with a delay level). The caller only
// asks for a send whose sysFlag says PREPARED, which every official client
// sets together with TRAN_MSG, so a plain send pays one bit test and no
// property lookup; a TRAN_MSG=true send without the flag is stored as a
// plain message (Apache would stage it: no client sends that).
//
// The half message keeps the client's properties plus __transactionId__
// (= UNIQ_KEY), REAL_TOPIC and REAL_QID, and its sysFlag's transaction bits
// are reset to NOT_TYPE so that it gets a consume queue entry in the half
// topic and none in the real one.
func (s *Service) toHalf(cfg *Config, m *store.PutMessage, uniq string) (bool, error) {
	tran := message.Property(m.Properties, message.PropTransactionPrepared)
	if len(tran) != 4 || (tran[0]|0x20) != 't' || (tran[1]|0x20) != 'r' || (tran[2]|0x20) != 'u' || (tran[3]|0x20) != 'e' {
		return false, nil // Boolean.parseBoolean: "true" in any case
	}
	if m.ReconsumeTimes > 0 {
		if lvl, _ := strconv.Atoi(message.Property(m.Properties, message.PropDelayTimeLevel)); lvl > 0 {
			return false, nil
		}
	}
	if cfg.RejectTransactionMessage {
		return false, remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission, "the broker[%s] sending transaction message is forbidden",
			cfg.BrokerIP1)
	}
	kv := make([]string, 0, 6)
	if uniq != "" {
		kv = append(kv, message.PropTransactionID, uniq)
	}
	kv = append(kv, message.PropRealTopic, m.Topic, message.PropRealQueueID, strconv.Itoa(int(m.QueueID)))
	// TRAN_PREPARED_QUEUE_OFFSET is the check service's own (the offset an
	// immunity copy's original was stored at, broker/tx): a
	// producer does not choose which op record resolves its message.
	m.Properties = message.SetProperties(message.DeleteProperties(m.Properties, message.PropTranPreparedQueueOffset), kv...)
	m.SysFlag = m.SysFlag&^message.TransactionMask | message.TransactionNot
	m.Topic = message.TransHalfTopic
	m.QueueID = 0
	return true, nil
}

// putPrepared stores a send whose sysFlag says PREPARED: as a half message
// when toHalf says so, without the schedule hook (Apache's hook would stage
// a half message carrying DELAY in SCHEDULE_TOPIC_XXXX, from where it would
// be delivered into the half topic late; the Java client clears DELAY from
// transactional messages, so only a forged send differs); otherwise as Apache
// stores a PREPARED record in its own topic (no consume queue entry).
func (s *Service) putPrepared(cfg *Config, m *store.PutMessage, uniq string) (store.PutResult, error) {
	realTopic := m.Topic
	half, err := s.toHalf(cfg, m, uniq)
	if err != nil {
		return store.PutResult{}, err
	}
	if half {
		pr, err := s.d.Store.Put(m)
		if err == nil {
			s.d.Tx.Prepared(realTopic)
		}
		return pr, err
	}
	return s.Put(m)
}
