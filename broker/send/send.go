package send

// The send service: SEND_MESSAGE (10), SEND_MESSAGE_V2 (310),
// SEND_BATCH_MESSAGE (320) and the reply codes 324/325 (stored like sends),
// as Apache's SendMessageProcessor and the store's put hooks do them. One
// path for single and batch sends:
//
//	msgCheck     broker permission, the topic rule, topics clients may not
//	             send to, auto-creation, topic permission, queue id
//	properties   the client's, plus UNIQ_KEY (single sends that carry none)
//	             and CLUSTER, built in the request's scratch space
//	retry hook   a single send into %RETRY%<group> may go to %DLQ%<group>;
//	             batches into %RETRY% topics are refused
//	prepared     TRAN_MSG=true with the PREPARED sysFlag → a half message in
//	hook         RMQ_SYS_TRANS_HALF_TOPIC (single sends; prepared.go)
//	schedule     DELAY → SCHEDULE_TOPIC_XXXX (single; a delayed batch is
//	hook         refused), TIMER_* → rmq_sys_wheel_timer (single, and a batch
//	             whose own properties ask for it: all its messages)
//	store        Put or PutBatch
//	completion   SYNC_FLUSH / SYNC_MASTER: the caller's completion, once the
//	             commit log is flushed past the message(s) and a slave
//	             acknowledged them, or the wait failed
//
// The handler (processor/send.go) decodes a header into a Request and
// encodes the Result; a second front end does the same with its own
// encoding and completion.

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// Request is one send: a single message, or with Batch a
// SEND_BATCH_MESSAGE body of several (MessageDecoder.encodeMessages) whose
// Properties are the batch's own, appended to every message's.
//
// Lifetime: a Request and everything it points to — names, properties,
// body, and the stored properties Send builds in Scratch (views made with
// unsafe.String) — belong to the front end's request and are valid only
// until Send returns: the Remoting handler's strings are views into the
// request's frame, header text and scratch buffer, which are reused for the
// next request. The store copies what it appends. Anything that keeps a
// message or one of its strings beyond the call (replication, tracing, a
// table) copies it first (strings.Clone,
// bytes.Clone); tables clone the names they keep (Topics, Groups). No path of
// Send keeps one today.
type Request struct {
	ProducerGroup         string // not checked (Apache neither)
	Topic                 string
	DefaultTopic          string // auto-creation template (TBW102)
	DefaultTopicQueueNums int32
	QueueID               int32 // < 0: a random write queue
	SysFlag               int32
	BornTimestamp         int64
	BornHost              netip.AddrPort
	Flag                  int32
	Properties            string
	ReconsumeTimes        int32
	// MaxReconsumeTimes overrides the group's retryMaxTimes for a send into
	// %RETRY%<group> when HasMaxReconsumeTimes.
	MaxReconsumeTimes    int32
	HasMaxReconsumeTimes bool
	Batch                bool
	Body                 []byte
	// Producer is the producer's address as remarks name it ("ip:port").
	Producer string
	// Scratch is room Send may use (from len(Scratch) on) for the stored
	// properties and the message ids: the Remoting handler passes its
	// request's scratch buffer, ScratchHint bytes. Send appends past its
	// capacity when it needs more (an allocation); nil is no room.
	Scratch []byte
}

// ScratchHint is room enough in Scratch for the usual send: a single
// message's properties with UNIQ_KEY, MSG_REGION, TRACE_ON, CLUSTER and its id, or a batch of up
// to 16 messages carrying the batch's properties each.
func (r *Request) ScratchHint() int {
	n := len(r.Properties) + 256
	if r.Batch {
		n = len(r.Body) + 16*n
	}
	return n
}

// Status is how a stored send is answered: Apache's successful
// PutMessageStatus values (the message is in the commit log either way).
type Status int8

const (
	OK Status = iota
	// FlushDiskTimeout: SYNC_FLUSH and the commit log was not flushed
	// past the message within syncFlushTimeout (or the store shut down first).
	FlushDiskTimeout
	// FlushSlaveTimeout: SYNC_MASTER and no slave acknowledged the
	// message within slaveTimeout.
	FlushSlaveTimeout
	// SlaveNotAvailable: SYNC_MASTER and no slave was connected, or the
	// best one was more than haSlaveFallbehindMax behind: answered at once.
	SlaveNotAvailable
)

func (s Status) String() string {
	switch s {
	case FlushDiskTimeout:
		return "FLUSH_DISK_TIMEOUT"
	case FlushSlaveTimeout:
		return "FLUSH_SLAVE_TIMEOUT"
	case SlaveNotAvailable:
		return "SLAVE_NOT_AVAILABLE"
	}
	return "SEND_OK"
}

// Code is the Remoting response code Apache answers the status with.
func (s Status) Code() int32 {
	switch s {
	case FlushDiskTimeout:
		return remoting.FlushDiskTimeout
	case FlushSlaveTimeout:
		return remoting.FlushSlaveTimeout
	case SlaveNotAvailable:
		return remoting.SlaveNotAvailable
	}
	return remoting.Success
}

// Result is where a send was stored and how it is answered (Apache's
// SendMessageResponseHeader and the fields preSend adds).
type Result struct {
	Status      Status
	QueueID     int32 // the queue asked for or picked (not a staging queue)
	QueueOffset int64 // of the (first) message in the queue it went to
	// MsgID is Apache's msgId: the offset message id, for a batch every
	// message's, comma-separated. It lives in the request's Scratch.
	MsgID []byte
	// TransactionID is the UNIQ_KEY of the message (of a batch: the batch's
	// own, usually none).
	//
	// Both are valid only as long as the request (Request): a caller
	// that answers later copies them.
	TransactionID string
	// Region and TraceOn are the broker's regionId and traceOn, which every
	// answer to a send carries, refusals included: Send sets them first.
	Region  string
	TraceOn bool
	// Parked: the answer waits for the commit log flush; see Send.
	Parked bool
	// RecallHandle is the handle RECALL_MESSAGE takes back, for a single
	// message staged in the timer (recall.go); empty otherwise.
	RecallHandle string
}

// Send stores a send after Apache's checks and hooks (see the top of this
// file) and fills res. A refusal is a *Refusal with Apache's code and
// remark, or an error wrapping a store sentinel (the processor's error table
// answers those); res.Region and res.TraceOn are set either way.
//
// Send never waits. When the answer must wait until the commit log is
// flushed past the message(s) (SYNC_FLUSH, unless the message's WAIT is
// false), Send calls later once, before it returns, for the function that
// receives the outcome, sets res.Parked and returns; that function is
// called exactly once, later, from the flush goroutine, with OK or
// FlushDiskTimeout. res is complete when later is called: the caller
// builds its answer there (the Remoting handler makes its response and
// returns a function that writes it on the connection). Since later is
// only called on that path, a front end allocates its completion only for
// a send that parks. A nil later never parks: nobody waits for the answer
// (a one-way request).
func (s *Service) Send(r *Request, res *Result, later func() func(Status)) error {
	cfg := s.d.Config()
	res.Region, res.TraceOn, res.Status, res.Parked = cfg.RegionID, cfg.TraceOn, OK, false
	tc, created, err := s.checkSend(cfg, r)
	if err != nil {
		return err
	}
	need := cfg.Durability
	if need&store.Replicated != 0 && s.d.ReplicaNeed != nil {
		if need, err = s.d.ReplicaNeed(need, r.Properties); err != nil {
			return err
		}
	}
	queueID := r.QueueID
	if queueID < 0 {
		queueID = rand.Int32N(tc.WriteQueueNums)
	}
	if !r.Batch {
		queueID = routePriority(r, tc, queueID)
	}
	res.QueueID = queueID
	m := store.PutMessage{
		Topic:          r.Topic,
		QueueID:        queueID,
		Flag:           r.Flag,
		SysFlag:        r.SysFlag,
		BornTimestamp:  r.BornTimestamp,
		BornHost:       r.BornHost,
		StoreHost:      s.d.StoreHost,
		ReconsumeTimes: r.ReconsumeTimes,
	}
	var end int64
	if r.Batch {
		end, err = s.sendBatch(cfg, r, &m, res)
	} else {
		end, err = s.sendOne(cfg, r, &m, res)
	}
	if err != nil {
		return err
	}
	if later == nil {
		return nil
	}
	if need != 0 && message.Property(r.Properties, message.PropWaitStoreMsgOK) == "false" {
		need = 0
	}
	if created && s.d.Registered != nil {
		// The topic is offered to the name servers before the send is
		// answered, as Apache registers a topic a send created.
		done := later()
		res.Parked = true
		s.d.Registered(func() {
			if need == 0 {
				done(OK)
				return
			}
			s.waitThen(end, need, done)
		})
		return nil
	}
	if need == 0 {
		return nil
	}
	done := later()
	res.Parked = true
	s.waitThen(end, need, done)
	return nil
}

// waitThen calls done once the commit log holds end as need asks.
func (s *Service) waitThen(end int64, need store.Durability, done func(Status)) {
	// Any failure of the wait leaves the message appended but not known to
	// be durable in every way asked for: Apache answers such a send with a
	// success code the client is told of, whose status says which wait
	// failed (the replica's first, as the store reports it).
	s.d.Wait(end, need, func(err error) {
		st := waitStatus(need, err)
		if st != OK {
			s.sampled.Warn().Err(err).Str("status", st.String()).Int64("end", end).Stringer("waitedFor", need).
				Msg("send stored but not acknowledged as configured")
		}
		done(st)
	})
}

// waitStatus is how a send that waited for need is answered after the wait
// ended with err: a failed replication is SLAVE_NOT_AVAILABLE (no usable
// slave) or FLUSH_SLAVE_TIMEOUT (also a record cut by a truncation after
// the broker lost the master role, when it waited for replicas); any other
// failure (the flush time-out, a failed fsync, the store shutting down)
// FLUSH_DISK_TIMEOUT when the send waited for the flush, else
// FLUSH_SLAVE_TIMEOUT.
func waitStatus(need store.Durability, err error) Status {
	switch {
	case err == nil:
		return OK
	case errors.Is(err, store.ErrReplicaNotAvailable):
		return SlaveNotAvailable
	case errors.Is(err, store.ErrReplicaTimeout), need&store.Flushed == 0,
		errors.Is(err, store.ErrTruncated) && need&store.Replicated != 0:
		return FlushSlaveTimeout
	}
	return FlushDiskTimeout
}

// sendOne stores a single message: stored properties, retry hook, schedule
// hook, append. It returns the commit log offset the message ends at.
func (s *Service) sendOne(cfg *Config, r *Request, m *store.PutMessage, res *Result) (int64, error) {
	if len(r.Body) > cfg.MaxMessageSize {
		// Apache's commit log encoder refuses it: a failed put in its figures.
		s.d.StorePut(0, true)
		return 0, messageIllegal(cfg, store.ErrMessageTooLarge)
	}
	buf, uniq := s.storedProperties(cfg, r)
	buf, err := liteProperties(r.Topic, buf)
	if err != nil {
		return 0, err
	}
	m.Body = r.Body
	m.Properties = unsafe.String(unsafe.SliceData(buf), len(buf)) // buf is only appended to from here on
	if err := s.retrySend(m, r.ProducerGroup, r.MaxReconsumeTimes, r.HasMaxReconsumeTimes); err != nil {
		return 0, err
	}
	var pr store.PutResult
	prep := message.TransactionType(m.SysFlag) == message.TransactionPrep // putPrepared clears it
	began := time.Now()
	if prep {
		pr, err = s.putPrepared(cfg, m, uniq) // transaction.go
	} else {
		pr, err = s.Put(m)
	}
	s.d.StorePut(time.Since(began), err != nil)
	if err != nil {
		return 0, s.storeRefusal(cfg, err)
	}
	typ := stats.MessageNormal
	switch {
	case prep:
		typ = stats.MessageTransaction
	case hasShardingKey(r.Properties): // Apache's getMessageType: before delay
		typ = stats.MessageFIFO
	case m.Topic == message.ScheduleTopic || m.Topic == message.TimerTopic: // the schedule hook moved it
		typ = stats.MessageDelay
	}
	// Under the topic stored, as Apache (its hooks rename the message in
	// place): a delay message's is SCHEDULE_TOPIC_XXXX, a half message's
	// RMQ_SYS_TRANS_HALF_TOPIC.
	s.d.Counts.In(m.Topic, typ, 1, int64(pr.WroteBytes))
	at := len(buf)
	buf = message.AppendOffsetMsgID(buf, s.d.StoreHost, pr.PhysicalOffset)
	res.MsgID = buf[at:]
	res.QueueOffset = pr.QueueOffset
	res.TransactionID = uniq
	if m.Topic == message.TimerTopic {
		res.RecallHandle = recallHandle(cfg.BrokerName, m.Properties, uniq)
	}
	return pr.PhysicalOffset + int64(pr.WroteBytes), nil
}

// hasShardingKey reports whether props carry __SHARDINGKEY (a FIFO message
// for the metrics' message_type). Most sends have none: a substring search
// answers them without parsing the properties.
func hasShardingKey(props string) bool {
	return strings.Contains(props, message.PropShardingKey) && message.Property(props, message.PropShardingKey) != ""
}

// storedProperties is what the broker stores for a single send: the
// client's properties plus UNIQ_KEY (generated when the client sent none),
// MSG_REGION, TRACE_ON and CLUSTER, in the request's scratch space. It returns them and the
// UNIQ_KEY; both are valid only as the request (see Request).
func (s *Service) storedProperties(cfg *Config, r *Request) (props []byte, uniq string) {
	uniq = message.Property(r.Properties, message.PropUniqClientMessageID)
	buf := r.Scratch[len(r.Scratch):]
	buf = append(buf, r.Properties...)
	if uniq == "" {
		if len(buf) > 0 && buf[len(buf)-1] != message.PropertySeparator {
			buf = append(buf, message.PropertySeparator)
		}
		buf = append(buf, message.PropUniqClientMessageID...)
		buf = append(buf, message.NameValueSeparator)
		at := len(buf)
		buf = s.d.UniqIDs.Append(buf, time.Now())
		uniq = unsafe.String(&buf[at], len(buf)-at) // buf is never written below len again
		buf = append(buf, message.PropertySeparator)
	}
	return appendBrokerProperties(cfg, buf), uniq
}

// appendBrokerProperties appends what Apache 5.3.3's broker adds to every
// sent message's properties (AbstractSendMessageProcessor.buildMsgContext
// puts MSG_REGION and TRACE_ON; the send puts CLUSTER): consumers read the
// region and trace switch from the delivered message. A client's own pair
// of the same name comes first, so decoders (a map, last wins) see the
// broker's, as Apache's put replaces it.
func appendBrokerProperties(cfg *Config, buf []byte) []byte {
	buf = message.AppendProperty(buf, message.PropMsgRegion, cfg.RegionID)
	trace := "false"
	if cfg.TraceOn {
		trace = "true"
	}
	buf = message.AppendProperty(buf, message.PropTraceSwitch, trace)
	return message.AppendProperty(buf, message.PropCluster, cfg.ClusterName)
}

// sendBatch stores a SEND_BATCH_MESSAGE as Apache's sendBatchMessage and
// asyncPutMessages do: no retry topics, no delay level, no transactions; the
// batch's own properties (plus CLUSTER) go through the schedule hook, which
// stages every message in the timer topic when they ask for a timer, and
// are appended to every message's. It returns the commit log offset the
// last message ends at.
func (s *Service) sendBatch(cfg *Config, r *Request, m *store.PutMessage, res *Result) (int64, error) {
	if message.IsRetryTopic(r.Topic) {
		return 0, remoting.Refuse(remoting.MessageIllegal, nil, "batch request does not support retry group %s", r.Topic)
	}
	// Apache moves a delayed batch to SCHEDULE_TOPIC_XXXX, then its commit
	// log refuses it, as it refuses transactional batches: MESSAGE_ILLEGAL.
	// (Atoi("") would allocate its syntax error on every batch.)
	if s := message.Property(r.Properties, message.PropDelayTimeLevel); s != "" {
		if lvl, _ := strconv.Atoi(s); lvl > 0 {
			return 0, messageIllegal(cfg, store.ErrBadBatch)
		}
	}
	if message.TransactionType(r.SysFlag) != message.TransactionNot {
		return 0, messageIllegal(cfg, store.ErrBadBatch)
	}
	// Every message's stored properties go into the request's scratch
	// space. Appending past its capacity moves later ones to a new array;
	// the earlier views keep the old one alive.
	text := r.Scratch[len(r.Scratch):]
	text = append(text, r.Properties...)
	text = appendBrokerProperties(cfg, text)
	m.Properties = unsafe.String(unsafe.SliceData(text), len(text)) // later appends go after it
	if err := s.schedule(m, time.Now().UnixMilli()); err != nil {
		return 0, err
	}
	// Read-only bytes of the batch's own properties (a new string when the
	// hook staged the batch in the timer topic).
	batchProps := unsafe.Slice(unsafe.StringData(m.Properties), len(m.Properties))
	pooled := putBatches.Get().(*[]store.PutMessage)
	msgs := (*pooled)[:0]
	defer func() {
		clear(msgs) // drop the views into the request
		*pooled = msgs[:0]
		putBatches.Put(pooled)
	}()
	err := message.DecodeBatch(r.Body, func(flag int32, body, props []byte) error {
		if len(body) > cfg.MaxMessageSize {
			s.d.StorePut(0, true) // as in sendOne
			return messageIllegal(cfg, store.ErrMessageTooLarge)
		}
		one := *m
		one.Flag = flag
		one.Body = body
		at := len(text)
		text = message.JoinProperties(text, props, batchProps)
		one.Properties = unsafe.String(unsafe.SliceData(text[at:]), len(text)-at)
		msgs = append(msgs, one)
		return nil
	})
	if err != nil {
		if r := (*remoting.Refusal)(nil); errors.As(err, &r) {
			return 0, err
		}
		return 0, remoting.Refuse(remoting.MessageIllegal, store.ErrBadBatch, "bad batch body: %v", err)
	}
	if len(msgs) == 0 {
		return 0, remoting.Refuse(remoting.MessageIllegal, store.ErrBadBatch, "empty batch")
	}
	var resBuf [64]store.PutResult
	began := time.Now()
	results, err := s.d.Store.PutBatch(msgs, resBuf[:0])
	s.d.StorePut(time.Since(began), err != nil)
	if err != nil {
		return 0, s.storeRefusal(cfg, err)
	}
	var wrote int64
	for _, pr := range results {
		wrote += int64(pr.WroteBytes)
	}
	typ := stats.MessageNormal // transactional batches are refused
	switch {
	case hasShardingKey(r.Properties):
		typ = stats.MessageFIFO
	case m.Topic == message.ScheduleTopic || m.Topic == message.TimerTopic:
		typ = stats.MessageDelay
	}
	s.d.Counts.In(m.Topic, typ, int64(len(results)), wrote)
	at := len(text)
	for i, pr := range results {
		if i > 0 {
			text = append(text, ',')
		}
		text = message.AppendOffsetMsgID(text, s.d.StoreHost, pr.PhysicalOffset)
	}
	res.MsgID = text[at:]
	res.QueueOffset = results[0].QueueOffset
	res.TransactionID = message.Property(r.Properties, message.PropUniqClientMessageID)
	last := results[len(results)-1]
	return last.PhysicalOffset + int64(last.WroteBytes), nil
}

// putBatches recycles the message slices of batch sends.
var putBatches = sync.Pool{New: func() any {
	s := make([]store.PutMessage, 0, 64)
	return &s
}}

// ErrSlave: a slave does not take the write asked for.
var ErrSlave = errors.New("send: the broker is a slave")

// SlaveRefusal is the answer to a write that reaches a slave's store
// (Apache's checkBeforePutMessage: SERVICE_NOT_AVAILABLE, the store's
// remark).
func (s *Service) SlaveRefusal() error { return s.storeRefusal(s.d.Config(), ErrSlave) }

// checkSend is Apache's msgCheck: broker permission, the topic rule,
// topics clients may not send to, auto-creation, topic permission, queue
// id range. A topic found in the table was checked when it entered it, so
// a known topic costs one lookup and two flags, never a look at its name.
//
// Apache 5.3.3 refuses a send to a broker without write permission only for
// order topics, and never looks at the topic's permission; rocketgo refuses
// both, with Apache's remarks, as Apache 4.x did for send backs.
//
// created reports a topic this send did not find in the table: made by it
// (auto-creation, or a retry topic) or by a send beside it.
func (s *Service) checkSend(cfg *Config, r *Request) (tc *tables.TopicConfig, created bool, err error) {
	if cfg.Slave {
		return nil, false, s.storeRefusal(cfg, ErrSlave)
	}
	if cfg.Permission&message.PermWrite == 0 {
		return nil, false, remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission, "the broker[%s] sending message is forbidden", cfg.BrokerIP1)
	}
	tc, ok := s.d.Topics.Get(r.Topic)
	if !ok || tc.NameInvalid() {
		if err := message.ValidTopicName(r.Topic); err != nil {
			return nil, false, err
		}
	}
	if (ok && tc.SendRefused()) || (!ok && message.NotAllowedSend(r.Topic)) {
		return nil, false, remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission, "Sending message to topic[%s] is forbidden.", r.Topic)
	}
	if !ok {
		if message.IsRetryTopic(r.Topic) {
			tc, _, err = s.d.Topics.CreateIfAbsent(tables.TopicConfig{TopicName: r.Topic, ReadQueueNums: 1,
				WriteQueueNums: 1, Perm: message.PermRead | message.PermWrite})
		} else {
			tc, err = s.d.Topics.AutoCreate(r.Topic, r.DefaultTopic, r.DefaultTopicQueueNums)
		}
		if err != nil {
			return nil, false, remoting.Refuse(remoting.TopicNotExist, tables.ErrTopicNotExist, "topic[%s] not exist, apply first please!%s",
				r.Topic, remoting.FAQSuggestTodo)
		}
		s.log.Info().Str("topic", r.Topic).Int32("queueNums", tc.WriteQueueNums).Str("producer", r.Producer).
			Msg("topic auto-created on send")
	}
	if !tc.Writable() {
		return nil, false, remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission, "the topic[%s] sending message is forbidden", r.Topic)
	}
	// A negative queue id picks one of the write queues: there must be one.
	if r.QueueID >= tc.QueueNums() || (r.QueueID < 0 && tc.WriteQueueNums <= 0) {
		return nil, false, remoting.Refuse(remoting.InvalidParameter, nil, "request queueId[%d] is illegal, %s Producer: %s",
			r.QueueID, topicConfigString(tc), r.Producer)
	}
	return tc, !ok, nil
}

// messageIllegal is Apache's answer to a message its store refuses
// (PutMessageStatus MESSAGE_ILLEGAL, PROPERTIES_SIZE_EXCEEDED).
func messageIllegal(cfg *Config, sentinel error) *remoting.Refusal {
	return remoting.Refuse(remoting.MessageIllegal, sentinel, "%s", MessageIllegalRemark(cfg.MaxMessageSize))
}

// MessageIllegalRemark is Apache's remark for MESSAGE_ILLEGAL from the store.
func MessageIllegalRemark(maxMessageSize int) string {
	return "the message is illegal, maybe msg body or properties length not matched. msg body length limit " +
		strconv.Itoa(maxMessageSize) + "B, msg properties length limit 32KB."
}

// topicConfigString is Apache's TopicConfig.toString, as its send refusals
// print it.
func topicConfigString(tc *tables.TopicConfig) string {
	perm := []byte("---")
	if tc.Readable() {
		perm[0] = 'R'
	}
	if tc.Writable() {
		perm[1] = 'W'
	}
	if tc.Perm&message.PermInherit != 0 {
		perm[2] = 'X'
	}
	attrs := make([]string, 0, len(tc.Attributes))
	for k, v := range tc.Attributes {
		attrs = append(attrs, k+"="+v)
	}
	sort.Strings(attrs)
	return fmt.Sprintf("tables.TopicConfig [topicName=%s, readQueueNums=%d, writeQueueNums=%d, perm=%s, topicFilterType=%s, "+
		"topicSysFlag=%d, order=%t, attributes={%s}]", tc.TopicName, tc.ReadQueueNums, tc.WriteQueueNums, perm,
		tc.TopicFilterType, tc.TopicSysFlag, tc.Order, strings.Join(attrs, ", "))
}

// storeRefusal is Apache's answer (handlePutMessageResult) to a message the
// store or the schedule hook did not append: the PutMessageStatus's code and
// remark, wrapping err for logs and errors.Is. A Refusal already made (the
// schedule hook's) is returned as is; an error of no known kind is returned
// unchanged and answered SYSTEM_ERROR (and logged) by the processor.
func (s *Service) storeRefusal(cfg *Config, err error) error {
	var r *remoting.Refusal
	if errors.As(err, &r) {
		return err
	}
	switch {
	case errors.Is(err, store.ErrMessageTooLarge), errors.Is(err, store.ErrPropertiesTooLarge),
		errors.Is(err, store.ErrTopicTooLong), errors.Is(err, store.ErrBadBatch),
		errors.Is(err, store.ErrBadTopic), errors.Is(err, store.ErrBadQueueID):
		r = messageIllegal(cfg, nil)
	case errors.Is(err, store.ErrClosed), errors.Is(err, store.ErrNotStarted), errors.Is(err, store.ErrDiskFull),
		errors.Is(err, ErrSlave), errors.Is(err, store.ErrReplica):
		cl, cq, index := s.d.Store.DiskUsedRatios()
		r = remoting.Refuse(remoting.ServiceNotAvailable, nil, "service not available now. It may be caused by one of the "+
			"following reasons: the broker's disk is full [CL: %5.2f CQ: %5.2f INDEX: %5.2f], messages are put to the "+
			"slave, message store has been shut down, etc.", cl, cq, index)
	case errors.Is(err, store.ErrResource):
		r = remoting.Refuse(remoting.SystemError, nil, "create mapped file failed, server is busy or broken.")
	default:
		return err
	}
	r.Err = err
	return r
}
