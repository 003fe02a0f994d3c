package pop

// The pop service: POP_MESSAGE (Apache 5.x PopMessageProcessor, its
// non-orderly path). A pop reads up to maxMsgNums messages of one queue or,
// with queueId -1, of every readable queue of the topic, and of the group's
// pop retry topic %RETRY%<group>_<topic> (first with probability
// popFromRetryProbability, else after the topic when the answer is not
// full), writes a checkpoint per queue read (ck.go), advances the
// group's offset past what it read, and answers the messages as stored.
// Messages read from the retry topic are answered re-encoded, as Apache
// does: under the original topic and with their POP_CK handle set, since
// the client cannot build it from startOffsetInfo for them.
//
// A pop runs on a broker goroutine (never on an event loop: it may read
// the disk and it writes the revive log) and answers through its completion.
// A pop that finds nothing with pollTime > 0 is parked (wait.go) until
// a message is dispatched to the topic or its retry topic, or its poll time
// ends (POLLING_TIMEOUT, as Apache answers then).
//
// Pops are serialised by one mutex: it makes read offset → read → checkpoint
// → commit offset atomic per queue (Apache's QueueLockManager), and no
// send or pull ever takes it.

import (
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// ErrBusy: too many popped messages are not acknowledged.
var ErrBusy = errors.New("pop: too many messages popped and not acknowledged")

// Pop tuning, Apache BrokerConfig defaults.
const (
	popMaxMsgNums           = 32     // a pop asking more is refused INVALID_PARAMETER
	popFromRetryProbability = 20     // percent of pops that read the retry topic first
	popMaxCheckpoints       = 200000 // live checkpoints; past it pops are refused SYSTEM_BUSY
	popPollingSize          = 1024   // parked pops per topic (popPollingSize)
	maxPopPollingSize       = 100000 // parked pops in all (maxPopPollingSize)
	popTimeoutTooMuch       = 500    // ms past bornTime+pollTime a pop is refused POLLING_TIMEOUT
)

// Request is POP_MESSAGE's request (PopMessageRequestHeader).
type Request struct {
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

// Status is how a pop ended.
type Status uint8

const (
	Found       Status = iota // SUCCESS, messages in Vec
	NotFound                  // POLLING_TIMEOUT: nothing, and no (more) polling
	PollingFull               // POLLING_FULL: too many parked pops
	Later                     // parked: the completion answers
)

// Result is the answer to a pop (PopMessageResponseHeader and body).
type Result struct {
	Status          Status
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

// Completion answers a pop later, from a broker goroutine.
type Completion struct {
	Done func(res Result, err error)
	Gone func() bool // the requester went away: drop the answer (nil: never)
}

// Service is pop consumption: pops, peeks, acks, invisibility changes,
// notifications, the live checkpoints and their revive.
type Service struct {
	d   Deps
	log zerolog.Logger

	popMu sync.Mutex // serialises pops (read offset → read → checkpoint → commit)

	mu  sync.Mutex // guards cks
	cks map[ckKey]*popCk

	waits popWaits
	// liteMu serialises lite pops (read offset → read → order info), apart
	// from popMu: a lite pop never waits for a normal one.
	liteMu sync.Mutex
	lite   liteState
	poke   chan struct{} // wakes the revive loop
	orders *orders       // orderly pop (order.go)

	reviveLog zerolog.Logger                // sampled: one line per reviveLogPeriod
	putFault  func(*store.PutMessage) error // tests: a revive write fails when it errs
}

// New makes the service; Load reads the orderly pops' state, and a master
// runs Recover once, then RunRevive.
func New(d Deps, log zerolog.Logger) *Service {
	p := &Service{d: d, log: log, cks: make(map[ckKey]*popCk), poke: make(chan struct{}, 1), orders: newOrders(d.OrdersPath)}
	p.reviveLog = log.Sample(&zerolog.BurstSampler{Burst: 1, Period: reviveLogPeriod})
	p.waits.init()
	p.lite.orders = newOrders("")
	return p
}

// Load reads consumerOrderInfo.json.
func (p *Service) Load() error { return p.orders.load() }

// PersistIfDirty writes consumerOrderInfo.json when it changed.
func (p *Service) PersistIfDirty() error { return p.orders.persistIfDirty() }

// brokerPrecheck is the broker-wide part of Apache's pop preCheck, in its
// order and words, for POP_MESSAGE and POP_LITE_MESSAGE alike: a request
// born too long before its poll time, a broker not readable, too many
// messages asked.
func brokerPrecheck(cfg *Config, now, bornTime, pollTime int64, maxMsgNums int32) error {
	if now-bornTime-pollTime > popTimeoutTooMuch {
		return remoting.Refuse(remoting.PollingTimeout, nil, "the broker[%s] pop message is timeout too much", cfg.BrokerIP1)
	}
	if cfg.Permission&message.PermRead == 0 {
		return remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission, "the broker[%s] pop message is forbidden", cfg.BrokerIP1)
	}
	if maxMsgNums > popMaxMsgNums {
		return remoting.Refuse(remoting.InvalidParameter, nil, "the broker[%s] pop message's num is greater than 32", cfg.BrokerIP1)
	}
	return nil
}

// Pop checks a pop (Apache's order, codes and remarks) and runs it on a
// broker goroutine, answering through the completion later returns. It
// returns a refusal, or Later.
func (p *Service) Pop(r *Request, later func() Completion) (Result, error) {
	now := time.Now().UnixMilli()
	if r.BornTime == 0 {
		r.BornTime = now
	}
	cfg := p.d.Config()
	if err := brokerPrecheck(&cfg, now, r.BornTime, r.PollTime, r.MaxMsgNums); err != nil {
		return Result{}, err
	}
	if err := checkInvisibleTime(r.InvisibleTime); err != nil {
		return Result{}, err
	}
	if !cfg.TimerWheelEnable {
		return Result{}, remoting.Refuse(remoting.SystemError, nil,
			"the broker[%s] pop message is forbidden because timerWheelEnable is false", cfg.BrokerIP1)
	}
	if refuse := p.d.SlaveRefusal; refuse != nil {
		if err := refuse(); err != nil {
			return Result{}, err
		}
	}
	tc, ok := p.d.Topics.Get(r.Topic)
	if !ok {
		return Result{}, remoting.Refuse(remoting.TopicNotExist, tables.ErrTopicNotExist, "topic[%s] not exist, apply first please! %s",
			r.Topic, remoting.FAQSuggestTodo)
	}
	if !tc.Readable() {
		return Result{}, remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission, "the topic[%s] peeking message is forbidden", r.Topic)
	}
	if r.QueueID >= tc.ReadQueueNums {
		return Result{}, remoting.Refuse(remoting.InvalidParameter, nil,
			"queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d] consumer:[%s]",
			r.QueueID, r.Topic, tc.ReadQueueNums, r.Remote)
	}
	gc, ok := p.d.Groups.Get(r.Group)
	if !ok {
		return Result{}, remoting.Refuse(remoting.SubscriptionGroupNotExist, tables.ErrGroupNotExist,
			"subscription group [%s] does not exist, %s", r.Group, remoting.FAQGroupNotExist)
	}
	if !gc.ConsumeEnable {
		return Result{}, remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission, "subscription group no permission, %s", r.Group)
	}
	match, err := p.popMatcher(&cfg, r)
	if err != nil {
		return Result{}, err
	}
	if p.live() >= popMaxCheckpoints {
		return Result{}, remoting.Refuse(remoting.SystemBusy, ErrBusy, "too many messages popped and not acknowledged, try later")
	}
	done := later()
	rq := *r
	q := queues{n: tc.ReadQueueNums}
	if tc.Priority() && !r.Order {
		q.priorityFactor = gc.PriorityFactor()
	}
	if !p.d.Go(func() { p.run(&rq, q, match, done, true) }) {
		return Result{}, remoting.Refuse(remoting.ServiceNotAvailable, nil, "the broker is shutting down")
	}
	return Result{Status: Later}, nil
}

// popMatcher compiles the pop's filter (exp / expType) into a record matcher; nil matches all.
func (p *Service) popMatcher(cfg *Config, r *Request) (func(int64, []byte) bool, error) {
	if r.Exp == "" || (tables.IsTagType(r.ExpType) && strings.TrimSpace(r.Exp) == "*") {
		return nil, nil
	}
	if tables.IsTagType(r.ExpType) {
		sub, err := p.d.Filters.Tags(r.Exp)
		if err != nil {
			return nil, remoting.Refuse(remoting.SubscriptionParseFailed, err, "parse the consumer's subscription failed")
		}
		return tables.RecordMatcher(sub, nil), nil
	}
	if !strings.EqualFold(r.ExpType, "SQL92") || !cfg.EnablePropertyFilter {
		return nil, remoting.Refuse(remoting.SubscriptionParseFailed, nil, "parse the consumer's subscription failed")
	}
	expr, err := p.d.Filters.Compile(r.Exp)
	if err != nil {
		return nil, remoting.Refuse(remoting.SubscriptionParseFailed, err, "parse the consumer's subscription failed")
	}
	return tables.RecordMatcher(nil, expr), nil
}

// run pops once and answers, or parks the pop when it found nothing and
// may still wait (mayPark: the first run, or a woken one before its end).
func (p *Service) run(r *Request, q queues, match func(int64, []byte) bool, done Completion, mayPark bool) {
	if done.Gone != nil && done.Gone() {
		return
	}
	res, err := p.popOnce(r, q, match)
	if err != nil || res.Status == Found {
		done.Done(res, err)
		return
	}
	if mayPark && r.PollTime > 0 {
		rerun := func(mayPark bool) { p.run(r, q, match, done, mayPark) }
		switch p.park(r.Topic, r.Group, r.QueueID, r.BornTime, r.PollTime, done.Gone, rerun) {
		case parked:
			return
		case parkFull:
			res.Status = PollingFull
		}
	}
	done.Done(res, nil)
}

// popOnce reads the topic's queues and the retry topic (Apache's order),
// under popMu.
func (p *Service) popOnce(r *Request, q queues, match func(int64, []byte) bool) (Result, error) {
	p.popMu.Lock()
	defer p.popMu.Unlock()
	cfg := p.d.Config()
	popTime := time.Now().UnixMilli()
	st := popState{r: r, popTime: popTime, brokerName: cfg.BrokerName, maxBytes: cfg.MaxTransferBytes,
		asc: cfg.PriorityOrderAsc}
	if r.Order {
		st.reviveQid = message.PopOrderReviveQueue
	}
	// One draw decides both, as Apache's: whether this pop reads the
	// queues by priority, and whether it reads the retry topic first.
	randomQ := rand.IntN(100)
	byPriority := randomQ < q.priorityFactor
	retryFirst := popFromRetryProbability
	if byPriority {
		retryFirst = cfg.PopFromRetryProbabilityForPriority
	}
	needRetry := randomQ < retryFirst
	if byPriority {
		randomQ = 0
	}
	retryTopic := message.PopRetryTopic(r.Topic, r.Group)
	if needRetry && !r.Order {
		p.popTopic(&st, retryTopic, true, nil, randomQ)
	}
	if r.QueueID < 0 {
		for i := int32(0); i < q.n; i++ {
			p.popQueue(&st, r.Topic, queueAt(i, q.n, randomQ, st.asc), false, match)
		}
	} else {
		p.popQueue(&st, r.Topic, r.QueueID, false, match)
	}
	if !needRetry && !r.Order && st.count < int(r.MaxMsgNums) {
		p.popTopic(&st, retryTopic, true, nil, randomQ)
	}
	res := Result{Status: NotFound, PopTime: popTime, InvisibleTime: r.InvisibleTime, RestNum: st.rest,
		ReviveQid: st.reviveQid, StartOffsetInfo: string(st.startInfo), MsgOffsetInfo: string(st.msgInfo),
		OrderCountInfo: string(st.orderInfo)}
	if st.count > 0 {
		res.Status, res.Vec, res.Count = Found, st.vec, st.count
		p.d.Counts.Out(r.Group, r.Topic, int64(st.count), int64(st.bytes))
		p.d.Got(true, st.count)
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
	r          *Request
	peek       bool // PEEK_MESSAGE: read only, no checkpoint, no offset moved
	asc        bool // priorityOrderAsc: queues read from the highest (queueAt)
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

func (p *Service) popTopic(st *popState, topic string, isRetry bool, match func(int64, []byte) bool, randomQ int) {
	tc, ok := p.d.Topics.Get(topic)
	if !ok || tc.ReadQueueNums <= 0 {
		return
	}
	for i := int32(0); i < tc.ReadQueueNums; i++ {
		p.popQueue(st, topic, queueAt(i, tc.ReadQueueNums, randomQ, st.asc), isRetry, match)
	}
}

// queues is what a pop reads of its topic: the read queues, and the
// group's priority.factor when the topic is a PRIORITY one (else 0).
type queues struct {
	n              int32
	priorityFactor int
}

// queueAt is the i-th of n queues a pop reads, from the random start
// randomQ (0 for a pop by priority): with priorityOrderAsc, the highest
// queue first, as a higher queue holds higher priorities; else queue 0
// first (Apache's popMsgFromTopic).
func queueAt(i, n int32, randomQ int, asc bool) int32 {
	if asc {
		i = n - 1 - i
	}
	return (i + int32(randomQ)) % n
}

// popQueue pops from one queue into st: Apache's popMsgFromQueue.
func (p *Service) popQueue(st *popState, topic string, queueID int32, isRetry bool, match func(int64, []byte) bool) {
	r := st.r
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
		st.rest += max(0, p.d.Store.MaxOffset(topic, queueID)-offset)
		return
	}
	res := p.d.Store.GetMessageViews(topic, queueID, offset, want, st.maxBytes-st.bytes, match, store.PopulatePages)
	switch res.Status {
	case store.OffsetTooSmall, store.OffsetOverflowBadly, store.OffsetFoundNull:
		// The stored offset is outside the queue: start over where the store says.
		if res.Release != nil {
			res.Release()
		}
		offset = res.NextBeginOffset
		if !st.peek {
			p.d.Offsets.Commit(r.Group, topic, queueID, offset)
		}
		res = p.d.Store.GetMessageViews(topic, queueID, offset, want, st.maxBytes-st.bytes, match, store.PopulatePages)
	}
	if res.Count == 0 {
		if res.NextBeginOffset > offset && !st.peek {
			// Filtered out or removed: nothing to acknowledge, move on
			// (Apache's checkpoint mock does the same).
			p.d.Offsets.Commit(r.Group, topic, queueID, res.NextBeginOffset)
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
			func() { p.d.Offsets.Commit(r.Group, topic, queueID, offset) })
		st.add(res.Vec, res.Release)
		st.count += len(ck.offsets)
		st.startInfo = message.AppendOffsetInfo(st.startInfo, topic, queueID, offset)
		st.msgInfo = message.AppendOffsetInfo(st.msgInfo, topic, queueID, ck.offsets...)
		return
	}
	ro, err := p.putRevive(ckTag, ck.record(st.brokerName))
	if err != nil {
		// Not recorded: not handed out either; the offset stays.
		p.log.Error().Err(err).Str("topic", topic).Int32("queueId", queueID).Msg("pop checkpoint not written")
		res.Release()
		st.rest += res.MaxOffset - offset
		return
	}
	ck.reviveOffset = ro
	p.add(ck)
	p.d.Offsets.Commit(r.Group, topic, queueID, res.NextBeginOffset)
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
func (p *Service) reencodeRetry(rec []byte, st *popState, ckOffset int64) []byte {
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
func (p *Service) popOffset(group, topic string, queueID int32, initMode int32, isRetry bool) int64 {
	st := p.d.Store
	if off, ok := p.d.Offsets.Query(group, topic, queueID); ok && off >= 0 {
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
	p.d.Offsets.Commit(group, topic, queueID, off)
	return off
}

// peekOffset is where the group would pop next, nothing committed (PeekMessageProcessor).
func (p *Service) peekOffset(group, topic string, queueID int32) int64 {
	if off, ok := p.d.Offsets.Query(group, topic, queueID); ok && off >= 0 {
		return off
	}
	return p.d.Store.MinOffset(topic, queueID)
}

// add records a live checkpoint.
func (p *Service) add(ck *popCk) {
	p.mu.Lock()
	p.cks[ck.key] = ck
	p.mu.Unlock()
}

// live is the number of live checkpoints.
func (p *Service) live() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.cks)
}
