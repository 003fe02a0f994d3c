package broker

// The pull service: PULL_MESSAGE and LITE_PULL_MESSAGE, and any other front
// end that reads a queue (Apache's PullMessageProcessor and
// DefaultPullMessageResultHandler). One call checks the pull, reads the
// queue, commits the offset it carries, and either answers or takes the
// pull over, to be answered later through a completion the front end
// supplies:
//
//   - nothing to read and the suspend flag set: the pull is parked in Holds
//     (at most maxParkedPulls) and run again, on the holds goroutine, when a
//     message for its queue is dispatched or its suspend time ends;
//   - the pages of the records to answer are not in memory: an event loop
//     must not wait for the disk, so the pull goes to the cold-pull workers
//     (pullMessageThreadPoolNums goroutines behind a queue of
//     pullThreadPoolQueueCapacity, Apache's pull thread pool keys),
//     which fault the pages in and answer. Past the queue's bound the pull
//     is refused SYSTEM_BUSY, as Apache refuses a pull its pull thread pool
//     cannot take: the disk is the bottleneck, and the clients pull again
//     after a pause, which is the flow control a full queue asks for.
//     Serving it on the loop instead would stall every connection of the
//     loop behind the disk.
//
// A found answer is slices of the mapped commit log (PullResult.Vec),
// pinned until PullResult.Release: the front end writes them without a
// copy and releases them once written.

import (
	"errors"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/filter"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// Pull sysFlag bits (Apache PullSysFlag).
const (
	PullFlagCommitOffset int32 = 0x1
	PullFlagSuspend      int32 = 0x2
	PullFlagSubscription int32 = 0x4
	PullFlagClassFilter  int32 = 0x8
)

// MasterID is MixAll.MASTER_ID, the broker a pull answer suggests pulling
// from next (suggestWhichBrokerId): this broker, a master.
const MasterID = 0

// ErrSystemBusy: the cold-pull queue is full (pullThreadPoolQueueCapacity).
var ErrSystemBusy = errors.New("broker: system busy")

// PullRequest is one pull (PullMessageRequestHeader) as the service takes
// it. A pull the service parks or hands to a worker keeps a copy of it,
// strings included: they must not be views into memory the caller reuses
// (remoting's header strings are not: remoting/pool.go).
type PullRequest struct {
	Group                string
	Topic                string
	QueueID              int32
	QueueOffset          int64
	MaxMsgNums           int32
	SysFlag              int32 // PullFlag* bits
	CommitOffset         int64
	SuspendTimeoutMillis int64
	Subscription         string // with PullFlagSubscription
	ExpressionType       string // TAG (or empty) or SQL92
	SubVersion           int64
	MaxMsgBytes          int64 // 0: maxTransferBytesOnMessageInMemory
	// Remote names the requester in log lines; ConnID is its connection
	// (Conn.ID), 0 when unknown.
	Remote string
	ConnID uint64
}

// PullStatus is how a pull ends (Apache's PullStatus, plus PullLater).
type PullStatus uint8

const (
	PullFound         PullStatus = iota // records in Vec (SUCCESS)
	PullNoNewMsg                        // nothing past the offset (PULL_NOT_FOUND)
	PullNoMatchedMsg                    // entries read, none matched or readable (PULL_RETRY_IMMEDIATELY)
	PullOffsetIllegal                   // the offset is outside the queue (PULL_OFFSET_MOVED)
	// PullLater: no answer now; the completion the caller supplied gets
	// it (a parked pull, or one read by a cold-pull worker).
	PullLater
)

var pullStatusNames = [...]string{PullFound: "FOUND", PullNoNewMsg: "NO_NEW_MSG", PullNoMatchedMsg: "NO_MATCHED_MSG",
	PullOffsetIllegal: "OFFSET_ILLEGAL", PullLater: "LATER"}

func (s PullStatus) String() string {
	if int(s) < len(pullStatusNames) {
		return pullStatusNames[s]
	}
	return "PullStatus(?)"
}

// PullResult is the answer to a pull.
type PullResult struct {
	Status PullStatus
	// NextBeginOffset is where the consumer pulls next; MinOffset and
	// MaxOffset are the queue's.
	NextBeginOffset      int64
	MinOffset            int64
	MaxOffset            int64
	SuggestWhichBrokerID int64
	// Vec (PullFound only) is the Count records as stored, slices of the
	// mapped commit log (records adjacent in the log share a slice):
	// read-only, valid until Release, which the front end calls exactly
	// once when it no longer needs them.
	Vec     [][]byte
	Count   int
	Release func()
}

// PullCompletion answers a pull the service took over (PullLater).
type PullCompletion struct {
	// Done is called once, from a broker goroutine, with the result (or
	// the refusal) of the pull run again, unless Gone reported true first.
	// It owns the result: it releases res.Release once written.
	Done func(res PullResult, err error)
	// Gone reports that the requester went away (its connection closed):
	// the pull is then dropped unanswered. Nil: never.
	Gone func() bool
}

func (c *PullCompletion) gone() bool { return c.Gone != nil && c.Gone() }

// pullRun is which run of a pull this is.
type pullRun uint8

const (
	pullFirst pullRun = iota // from a front end: commits the offset, may park
	pullAgain                // a parked pull woken: neither commits nor parks
	pullCold                 // on a cold-pull worker: may wait for the disk
)

// Pull serves one pull. When the answer is to come later (the pull is
// parked, or its pages are not in memory) Pull calls later, once, before
// it returns, for the completion to answer through, and returns PullLater.
// later nil means the caller cannot be answered later: the pull is then
// neither parked nor handed to a worker, and is read where it runs.
// A refusal is a *Refusal (Apache's code and remark).
func (b *Broker) Pull(r *PullRequest, later func() PullCompletion) (PullResult, error) {
	return b.pull(r, pullFirst, later)
}

func (b *Broker) pull(r *PullRequest, run pullRun, later func() PullCompletion) (PullResult, error) {
	cfg := b.Config()
	sub, expr, err := b.checkPull(cfg, r)
	if err != nil {
		return PullResult{}, err
	}
	maxNums := min(int(r.MaxMsgNums), cfg.MaxTransferCountOnMessageInMemory)
	maxBytes := cfg.MaxTransferBytesOnMessageInMemory
	if r.MaxMsgBytes > 0 && r.MaxMsgBytes < int64(maxBytes) {
		maxBytes = int(r.MaxMsgBytes)
	}
	match := tables.RecordMatcher(sub, expr)
	pages := store.AnyPages
	switch {
	case run == pullCold:
		pages = store.PopulatePages
	case later != nil && b.cold.on():
		pages = store.ResidentPages
	}
	if run == pullFirst {
		// An operator reset the queue (server-side reset): the consumer is
		// told where to go on with OFFSET_MOVED, as Apache's pull does.
		if off, ok := b.Offsets.TakeReset(r.Group, r.Topic, r.QueueID); ok {
			if r.SysFlag&PullFlagCommitOffset != 0 {
				b.Offsets.Commit(r.Group, r.Topic, r.QueueID, r.CommitOffset)
			}
			return PullResult{Status: PullOffsetIllegal, NextBeginOffset: off, MinOffset: b.Store.MinOffset(r.Topic, r.QueueID),
				MaxOffset: b.Store.MaxOffset(r.Topic, r.QueueID), SuggestWhichBrokerID: MasterID}, nil
		}
	}
	began := time.Now()
	res := b.Store.GetMessageViews(r.Topic, r.QueueID, r.QueueOffset, max(maxNums, 1), maxBytes, match, pages)
	b.stats.store.got(time.Since(began))
	if run == pullFirst && r.SysFlag&PullFlagCommitOffset != 0 {
		b.Offsets.Commit(r.Group, r.Topic, r.QueueID, r.CommitOffset)
	}
	if res.Status == store.PagesNotResident {
		return b.deferCold(r, later)
	}
	b.stats.got(res.Status == store.Found, res.Count)
	out := PullResult{Status: pullStatus(res.Status, r.QueueOffset), NextBeginOffset: res.NextBeginOffset,
		MinOffset: res.MinOffset, MaxOffset: res.MaxOffset, SuggestWhichBrokerID: MasterID}
	if cfg.SlaveReadEnable {
		out.SuggestWhichBrokerID = b.suggestBroker(r.Group, res.SuggestPullingFromSlave)
	}
	if out.Status == PullFound {
		out.Vec, out.Count, out.Release = res.Vec, res.Count, res.Release
		b.Stats.Out(r.Group, r.Topic, int64(res.Count), vecLen(res.Vec))
		return out, nil
	}
	if out.Status == PullNoNewMsg && run == pullFirst && r.SysFlag&PullFlagSuspend != 0 && later != nil &&
		b.park(cfg, r, later) {
		return PullResult{Status: PullLater}, nil
	}
	return out, nil
}

// vecLen is the bytes of an answer's records.
func vecLen(vec [][]byte) int64 {
	var n int64
	for _, v := range vec {
		n += int64(len(v))
	}
	return n
}

// suggestBroker is the broker a pull answer sends the consumer to next
// with slaveReadEnable (Apache's PullMessageProcessor): the group's
// whichBrokerWhenConsumeSlowly when the read was far behind the commit log
// end (its pages have likely left memory: let a slave serve the backlog),
// else the group's brokerId (0, the master, by default). Without
// slaveReadEnable every answer suggests the master.
func (b *Broker) suggestBroker(group string, slow bool) int64 {
	gc, ok := b.Groups.Get(group)
	if !ok {
		return MasterID
	}
	if slow {
		return gc.WhichBrokerWhenConsumeSlowly
	}
	return gc.BrokerID
}

// pullStatus maps the store's result to the pull's (Apache's
// DefaultPullMessageResultHandler and the GetMessageStatus it reads;
// remoting.md §6.5).
func pullStatus(s store.GetStatus, requested int64) PullStatus {
	switch s {
	case store.Found:
		return PullFound
	case store.NoMatchedMessage, store.MessageWasRemoving:
		return PullNoMatchedMsg
	case store.NoMessageInQueue, store.NoMatchedLogicQueue:
		if requested != 0 {
			return PullOffsetIllegal
		}
		return PullNoNewMsg
	case store.OffsetOverflowBadly, store.OffsetTooSmall:
		return PullOffsetIllegal
	}
	return PullNoNewMsg // OffsetFoundNull, OffsetOverflowOne
}

// park holds a pull that found nothing, unless maxParkedPulls are parked
// (then it is answered at once, as a pull not suspended).
func (b *Broker) park(cfg *Config, r *PullRequest, later func() PullCompletion) bool {
	timeout := time.Duration(r.SuspendTimeoutMillis) * time.Millisecond
	if !cfg.LongPollingEnable {
		timeout = time.Duration(cfg.ShortPollingTimeMills) * time.Millisecond
	}
	if !b.Holds.Reserve(r.Remote) {
		return false
	}
	done := later()
	again := *r
	b.Holds.Park(r.Topic, r.QueueID, r.QueueOffset, timeout, done.Gone, func() { b.pullAgain(&again, done) })
	return true
}

// pullAgain runs a woken pull and answers it, or hands it to a cold-pull
// worker, which does.
func (b *Broker) pullAgain(r *PullRequest, done PullCompletion) {
	res, err := b.pull(r, pullAgain, func() PullCompletion { return done })
	if err != nil || res.Status != PullLater {
		done.Done(res, err)
	}
}

// coldPulls are the workers that read pulls whose pages are not in
// memory, and their queue.
type coldPulls struct {
	threads int
	jobs    chan *coldPull // pointers: a full queue of 100,000 is 800 KB, not 22 MB
	sampled zerolog.Logger
}

type coldPull struct {
	r    PullRequest
	done PullCompletion
}

func newColdPulls(threads, capacity int, log zerolog.Logger) *coldPulls {
	c := &coldPulls{threads: threads, sampled: log.Sample(&zerolog.BurstSampler{Burst: 5, Period: time.Minute})}
	if threads > 0 {
		c.jobs = make(chan *coldPull, max(capacity, 1))
	}
	return c
}

// PullQueue is the pulls waiting for a cold-pull goroutine and the bound
// on them: what Apache's runtime info calls pullThreadPoolQueueSize and
// pullThreadPoolQueueCapacity.
func (b *Broker) PullQueue() (size, capacity int) {
	return len(b.cold.jobs), b.Config().PullThreadPoolQueueCapacity
}

// on reports whether pulls are checked for pages not in memory at all.
func (c *coldPulls) on() bool { return c.threads > 0 }

// deferCold hands a pull whose pages are not in memory to the workers.
func (b *Broker) deferCold(r *PullRequest, later func() PullCompletion) (PullResult, error) {
	j := &coldPull{r: *r, done: later()}
	select {
	case b.cold.jobs <- j:
		return PullResult{Status: PullLater}, nil
	default:
		b.cold.sampled.Warn().Int("pullThreadPoolQueueCapacity", cap(b.cold.jobs)).Str("remote", r.Remote).
			Msg("cold pull queue full; pull refused")
		return PullResult{}, remoting.Refuse(remoting.SystemBusy, ErrSystemBusy, "[OVERLOAD]system busy, start flow control for a while")
	}
}

// startColdPulls starts the cold-pull workers (Start); they stop with quit.
func (b *Broker) startColdPulls() {
	for range b.cold.threads {
		b.goRun(func() { b.runColdPulls(b.quit) })
	}
}

// runColdPulls reads and answers handed-over pulls until quit closes. The
// jobs left then pin nothing (the loop released what it had read); their
// connections are closed by then.
func (b *Broker) runColdPulls(quit <-chan struct{}) {
	for {
		select {
		case <-quit:
			return
		case j := <-b.cold.jobs:
			if j.done.gone() {
				continue
			}
			res, err := b.pull(&j.r, pullCold, nil)
			j.done.Done(res, err)
		}
	}
}

// checkPull applies the broker's permission, group, topic and subscription
// checks (Apache's order, codes and remarks), returning the subscription to
// filter with and, for SQL92, its compiled expression.
func (b *Broker) checkPull(cfg *Config, r *PullRequest) (*tables.Subscription, *filter.Expr, error) {
	sub, err := b.checkPullSub(cfg, r)
	if err != nil || tables.IsTagType(sub.ExpressionType) {
		return sub, nil, err
	}
	if !strings.EqualFold(sub.ExpressionType, "SQL92") || !cfg.EnablePropertyFilter {
		return nil, nil, filterUnsupported(sub.ExpressionType)
	}
	expr, err := b.Filters.Compile(sub.SubString)
	if err != nil {
		// Apache's remark says no more; the error stays in the refusal.
		return nil, nil, &remoting.Refusal{Code: remoting.SubscriptionParseFailed, Remark: "parse the consumer's subscription failed", Err: err}
	}
	return sub, expr, nil
}

func (b *Broker) checkPullSub(cfg *Config, r *PullRequest) (*tables.Subscription, error) {
	if cfg.BrokerPermission&message.PermRead == 0 {
		return nil, remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission, "the broker[%s] pulling message is forbidden", cfg.BrokerIP1)
	}
	gc, ok := b.Groups.Get(r.Group)
	if !ok {
		// An invalid name is never created (Groups.Get), as Apache's
		// findSubscriptionGroupConfig: the same answer as for a missing group.
		return nil, remoting.Refuse(remoting.SubscriptionGroupNotExist, tables.ErrGroupNotExist,
			"subscription group [%s] does not exist, %s", r.Group, remoting.FAQGroupNotExist)
	}
	if !gc.ConsumeEnable {
		return nil, remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission, "subscription group no permission, %s", r.Group)
	}
	tc, ok := b.Topics.Get(r.Topic)
	if !ok {
		return nil, remoting.Refuse(remoting.TopicNotExist, tables.ErrTopicNotExist, "topic[%s] not exist, apply first please! %s",
			r.Topic, remoting.FAQGroupNotExist)
	}
	if !tc.Readable() {
		return nil, remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission, "the topic[%s] pulling message is forbidden", r.Topic)
	}
	if r.QueueID < 0 || r.QueueID >= tc.ReadQueueNums {
		return nil, remoting.Refuse(remoting.InvalidParameter, nil,
			"queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d] consumer:[/%s]",
			r.QueueID, r.Topic, tc.ReadQueueNums, r.Remote)
	}
	if r.SysFlag&PullFlagSubscription != 0 {
		if !tables.IsTagType(r.ExpressionType) {
			return &tables.Subscription{Topic: r.Topic, SubString: r.Subscription, ExpressionType: r.ExpressionType,
				SubVersion: r.SubVersion}, nil
		}
		s, err := b.Filters.Tags(r.Subscription)
		if err != nil { // filterExpressionMaxLength
			return nil, remoting.Refuse(remoting.SubscriptionParseFailed, err, "parse the consumer's subscription failed")
		}
		return s, nil
	}
	s, known := b.Clients.Subscription(r.Group, r.Topic)
	if !known {
		return nil, remoting.Refuse(remoting.SubscriptionNotExist, nil, "the consumer's group info not exist%s", remoting.FAQGroupNotExist)
	}
	// Apache checks the message model only of a pull without its
	// subscription (the Java client's, which registers it by heartbeat).
	if !gc.ConsumeBroadcastEnable {
		if info, ok := b.Clients.ConsumerInfo(r.Group); ok && info.MessageModel == "BROADCASTING" {
			return nil, remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission,
				"the consumer group[%s] can not consume by broadcast way", r.Group)
		}
	}
	if b.Groups.ReadForbidden(r.Group, r.Topic) { // UPDATE_AND_GET_GROUP_FORBIDDEN (groupforbidden.go)
		return nil, remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission,
			"the consumer group[%s] is forbidden for topic[%s]", r.Group, r.Topic)
	}
	if s == nil {
		return nil, remoting.Refuse(remoting.SubscriptionNotExist, nil, "the consumer's subscription not exist%s", remoting.FAQGroupNotExist)
	}
	if s.SubVersion < r.SubVersion {
		b.Clients.MarkSubscriptionStale(r.Group, r.ConnID)
		b.sampled.Warn().Str("group", r.Group).Str("topic", r.Topic).Str("remote", r.Remote).
			Int64("brokerSubVersion", s.SubVersion).Int64("pullSubVersion", r.SubVersion).
			Msg("the broker's subscription is not latest; the client's next heartbeat is told IS_SUB_CHANGE")
		return nil, remoting.Refuse(remoting.SubscriptionNotLatest, nil, "the consumer's subscription not latest")
	}
	return s, nil
}

// filterUnsupported is Apache's answer to a non-TAG subscription the broker
// cannot filter (enablePropertyFilter off, or an unknown type).
func filterUnsupported(expressionType string) *remoting.Refusal {
	return remoting.Refuse(remoting.SystemError, nil, "The broker does not support consumer to filter message by %s", expressionType)
}
