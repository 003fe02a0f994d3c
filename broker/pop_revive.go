package broker

// Revive: a checkpoint whose invisible time is over gives its messages not
// acknowledged back to the group, as copies in the pop retry topic
// %RETRY%<group>_<topic> (queue 0, created on demand) with reconsumeTimes+1
// and 1ST_POP_TIME (Apache's PopReviveService.reviveRetry). A retried
// message popped again and not acknowledged goes back to the same retry
// topic. As in Apache 5.3.3, the broker sends no popped message to the DLQ:
// the 5.x push consumer acknowledges a message it gave up on
// (maxReconsumeTimes), and the gRPC proxy forwards it to %DLQ% itself.
//
// After reviving a checkpoint the loop writes a bAck record of the offsets
// it copied, so that a restart that rereads the checkpoint does not copy
// them again, then moves the revive offset to the oldest live checkpoint.

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/store"
)

const reviveInterval = 200 * time.Millisecond

// wakeRevive asks the revive loop for a pass now (a checkpoint due soon was added).
func (p *pops) wakeRevive() {
	select {
	case p.poke <- struct{}{}:
	default:
	}
}

// reviveLoop revives due checkpoints until quit.
func (p *pops) reviveLoop(quit <-chan struct{}) {
	t := time.NewTicker(reviveInterval)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case <-t.C:
		case <-p.poke:
		}
		p.revivePass(time.Now().UnixMilli())
	}
}

// revivePass revives every checkpoint due at now and commits the revive offset.
func (p *pops) revivePass(now int64) {
	p.mu.Lock()
	var due []*popCk
	for _, ck := range p.cks {
		if ck.reviveTime() <= now {
			due = append(due, ck)
		}
	}
	p.mu.Unlock()
	for _, ck := range due {
		if !p.revive(ck) {
			break // the store refuses writes: try again next pass, in order
		}
	}
	p.commitReviveOffset()
}

// revive copies the checkpoint's messages not acknowledged into the retry
// topic, records that, and drops the checkpoint. False: a write failed and
// the checkpoint stays.
func (p *pops) revive(ck *popCk) bool {
	p.mu.Lock()
	acked := ck.acked
	p.mu.Unlock()
	var copied []int64
	for i, off := range ck.offsets {
		if acked&(1<<i) != 0 {
			continue
		}
		ok, err := p.reviveOne(ck, off)
		if err != nil {
			p.log.Error().Err(err).Str("topic", ck.key.topic).Int32("queueId", ck.key.queueID).Int64("offset", off).
				Msg("pop revive failed")
			return false
		}
		if ok {
			copied = append(copied, off)
		}
	}
	if len(copied) > 0 {
		rec := ackRecord{AckOffset: -1, AckOffsets: copied, StartOffset: ck.key.startOffset, Group: ck.key.group,
			Topic: ck.key.topic, QueueID: ck.key.queueID, PopTime: ck.key.popTime, BrokerName: p.b.Config().BrokerName}
		if _, err := p.b.putRevive(batchAckTag, rec); err != nil {
			p.log.Error().Err(err).Msg("pop revive: done record not written")
		}
	}
	p.mu.Lock()
	delete(p.cks, ck.key)
	p.mu.Unlock()
	return true
}

// reviveOne copies one message into the retry topic; false if the message is gone from its queue.
func (p *pops) reviveOne(ck *popCk, off int64) (bool, error) {
	b := p.b
	es := b.Store.ReadQueue(ck.key.topic, ck.key.queueID, off, 1)
	if len(es) == 0 || es[0].QueueOffset != off {
		return false, nil
	}
	rec, err := b.Store.RecordAt(es[0].PhyOffset, es[0].Size)
	if err != nil {
		return false, nil
	}
	m, _, err := message.DecodeRecord(rec)
	if err != nil {
		return false, nil
	}
	topic := ck.key.topic
	if !IsRetryTopic(topic) {
		topic = PopRetryTopic(topic, ck.key.group)
	}
	if _, _, err := b.Topics.CreateIfAbsent(TopicConfig{TopicName: topic, ReadQueueNums: 1, WriteQueueNums: 1,
		Perm: PermRead | PermWrite}); err != nil {
		return false, err
	}
	props := m.Properties
	if m.ReconsumeTimes == 0 || message.Property(props, message.PropFirstPopTime) == "" {
		props = propsSet(props, message.PropFirstPopTime, strconv.FormatInt(ck.key.popTime, 10))
	}
	put := store.PutMessage{
		Topic:          topic,
		QueueID:        0,
		Flag:           m.Flag,
		Body:           m.Body,
		Properties:     props,
		SysFlag:        m.SysFlag,
		BornTimestamp:  m.BornTimestamp,
		BornHost:       b.StoreHost,
		StoreHost:      b.StoreHost,
		ReconsumeTimes: m.ReconsumeTimes + 1,
	}
	if _, err := b.Store.Put(&put); err != nil {
		b.Revive.retried(ck.key.group, ck.key.topic, putStatus(err))
		return false, err
	}
	b.Revive.retried(ck.key.group, ck.key.topic, "PUT_OK")
	return true, nil
}

// commitReviveOffset moves the revive offset to the oldest live checkpoint
// (or the end of the revive queue when none is live).
func (p *pops) commitReviveOffset() {
	topic := ReviveTopic(p.b.Config().BrokerClusterName)
	end := p.b.Store.MaxOffset(topic, 0)
	p.mu.Lock()
	oldest := int64(math.MaxInt64)
	for _, ck := range p.cks {
		oldest = min(oldest, ck.reviveOffset)
	}
	p.mu.Unlock()
	p.b.Offsets.Commit(ReviveGroup, topic, 0, min(oldest, end))
}

// recover rebuilds the live checkpoints from the revive log, from the
// revive offset on, and moves each group's offset past what the checkpoints
// read there name (the offset table may be older than the log after a crash).
func (p *pops) recover(ctx context.Context) error {
	b := p.b
	topic := ReviveTopic(b.Config().BrokerClusterName)
	from, ok := b.Offsets.Query(ReviveGroup, topic, 0)
	if !ok || from < 0 {
		from = b.Store.MinOffset(topic, 0)
	}
	end := b.Store.MaxOffset(topic, 0)
	var cks, acks int
	// past: per group queue, the offset after the last message any
	// checkpoint read names, acked or not: the offsets file is flushed every
	// few seconds (with the revive offset), so after a crash it may be older
	// than the revive log, whose records then say how far pops had gone.
	past := map[orderKey]int64{}
	for off := from; off < end; {
		if err := ctx.Err(); err != nil {
			return err
		}
		es := b.Store.ReadQueue(topic, 0, off, 256)
		if len(es) == 0 {
			off++
			continue
		}
		for _, e := range es {
			rec, err := b.Store.RecordAt(e.PhyOffset, e.Size)
			if err != nil {
				continue
			}
			v, _, err := message.DecodeRecordView(rec)
			if err != nil {
				continue
			}
			switch string(message.PropertyBytes(v.Properties, message.PropTags)) {
			case ckTag:
				var r ckRecord
				if json.Unmarshal(v.Body, &r) != nil || len(r.Diffs) == 0 || len(r.Diffs) > 64 {
					continue
				}
				ck := r.ck()
				ck.reviveOffset = e.QueueOffset
				k := orderKey{topic: ck.key.topic, group: ck.key.group, queueID: ck.key.queueID}
				past[k] = max(past[k], ck.offsets[len(ck.offsets)-1]+1)
				p.mu.Lock()
				if _, dup := p.cks[ck.key]; !dup {
					p.cks[ck.key] = ck
					cks++
				}
				p.mu.Unlock()
			case ackTag, batchAckTag:
				var r ackRecord
				if json.Unmarshal(v.Body, &r) != nil {
					continue
				}
				offs := r.AckOffsets
				if len(offs) == 0 {
					offs = []int64{r.AckOffset}
				}
				p.mark(ckKey{group: r.Group, topic: r.Topic, queueID: r.QueueID, startOffset: r.StartOffset, popTime: r.PopTime}, offs)
				acks++
			}
			off = e.QueueOffset + 1
		}
	}
	for k, next := range past {
		if cur, ok := b.Offsets.Query(k.group, k.topic, k.queueID); !ok || cur < next {
			b.Offsets.Commit(k.group, k.topic, k.queueID, next)
		}
	}
	live := p.live()
	p.log.Info().Int64("from", from).Int64("to", end).Int("checkpoints", cks).Int("acks", acks).Int("live", live).
		Msg("pop checkpoints recovered")
	return nil
}
