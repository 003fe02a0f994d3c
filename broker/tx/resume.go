package tx

import (
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// remarkResumeFailed is Apache's remark for any failure of 323 before the put.
const remarkResumeFailed = "Exception was thrown when putting message back to RMQ_SYS_TRANS_HALF_TOPIC."

// ResumeCheckHalfMessage is RESUME_CHECK_HALF_MESSAGE (323): the message
// an offset message id names (a half message parked in
// TRANS_CHECK_MAX_TIME_TOPIC after too many checks) is put back into
// queue 0 of RMQ_SYS_TRANS_HALF_TOPIC with TRANSACTION_CHECK_TIMES 0, so
// the checker asks its producer again. As Apache, the record is taken as
// it is, whatever its topic; every failure is SYSTEM_ERROR.
func (s *Service) ResumeCheckHalfMessage(msgID string) error {
	_, off, err := message.DecodeOffsetMsgID(msgID)
	if err != nil {
		return remoting.Refuse(remoting.SystemError, err, remarkResumeFailed)
	}
	rec, err := s.d.Store.MessageAt(off)
	if err != nil {
		return remoting.Refuse(remoting.SystemError, err, remarkResumeFailed)
	}
	v, _, err := message.DecodeRecordView(rec)
	if err != nil {
		return remoting.Refuse(remoting.SystemError, err, remarkResumeFailed)
	}
	m := store.PutMessage{
		Topic: message.TransHalfTopic, QueueID: 0, Flag: v.Flag, Body: v.Body,
		Properties: message.SetProperties(string(v.Properties), message.PropTransactionCheckTimes, "0"),
		SysFlag:    v.SysFlag, BornTimestamp: v.BornTimestamp, BornHost: v.BornHost, StoreHost: v.StoreHost,
		ReconsumeTimes: v.ReconsumeTimes,
	}
	if _, err := s.d.Store.Put(&m); err != nil {
		return remoting.Refuse(remoting.SystemError, err, "Put message back to RMQ_SYS_TRANS_HALF_TOPIC failed.")
	}
	s.d.Counts.Prepared(string(message.PropertyBytes(v.Properties, message.PropRealTopic)))
	return nil
}
