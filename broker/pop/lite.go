package pop

// Lite consumption (Apache 5.5 PopLiteMessageProcessor, the lite branches
// of AckMessageProcessor and ChangeInvisibleTimeProcessor). A
// POP_LITE_MESSAGE names a client, not a queue: it reads the lite topics
// (LMQs %LMQ%$<parent>$<lite>, queue 0) its client's events name, in
// order, until maxMsgNum. Per (group, lite topic) it is FIFO: one batch out
// at a time, kept in a memory-only order table (no checkpoint, no revive,
// no retry topic); an ack of every offset of the batch, or its invisible
// time passing, lets the next pop read on. The records are answered as
// stored (parent topic and queue); the LMQ offset is in their
// INNER_MULTI_QUEUE_OFFSET, and orderCountInfo holds one consume count per
// message. A pop that finds nothing parks on its client's events (the
// store's arrival waiter, keyed by the client) until an event, or its poll
// time ends.

import (
	"bytes"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// LiteEvents are the clients' lite subscriptions and events (broker/lite).
type LiteEvents interface {
	// Next is the client's next lite topic queue to read; false when none.
	Next(clientID string) (string, bool)
	// Touch marks the client's pop.
	Touch(clientID string)
	HasEvents(clientID string) bool
	// EventMode is enableLiteEventMode; off, ClientSet names what to read.
	EventMode() bool
	ClientSet(clientID string, limit int) (set []string, group, topic string, ok bool)
	// Dispatch offers lmq to a client of the group now, DispatchAt when
	// the group's batch becomes visible again; CancelDispatchAt drops that
	// when the batch is all acked.
	Dispatch(group, lmq string)
	DispatchAt(group, lmq string, at int64)
	CancelDispatchAt(group, lmq string)
}

// LiteRequest is POP_LITE_MESSAGE's request (PopLiteMessageRequestHeader).
type LiteRequest struct {
	ClientID      string
	Group         string
	Topic         string // the parent topic
	MaxMsgNum     int32
	InvisibleTime int64
	PollTime      int64
	BornTime      int64
	AttemptID     string
	Remote        string
}

// liteState is the lite part of the service.
type liteState struct {
	orders    *orders // memory only: never loaded nor persisted
	lastSweep atomic.Int64
}

// maxLiteQueueLen bounds the lite topic queue name an ack may name (the
// store's bound on a queue name).
const maxLiteQueueLen = 255

// liteSweepEvery is how often finished or abandoned batches are dropped
// from the lite order table (Apache's autoClean period).
const liteSweepEvery = 5 * time.Minute

// liteWaitKey is the arrival waiter's key of a client's parked lite pops:
// a NUL cannot be in a topic name, so no dispatch wakes it but WakeLite.
func liteWaitKey(clientID string) string { return "\x00lite\x00" + clientID }

// WakeLite wakes the client's parked lite pops (it has events).
func (p *Service) WakeLite(clientID string) { p.d.Store.WakeTopic(liteWaitKey(clientID)) }

// PopLite checks a lite pop (Apache's preCheck: order, codes and remarks)
// and runs it on a broker goroutine, answering through the completion.
func (p *Service) PopLite(r *LiteRequest, later func() Completion) (Result, error) {
	if p.d.Lite == nil {
		return Result{}, remoting.Refuse(remoting.RequestCodeNotSupported, nil, "lite topics are not served")
	}
	now := time.Now().UnixMilli()
	cfg := p.d.Config()
	if err := brokerPrecheck(&cfg, now, r.BornTime, r.PollTime, r.MaxMsgNum); err != nil {
		return Result{}, err
	}
	tc, ok := p.d.Topics.Get(r.Topic)
	if !ok {
		return Result{}, remoting.Refuse(remoting.TopicNotExist, tables.ErrTopicNotExist, "topic [%s] not exist, apply first please! %s",
			r.Topic, remoting.FAQSuggestTodo)
	}
	if !tc.Readable() {
		return Result{}, remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission, "the topic [%s] peeking message is forbidden", r.Topic)
	}
	if !tc.Lite() {
		return Result{}, remoting.Refuse(remoting.InvalidParameter, nil, "the topic [%s] message type not match", r.Topic)
	}
	gc, ok := p.d.Groups.Get(r.Group)
	if !ok {
		return Result{}, remoting.Refuse(remoting.SubscriptionGroupNotExist, tables.ErrGroupNotExist,
			"subscription group [%s] not exist, %s", r.Group, remoting.FAQGroupNotExist)
	}
	if !gc.ConsumeEnable {
		return Result{}, remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission, "subscription group no permission, %s", r.Group)
	}
	if gc.LiteBindTopic() != r.Topic {
		return Result{}, remoting.Refuse(remoting.InvalidParameter, nil, "subscription bind topic not match, %s", r.Group)
	}
	// Apache takes any long; a negative or huge invisible time would
	// block a lite topic for ever (pop.go's bounds).
	if err := checkInvisibleTime(r.InvisibleTime); err != nil {
		return Result{}, err
	}
	done := later()
	rq := *r
	if !p.d.Go(func() { p.runLite(&rq, done, true) }) {
		return Result{}, remoting.Refuse(remoting.ServiceNotAvailable, nil, "the broker is shutting down")
	}
	return Result{Status: Later}, nil
}

// runLite pops once and answers, or parks when it found nothing and may wait.
func (p *Service) runLite(r *LiteRequest, done Completion, mayPark bool) {
	if done.Gone != nil && done.Gone() {
		return
	}
	res := p.popLiteOnce(r)
	if res.Status == Found {
		done.Done(res, nil)
		return
	}
	if mayPark && r.PollTime > 0 {
		switch p.parkLite(r, done) {
		case parked:
			return
		case parkFull:
			res.Status = PollingFull
		}
	}
	done.Done(res, nil)
}

// parkLite parks the pop on its client's events. An event offered between
// the pop's look and the park would wake nobody (the store checks no
// position for this key), so the events are looked at again once parked.
func (p *Service) parkLite(r *LiteRequest, done Completion) parkResult {
	key := liteWaitKey(r.ClientID)
	rerun := func(mayPark bool) { p.runLite(r, done, mayPark) }
	res := p.parkOn(key, r.Group, r.BornTime, r.PollTime, done.Gone, rerun)
	if res == parked && p.d.Lite.HasEvents(r.ClientID) {
		p.d.Store.WakeTopic(key)
	}
	return res
}

// popLiteOnce reads the client's lite topics, one pop at a time (the lite
// pops' own mutex: read offset → read → order info is atomic per queue).
func (p *Service) popLiteOnce(r *LiteRequest) Result {
	p.liteMu.Lock()
	defer p.liteMu.Unlock()
	p.sweepLite()
	cfg := p.d.Config()
	popTime := time.Now().UnixMilli()
	st := popState{popTime: popTime, brokerName: cfg.BrokerName, maxBytes: cfg.MaxTransferBytes}
	ev := p.d.Lite
	ev.Touch(r.ClientID)
	var set []string
	if !ev.EventMode() {
		set, _, _, _ = ev.ClientSet(r.ClientID, 1<<20)
	}
	seen := map[string]struct{}{}
	var counts []byte
	for st.count < int(r.MaxMsgNum) && st.bytes < st.maxBytes {
		var lmq string
		if ev.EventMode() {
			q, ok := ev.Next(r.ClientID)
			if !ok {
				break
			}
			lmq = q
		} else {
			if len(set) == 0 {
				break
			}
			lmq, set = set[0], set[1:]
			if p.d.Store.MaxOffset(lmq, 0) <= 0 {
				continue
			}
		}
		if _, dup := seen[lmq]; dup {
			continue
		}
		seen[lmq] = struct{}{}
		if !message.LiteQueueOf(lmq, r.Topic) {
			continue
		}
		counts = p.popLiteQueue(&st, r, lmq, counts, &cfg)
	}
	res := Result{Status: NotFound, PopTime: popTime, InvisibleTime: r.InvisibleTime, ReviveQid: message.PopOrderReviveQueue,
		OrderCountInfo: string(counts)}
	if st.count > 0 {
		res.Status, res.Vec, res.Count = Found, st.vec, st.count
		p.d.Counts.OutLite(r.Group, r.Topic, int64(st.count), int64(st.bytes))
		p.d.Got(true, st.count)
		rels := st.releases
		res.Release = func() {
			for _, f := range rels {
				f()
			}
		}
	}
	return res
}

// popLiteQueue reads one lite topic into st (popLiteTopic) and appends the
// consume counts of what it handed out.
func (p *Service) popLiteQueue(st *popState, r *LiteRequest, lmq string, counts []byte, cfg *Config) []byte {
	k := orderKey{topic: lmq, group: r.Group}
	lo := p.lite.orders
	if lo.blocked(k, r.AttemptID, r.InvisibleTime) {
		return counts // the group's batch of this lite topic is out and invisible
	}
	offset := p.popOffset(r.Group, lmq, 0, 0, false)
	want := int(r.MaxMsgNum) - st.count
	res := p.d.Store.GetMessageViews(lmq, 0, offset, want, st.maxBytes-st.bytes, nil, store.PopulatePages)
	switch res.Status {
	case store.OffsetTooSmall, store.OffsetOverflowBadly, store.OffsetFoundNull, store.NoMatchedMessage,
		store.MessageWasRemoving, store.NoMatchedLogicQueue:
		if res.Release != nil {
			res.Release()
		}
		if res.NextBeginOffset == offset {
			return counts
		}
		offset = res.NextBeginOffset
		p.d.Offsets.Commit(r.Group, lmq, 0, offset) // Apache's "CorrectOffset"
		res = p.d.Store.GetMessageViews(lmq, 0, offset, want, st.maxBytes-st.bytes, nil, store.PopulatePages)
	}
	if res.Count == 0 {
		if res.Release != nil {
			res.Release()
		}
		return counts
	}
	offsets := make([]int64, 0, res.Count)
	eachRecord(res.Vec, func(rec []byte) {
		v, _, err := message.DecodeRecordView(rec)
		if err != nil {
			return
		}
		o, ok := lmqOffset(v.Properties, lmq)
		if !ok {
			o = offset + int64(len(offsets))
		}
		offsets = append(offsets, o)
	})
	if len(offsets) == 0 {
		res.Release()
		return counts
	}
	lo.mu.Lock()
	n := lo.putLocked(k, r.AttemptID, st.popTime, r.InvisibleTime, offsets)
	for _, o := range offsets {
		if len(counts) > 0 {
			counts = append(counts, ';')
		}
		counts = strconv.AppendInt(counts, int64(max(0, n.ConsumedCount[strconv.FormatInt(o, 10)])), 10)
	}
	lo.mu.Unlock()
	p.d.Lite.DispatchAt(r.Group, lmq, satAdd(st.popTime, r.InvisibleTime))
	st.add(res.Vec, res.Release)
	st.count += len(offsets)
	if cfg.LiteLagLatencyCollectEnable && p.d.LiteLag != nil {
		p.noteLiteLag(st, r, lmq, res.NextBeginOffset, cfg.LiteLagLatencyTopK)
	}
	return counts
}

// noteLiteLag is Apache's collectLiteConsumerLagMetrics after a pop read
// lmq up to next: a batch still short of maxMsgNum caught the lite topic
// up; a full one left the message at next behind, if there is one.
func (p *Service) noteLiteLag(st *popState, r *LiteRequest, lmq string, next int64, topK int) {
	if st.count < int(r.MaxMsgNum) {
		p.d.LiteLag.Remove(r.Group, r.Topic, lmq)
		return
	}
	if ts, ok := p.d.Store.StoreTimeAt(lmq, 0, next); ok && ts > 0 {
		p.d.LiteLag.Update(r.Group, r.Topic, lmq, ts, topK)
		return
	}
	p.d.LiteLag.Remove(r.Group, r.Topic, lmq)
}

// lmqOffset is the record's offset in lmq: the INNER_MULTI_QUEUE_OFFSET
// entry at lmq's place in INNER_MULTI_DISPATCH.
func lmqOffset(props []byte, lmq string) (int64, bool) {
	names := message.PropertyBytes(props, message.PropInnerMultiDispatch)
	offs := message.PropertyBytes(props, message.PropInnerMultiQueueOffset)
	for len(names) > 0 && len(offs) > 0 {
		name, off := names, offs
		if i := bytes.IndexByte(names, ','); i >= 0 {
			name, names = names[:i], names[i+1:]
		} else {
			names = nil
		}
		if i := bytes.IndexByte(offs, ','); i >= 0 {
			off, offs = offs[:i], offs[i+1:]
		} else {
			offs = nil
		}
		if string(name) == lmq {
			n, err := strconv.ParseInt(string(off), 10, 64)
			return n, err == nil && n >= 0
		}
	}
	return 0, false
}

// sweepLite drops, every liteSweepEvery, the lite batches all acked or
// visible again for that long: nobody popped them since (a client gone).
func (p *Service) sweepLite() {
	now := time.Now().UnixMilli()
	last := p.lite.lastSweep.Load()
	if now-last < liteSweepEvery.Milliseconds() || !p.lite.lastSweep.CompareAndSwap(last, now) {
		return
	}
	lo := p.lite.orders
	lo.mu.Lock()
	for k, o := range lo.table {
		if o.next() > o.offset(len(o.Offsets)-1) || now-satAdd(o.PopTime, o.InvisibleTime) > liteSweepEvery.Milliseconds() {
			delete(lo.table, k)
		}
	}
	lo.mu.Unlock()
}

// ForgetLite drops what group ("" every group) has in flight on lmq (an
// offset reset, a deleted lite topic).
func (p *Service) ForgetLite(group, lmq string) {
	lo := p.lite.orders
	lo.mu.Lock()
	defer lo.mu.Unlock()
	if group != "" {
		delete(lo.table, orderKey{topic: lmq, group: group})
		return
	}
	if parent, _, ok := message.ParseLiteQueue(lmq); ok && p.d.LiteLag != nil {
		p.d.LiteLag.Forget(parent, lmq)
	}
	for k := range lo.table {
		if k.topic == lmq {
			delete(lo.table, k)
		}
	}
}

// LiteOrderCount is the number of (group, lite topic) batches in flight.
func (p *Service) LiteOrderCount() int {
	lo := p.lite.orders
	lo.mu.Lock()
	defer lo.mu.Unlock()
	return len(lo.table)
}

var (
	errLiteBind  = remoting.Refuse(remoting.InvalidParameter, nil, "group type or bind topic not match.")
	errLiteQueue = remoting.Refuse(remoting.InvalidParameter, nil, "ack queue illegal.")
)

// liteQueueOf is the LMQ of an ack's lite topic, after its group's checks.
func (p *Service) liteQueueOf(r *AckRequest) (string, error) {
	gc, ok := p.d.Groups.Get(r.Group)
	if !ok || gc.LiteBindTopic() != r.Topic {
		return "", errLiteBind
	}
	lmq := message.LiteQueue(r.Topic, r.LiteTopic)
	if _, _, ok := message.ParseLiteQueue(lmq); !ok || len(lmq) > maxLiteQueueLen {
		return "", errLiteQueue
	}
	return lmq, nil
}

// ackLite is ACK_MESSAGE with a liteTopic (AckMessageProcessor.ackLite).
func (p *Service) ackLite(r *AckRequest) error {
	lmq, err := p.liteQueueOf(r)
	if err != nil {
		return err
	}
	if r.Offset > p.d.Store.MaxOffset(lmq, 0) {
		return remoting.Refuse(remoting.NoMessage, nil, "ack offset illegal.")
	}
	e, err := message.ParseExtraInfo(r.ExtraInfo)
	if r.QueueID != 0 || err != nil || e.ReviveQid != message.PopOrderReviveQueue {
		return errLiteQueue
	}
	if old, ok := p.d.Offsets.Query(r.Group, lmq, 0); ok && r.Offset < old {
		return nil
	}
	k := orderKey{topic: lmq, group: r.Group}
	lo := p.lite.orders
	next := lo.ack(k, r.Offset, e.PopTime, func(next int64) { p.d.Offsets.Commit(r.Group, lmq, 0, next) })
	switch {
	case next == -1:
		return remoting.Refuse(remoting.MessageIllegal, nil, "ack offset illegal.")
	case next < 0:
		return nil
	}
	lo.mu.Lock()
	if o := lo.table[k]; o != nil && o.next() > o.offset(len(o.Offsets)-1) {
		delete(lo.table, k) // nothing left to block or count
		// Nothing to redeliver. Under the orders' lock: the next batch's
		// pop puts it here before its DispatchAt, which therefore cannot
		// come first and be cancelled. (The lite service never calls the
		// pop side under its own lock.)
		p.d.Lite.CancelDispatchAt(r.Group, lmq)
	}
	lo.mu.Unlock()
	if !lo.blocked(k, "", e.InvisibleTime) {
		p.d.Lite.Dispatch(r.Group, lmq)
	}
	return nil
}

// changeInvisibleLite is CHANGE_MESSAGE_INVISIBLETIME with a liteTopic:
// the offset becomes visible again invisibleTime from now; suspend also
// takes back the consume count of the batch (the redelivery is not an
// attempt).
func (p *Service) changeInvisibleLite(r *AckRequest) (ChangeInvisibleResult, error) {
	lmq, err := p.liteQueueOf(r)
	if err != nil {
		return ChangeInvisibleResult{}, err
	}
	if r.Offset > p.d.Store.MaxOffset(lmq, 0) {
		return ChangeInvisibleResult{}, remoting.Refuse(remoting.NoMessage, nil, "")
	}
	e, err := message.ParseExtraInfo(r.ExtraInfo)
	if err != nil {
		return ChangeInvisibleResult{}, remoting.Refuse(remoting.SystemError, err, "%s", err.Error())
	}
	res := ChangeInvisibleResult{PopTime: e.PopTime, InvisibleTime: e.InvisibleTime, ReviveQid: e.ReviveQid}
	if old, ok := p.d.Offsets.Query(r.Group, lmq, 0); ok && r.Offset < old {
		return res, nil
	}
	visible := satAdd(time.Now().UnixMilli(), r.InvisibleTime)
	k := orderKey{topic: lmq, group: r.Group}
	lo := p.lite.orders
	if r.Suspend {
		lo.suspend(k, e.PopTime, visible)
	} else {
		lo.changeInvisible(k, r.Offset, e.PopTime, visible)
	}
	p.d.Lite.DispatchAt(r.Group, lmq, visible)
	res.InvisibleTime = visible - e.PopTime
	return res, nil
}

// suspend makes the batch visible at the given time and takes one off each
// offset's consume count (ConsumerOrderInfoManager.suspendQueue).
func (t *orders) suspend(k orderKey, popTime, visible int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	o := t.table[k]
	if o == nil || o.PopTime != popTime {
		return
	}
	if o.ConsumedCount == nil {
		o.ConsumedCount = map[string]int{}
	}
	for i := range o.Offsets {
		key := strconv.FormatInt(o.offset(i), 10)
		o.ConsumedCount[key]--
	}
	o.InvisibleTime = visible - popTime
	o.NextVisible = nil
}
