package broker

// The pop service: POP_MESSAGE (Apache 5.x PopMessageProcessor, its
// non-orderly path). A pop reads up to maxMsgNums messages of one queue or,
// with queueId -1, of every readable queue of the topic, and of the group's
// pop retry topic %RETRY%<group>_<topic> (first with probability
// popFromRetryProbability, else after the topic when the answer is not
// full), writes a checkpoint per queue read (pop_ck.go), advances the
// group's offset past what it read, and answers the messages as stored.
// Messages read from the retry topic are answered re-encoded, as Apache
// does: under the original topic and with their POP_CK handle set, since
// the client cannot build it from startOffsetInfo for them.
//
// A pop runs on a broker goroutine (never on an event loop: it may read
// the disk and it writes the revive log) and answers through its completion.
// A pop that finds nothing with pollTime > 0 is parked (pop_wait.go) until
// a message is dispatched to the topic or its retry topic, or its poll time
// ends (POLLING_TIMEOUT, as Apache answers then).
//
// Pops are serialised by one mutex: it makes read offset → read → checkpoint
// → commit offset atomic per queue (Apache's QueueLockManager), and no
// send or pull ever takes it.

import (
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/filter"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// Pop tuning, Apache BrokerConfig defaults.
const (
	popMaxMsgNums           = 32     // a pop asking more is refused INVALID_PARAMETER
	popFromRetryProbability = 20     // percent of pops that read the retry topic first
	popMaxCheckpoints       = 200000 // live checkpoints; past it pops are refused SYSTEM_BUSY
	popPollingSize          = 1024   // parked pops per topic (popPollingSize)
	maxPopPollingSize       = 100000 // parked pops in all (maxPopPollingSize)
	popTimeoutTooMuch       = 500    // ms past bornTime+pollTime a pop is refused POLLING_TIMEOUT
)

// PopRequest is POP_MESSAGE's request (PopMessageRequestHeader).
type PopRequest struct {
	Group         string
	Topic         string
	QueueID       int32 // -1: every readable queue
	MaxMsgNums    int32
	InvisibleTime int64
	PollTime      int64
	BornTime      int64
	InitMode      int32 // 0 LAST, 1 MIN
	ExpType       string
	Exp           string
	Order         bool
	AttemptID     string
	Remote        string // names the requester in log lines and remarks
}

// PopStatus is how a pop ended.
type PopStatus uint8

const (
	PopFound       PopStatus = iota // SUCCESS, messages in Vec
	PopNotFound                     // POLLING_TIMEOUT: nothing, and no (more) polling
	PopPollingFull                  // POLLING_FULL: too many parked pops
	PopLater                        // parked: the completion answers
)

// PopResult is the answer to a pop (PopMessageResponseHeader and body).
type PopResult struct {
	Status          PopStatus
	PopTime         int64
	InvisibleTime   int64
	ReviveQid       int32
	RestNum         int64
	StartOffsetInfo string
	MsgOffsetInfo   string
	OrderCountInfo  string
	// Vec are the records to answer, read-only, valid until Release
	// (called once by whoever writes them; nil when there is nothing).
	Vec     [][]byte
	Count   int
	Release func()
}

// PopCompletion answers a pop later, from a broker goroutine.
type PopCompletion struct {
	Done func(res PopResult, err error)
	Gone func() bool // the requester went away: drop the answer (nil: never)
}

// pops is the broker's pop state.
type pops struct {
	b   *Broker
	log zerolog.Logger

	popMu sync.Mutex // serialises pops (read offset → read → checkpoint → commit)

	mu  sync.Mutex // guards cks
	cks map[ckKey]*popCk

	waits  popWaits
	poke   chan struct{} // wakes the revive loop
	orders *orders       // orderly pop (pop_order.go)

	reviveLog zerolog.Logger                // sampled: one line per reviveLogPeriod
	putFault  func(*store.PutMessage) error // tests: a revive write fails when it errs
}

func newPops(b *Broker, log zerolog.Logger, ordersPath string) *pops {
	p := &pops{b: b, log: log, cks: make(map[ckKey]*popCk), poke: make(chan struct{}, 1), orders: newOrders(ordersPath)}
	p.reviveLog = log.Sample(&zerolog.BurstSampler{Burst: 1, Period: reviveLogPeriod})
	p.waits.init()
	return p
}

// Pop checks a pop (Apache's order, codes and remarks) and runs it on a
// broker goroutine, answering through the completion later returns. It
// returns a refusal, or PopLater.
func (b *Broker) Pop(r *PopRequest, later func() PopCompletion) (PopResult, error) {
	now := time.Now().UnixMilli()
	if r.BornTime == 0 {
		r.BornTime = now
	}
	cfg := b.Config()
	if now-r.BornTime-r.PollTime > popTimeoutTooMuch {
		return PopResult{}, remoting.Refuse(remoting.PollingTimeout, nil, "the broker[%s] pop message is timeout too much", cfg.BrokerIP1)
	}
	if cfg.BrokerPermission&message.PermRead == 0 {
		return PopResult{}, remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission, "the broker[%s] pop message is forbidden", cfg.BrokerIP1)
	}
	if r.MaxMsgNums > popMaxMsgNums {
		return PopResult{}, remoting.Refuse(remoting.InvalidParameter, nil, "the broker[%s] pop message's num is greater than 32", cfg.BrokerIP1)
	}
	if err := checkInvisibleTime(r.InvisibleTime); err != nil {
		return PopResult{}, err
	}
	if !cfg.TimerWheelEnable {
		return PopResult{}, remoting.Refuse(remoting.SystemError, nil,
			"the broker[%s] pop message is forbidden because timerWheelEnable is false", cfg.BrokerIP1)
	}
	if cfg.IsSlave() {
		return PopResult{}, b.slaveRefusal(cfg)
	}
	tc, ok := b.Topics.Get(r.Topic)
	if !ok {
		return PopResult{}, remoting.Refuse(remoting.TopicNotExist, tables.ErrTopicNotExist, "topic[%s] not exist, apply first please! %s",
			r.Topic, FAQSuggestTodo)
	}
	if !tc.Readable() {
		return PopResult{}, remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission, "the topic[%s] peeking message is forbidden", r.Topic)
	}
	if r.QueueID >= tc.ReadQueueNums {
		return PopResult{}, remoting.Refuse(remoting.InvalidParameter, nil,
			"queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d] consumer:[%s]",
			r.QueueID, r.Topic, tc.ReadQueueNums, r.Remote)
	}
	gc, ok := b.Groups.Get(r.Group)
	if !ok {
		return PopResult{}, remoting.Refuse(remoting.SubscriptionGroupNotExist, ErrGroupNotExist,
			"subscription group [%s] does not exist, %s", r.Group, FAQGroupNotExist)
	}
	if !gc.ConsumeEnable {
		return PopResult{}, remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission, "subscription group no permission, %s", r.Group)
	}
	match, err := b.popMatcher(cfg, r)
	if err != nil {
		return PopResult{}, err
	}
	if b.pop.live() >= popMaxCheckpoints {
		return PopResult{}, remoting.Refuse(remoting.SystemBusy, ErrSystemBusy, "too many messages popped and not acknowledged, try later")
	}
	done := later()
	rq := *r
	if !b.Go(func() { b.pop.run(&rq, tc.ReadQueueNums, match, done, true) }) {
		return PopResult{}, remoting.Refuse(remoting.ServiceNotAvailable, nil, "the broker is shutting down")
	}
	return PopResult{Status: PopLater}, nil
}

// popMatcher compiles the pop's filter (exp / expType) into a record matcher; nil matches all.
func (b *Broker) popMatcher(cfg *Config, r *PopRequest) (func(int64, []byte) bool, error) {
	if r.Exp == "" || (IsTagType(r.ExpType) && strings.TrimSpace(r.Exp) == "*") {
		return nil, nil
	}
	if IsTagType(r.ExpType) {
		sub, err := b.Filters.Tags(r.Exp)
		if err != nil {
			return nil, remoting.Refuse(remoting.SubscriptionParseFailed, err, "parse the consumer's subscription failed")
		}
		return recordMatcher(sub, nil), nil
	}
	if !strings.EqualFold(r.ExpType, "SQL92") || !cfg.EnablePropertyFilter {
		return nil, remoting.Refuse(remoting.SubscriptionParseFailed, nil, "parse the consumer's subscription failed")
	}
	expr, err := b.Filters.Compile(r.Exp)
	if err != nil {
		return nil, remoting.Refuse(remoting.SubscriptionParseFailed, err, "parse the consumer's subscription failed")
	}
	return recordMatcher(nil, expr), nil
}

// recordMatcher matches records against a tag subscription or a compiled SQL92 expression.
func recordMatcher(sub *tables.Subscription, expr *filter.Expr) func(int64, []byte) bool {
	if expr != nil {
		return func(_ int64, record []byte) bool {
			v, _, err := message.DecodeRecordView(record)
			return err == nil && expr.Match(func(name string) (string, bool) {
				b := message.PropertyBytes(v.Properties, name)
				return string(b), len(b) > 0
			})
		}
	}
	if sub == nil || sub.All() {
		return nil
	}
	return func(code int64, record []byte) bool {
		if !sub.MatchTagsCode(code) {
			return false
		}
		v, _, err := message.DecodeRecordView(record)
		return err == nil && sub.MatchTag(message.PropertyBytes(v.Properties, message.PropTags))
	}
}

// run pops once and answers, or parks the pop when it found nothing and
// may still wait (mayPark: the first run, or a woken one before its end).
func (p *pops) run(r *PopRequest, readQueues int32, match func(int64, []byte) bool, done PopCompletion, mayPark bool) {
	if done.Gone != nil && done.Gone() {
		return
	}
	res, err := p.popOnce(r, readQueues, match)
	if err != nil || res.Status == PopFound {
		done.Done(res, err)
		return
	}
	if mayPark && r.PollTime > 0 {
		rerun := func(mayPark bool) { p.run(r, readQueues, match, done, mayPark) }
		switch p.park(r.Topic, r.Group, r.QueueID, r.BornTime, r.PollTime, rerun) {
		case parked:
			return
		case parkFull:
			res.Status = PopPollingFull
		}
	}
	done.Done(res, nil)
}

// popOnce reads the topic's queues and the retry topic (Apache's order),
// under popMu.
func (p *pops) popOnce(r *PopRequest, readQueues int32, match func(int64, []byte) bool) (PopResult, error) {
	p.popMu.Lock()
	defer p.popMu.Unlock()
	b := p.b
	cfg := b.Config()
	popTime := time.Now().UnixMilli()
	st := popState{r: r, popTime: popTime, brokerName: cfg.BrokerName, maxBytes: cfg.MaxTransferBytesOnMessageInMemory}
	if r.Order {
		st.reviveQid = message.PopOrderReviveQueue
	}
	randomQ := rand.IntN(100)
	needRetry := randomQ < popFromRetryProbability
	retryTopic := message.PopRetryTopic(r.Topic, r.Group)
	if needRetry && !r.Order {
		p.popTopic(&st, retryTopic, true, nil, randomQ)
	}
	if r.QueueID < 0 {
		for i := int32(0); i < readQueues; i++ {
			p.popQueue(&st, r.Topic, (int32(randomQ)+i)%readQueues, false, match)
		}
	} else {
		p.popQueue(&st, r.Topic, r.QueueID, false, match)
	}
	if !needRetry && !r.Order && st.count < int(r.MaxMsgNums) {
		p.popTopic(&st, retryTopic, true, nil, randomQ)
	}
	res := PopResult{Status: PopNotFound, PopTime: popTime, InvisibleTime: r.InvisibleTime, RestNum: st.rest,
		ReviveQid: st.reviveQid, StartOffsetInfo: string(st.startInfo), MsgOffsetInfo: string(st.msgInfo),
		OrderCountInfo: string(st.orderInfo)}
	if st.count > 0 {
		res.Status, res.Vec, res.Count = PopFound, st.vec, st.count
		p.b.Stats.Out(r.Group, r.Topic, int64(st.count), vecLen(st.vec))
		p.b.stats.got(true, st.count)
		rels := st.releases
		res.Release = func() {
			for _, f := range rels {
				f()
			}
		}
	}
	return res, nil
}

// popState gathers one pop's answer across queues.
type popState struct {
	r          *PopRequest
	peek       bool // PEEK_MESSAGE: read only, no checkpoint, no offset moved
	popTime    int64
	brokerName string
	maxBytes   int
	count      int
	bytes      int
	rest       int64
	vec        [][]byte
	releases   []func()
	startInfo  []byte
	msgInfo    []byte
	orderInfo  []byte
	reviveQid  int32
}

// add takes records into the answer; release (if any) frees them after the write.
func (st *popState) add(vec [][]byte, release func()) {
	st.vec = append(st.vec, vec...)
	if release != nil {
		st.releases = append(st.releases, release)
	}
	for _, x := range vec {
		st.bytes += len(x)
	}
}

func (p *pops) popTopic(st *popState, topic string, isRetry bool, match func(int64, []byte) bool, randomQ int) {
	tc, ok := p.b.Topics.Get(topic)
	if !ok || tc.ReadQueueNums <= 0 {
		return
	}
	for i := int32(0); i < tc.ReadQueueNums; i++ {
		p.popQueue(st, topic, (int32(randomQ)+i)%tc.ReadQueueNums, isRetry, match)
	}
}

// popQueue pops from one queue into st: Apache's popMsgFromQueue.
func (p *pops) popQueue(st *popState, topic string, queueID int32, isRetry bool, match func(int64, []byte) bool) {
	b, r := p.b, st.r
	if r.Order && !st.peek && p.orders.blocked(orderKey{topic: topic, group: r.Group, queueID: queueID}, r.AttemptID, r.InvisibleTime) {
		return // the group's messages of this queue are out and invisible: its lock is held
	}
	var offset int64
	if st.peek {
		offset = p.peekOffset(r.Group, topic, queueID)
	} else {
		offset = p.popOffset(r.Group, topic, queueID, r.InitMode, isRetry)
	}
	want := int(r.MaxMsgNums) - st.count
	if want <= 0 || st.bytes >= st.maxBytes {
		st.rest += max(0, b.Store.MaxOffset(topic, queueID)-offset)
		return
	}
	res := b.Store.GetMessageViews(topic, queueID, offset, want, st.maxBytes-st.bytes, match, store.PopulatePages)
	switch res.Status {
	case store.OffsetTooSmall, store.OffsetOverflowBadly, store.OffsetFoundNull:
		// The stored offset is outside the queue: start over where the store says.
		if res.Release != nil {
			res.Release()
		}
		offset = res.NextBeginOffset
		if !st.peek {
			b.Offsets.Commit(r.Group, topic, queueID, offset)
		}
		res = b.Store.GetMessageViews(topic, queueID, offset, want, st.maxBytes-st.bytes, match, store.PopulatePages)
	}
	if res.Count == 0 {
		if res.NextBeginOffset > offset && !st.peek {
			// Filtered out or removed: nothing to acknowledge, move on
			// (Apache's checkpoint mock does the same).
			b.Offsets.Commit(r.Group, topic, queueID, res.NextBeginOffset)
		}
		st.rest += max(0, res.MaxOffset-max(res.NextBeginOffset, offset))
		return
	}
	ck := &popCk{key: ckKey{group: r.Group, topic: topic, queueID: queueID, startOffset: offset, popTime: st.popTime},
		invisibleTime: r.InvisibleTime}
	var vec [][]byte
	eachRecord(res.Vec, func(rec []byte) {
		v, _, err := message.DecodeRecordView(rec)
		if err != nil {
			return
		}
		ck.offsets = append(ck.offsets, v.QueueOffset)
		if !isRetry || st.peek {
			return
		}
		if out := p.reencodeRetry(rec, st, offset); out != nil {
			vec = append(vec, out)
		}
	})
	if len(ck.offsets) == 0 {
		res.Release()
		return
	}
	if st.peek {
		st.add(res.Vec, res.Release)
		st.count += len(ck.offsets)
		st.rest += max(0, res.MaxOffset-res.NextBeginOffset)
		return
	}
	if r.Order {
		// No checkpoint: the offset stays at the first message not acked.
		st.orderInfo = p.orders.update(orderKey{topic: topic, group: r.Group, queueID: queueID}, r.AttemptID,
			message.PopRetryMark(topic), st.popTime, r.InvisibleTime, ck.offsets, st.orderInfo,
			func() { b.Offsets.Commit(r.Group, topic, queueID, offset) })
		st.add(res.Vec, res.Release)
		st.count += len(ck.offsets)
		st.startInfo = message.AppendOffsetInfo(st.startInfo, topic, queueID, offset)
		st.msgInfo = message.AppendOffsetInfo(st.msgInfo, topic, queueID, ck.offsets...)
		return
	}
	ro, err := b.putRevive(ckTag, ck.record(st.brokerName))
	if err != nil {
		// Not recorded: not handed out either; the offset stays.
		p.log.Error().Err(err).Str("topic", topic).Int32("queueId", queueID).Msg("pop checkpoint not written")
		res.Release()
		st.rest += res.MaxOffset - offset
		return
	}
	ck.reviveOffset = ro
	p.add(ck)
	b.Offsets.Commit(r.Group, topic, queueID, res.NextBeginOffset)
	if isRetry {
		res.Release()
		st.add(vec, nil)
	} else {
		st.add(res.Vec, res.Release)
	}
	st.count += len(ck.offsets)
	st.rest += max(0, res.MaxOffset-res.NextBeginOffset)
	st.startInfo = message.AppendOffsetInfo(st.startInfo, topic, queueID, offset)
	st.msgInfo = message.AppendOffsetInfo(st.msgInfo, topic, queueID, ck.offsets...)
}

// reencodeRetry is a record of the retry topic as Apache answers it: under
// the original topic, with its POP_CK handle (popResponseReturnActualRetryTopic false).
func (p *pops) reencodeRetry(rec []byte, st *popState, ckOffset int64) []byte {
	m, _, err := message.DecodeRecord(rec)
	if err != nil {
		return nil
	}
	if message.Property(m.Properties, message.PropPopCK) == "" {
		h := message.AppendExtraInfo(nil, ckOffset, st.popTime, st.r.InvisibleTime, 0, m.Topic, st.brokerName, m.QueueID, m.QueueOffset)
		m.Properties = string(message.AppendProperty([]byte(m.Properties), message.PropPopCK, string(h)))
	}
	m.Topic = st.r.Topic
	m.BodyCRC = 0
	out, err := message.AppendRecord(nil, &m)
	if err != nil {
		return nil
	}
	return out
}

// eachRecord calls fn for every record of a view vector (adjacent records share a slice).
func eachRecord(vec [][]byte, fn func(rec []byte)) {
	for _, s := range vec {
		for len(s) >= 4 {
			size := int(int32(uint32(s[0])<<24 | uint32(s[1])<<16 | uint32(s[2])<<8 | uint32(s[3])))
			if size <= 0 || size > len(s) {
				break
			}
			fn(s[:size])
			s = s[size:]
		}
	}
}

// popOffset is where the group pops the queue next (Apache's getPopOffset
// and getInitOffset): its committed offset, else the queue's start for a
// retry topic or initMode MIN, else the last message (the first one of a
// queue that still starts at 0, Apache's initPopOffsetByCheckMsgInMem),
// committed at once.
func (p *pops) popOffset(group, topic string, queueID int32, initMode int32, isRetry bool) int64 {
	st := p.b.Store
	if off, ok := p.b.Offsets.Query(group, topic, queueID); ok && off >= 0 {
		return off
	}
	var off int64
	switch {
	case initMode == 1 || isRetry || message.IsRetryTopic(topic):
		off = st.MinOffset(topic, queueID)
	case st.MinOffset(topic, queueID) <= 0:
		off = 0
	default:
		off = max(0, st.MaxOffset(topic, queueID)-1)
	}
	p.b.Offsets.Commit(group, topic, queueID, off)
	return off
}

// peekOffset is where the group would pop next, nothing committed (PeekMessageProcessor).
func (p *pops) peekOffset(group, topic string, queueID int32) int64 {
	if off, ok := p.b.Offsets.Query(group, topic, queueID); ok && off >= 0 {
		return off
	}
	return p.b.Store.MinOffset(topic, queueID)
}

// add records a live checkpoint.
func (p *pops) add(ck *popCk) {
	p.mu.Lock()
	p.cks[ck.key] = ck
	p.mu.Unlock()
}

// live is the number of live checkpoints.
func (p *pops) live() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.cks)
}
