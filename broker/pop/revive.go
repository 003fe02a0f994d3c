package pop

// Revive: a checkpoint whose invisible time is over gives its messages not
// acknowledged back to the group, as copies in the pop retry topic
// %RETRY%<group>_<topic> (queue 0, created on demand) with reconsumeTimes+1
// and 1ST_POP_TIME (Apache's PopReviveService.reviveRetry). A retried
// message popped again and not acknowledged goes back to the same retry
// topic. As in Apache 5.3.3, the broker sends no popped message to the DLQ
// for its reconsume count: the 5.x push consumer acknowledges a message it
// gave up on (maxReconsumeTimes), and the gRPC proxy forwards it to %DLQ%
// itself. A message the revive cannot write into its retry topic is the
// exception (see reviveMaxAttempts): after bounded, backed-off retries, or
// at once when the retry topic cannot exist, it goes to %DLQ%<group>.
// Orderly pops write no checkpoint, so they never revive into a retry topic.
//
// After reviving a checkpoint the loop writes a bAck record of the offsets
// it copied, so that a restart that rereads the checkpoint does not copy
// them again, then moves the revive offset to the oldest live checkpoint.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/store"
)

const reviveInterval = 200 * time.Millisecond

// wakeRevive asks the revive loop for a pass now (a checkpoint due soon was added).
func (p *Service) wakeRevive() {
	select {
	case p.poke <- struct{}{}:
	default:
	}
}

// RunRevive revives due checkpoints until quit closes (a master runs it).
func (p *Service) RunRevive(quit <-chan struct{}) {
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

// revivePass revives every checkpoint due at now (and not backing off)
// and commits the revive offset.
func (p *Service) revivePass(now int64) {
	p.mu.Lock()
	var due []*popCk
	for _, ck := range p.cks {
		if ck.reviveTime() <= now && ck.reviveNext <= now {
			due = append(due, ck)
		}
	}
	p.mu.Unlock()
	for _, ck := range due {
		if !p.revive(ck, now) {
			break // the store refuses writes: the rest wait for the next pass, in order
		}
	}
	p.commitReviveOffset()
}

// Revive retries. A message that cannot be copied into its retry topic is
// tried again after a delay doubling from reviveRetryFirst up to
// reviveRetryMax; after reviveMaxAttempts failed writes, or at once when
// the retry topic cannot exist (its name is not a valid topic: only a group
// stored before group names were checked can make one, a valid group and
// topic make at most 255 characters), it goes to %DLQ%<group>, as a message past
// maxReconsumeTimes does. If the DLQ write fails too, the checkpoint stays
// and is tried every reviveRetryMax: the message is never dropped.
const (
	reviveRetryFirst  = time.Second
	reviveRetryMax    = 30 * time.Second
	reviveMaxAttempts = 6
	reviveLogPeriod   = 10 * time.Second // one revive failure line per period
)

// reviveBackoff is the delay before attempt fails+1.
func reviveBackoff(fails int32) time.Duration {
	d := reviveRetryFirst
	for i := int32(1); i < fails && d < reviveRetryMax; i++ {
		d *= 2
	}
	return min(d, reviveRetryMax)
}

// revive copies the checkpoint's messages not acknowledged into the retry
// topic (or the DLQ, see above), records that, and drops the checkpoint.
// False: a write failed; what was copied is recorded and the checkpoint
// stays, due again after its backoff.
func (p *Service) revive(ck *popCk, now int64) bool {
	p.mu.Lock()
	acked, fails := ck.acked, ck.reviveFails
	p.mu.Unlock()
	var copied []int64
	ok := true
	for i, off := range ck.offsets {
		if acked&(1<<i) != 0 {
			continue
		}
		m, found := p.reviveRead(ck, off)
		if !found {
			continue // gone from its queue
		}
		err := p.reviveRetry(ck, m)
		if err != nil && (errors.Is(err, errReviveTopic) || fails+1 >= reviveMaxAttempts) {
			err = p.reviveDLQ(ck, m, err)
		}
		if err != nil {
			fails = min(fails+1, reviveMaxAttempts)
			p.reviveLog.Error().Err(err).Str("group", ck.key.group).Str("topic", ck.key.topic).
				Int32("queueId", ck.key.queueID).Int64("offset", off).Int32("attempts", fails).
				Dur("retryIn", reviveBackoff(fails)).Msg("pop revive failed")
			ok = false
			break
		}
		copied = append(copied, off)
	}
	if len(copied) > 0 {
		rec := ackRecord{AckOffset: -1, AckOffsets: copied, StartOffset: ck.key.startOffset, Group: ck.key.group,
			Topic: ck.key.topic, QueueID: ck.key.queueID, PopTime: ck.key.popTime, BrokerName: p.d.Config().BrokerName}
		if _, err := p.putRevive(batchAckTag, rec); err != nil {
			p.reviveLog.Error().Err(err).Msg("pop revive: done record not written")
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ok {
		delete(p.cks, ck.key)
		return true
	}
	for _, off := range copied {
		ck.ack(off)
	}
	ck.reviveFails = fails
	ck.reviveNext = now + reviveBackoff(fails).Milliseconds()
	return false
}

// errReviveTopic marks a retry topic that cannot be created: retrying is
// pointless, the message goes to the DLQ.
var errReviveTopic = errors.New("pop: retry topic cannot be created")

// reviveRead reads the popped message at off; false if it is gone from its queue.
func (p *Service) reviveRead(ck *popCk, off int64) (*message.Record, bool) {
	es := p.d.Store.ReadQueue(ck.key.topic, ck.key.queueID, off, 1)
	if len(es) == 0 || es[0].QueueOffset != off {
		return nil, false
	}
	rec, err := p.d.Store.RecordAt(es[0].PhyOffset, es[0].Size)
	if err != nil {
		return nil, false
	}
	m, _, err := message.DecodeRecord(rec)
	if err != nil {
		return nil, false
	}
	return &m, true
}

// reviveRetry copies m into the pop retry topic.
func (p *Service) reviveRetry(ck *popCk, m *message.Record) error {
	topic := ck.key.topic
	if !message.IsRetryTopic(topic) {
		topic = message.PopRetryTopic(topic, ck.key.group)
	}
	if _, _, err := p.d.Topics.CreateIfAbsent(tables.TopicConfig{TopicName: topic, ReadQueueNums: 1, WriteQueueNums: 1,
		Perm: message.PermRead | message.PermWrite}); err != nil {
		return fmt.Errorf("%w: %s: %w", errReviveTopic, cutName(topic), err)
	}
	props := m.Properties
	if m.ReconsumeTimes == 0 || message.Property(props, message.PropFirstPopTime) == "" {
		props = message.SetProperties(props, message.PropFirstPopTime, strconv.FormatInt(ck.key.popTime, 10))
	}
	put := p.revivePut(ck, m, topic, 0, props)
	if err := p.put(&put); err != nil {
		p.d.Revive.Retried(ck.key.group, ck.key.topic, p.d.PutStatus(err))
		return err
	}
	p.d.Revive.Retried(ck.key.group, ck.key.topic, "PUT_OK")
	return nil
}

// reviveDLQ moves m to %DLQ%<group> because cause kept it from its retry topic.
func (p *Service) reviveDLQ(ck *popCk, m *message.Record, cause error) error {
	topic := message.DLQGroupPrefix + ck.key.group
	queues, err := p.d.CreateDLQ(topic)
	if err != nil {
		return fmt.Errorf("%w (to the DLQ after: %w)", err, cause)
	}
	props := m.Properties
	origin := message.Property(props, message.PropRetryTopic)
	if origin == "" {
		origin = ck.key.topic
		props = message.SetProperties(props, message.PropRetryTopic, origin)
	}
	put := p.revivePut(ck, m, topic, rand.Int32N(max(queues, 1)), props)
	if err := p.put(&put); err != nil {
		return fmt.Errorf("%w (to the DLQ after: %w)", err, cause)
	}
	p.d.Counts.ToDLQ(ck.key.group, origin)
	p.reviveLog.Warn().Err(cause).Str("group", ck.key.group).Str("topic", ck.key.topic).
		Int32("queueId", ck.key.queueID).Str("dlq", topic).Msg("pop revive: message moved to the DLQ")
	return nil
}

func (p *Service) revivePut(ck *popCk, m *message.Record, topic string, queueID int32, props string) store.PutMessage {
	return store.PutMessage{
		Topic:          topic,
		QueueID:        queueID,
		Flag:           m.Flag,
		Body:           m.Body,
		Properties:     props,
		SysFlag:        m.SysFlag,
		BornTimestamp:  m.BornTimestamp,
		BornHost:       p.d.StoreHost,
		StoreHost:      p.d.StoreHost,
		ReconsumeTimes: m.ReconsumeTimes + 1,
	}
}

// put writes a revived message: the store's Put, or the test's fault.
func (p *Service) put(m *store.PutMessage) error {
	if p.putFault != nil {
		if err := p.putFault(m); err != nil {
			return err
		}
	}
	_, err := p.d.Store.Put(m)
	return err
}

// cutName shortens a name for a log line or an error.
func cutName(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// commitReviveOffset moves the revive offset to the oldest live checkpoint
// (or the end of the revive queue when none is live).
func (p *Service) commitReviveOffset() {
	topic := ReviveTopic(p.d.Config().ClusterName)
	end := p.d.Store.MaxOffset(topic, 0)
	p.mu.Lock()
	oldest := int64(math.MaxInt64)
	for _, ck := range p.cks {
		oldest = min(oldest, ck.reviveOffset)
	}
	p.mu.Unlock()
	p.d.Offsets.Commit(ReviveGroup, topic, 0, min(oldest, end))
}

// Recover rebuilds the live checkpoints from the revive log, from the
// revive offset on, and moves each group's offset past what the checkpoints
// read there name (the offset table may be older than the log after a crash).
func (p *Service) Recover(ctx context.Context) error {
	topic := ReviveTopic(p.d.Config().ClusterName)
	from, ok := p.d.Offsets.Query(ReviveGroup, topic, 0)
	if !ok || from < 0 {
		from = p.d.Store.MinOffset(topic, 0)
	}
	end := p.d.Store.MaxOffset(topic, 0)
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
		es := p.d.Store.ReadQueue(topic, 0, off, 256)
		if len(es) == 0 {
			off++
			continue
		}
		for _, e := range es {
			rec, err := p.d.Store.RecordAt(e.PhyOffset, e.Size)
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
		if cur, ok := p.d.Offsets.Query(k.group, k.topic, k.queueID); !ok || cur < next {
			p.d.Offsets.Commit(k.group, k.topic, k.queueID, next)
		}
	}
	live := p.live()
	p.log.Info().Int64("from", from).Int64("to", end).Int("checkpoints", cks).Int("acks", acks).Int("live", live).
		Msg("pop checkpoints recovered")
	return nil
}
