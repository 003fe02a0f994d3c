package pull

// The pull service: PULL_MESSAGE and LITE_PULL_MESSAGE, and any other front
// end that reads a queue (Apache's PullMessageProcessor and
// DefaultPullMessageResultHandler). One call checks the pull, reads the
// queue, commits the offset it carries, and either answers or takes the
// pull over, to be answered later through a completion the front end
// supplies:
//
//   - nothing to read and the suspend flag set: the pull is parked on the
//     store's arrival waiter (at most maxParkedPulls; park.go) and run
//     again, on the store's arrival goroutine, when a message past its
//     offset is dispatched to its queue or its suspend time ends;
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
// A found answer is slices of the mapped commit log (Result.Vec),
// pinned until Result.Release: the front end writes them without a
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
	FlagCommitOffset int32 = 0x1
	FlagSuspend      int32 = 0x2
	FlagSubscription int32 = 0x4
	FlagClassFilter  int32 = 0x8
)

// ErrBusy: the cold-pull queue is full (pullThreadPoolQueueCapacity).
var ErrBusy = errors.New("pull: system busy")

// Request is one pull (PullMessageRequestHeader) as the service takes
// it. A pull the service parks or hands to a worker keeps a copy of it,
// strings included: they must not be views into memory the caller reuses
// (remoting's header strings are not: remoting/pool.go).
type Request struct {
	Group                string
	Topic                string
	QueueID              int32
	QueueOffset          int64
	MaxMsgNums           int32
	SysFlag              int32 // PullFlag* bits
	CommitOffset         int64
	SuspendTimeoutMillis int64
	Subscription         string // with FlagSubscription
	ExpressionType       string // TAG (or empty) or SQL92
	SubVersion           int64
	MaxMsgBytes          int64 // 0: maxTransferBytesOnMessageInMemory
	// LiteTopic (Apache 5.5's liteTopic): the pull reads the lite topic's
	// queue, the LMQ %LMQ%$<Topic>$<LiteTopic> (queue QueueID, 0), and
	// commits, resets and parks on it; Topic's checks stay the parent's.
	LiteTopic string
	// Remote names the requester in log lines; ConnID is its connection
	// (Conn.ID), 0 when unknown.
	Remote string
	ConnID uint64
}

// Status is how a pull ends (Apache's Status, plus Later).
type Status uint8

const (
	Found         Status = iota // records in Vec (SUCCESS)
	NoNewMsg                    // nothing past the offset (PULL_NOT_FOUND)
	NoMatchedMsg                // entries read, none matched or readable (PULL_RETRY_IMMEDIATELY)
	OffsetIllegal               // the offset is outside the queue (PULL_OFFSET_MOVED)
	// Later: no answer now; the completion the caller supplied gets
	// it (a parked pull, or one read by a cold-pull worker).
	Later
)

var statusNames = [...]string{Found: "FOUND", NoNewMsg: "NO_NEW_MSG", NoMatchedMsg: "NO_MATCHED_MSG",
	OffsetIllegal: "OFFSET_ILLEGAL", Later: "LATER"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "Status(?)"
}

// Result is the answer to a pull.
type Result struct {
	Status Status
	// NextBeginOffset is where the consumer pulls next; MinOffset and
	// MaxOffset are the queue's.
	NextBeginOffset      int64
	MinOffset            int64
	MaxOffset            int64
	SuggestWhichBrokerID int64
	// Vec (Found only) is the Count records as stored, slices of the
	// mapped commit log (records adjacent in the log share a slice):
	// read-only, valid until Release, which the front end calls exactly
	// once when it no longer needs them.
	Vec     [][]byte
	Count   int
	Release func()
}

// Completion answers a pull the service took over (Later).
type Completion struct {
	// Done is called once, from a broker goroutine, with the result (or
	// the refusal) of the pull run again, unless Gone reported true first.
	// It owns the result: it releases res.Release once written.
	Done func(res Result, err error)
	// Gone reports that the requester went away (its connection closed):
	// the pull is then dropped unanswered. Nil: never.
	Gone func() bool
}

func (c *Completion) gone() bool { return c.Gone != nil && c.Gone() }

// run is which run of a pull this is.
type run uint8

const (
	runFirst run = iota // from a front end: commits the offset, may park
	runAgain            // a parked pull woken: neither commits nor parks
	runCold             // on a cold-pull worker: may wait for the disk
)

// Pull serves one pull. When the answer is to come later (the pull is
// parked, or its pages are not in memory) Pull calls later, once, before
// it returns, for the completion to answer through, and returns Later.
// later nil means the caller cannot be answered later: the pull is then
// neither parked nor handed to a worker, and is read where it runs.
// A refusal is a *Refusal (Apache's code and remark).
func (s *Service) Pull(r *Request, later func() Completion) (Result, error) {
	return s.pull(r, runFirst, later)
}

func (s *Service) pull(r *Request, run run, later func() Completion) (Result, error) {
	cfg := s.d.Config()
	sub, expr, err := s.checkPull(&cfg, r)
	if err != nil {
		return Result{}, err
	}
	maxNums := min(int(r.MaxMsgNums), cfg.MaxTransferCount)
	maxBytes := cfg.MaxTransferBytes
	if r.MaxMsgBytes > 0 && r.MaxMsgBytes < int64(maxBytes) {
		maxBytes = int(r.MaxMsgBytes)
	}
	match := tables.RecordMatcher(sub, expr)
	q := r.storeTopic()
	pages := store.AnyPages
	switch {
	case run == runCold:
		pages = store.PopulatePages
	case later != nil && s.cold.on():
		pages = store.ResidentPages
	}
	if run == runFirst {
		// An operator reset the queue (server-side reset): the consumer is
		// told where to go on with OFFSET_MOVED, as Apache's pull does.
		if off, ok := s.d.Offsets.TakeReset(r.Group, q, r.QueueID); ok {
			if r.SysFlag&FlagCommitOffset != 0 {
				s.d.Offsets.Commit(r.Group, q, r.QueueID, r.CommitOffset)
			}
			return Result{Status: OffsetIllegal, NextBeginOffset: off, MinOffset: s.d.Store.MinOffset(q, r.QueueID),
				MaxOffset: s.d.Store.MaxOffset(q, r.QueueID), SuggestWhichBrokerID: message.MasterID}, nil
		}
	}
	began := time.Now()
	res := s.d.Store.GetMessageViews(q, r.QueueID, r.QueueOffset, max(maxNums, 1), maxBytes, match, pages)
	s.d.StoreGot(time.Since(began))
	if run == runFirst && r.SysFlag&FlagCommitOffset != 0 {
		s.d.Offsets.Commit(r.Group, q, r.QueueID, r.CommitOffset)
	}
	if res.Status == store.PagesNotResident {
		return s.deferCold(r, later)
	}
	s.d.Got(res.Status == store.Found, res.Count)
	out := Result{Status: statusOf(res.Status, r.QueueOffset), NextBeginOffset: res.NextBeginOffset,
		MinOffset: res.MinOffset, MaxOffset: res.MaxOffset, SuggestWhichBrokerID: message.MasterID}
	if cfg.SlaveReadEnable {
		out.SuggestWhichBrokerID = s.suggestBroker(r.Group, res.SuggestPullingFromSlave)
	}
	if out.Status == Found {
		out.Vec, out.Count, out.Release = res.Vec, res.Count, res.Release
		s.d.Counts.Out(r.Group, r.Topic, int64(res.Count), vecLen(res.Vec))
		return out, nil
	}
	if out.Status == NoNewMsg && run == runFirst && r.SysFlag&FlagSuspend != 0 && later != nil &&
		s.park(&cfg, r, later) {
		return Result{Status: Later}, nil
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
func (s *Service) suggestBroker(group string, slow bool) int64 {
	gc, ok := s.d.Groups.Get(group)
	if !ok {
		return message.MasterID
	}
	if slow {
		return gc.WhichBrokerWhenConsumeSlowly
	}
	return gc.BrokerID
}

// pullStatus maps the store's result to the pull's (Apache's
// DefaultPullMessageResultHandler and the GetMessageStatus it reads;
// remoting.md §6.5).
func statusOf(s store.GetStatus, requested int64) Status {
	switch s {
	case store.Found:
		return Found
	case store.NoMatchedMessage, store.MessageWasRemoving:
		return NoMatchedMsg
	case store.NoMessageInQueue, store.NoMatchedLogicQueue:
		if requested != 0 {
			return OffsetIllegal
		}
		return NoNewMsg
	case store.OffsetOverflowBadly, store.OffsetTooSmall:
		return OffsetIllegal
	}
	return NoNewMsg // OffsetFoundNull, OffsetOverflowOne
}

// coldPulls are the workers that read pulls whose pages are not in
// memory, and their queue.
type coldPulls struct {
	threads int
	jobs    chan *coldPull // pointers: a full queue of 100,000 is 800 KB, not 22 MB
	sampled zerolog.Logger
}

type coldPull struct {
	r    Request
	done Completion
}

func newColdPulls(threads, capacity int, log zerolog.Logger) *coldPulls {
	c := &coldPulls{threads: threads, sampled: log.Sample(&zerolog.BurstSampler{Burst: 5, Period: time.Minute})}
	if threads > 0 {
		c.jobs = make(chan *coldPull, max(capacity, 1))
	}
	return c
}

// Queue is the pulls waiting for a cold-pull goroutine and the bound on
// them: what Apache's runtime info calls pullThreadPoolQueueSize and
// pullThreadPoolQueueCapacity.
func (s *Service) Queue() (size, capacity int) {
	return len(s.cold.jobs), s.d.ColdCapacity
}

// on reports whether pulls are checked for pages not in memory at all.
func (c *coldPulls) on() bool { return c.threads > 0 }

// deferCold hands a pull whose pages are not in memory to the workers.
func (s *Service) deferCold(r *Request, later func() Completion) (Result, error) {
	j := &coldPull{r: *r, done: later()}
	select {
	case s.cold.jobs <- j:
		return Result{Status: Later}, nil
	default:
		s.cold.sampled.Warn().Int("pullThreadPoolQueueCapacity", cap(s.cold.jobs)).Str("remote", r.Remote).
			Msg("cold pull queue full; pull refused")
		return Result{}, remoting.Refuse(remoting.SystemBusy, ErrBusy, "[OVERLOAD]system busy, start flow control for a while")
	}
}

// runColdPulls reads and answers handed-over pulls until quit closes. The
// jobs left then pin nothing (the loop released what it had read); their
// connections are closed by then.
func (s *Service) runColdPulls(quit <-chan struct{}) {
	for {
		select {
		case <-quit:
			return
		case j := <-s.cold.jobs:
			if j.done.gone() {
				continue
			}
			res, err := s.pull(&j.r, runCold, nil)
			j.done.Done(res, err)
		}
	}
}

// checkPull applies the broker's permission, group, topic and subscription
// checks (Apache's order, codes and remarks), returning the subscription to
// filter with and, for SQL92, its compiled expression.
func (s *Service) checkPull(cfg *Config, r *Request) (*tables.Subscription, *filter.Expr, error) {
	sub, err := s.checkPullSub(cfg, r)
	if err != nil || tables.IsTagType(sub.ExpressionType) {
		return sub, nil, err
	}
	if !strings.EqualFold(sub.ExpressionType, "SQL92") || !cfg.EnablePropertyFilter {
		return nil, nil, filterUnsupported(sub.ExpressionType)
	}
	expr, err := s.d.Filters.Compile(sub.SubString)
	if err != nil {
		// Apache's remark says no more; the error stays in the refusal.
		return nil, nil, &remoting.Refusal{Code: remoting.SubscriptionParseFailed, Remark: "parse the consumer's subscription failed", Err: err}
	}
	return sub, expr, nil
}

func (s *Service) checkPullSub(cfg *Config, r *Request) (*tables.Subscription, error) {
	if cfg.Permission&message.PermRead == 0 {
		return nil, remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission, "the broker[%s] pulling message is forbidden", cfg.BrokerIP1)
	}
	gc, ok := s.d.Groups.Get(r.Group)
	if !ok {
		// An invalid name is never created (Groups.Get), as Apache's
		// findSubscriptionGroupConfig: the same answer as for a missing group.
		return nil, remoting.Refuse(remoting.SubscriptionGroupNotExist, tables.ErrGroupNotExist,
			"subscription group [%s] does not exist, %s", r.Group, remoting.FAQGroupNotExist)
	}
	if !gc.ConsumeEnable {
		return nil, remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission, "subscription group no permission, %s", r.Group)
	}
	tc, ok := s.d.Topics.Get(r.Topic)
	if !ok && cfg.EnableLmq && store.IsLMQ(r.Topic) && store.SafeName(r.Topic) {
		tc, ok = lmqTopic(r.Topic), true
	}
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
	if r.SysFlag&FlagSubscription != 0 {
		if !tables.IsTagType(r.ExpressionType) {
			return &tables.Subscription{Topic: r.Topic, SubString: r.Subscription, ExpressionType: r.ExpressionType,
				SubVersion: r.SubVersion}, nil
		}
		sub, err := s.d.Filters.Tags(r.Subscription)
		if err != nil { // filterExpressionMaxLength
			return nil, remoting.Refuse(remoting.SubscriptionParseFailed, err, "parse the consumer's subscription failed")
		}
		return sub, nil
	}
	sub, known := s.d.Clients.Subscription(r.Group, r.Topic)
	if !known {
		return nil, remoting.Refuse(remoting.SubscriptionNotExist, nil, "the consumer's group info not exist%s", remoting.FAQGroupNotExist)
	}
	// Apache checks the message model only of a pull without its
	// subscription (the Java client's, which registers it by heartbeat).
	if !gc.ConsumeBroadcastEnable {
		if info, ok := s.d.Clients.ConsumerInfo(r.Group); ok && info.MessageModel == "BROADCASTING" {
			return nil, remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission,
				"the consumer group[%s] can not consume by broadcast way", r.Group)
		}
	}
	if s.d.Groups.ReadForbidden(r.Group, r.Topic) { // UPDATE_AND_GET_GROUP_FORBIDDEN (broker/tables)
		return nil, remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission,
			"the consumer group[%s] is forbidden for topic[%s]", r.Group, r.Topic)
	}
	if sub == nil {
		return nil, remoting.Refuse(remoting.SubscriptionNotExist, nil, "the consumer's subscription not exist%s", remoting.FAQGroupNotExist)
	}
	if sub.SubVersion < r.SubVersion {
		s.d.Clients.MarkSubscriptionStale(r.Group, r.ConnID)
		s.sampled.Warn().Str("group", r.Group).Str("topic", r.Topic).Str("remote", r.Remote).
			Int64("brokerSubVersion", sub.SubVersion).Int64("pullSubVersion", r.SubVersion).
			Msg("the broker's subscription is not latest; the client's next heartbeat is told IS_SUB_CHANGE")
		return nil, remoting.Refuse(remoting.SubscriptionNotLatest, nil, "the consumer's subscription not latest")
	}
	return sub, nil
}

// filterUnsupported is Apache's answer to a non-TAG subscription the broker
// cannot filter (enablePropertyFilter off, or an unknown type).
func filterUnsupported(expressionType string) *remoting.Refusal {
	return remoting.Refuse(remoting.SystemError, nil, "The broker does not support consumer to filter message by %s", expressionType)
}

// CheckFilter is CHECK_CLIENT_CONFIG (46): whether the broker can filter a
// subscription of that expression type, and whether the expression
// compiles. A TAG subscription always can; a refusal carries Apache's code
// and remark (SYSTEM_ERROR when enablePropertyFilter is off,
// SUBSCRIPTION_PARSE_FAILED with the parse error otherwise).
func (s *Service) CheckFilter(expressionType, expression string) error {
	if tables.IsTagType(expressionType) {
		return nil
	}
	if !strings.EqualFold(expressionType, "SQL92") || !s.d.Config().EnablePropertyFilter {
		return filterUnsupported(expressionType)
	}
	if _, err := s.d.Filters.Compile(expression); err != nil {
		return &remoting.Refusal{Code: remoting.SubscriptionParseFailed, Remark: err.Error(), Err: err}
	}
	return nil
}

// storeTopic is the queue the pull reads: the topic's, or its lite
// topic's LMQ.
func (r *Request) storeTopic() string {
	if r.LiteTopic == "" {
		return r.Topic
	}
	return "%LMQ%$" + r.Topic + "$" + r.LiteTopic
}

// lmqTopic is the configuration an LMQ is read with (Apache's
// LmqTopicConfigManager.simpleLmqTopicConfig): one queue, read and write.
func lmqTopic(name string) *tables.TopicConfig {
	return &tables.TopicConfig{TopicName: name, ReadQueueNums: 1, WriteQueueNums: 1, Perm: message.PermRead | message.PermWrite}
}
