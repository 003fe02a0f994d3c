package pop

// Orderly pop (FIFO groups; Apache 5.x ConsumerOrderInfoManager): a pop with
// order=true reads a queue only when the group holds nothing un-acked and
// still invisible there (the queue's lock), reads from the committed offset,
// which moves only with acks (to the first offset not acked), and counts how
// often each offset was handed out (orderCountInfo: the client's
// reconsumeTimes). No checkpoint and no retry topic: a message not acked is
// popped again, in order, once its invisible time is over. Its handles carry
// reviveQid 999 (PopOrderReviveQueue), which routes their acks and
// invisible-time changes here.
//
// The table is persisted as config/consumerOrderInfo.json in Apache's shape
// ({"table":{"topic@group":{"queueId":OrderInfo}}}, OrderInfo's short keys),
// so that a restart keeps a popped queue locked until its invisible time.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// orderInfo is Apache's OrderInfo (JSON keys as fastjson writes them).
type orderInfo struct {
	PopTime       int64            `json:"popTime"`
	InvisibleTime int64            `json:"i"`
	Offsets       []int64          `json:"o"` // first absolute, the others relative to it
	NextVisible   map[string]int64 `json:"ot,omitempty"`
	ConsumedCount map[string]int   `json:"oc,omitempty"`
	LastConsume   int64            `json:"l"`
	CommitBits    int64            `json:"cm"`
	AttemptID     string           `json:"a,omitempty"`
}

func (o *orderInfo) offset(i int) int64 {
	if i == 0 {
		return o.Offsets[0]
	}
	return o.Offsets[0] + o.Offsets[i]
}

func (o *orderInfo) acked(i int) bool { return o.CommitBits&(1<<i) != 0 }

// blocks: something handed out is neither acked nor visible again (OrderInfo.needBlock).
func (o *orderInfo) blocks(attemptID string, invisibleTime, now int64) bool {
	if len(o.Offsets) == 0 || (o.AttemptID != "" && o.AttemptID == attemptID) {
		return false
	}
	if o.InvisibleTime <= 0 {
		o.InvisibleTime = invisibleTime
	}
	for i := range o.Offsets {
		if o.acked(i) {
			continue
		}
		next := satAdd(o.PopTime, o.InvisibleTime)
		if t, ok := o.NextVisible[strconv.FormatInt(o.offset(i), 10)]; ok {
			next = t
		}
		if now < next {
			return true
		}
	}
	return false
}

// next is the first offset not acked, or past the last (OrderInfo.getNextOffset).
func (o *orderInfo) next() int64 {
	for i := range o.Offsets {
		if !o.acked(i) {
			return o.offset(i)
		}
	}
	return o.offset(len(o.Offsets)-1) + 1
}

type orderKey struct {
	topic, group string
	queueID      int32
}

// orders is the FIFO table.
type orders struct {
	path  string
	mu    sync.Mutex
	table map[orderKey]*orderInfo
	dirty atomic.Bool
}

func newOrders(path string) *orders { return &orders{path: path, table: make(map[orderKey]*orderInfo)} }

type ordersFile struct {
	Table map[string]map[string]*orderInfo `json:"table"`
}

func (t *orders) load() error {
	b, err := os.ReadFile(t.path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var f ordersFile
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("%s: %w", t.path, err)
	}
	for tg, qs := range f.Table {
		i := strings.LastIndexByte(tg, '@')
		if i < 0 {
			continue
		}
		for q, info := range qs {
			qid, err := strconv.ParseInt(q, 10, 32)
			if err != nil || info == nil || len(info.Offsets) == 0 || len(info.Offsets) > 64 {
				continue
			}
			t.table[orderKey{topic: tg[:i], group: tg[i+1:], queueID: int32(qid)}] = info
		}
	}
	return nil
}

func (t *orders) marshal() ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := ordersFile{Table: map[string]map[string]*orderInfo{}}
	for k, v := range t.table {
		tg := k.topic + "@" + k.group
		if f.Table[tg] == nil {
			f.Table[tg] = map[string]*orderInfo{}
		}
		f.Table[tg][strconv.Itoa(int(k.queueID))] = v
	}
	return json.Marshal(f)
}

func (t *orders) persistIfDirty() error { return config.PersistIfDirty(t.path, &t.dirty, t.marshal) }

// blocked reports whether an orderly pop may not read the queue now.
func (t *orders) blocked(k orderKey, attemptID string, invisibleTime int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	o := t.table[k]
	return o != nil && o.blocks(attemptID, invisibleTime, time.Now().UnixMilli())
}

// update records what an orderly pop handed out and appends the queue's
// orderCountInfo entries (ConsumerOrderInfoManager.update).
// commit (the pop's offset commit) runs under the table's lock, as acks' do.
func (t *orders) update(k orderKey, attemptID, topicMark string, popTime, invisibleTime int64, offsets []int64, info []byte,
	commit func()) []byte {
	t.mu.Lock()
	n := t.putLocked(k, attemptID, popTime, invisibleTime, offsets)
	commit()
	// Entries for the offsets handed out before (count > 0), then the
	// queue's minimum for the clients that read orderCountInfo by queue id
	// (0 when some offset is new).
	minCount := 0
	if len(n.ConsumedCount) == len(offsets) && len(offsets) > 0 {
		minCount = int(^uint(0) >> 1)
	}
	for _, o := range offsets {
		c, ok := n.ConsumedCount[strconv.FormatInt(o, 10)]
		if !ok {
			continue
		}
		if len(info) > 0 {
			info = append(info, ';')
		}
		info = fmt.Appendf(info, "%s qo%d%%%d %d", topicMark, k.queueID, o, c)
		minCount = min(minCount, c)
	}
	t.mu.Unlock()
	t.dirty.Store(true)
	if len(info) > 0 {
		info = append(info, ';')
	}
	return fmt.Appendf(info, "%s %d %d", topicMark, k.queueID, minCount)
}

// putLocked records what a pop handed out, counting how often each offset
// was handed out before (the same attempt keeps the counts); t.mu held.
func (t *orders) putLocked(k orderKey, attemptID string, popTime, invisibleTime int64, offsets []int64) *orderInfo {
	n := &orderInfo{PopTime: popTime, InvisibleTime: invisibleTime, LastConsume: time.Now().UnixMilli(), AttemptID: attemptID}
	n.Offsets = append(n.Offsets, offsets[0])
	for _, o := range offsets[1:] {
		n.Offsets = append(n.Offsets, o-offsets[0])
	}
	prev := t.table[k]
	n.ConsumedCount = map[string]int{}
	if prev != nil {
		if prev.AttemptID != "" && prev.AttemptID == attemptID {
			if prev.ConsumedCount != nil {
				n.ConsumedCount = prev.ConsumedCount
			}
		} else {
			was := map[int64]bool{}
			for i := range prev.Offsets {
				was[prev.offset(i)] = true
			}
			for _, o := range offsets {
				if was[o] {
					key := strconv.FormatInt(o, 10)
					n.ConsumedCount[key] = prev.ConsumedCount[key] + 1
				}
			}
		}
	}
	t.table[k] = n
	return n
}

// ack marks offset acked and returns the group's next offset, -1 when the
// offset was not handed out, -2 when popTime is not the queue's last pop
// (ConsumerOrderInfoManager.commitAndNext).
// commit, called under the table's lock, moves the group's offset to the
// next offset (never taking popMu: an ack runs on an event loop).
func (t *orders) ack(k orderKey, offset, popTime int64, commit func(next int64)) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	o := t.table[k]
	if o == nil {
		commit(offset + 1)
		return offset + 1
	}
	if len(o.Offsets) == 0 {
		return -1
	}
	if popTime != o.PopTime {
		return -2
	}
	for i := range o.Offsets {
		if o.offset(i) == offset {
			o.CommitBits |= 1 << i
			t.dirty.Store(true)
			next := o.next()
			commit(next)
			return next
		}
	}
	return -1
}

// changeInvisible sets when one handed-out offset becomes visible again.
func (t *orders) changeInvisible(k orderKey, offset, popTime, nextVisible int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	o := t.table[k]
	if o == nil || popTime != o.PopTime {
		return
	}
	if o.NextVisible == nil {
		o.NextVisible = map[string]int64{}
	}
	o.NextVisible[strconv.FormatInt(offset, 10)] = nextVisible
	t.dirty.Store(true)
}

// ackOrderly is ACK_MESSAGE of a handle with reviveQid 999 (AckMessageProcessor.ackOrderly).
func (p *Service) ackOrderly(r *AckRequest, e *message.ExtraInfo) error {
	k := orderKey{topic: r.Topic, group: r.Group, queueID: r.QueueID}
	old, _ := p.d.Offsets.Query(r.Group, r.Topic, r.QueueID)
	if r.Offset < old {
		return nil
	}
	next := p.orders.ack(k, r.Offset, e.PopTime, func(next int64) { p.d.Offsets.Commit(r.Group, r.Topic, r.QueueID, next) })
	switch {
	case next > -1:
		if !p.orders.blocked(k, "", e.InvisibleTime) {
			p.d.Store.WakeTopic(r.Topic)
		}
	case next == -1:
		return remoting.Refuse(remoting.MessageIllegal, nil, "offset is illegal, key:%s@%s@%d, old:%d, commit:%d, next:%d, %s",
			r.Topic, r.Group, r.QueueID, old, r.Offset, next, r.Remote)
	}
	return nil
}

// changeInvisibleOrderly is CHANGE_MESSAGE_INVISIBLETIME of an orderly handle.
func (p *Service) changeInvisibleOrderly(r *AckRequest, e *message.ExtraInfo) ChangeInvisibleResult {
	res := ChangeInvisibleResult{PopTime: e.PopTime, InvisibleTime: e.InvisibleTime, ReviveQid: e.ReviveQid}
	if old, _ := p.d.Offsets.Query(r.Group, r.Topic, r.QueueID); r.Offset < old {
		return res
	}
	next := satAdd(time.Now().UnixMilli(), r.InvisibleTime)
	p.orders.changeInvisible(orderKey{topic: r.Topic, group: r.Group, queueID: r.QueueID}, r.Offset, e.PopTime, next)
	res.InvisibleTime = next - e.PopTime
	return res
}
