package pop

// Pop checkpoints: what was popped and not yet acknowledged. Each pop of a
// queue makes one checkpoint (the queue, the pop time, the invisible time
// and the popped offsets); ACK_MESSAGE marks offsets of it; once its
// invisible time is over, the revive loop (revive.go) copies the
// offsets not acknowledged into the pop retry topic and drops it.
//
// Checkpoints and acks are written, as Apache 5.x writes them, as records
// of queue 0 of rmq_sys_REVIVE_LOG_<cluster>, with Apache's JSON bodies
// (PopCheckPoint tagged "ck", AckMsg "ack", BatchAckMsg "bAck"), and the
// revive progress is the consumer offset of CID_RMQ_SYS_REVIVE_GROUP on
// that queue. Where rocketgo differs: Apache stages a checkpoint through the
// timer wheel until its revive time and matches acks while consuming the
// revive queue; rocketgo keeps the live checkpoints in memory and reads the
// revive queue only at start, to rebuild them. The revive offset is the
// revive queue offset of the oldest live checkpoint, so a restart rereads
// everything still live (and acks written after it), and nothing older.

import (
	"fmt"
	"time"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/store"
)

// Revive log names (PopAckConstants).
const (
	ReviveTopicPrefix = "rmq_sys_REVIVE_LOG_"
	ReviveGroup       = "CID_RMQ_SYS_REVIVE_GROUP"
	ReviveQueueNums   = 8 // reviveQueueNum: the topic's queues; rocketgo writes queue 0
	ckTag             = "ck"
	ackTag            = "ack"
	batchAckTag       = "bAck"
)

// ReviveTopic is the revive log of the cluster (PopAckConstants.buildClusterReviveTopic).
func ReviveTopic(cluster string) string { return ReviveTopicPrefix + cluster }

// ckKey names a checkpoint the way an ack does: group, the topic popped
// (the pop retry topic for a retried message), queue, start offset and pop time.
type ckKey struct {
	group       string
	topic       string
	queueID     int32
	startOffset int64
	popTime     int64
}

// popCk is a live checkpoint.
type popCk struct {
	key           ckKey
	invisibleTime int64
	offsets       []int64 // popped queue offsets, ascending; at most 32 (maxMsgNums)
	acked         uint64  // bit i: offsets[i] acknowledged
	reviveOffset  int64   // revive queue offset of its record
	reviveFails   int32   // failed revive writes so far (pops.mu)
	reviveNext    int64   // ms: not revived again before (pops.mu)
}

func (c *popCk) reviveTime() int64 { return satAdd(c.key.popTime, c.invisibleTime) }

func (c *popCk) allAcked() bool { return c.acked == (uint64(1)<<len(c.offsets))-1 }

// ack marks offset; false if the checkpoint does not hold it.
func (c *popCk) ack(offset int64) bool {
	for i, o := range c.offsets {
		if o == offset {
			c.acked |= 1 << i
			return true
		}
	}
	return false
}

// satAdd is a+b, saturated: a hostile invisibleTime must not wrap a revive time into the past.
func satAdd(a, b int64) int64 {
	s := a + b
	if b > 0 && s < a {
		return 1<<63 - 1
	}
	if b < 0 && s > a {
		return -1 << 63
	}
	return s
}

// ckRecord is Apache's PopCheckPoint JSON.
type ckRecord struct {
	StartOffset   int64   `json:"so"`
	PopTime       int64   `json:"pt"`
	InvisibleTime int64   `json:"it"`
	BitMap        int32   `json:"bm"`
	Num           int8    `json:"n"`
	QueueID       int32   `json:"q"`
	Topic         string  `json:"t"`
	CID           string  `json:"c"`
	ReviveOffset  int64   `json:"ro"`
	Diffs         []int32 `json:"d"`
	BrokerName    string  `json:"bn,omitempty"`
}

// ackRecord is Apache's AckMsg JSON, and with AckOffsets its BatchAckMsg.
type ackRecord struct {
	AckOffset   int64   `json:"ao"`
	AckOffsets  []int64 `json:"aol,omitempty"`
	StartOffset int64   `json:"so"`
	Group       string  `json:"c"`
	Topic       string  `json:"t"`
	QueueID     int32   `json:"q"`
	PopTime     int64   `json:"pt"`
	BrokerName  string  `json:"bn,omitempty"`
}

func (c *popCk) record(brokerName string) ckRecord {
	r := ckRecord{StartOffset: c.key.startOffset, PopTime: c.key.popTime, InvisibleTime: c.invisibleTime,
		Num: int8(len(c.offsets)), QueueID: c.key.queueID, Topic: c.key.topic, CID: c.key.group,
		BrokerName: brokerName, Diffs: make([]int32, len(c.offsets))}
	for i, o := range c.offsets {
		r.Diffs[i] = int32(o - c.key.startOffset)
	}
	return r
}

func (r *ckRecord) ck() *popCk {
	c := &popCk{key: ckKey{group: r.CID, topic: r.Topic, queueID: r.QueueID, startOffset: r.StartOffset,
		popTime: r.PopTime}, invisibleTime: r.InvisibleTime}
	for _, d := range r.Diffs {
		c.offsets = append(c.offsets, r.StartOffset+int64(d))
	}
	return c
}

// putRevive appends a record to the revive log and returns its revive queue offset.
func (p *Service) putRevive(tag string, body any) (int64, error) {
	js, err := json.Marshal(body)
	if err != nil {
		return 0, fmt.Errorf("pop: encode %s record: %w", tag, err)
	}
	m := store.PutMessage{
		Topic:         ReviveTopic(p.d.Config().ClusterName),
		QueueID:       0,
		Body:          js,
		Properties:    string(message.AppendProperty(nil, message.PropTags, tag)),
		BornTimestamp: time.Now().UnixMilli(),
		BornHost:      p.d.StoreHost,
		StoreHost:     p.d.StoreHost,
	}
	res, err := p.d.Store.Put(&m)
	if err != nil {
		return 0, fmt.Errorf("pop: write %s record: %w", tag, err)
	}
	return res.QueueOffset, nil
}
