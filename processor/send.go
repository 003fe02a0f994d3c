package processor

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

func (p *brokerProcs) registerSend(t Table) {
	for _, code := range []int32{remoting.SendMessage, remoting.SendMessageV2, remoting.SendBatchMessage,
		remoting.SendReplyMessage, remoting.SendReplyMessageV2} {
		t[code] = p.send
	}
}

// sendHeader is SendMessageRequestHeader; V2 requests (310, 320, 325) carry
// the same fields under one-letter keys.
type sendHeader struct {
	producerGroup         string
	topic                 string
	defaultTopic          string
	defaultTopicQueueNums int32
	queueID               int32
	sysFlag               int32
	bornTimestamp         int64
	flag                  int32
	properties            string
	reconsumeTimes        int32
	maxReconsumeTimes     int32
	hasMaxReconsumeTimes  bool
	batch                 bool
}

var (
	sendKeysLong = [...]string{"producerGroup", "topic", "defaultTopic", "defaultTopicQueueNums", "queueId",
		"sysFlag", "bornTimestamp", "flag", "properties", "reconsumeTimes", "maxReconsumeTimes", "batch"}
	sendKeysV2 = [...]string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "l", "m"}
)

func parseSendHeader(req *remoting.Command) (h sendHeader, err error) {
	keys := &sendKeysLong
	switch req.Code {
	case remoting.SendMessageV2, remoting.SendBatchMessage, remoting.SendReplyMessageV2:
		keys = &sendKeysV2
	}
	if h.producerGroup, err = req.RequireStr(keys[0]); err != nil {
		return h, err
	}
	if h.topic, err = req.RequireStr(keys[1]); err != nil {
		return h, err
	}
	if h.defaultTopic, err = req.RequireStr(keys[2]); err != nil {
		return h, err
	}
	if h.defaultTopicQueueNums, err = req.Int32(keys[3]); err != nil {
		return h, err
	}
	if h.queueID, err = req.Int32(keys[4]); err != nil {
		return h, err
	}
	if h.sysFlag, err = req.Int32(keys[5]); err != nil {
		return h, err
	}
	if h.bornTimestamp, err = req.Int64(keys[6]); err != nil {
		return h, err
	}
	if h.flag, err = req.Int32(keys[7]); err != nil {
		return h, err
	}
	h.properties = req.Str(keys[8])
	h.reconsumeTimes = int32(req.OptInt64(keys[9], 0))
	h.maxReconsumeTimes = int32(req.OptInt64(keys[10], 0))
	h.hasMaxReconsumeTimes = req.Str(keys[10]) != ""
	h.batch = req.Bool(keys[11]) || req.Code == remoting.SendBatchMessage
	return h, nil
}

// errSendRefused carries the response code Apache's send checks answer with.
type errSendRefused struct {
	code   int32
	remark string
}

func (e *errSendRefused) Error() string { return e.remark }

func refuse(code int32, format string, args ...any) error {
	return &errSendRefused{code: code, remark: fmt.Sprintf(format, args...)}
}

func (p *brokerProcs) send(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	h, err := parseSendHeader(req)
	if err != nil {
		return p.fail(req, err)
	}
	tc, err := p.checkSend(c, &h)
	if err != nil {
		return p.sendError(req, err)
	}
	queueID := h.queueID
	if queueID < 0 {
		queueID = rand.Int32N(tc.WriteQueueNums)
	}
	base := store.PutMessage{
		Topic:          h.topic,
		QueueID:        queueID,
		SysFlag:        h.sysFlag,
		BornTimestamp:  h.bornTimestamp,
		BornHost:       c.RemoteAddr,
		StoreHost:      p.b.StoreHost,
		ReconsumeTimes: h.reconsumeTimes,
	}
	if req.Code == remoting.SendBatchMessage {
		return p.sendBatch(c, req, &h, base)
	}
	if len(req.Body) > p.b.Config().Store.MaxMessageSize {
		return remoting.NewResponse(req, remoting.MessageIllegal,
			fmt.Sprintf("the message body size over max value, MAX: %d", p.b.Config().Store.MaxMessageSize))
	}
	uniq := message.Property(h.properties, message.PropUniqClientMessageID)
	if uniq == "" {
		uniq = p.b.UniqIDs.Next(time.Now())
	}
	m := base
	m.Flag = h.flag
	m.Body = req.Body
	m.Properties = p.storedProperties(req, h.properties, uniq)
	if err := p.b.RetrySend(&m, h.maxReconsumeTimes, h.hasMaxReconsumeTimes); err != nil {
		return p.sendError(req, err)
	}
	res, err := p.b.Put(&m)
	if err != nil {
		return p.sendError(req, err)
	}
	resp := remoting.NewResponse(req, remoting.Success, "")
	var id [message.OffsetMsgIDLenV6]byte
	resp.SetBytes("msgId", message.AppendOffsetMsgID(id[:0], m.StoreHost, res.PhysicalOffset))
	resp.SetInt64("queueId", int64(queueID))
	resp.SetInt64("queueOffset", res.QueueOffset)
	resp.Set("transactionId", uniq)
	p.setSendExtras(resp)
	return p.afterPut(c, req, resp, res.PhysicalOffset+int64(res.WroteBytes), m.Properties)
}

// storedProperties is what the broker stores for a single send: the
// client's properties plus UNIQ_KEY (when the client sent none) and CLUSTER.
// It lives in the request's scratch space, so it is valid only until the
// handler returns; the store copies it into the commit log.
func (p *brokerProcs) storedProperties(req *remoting.Command, props, uniq string) string {
	cluster := p.b.Config().BrokerClusterName
	b := req.Scratch(len(props) + len(message.PropUniqClientMessageID) + len(uniq) + len(message.PropCluster) + len(cluster) + 4)
	b = append(b, props...)
	if message.Property(props, message.PropUniqClientMessageID) == "" {
		b = message.AppendProperty(b, message.PropUniqClientMessageID, uniq)
	}
	b = message.AppendProperty(b, message.PropCluster, cluster)
	return unsafe.String(unsafe.SliceData(b), len(b)) // b is never written again
}

func (p *brokerProcs) sendBatch(c *remoting.Conn, req *remoting.Command, h *sendHeader, base store.PutMessage) *remoting.Command {
	if strings.HasPrefix(h.topic, broker.RetryGroupPrefix) {
		return remoting.NewResponse(req, remoting.MessageIllegal, "batch request does not support retry group "+h.topic)
	}
	// Apache's CommitLog.asyncPutMessages refuses delayed batches. (Atoi("")
	// would allocate its syntax error on every batch.)
	if s := message.Property(h.properties, message.PropDelayTimeLevel); s != "" {
		if lvl, _ := strconv.Atoi(s); lvl > 0 {
			return remoting.NewResponse(req, remoting.MessageIllegal, "batch message does not support delay level")
		}
	}
	cluster := p.b.Config().BrokerClusterName
	// Every message's stored properties go into the request's scratch space
	// (the store copies them). Appending past its capacity moves later ones
	// to a new array; the earlier views keep the old one alive.
	text := req.Scratch(len(req.Body) + 16*(len(h.properties)+len(message.PropCluster)+len(cluster)+4))
	text = append(text, h.properties...)
	text = message.AppendProperty(text, message.PropCluster, cluster)
	batchProps := text[:len(text):len(text)]
	pooled := putBatches.Get().(*[]store.PutMessage)
	msgs := (*pooled)[:0]
	defer func() {
		clear(msgs) // drop the views into the request
		*pooled = msgs[:0]
		putBatches.Put(pooled)
	}()
	err := message.DecodeBatch(req.Body, func(flag int32, body, props []byte) error {
		if len(body) > p.b.Config().Store.MaxMessageSize {
			return refuse(remoting.MessageIllegal, "the message body size over max value, MAX: %d", p.b.Config().Store.MaxMessageSize)
		}
		m := base
		m.Flag = flag
		m.Body = body
		at := len(text)
		text = message.JoinProperties(text, props, batchProps)
		m.Properties = unsafe.String(unsafe.SliceData(text[at:]), len(text)-at)
		msgs = append(msgs, m)
		return nil
	})
	if err != nil {
		var r *errSendRefused
		if errors.As(err, &r) {
			return p.sendError(req, err)
		}
		return remoting.NewResponse(req, remoting.MessageIllegal, "bad batch body: "+err.Error())
	}
	if len(msgs) == 0 {
		return remoting.NewResponse(req, remoting.MessageIllegal, "empty batch")
	}
	var resBuf [64]store.PutResult
	results, err := p.b.Store.PutBatch(msgs, resBuf[:0])
	if err != nil {
		return p.sendError(req, err)
	}
	var stack [1024]byte // a batch of up to 31 IPv4 ids without allocating
	ids := stack[:0]
	for i, r := range results {
		if i > 0 {
			ids = append(ids, ',')
		}
		ids = message.AppendOffsetMsgID(ids, base.StoreHost, r.PhysicalOffset)
	}
	resp := remoting.NewResponse(req, remoting.Success, "")
	resp.SetBytes("msgId", ids)
	resp.SetInt64("queueId", int64(base.QueueID))
	resp.SetInt64("queueOffset", results[0].QueueOffset)
	p.setSendExtras(resp)
	last := results[len(results)-1]
	return p.afterPut(c, req, resp, last.PhysicalOffset+int64(last.WroteBytes), h.properties)
}

// putBatches recycles the message slices of batch sends.
var putBatches = sync.Pool{New: func() any {
	s := make([]store.PutMessage, 0, 64)
	return &s
}}

func (p *brokerProcs) setSendExtras(resp *remoting.Command) {
	resp.Set("MSG_REGION", p.b.Config().RegionID)
	resp.Set("TRACE_ON", strconv.FormatBool(p.b.Config().TraceOn))
}

// afterPut answers now, or, with SYNC_FLUSH and WAIT not false, once the
// store has flushed past end (group commit answers from its own goroutine).
func (p *brokerProcs) afterPut(c *remoting.Conn, req, resp *remoting.Command, end int64, props string) *remoting.Command {
	if p.b.Config().Store.FlushDiskType != store.SyncFlush || message.Property(props, message.PropWaitStoreMsgOK) == "false" {
		return resp
	}
	oneway := req.IsOneway() // req is recycled when the handler returns; resp is ours until replied
	p.b.Store.WaitFlush(end, func(err error) {
		if err != nil {
			resp.Code = remoting.FlushDiskTimeout
			resp.Remark = err.Error()
		}
		if !oneway {
			c.Reply(resp)
		}
	})
	return nil
}

// checkSend applies Apache's msgCheck: topic name, topics clients may not
// send to, broker and topic permissions, auto-creation, queue id range. A
// topic found in the table was checked when it entered it, so a known topic
// costs one lookup and two flags, never a look at its name.
func (p *brokerProcs) checkSend(c *remoting.Conn, h *sendHeader) (*broker.TopicConfig, error) {
	if p.b.Config().BrokerPermission&broker.PermWrite == 0 {
		return nil, refuse(remoting.NoPermission, "the broker[%s] sending message is forbidden", p.b.Config().Addr())
	}
	tc, ok := p.b.Topics.Get(h.topic)
	if !ok || tc.NameInvalid() {
		if err := broker.ValidTopicName(h.topic); err != nil {
			return nil, refuse(remoting.InvalidParameter, "%s", err.Error())
		}
	}
	if (ok && tc.SendRefused()) || (!ok && broker.NotAllowedSend(h.topic)) {
		return nil, refuse(remoting.NoPermission, "Sending message to topic[%s] is forbidden.", h.topic)
	}
	if !ok {
		var err error
		if broker.IsRetryTopic(h.topic) {
			tc, _, err = p.b.Topics.CreateIfAbsent(broker.TopicConfig{TopicName: h.topic, ReadQueueNums: 1,
				WriteQueueNums: 1, Perm: broker.PermRead | broker.PermWrite})
		} else {
			tc, err = p.b.Topics.AutoCreate(h.topic, h.defaultTopic, h.defaultTopicQueueNums)
		}
		if err != nil {
			return nil, refuse(remoting.TopicNotExist, "topic[%s] not exist, apply first please!", h.topic)
		}
		p.log.Info().Str("topic", h.topic).Int32("queueNums", tc.WriteQueueNums).Msg("topic auto-created on send")
	}
	if !tc.Writable() {
		return nil, refuse(remoting.NoPermission, "the topic[%s] sending message is forbidden", h.topic)
	}
	// A negative queue id picks one of the write queues: there must be one.
	if h.queueID >= tc.QueueNums() || (h.queueID < 0 && tc.WriteQueueNums <= 0) {
		return nil, refuse(remoting.InvalidParameter, "request queueId[%d] is illegal, %s Producer: %s",
			h.queueID, topicConfigString(tc), c.Remote)
	}
	return tc, nil
}

// topicConfigString is Apache's TopicConfig.toString, as its send refusals
// print it.
func topicConfigString(tc *broker.TopicConfig) string {
	perm := []byte("---")
	if tc.Readable() {
		perm[0] = 'R'
	}
	if tc.Writable() {
		perm[1] = 'W'
	}
	if tc.Perm&broker.PermInherit != 0 {
		perm[2] = 'X'
	}
	attrs := make([]string, 0, len(tc.Attributes))
	for k, v := range tc.Attributes {
		attrs = append(attrs, k+"="+v)
	}
	sort.Strings(attrs)
	return fmt.Sprintf("TopicConfig [topicName=%s, readQueueNums=%d, writeQueueNums=%d, perm=%s, topicFilterType=%s, "+
		"topicSysFlag=%d, order=%t, attributes={%s}]", tc.TopicName, tc.ReadQueueNums, tc.WriteQueueNums, perm,
		tc.TopicFilterType, tc.TopicSysFlag, tc.Order, strings.Join(attrs, ", "))
}

func (p *brokerProcs) sendError(req *remoting.Command, err error) *remoting.Command {
	var r *errSendRefused
	switch {
	case errors.As(err, &r):
		return remoting.NewResponse(req, r.code, r.remark)
	case errors.Is(err, store.ErrMessageTooLarge), errors.Is(err, store.ErrPropertiesTooLarge),
		errors.Is(err, store.ErrTopicTooLong), errors.Is(err, store.ErrBadBatch),
		errors.Is(err, store.ErrBadTopic), errors.Is(err, store.ErrBadQueueID):
		return remoting.NewResponse(req, remoting.MessageIllegal, err.Error())
	case errors.Is(err, broker.ErrTimerIllegal):
		return remoting.NewResponse(req, remoting.MessageIllegal, fmt.Sprintf("timer message illegal, the delay time should "+
			"not be bigger than the max delay %dms; or if set del msg, the delay time should be bigger than the current time",
			p.b.Config().TimerMaxDelaySec*1000))
	case errors.Is(err, broker.ErrTimerDisabled):
		return remoting.NewResponse(req, remoting.SystemError, "accurate timer message is not enabled, timerWheelEnable is false")
	case errors.Is(err, broker.ErrGroupNotExist):
		return remoting.NewResponse(req, remoting.SubscriptionGroupNotExist, strings.ReplaceAll(err.Error(), "broker: ", ""))
	case errors.Is(err, store.ErrClosed), errors.Is(err, store.ErrNotStarted), errors.Is(err, store.ErrDiskFull):
		return remoting.NewResponse(req, remoting.ServiceNotAvailable, serviceNotAvailable(p.b.Store))
	case errors.Is(err, store.ErrResource):
		return remoting.NewResponse(req, remoting.SystemError, "create mapped file failed, server is busy or broken.")
	}
	return p.fail(req, err)
}

// serviceNotAvailable is Apache's remark for SERVICE_NOT_AVAILABLE, with
// the used ratios of the store's partitions (SendMessageProcessor.diskUtil).
func serviceNotAvailable(st *store.Store) string {
	cl, cq, index := st.DiskUsedRatios()
	return fmt.Sprintf("service not available now. It may be caused by one of the following reasons: the broker's disk "+
		"is full [CL: %5.2f CQ: %5.2f INDEX: %5.2f], messages are put to the slave, message store has been shut down, etc.",
		cl, cq, index)
}
