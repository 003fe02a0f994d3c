package pop

// ACK_MESSAGE, BATCH_ACK_MESSAGE and CHANGE_MESSAGE_INVISIBLETIME (Apache
// 5.x AckMessageProcessor, ChangeInvisibleTimeProcessor). An ack marks the
// message in its checkpoint and is written to the revive log; an ack of a
// message whose checkpoint is gone (revived already, or never made) is
// answered SUCCESS all the same, as Apache's is. Changing the invisible time
// writes a new one-message checkpoint from now, then acks the old one.

import (
	"fmt"
	"time"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// AckRequest is ACK_MESSAGE's request (AckMessageRequestHeader) and, with
// InvisibleTime, CHANGE_MESSAGE_INVISIBLETIME's.
type AckRequest struct {
	Group         string
	Topic         string // the real topic: the pop retry topic for a retried message
	QueueID       int32
	ExtraInfo     string
	Offset        int64
	InvisibleTime int64 // CHANGE_MESSAGE_INVISIBLETIME only
	Remote        string
	// LiteTopic (Apache 5.5) makes it a lite ack or change, of the lite
	// topic's queue; Suspend (change only) does not count the redelivery.
	LiteTopic string
	Suspend   bool
}

// BatchAck is one entry of BATCH_ACK_MESSAGE's body (Apache's BatchAck).
type BatchAck struct {
	Group         string
	Topic         string // as the client names it; Retry says which real topic
	Retry         string
	StartOffset   int64
	QueueID       int32
	ReviveQueueID int32
	PopTime       int64
	InvisibleTime int64
	Offsets       []int64 // the acknowledged queue offsets (Apache's bitSet, decoded)
}

// ChangeInvisibleResult is CHANGE_MESSAGE_INVISIBLETIME's response header.
type ChangeInvisibleResult struct {
	PopTime       int64
	InvisibleTime int64
	ReviveQid     int32
}

// checkAckQueue is the topic and queue check both processors start with.
func (p *Service) checkAckQueue(topic string, queueID int32, remote string) error {
	tc, ok := p.d.Topics.Get(topic)
	if !ok {
		return remoting.Refuse(remoting.TopicNotExist, tables.ErrTopicNotExist, "topic[%s] not exist, apply first please! %s", topic, remoting.FAQSuggestTodo)
	}
	if queueID >= tc.ReadQueueNums || queueID < 0 {
		return remoting.Refuse(remoting.MessageIllegal, nil, "queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d] consumer:[%s]",
			queueID, topic, tc.ReadQueueNums, remote)
	}
	return nil
}

// Ack acknowledges one popped message.
func (p *Service) Ack(r *AckRequest) error {
	if err := p.checkAckQueue(r.Topic, r.QueueID, r.Remote); err != nil {
		return err
	}
	if r.LiteTopic != "" {
		return p.ackLite(r)
	}
	minOff, maxOff := p.d.Store.MinOffset(r.Topic, r.QueueID), p.d.Store.MaxOffset(r.Topic, r.QueueID)
	if r.Offset < minOff || r.Offset > maxOff {
		return remoting.Refuse(remoting.NoMessage, nil, "offset is illegal, key:%s@%d, commit:%d, store:%d~%d",
			r.Topic, r.QueueID, r.Offset, minOff, maxOff)
	}
	e, err := message.ParseExtraInfo(r.ExtraInfo)
	if err != nil {
		return remoting.Refuse(remoting.SystemError, err, "%s", err.Error())
	}
	if e.ReviveQid == message.PopOrderReviveQueue {
		return p.ackOrderly(r, &e)
	}
	return p.ack(ckKey{group: r.Group, topic: r.Topic, queueID: r.QueueID, startOffset: e.CkQueueOffset,
		popTime: e.PopTime}, []int64{r.Offset})
}

// BatchAckMessages acknowledges the entries of a BATCH_ACK_MESSAGE body;
// none is NO_MESSAGE, as Apache answers. Offsets outside the queue are skipped.
func (p *Service) BatchAckMessages(acks []BatchAck) error {
	if len(acks) == 0 {
		return remoting.Refuse(remoting.NoMessage, nil, "")
	}
	for _, a := range acks {
		e := message.ExtraInfo{Retry: a.Retry, PopTime: a.PopTime, InvisibleTime: a.InvisibleTime, ReviveQid: a.ReviveQueueID}
		if a.Retry != "0" && a.Retry != "1" && a.Retry != "2" {
			return remoting.Refuse(remoting.SystemError, message.ErrBadExtraInfo, "getRetry fail, format is wrong")
		}
		topic := e.RealTopic(a.Topic, a.Group)
		minOff, maxOff := p.d.Store.MinOffset(topic, a.QueueID), p.d.Store.MaxOffset(topic, a.QueueID)
		offs := make([]int64, 0, len(a.Offsets))
		for _, o := range a.Offsets {
			if o >= minOff && o <= maxOff {
				offs = append(offs, o)
			}
		}
		if len(offs) == 0 {
			continue
		}
		if a.ReviveQueueID == message.PopOrderReviveQueue {
			for _, o := range offs {
				if err := p.ackOrderly(&AckRequest{Group: a.Group, Topic: topic, QueueID: a.QueueID, Offset: o}, &e); err != nil {
					return err
				}
			}
			continue
		}
		if err := p.ack(ckKey{group: a.Group, topic: topic, queueID: a.QueueID, startOffset: a.StartOffset,
			popTime: a.PopTime}, offs); err != nil {
			return err
		}
	}
	return nil
}

// ChangeInvisibleTime makes a popped message invisible for r.InvisibleTime
// from now: a new checkpoint for it alone, then an ack of the old one.
func (p *Service) ChangeInvisibleTime(r *AckRequest) (ChangeInvisibleResult, error) {
	if err := checkInvisibleTime(r.InvisibleTime); err != nil {
		return ChangeInvisibleResult{}, err
	}
	if err := p.checkAckQueue(r.Topic, r.QueueID, r.Remote); err != nil {
		return ChangeInvisibleResult{}, err
	}
	if r.LiteTopic != "" {
		return p.changeInvisibleLite(r)
	}
	minOff, maxOff := p.d.Store.MinOffset(r.Topic, r.QueueID), p.d.Store.MaxOffset(r.Topic, r.QueueID)
	if r.Offset < minOff || r.Offset >= maxOff {
		return ChangeInvisibleResult{}, remoting.Refuse(remoting.NoMessage, nil, "")
	}
	e, err := message.ParseExtraInfo(r.ExtraInfo)
	if err != nil {
		return ChangeInvisibleResult{}, remoting.Refuse(remoting.SystemError, err, "%s", err.Error())
	}
	if e.ReviveQid == message.PopOrderReviveQueue {
		return p.changeInvisibleOrderly(r, &e), nil
	}
	now := time.Now().UnixMilli()
	ck := &popCk{key: ckKey{group: r.Group, topic: r.Topic, queueID: r.QueueID, startOffset: r.Offset, popTime: now},
		invisibleTime: r.InvisibleTime, offsets: []int64{r.Offset}}
	ro, err := p.putRevive(ckTag, ck.record(p.d.Config().BrokerName))
	if err != nil {
		return ChangeInvisibleResult{}, fmt.Errorf("%w: %w", remoting.Refuse(remoting.SystemError, nil, "append checkpoint failed"), err)
	}
	ck.reviveOffset = ro
	p.add(ck)
	p.wakeRevive()
	if err := p.ack(ckKey{group: r.Group, topic: r.Topic, queueID: r.QueueID, startOffset: e.CkQueueOffset,
		popTime: e.PopTime}, []int64{r.Offset}); err != nil {
		return ChangeInvisibleResult{}, err
	}
	return ChangeInvisibleResult{PopTime: now, InvisibleTime: r.InvisibleTime, ReviveQid: e.ReviveQid}, nil
}

// ack writes the ack record and marks the checkpoint (dropping it when all is acknowledged).
func (p *Service) ack(k ckKey, offsets []int64) error {
	rec := ackRecord{StartOffset: k.startOffset, Group: k.group, Topic: k.topic, QueueID: k.queueID, PopTime: k.popTime,
		BrokerName: p.d.Config().BrokerName}
	tag := ackTag
	if len(offsets) == 1 {
		rec.AckOffset = offsets[0]
	} else {
		tag, rec.AckOffset, rec.AckOffsets = batchAckTag, -1, offsets
	}
	if _, err := p.putRevive(tag, rec); err != nil {
		return fmt.Errorf("%w: %w", remoting.Refuse(remoting.SystemError, nil, "append ack failed"), err)
	}
	p.mark(k, offsets)
	return nil
}

// mark applies acks to a live checkpoint.
func (p *Service) mark(k ckKey, offsets []int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ck := p.cks[k]
	if ck == nil {
		return
	}
	for _, o := range offsets {
		ck.ack(o)
	}
	if ck.allAcked() {
		delete(p.cks, k)
	}
}
