package proxy

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	v2 "github.com/rocketgo/rocketgo/apis/v2"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// SendMessage sends the request's messages (one topic) to a broker over
// Remoting SEND_MESSAGE, one by one, as Apache's ProducerProcessor does:
// FIFO messages to the queue their group hashes to, others round robin.
// A transactional message's broker and offsets are kept for EndTransaction.
func (s *Server) SendMessage(ctx context.Context, req *v2.SendMessageRequest) (*v2.SendMessageResponse, error) {
	msgs := req.GetMessages()
	if len(msgs) == 0 {
		return &v2.SendMessageResponse{Status: statusOf(refuse(v2.Code_MESSAGE_CORRUPTED, "no message to send"))}, nil
	}
	topic := msgs[0].GetTopic()
	if err := validateTopic(topic); err != nil {
		return &v2.SendMessageResponse{Status: statusOf(err)}, nil
	}
	type built struct {
		props   string
		sysFlag int32
		group   string
	}
	bs := make([]built, len(msgs))
	for i, m := range msgs {
		if m.GetTopic().GetName() != topic.GetName() || m.GetTopic().GetResourceNamespace() != topic.GetResourceNamespace() {
			return &v2.SendMessageResponse{Status: statusOf(refuse(v2.Code_MESSAGE_CORRUPTED, "topic in message is not same"))}, nil
		}
		props, err := s.buildProperties(ctx, m, topic.GetName())
		if err != nil {
			return &v2.SendMessageResponse{Status: statusOf(err)}, nil
		}
		bs[i] = built{props: props, sysFlag: sysFlagOf(m), group: m.GetSystemProperties().GetMessageGroup()}
	}
	r, err := s.cluster.serving(ctx, topic.GetName())
	if err != nil {
		return &v2.SendMessageResponse{Status: statusOf(err)}, nil
	}
	queues := r.writeQueues()
	if len(queues) == 0 {
		return &v2.SendMessageResponse{Status: statusOf(refuse(v2.Code_FORBIDDEN, "no writable queue"))}, nil
	}
	// Apache 5.5's SendMessageQueueSelector: one queue for the whole
	// request; a sharding key (the message group, else for a single message
	// its lite topic) picks it by Guava's consistent hash over the write
	// queues sorted by (topic, brokerName, queueId), which a lite topic's
	// broker recomputes to know the lite topics it owns. Apache 5.5 hashes a
	// group only for a one-message request; rocketgo keeps a FIFO batch on
	// its first message's group queue (docs/compatibility.md).
	key := bs[0].group
	if key == "" && len(msgs) == 1 {
		key = msgs[0].GetSystemProperties().GetLiteTopic()
	}
	var q writeQueue
	if key != "" {
		q = shardQueue(queues, key)
	} else {
		q = queues[int(r.rr.Add(1)-1)%len(queues)]
	}
	if err := s.checkMessageType(ctx, topic.GetName(), q.addr, bs[0].props); err != nil {
		return &v2.SendMessageResponse{Status: statusOf(err)}, nil
	}
	entries := make([]*v2.SendResultEntry, len(msgs))
	codes := map[v2.Code]bool{}
	for i, m := range msgs {
		e := s.sendOne(ctx, q, topic.GetName(), m, bs[i].props, bs[i].sysFlag)
		entries[i] = e
		codes[e.GetStatus().GetCode()] = true
	}
	resp := &v2.SendMessageResponse{Entries: entries}
	switch {
	case len(codes) > 1:
		resp.Status = &v2.Status{Code: v2.Code_MULTIPLE_RESULTS, Message: v2.Code_MULTIPLE_RESULTS.String()}
	default:
		c := entries[0].GetStatus().GetCode()
		resp.Status = &v2.Status{Code: c, Message: entries[0].GetStatus().GetMessage()}
		if c == v2.Code_OK {
			resp.Status.Message = v2.Code_OK.String()
		}
	}
	return resp, nil
}

// shardQueue is the queue a sharding key (message group or lite topic)
// maps to: Hashing.consistentHash(key.hashCode(), n) over the write queues
// in MessageQueue order (brokerName, then queueId; one topic).
func shardQueue(queues []writeQueue, key string) writeQueue {
	sorted := slices.Clone(queues)
	slices.SortFunc(sorted, func(a, b writeQueue) int {
		if c := strings.Compare(a.brokerName, b.brokerName); c != 0 {
			return c
		}
		return cmp.Compare(a.queueID, b.queueID)
	})
	return sorted[message.ConsistentHash(int64(message.JavaHash(key)), len(sorted))]
}

// sendOne sends one message and turns the broker's answer into its entry
// (Apache's convertToSendMessageResponse: SEND_OK, the three persistence
// statuses, or the broker's code).
func (s *Server) sendOne(ctx context.Context, q writeQueue, topic string, m *v2.Message, props string, sysFlag int32) *v2.SendResultEntry {
	born := time.Now().UnixMilli()
	if ts := m.GetSystemProperties().GetBornTimestamp(); ts != nil && ts.IsValid() {
		born = ts.AsTime().UnixMilli()
	}
	req := remoting.NewRequest(remoting.SendMessage, nil, m.GetBody())
	req.Set("producerGroup", topic)
	req.Set("topic", topic)
	req.Set("defaultTopic", "TBW102")
	req.SetInt64("defaultTopicQueueNums", 4)
	req.SetInt64("queueId", int64(q.queueID))
	req.SetInt64("sysFlag", int64(sysFlag))
	req.SetInt64("bornTimestamp", born)
	req.SetInt64("flag", 0)
	req.Set("properties", props)
	req.SetInt64("reconsumeTimes", int64(m.GetSystemProperties().GetDeliveryAttempt()))
	req.Set("unitMode", "false")
	req.Set("batch", "false")
	req.Set("bname", q.brokerName)
	resp, err := s.cluster.invoke(ctx, q.addr, req)
	if err != nil {
		return &v2.SendResultEntry{Status: statusOf(err)}
	}
	switch resp.Code {
	case remoting.Success:
	case remoting.FlushDiskTimeout:
		return &v2.SendResultEntry{Status: &v2.Status{Code: v2.Code_MASTER_PERSISTENCE_TIMEOUT, Message: "send message failed, sendStatus=FLUSH_DISK_TIMEOUT"}}
	case remoting.FlushSlaveTimeout:
		return &v2.SendResultEntry{Status: &v2.Status{Code: v2.Code_SLAVE_PERSISTENCE_TIMEOUT, Message: "send message failed, sendStatus=FLUSH_SLAVE_TIMEOUT"}}
	case remoting.SlaveNotAvailable:
		return &v2.SendResultEntry{Status: &v2.Status{Code: v2.Code_HA_NOT_AVAILABLE, Message: "send message failed, sendStatus=SLAVE_NOT_AVAILABLE"}}
	default:
		return &v2.SendResultEntry{Status: statusOf(brokerRefusal(resp))}
	}
	msgID := m.GetSystemProperties().GetMessageId()
	offset, _ := strconv.ParseInt(resp.Str("queueOffset"), 10, 64)
	txID := resp.Str("transactionId")
	if message.TransactionType(sysFlag) == message.TransactionPrep {
		if txID == "" {
			txID = msgID
		}
		// The commit-log offset is in the offset message id the broker
		// returned (MessageDecoder.decodeMessageId).
		if _, phy, err := message.DecodeOffsetMsgID(resp.Str("msgId")); err == nil {
			s.txs.add(txData{producerGroup: topic, transactionID: txID, brokerName: q.brokerName, brokerAddr: q.addr,
				topic: topic, msgID: msgID, commitLogOffset: phy, tranStateTableOffset: offset}, time.Now())
			s.noteTxGroup(q.addr, topic)
		}
	}
	return &v2.SendResultEntry{Status: okStatus(), MessageId: msgID, TransactionId: txID, Offset: offset}
}

// checkMessageType is Apache's topic message type check on send
// (ProducerProcessor with enableTopicMessageTypeCheck): the first message's
// kind, read from its properties, must be the topic's message.type, unless
// that is MIXED; retry and DLQ topics are not checked.
func (s *Server) checkMessageType(ctx context.Context, topic, addr, props string) error {
	if !s.cfg.EnableTopicMessageTypeCheck || message.IsRetryTopic(topic) || strings.HasPrefix(topic, message.DLQGroupPrefix) {
		return nil
	}
	want := s.topicType(ctx, topic, addr)
	got := message.KindOf(props).String()
	if want != "MIXED" && got != want {
		return refuse(v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE,
			"TopicMessageType validate failed, the expected type is "+want+", but actual type is "+got)
	}
	return nil
}

// sysFlagOf is SendMessageActivity.buildSysFlag.
func sysFlagOf(m *v2.Message) int32 {
	var f int32
	if m.GetSystemProperties().GetBodyEncoding() == v2.Encoding_GZIP {
		f |= message.FlagCompressed
	}
	if m.GetSystemProperties().GetMessageType() == v2.MessageType_TRANSACTION {
		f |= message.TransactionPrep
	}
	return f
}

// reservedProperties is MessageConst.STRING_HASH_SET: names a user property
// may not take.
var reservedProperties = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range []string{
		"TRACE_ON", "MSG_REGION", "KEYS", "TAGS", "WAIT", "DELAY", "RETRY_TOPIC", "REAL_TOPIC", "REAL_QID",
		"TRAN_MSG", "PGROUP", "MIN_OFFSET", "MAX_OFFSET", "BUYER_ID", "ORIGIN_MESSAGE_ID", "TRANSFER_FLAG",
		"CORRECTION_FLAG", "MQ2_FLAG", "RECONSUME_TIME", "UNIQ_KEY", "MAX_RECONSUME_TIMES", "CONSUME_START_TIME",
		"POP_CK", "POP_CK_OFFSET", "1ST_POP_TIME", "TRAN_PREPARED_QUEUE_OFFSET", "DUP_INFO", "EXTEND_UNIQ_INFO",
		"INSTANCE_ID", "CORRELATION_ID", "REPLY_TO_CLIENT", "TTL", "ARRIVE_TIME", "PUSH_REPLY_TIME", "CLUSTER",
		"MSG_TYPE", "INNER_MULTI_QUEUE_OFFSET", "TIMER_DELAY_LEVEL", "TIMER_DELIVER_MS", "__STARTDELIVERTIME",
		"TIMER_DELAY_SEC", "TIMER_DELAY_MS", "TIMER_ENQUEUE_MS", "TIMER_DEQUEUE_MS", "TIMER_ROLL_TIMES",
		"TIMER_OUT_MS", "TIMER_DEL_UNIQKEY", "__BORNHOST", "__transactionId__", "TRANSACTION_CHECK_TIMES",
		"CHECK_IMMUNITY_TIME_IN_SECONDS", "__SHARDINGKEY", "INNER_MULTI_DISPATCH", "INNER_NUM", "INNER_BASE",
		"TRACE_CONTEXT", "PROPERTY_FORWARD_QUEUE_ID", "REDIRECT", "BORN_TIMESTAMP", "DLQ_ORIGIN_TOPIC",
		"DLQ_ORIGIN_MESSAGE_ID", "CRC32", "_SYS_MSG_PRIORITY_", "__LITE_TOPIC",
	} {
		m[n] = true
	}
	return m
}()

// buildProperties is SendMessageActivity.buildMessageProperty: user
// properties, tag, keys, message id, transaction, delivery time, delivery
// attempt, producer group (the topic), message group, trace context, born
// host and time; each checked against Apache's limits.
func (s *Server) buildProperties(ctx context.Context, m *v2.Message, producerGroup string) (string, error) {
	cfg := &s.cfg
	body := m.GetBody()
	if cfg.EnableMessageBodyEmptyCheck && len(body) == 0 {
		return "", refuse(codeMessageBodyEmpty, "message body cannot be empty")
	}
	if cfg.MaxMessageSize > 0 && len(body) > cfg.MaxMessageSize {
		return "", refuse(v2.Code_MESSAGE_BODY_TOO_LARGE, "message body cannot exceed the max "+strconv.Itoa(cfg.MaxMessageSize))
	}
	user := m.GetUserProperties()
	if len(user) > cfg.UserPropertyMaxNum {
		return "", refuse(v2.Code_MESSAGE_PROPERTIES_TOO_LARGE, "too many user properties, max is "+strconv.Itoa(cfg.UserPropertyMaxNum))
	}
	props := make(map[string]string, len(user)+12)
	size, err := putUserProperties(props, user)
	if err != nil {
		return "", err
	}
	sp := m.GetSystemProperties()
	n, err := putTagAndKeys(props, sp)
	if err != nil {
		return "", err
	}
	if size+n > cfg.MaxUserPropertySize {
		return "", refuse(v2.Code_MESSAGE_PROPERTIES_TOO_LARGE, "the total size of user property is too large, max is "+strconv.Itoa(cfg.MaxUserPropertySize))
	}
	id := sp.GetMessageId()
	if strings.TrimSpace(id) == "" {
		return "", refuse(v2.Code_ILLEGAL_MESSAGE_ID, "message id cannot be empty")
	}
	props[message.PropUniqClientMessageID] = id
	if err := s.putTypeProperties(props, sp); err != nil {
		return "", err
	}
	props[message.PropReconsumeTime] = strconv.Itoa(int(sp.GetDeliveryAttempt()))
	props[message.PropProducerGroup] = producerGroup
	if err := s.putMessageGroup(props, sp.GetMessageGroup()); err != nil {
		return "", err
	}
	if lite := sp.GetLiteTopic(); lite != "" {
		if err := s.validateLiteTopic(lite); err != nil {
			return "", err
		}
		props[message.PropLiteTopic] = lite
	}
	if tc := sp.GetTraceContext(); tc != "" {
		props[message.PropTraceContext] = tc
	}
	bornHost := sp.GetBornHost()
	if strings.TrimSpace(bornHost) == "" {
		bornHost = metaOf(ctx).remote
	}
	if bornHost != "" {
		props["__BORNHOST"] = bornHost
	}
	if ts := sp.GetBornTimestamp(); ts != nil && ts.IsValid() {
		props["BORN_TIMESTAMP"] = strconv.FormatInt(ts.AsTime().UnixMilli(), 10)
	}
	return string(message.AppendProperties(nil, props)), nil
}

// putUserProperties checks the user's properties and copies them to
// props; it returns their size.
func putUserProperties(props, user map[string]string) (int, error) {
	size := 0
	for k, v := range user {
		if reservedProperties[k] {
			return 0, refuse(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "property is used by system: "+k)
		}
		if hasControl(k) {
			return 0, refuse(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "the key of property cannot contain control character")
		}
		if hasControl(v) {
			return 0, refuse(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "the value of property cannot contain control character")
		}
		if strings.ContainsAny(k, "\x01\x02") || strings.ContainsAny(v, "\x01\x02") {
			return 0, refuse(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "property cannot contain the separators")
		}
		size += len(k) + len(v)
		props[k] = v
	}
	return size, nil
}

// putTagAndKeys checks the tag and keys and sets them in props; it
// returns their size, which counts with the user properties'.
func putTagAndKeys(props map[string]string, sp *v2.SystemProperties) (int, error) {
	tag := sp.GetTag()
	if err := validateTag(tag); err != nil {
		return 0, err
	}
	if tag != "" {
		props[message.PropTags] = tag
	}
	size := len(tag)
	for _, k := range sp.GetKeys() {
		if k != "" && strings.TrimSpace(k) == "" {
			return 0, refuse(v2.Code_ILLEGAL_MESSAGE_KEY, "key cannot be the char sequence of whitespace")
		}
		if hasControl(k) {
			return 0, refuse(v2.Code_ILLEGAL_MESSAGE_KEY, "key cannot contain control character")
		}
		size += len(k)
	}
	if len(sp.GetKeys()) > 0 {
		props[message.PropKeys] = strings.Join(sp.GetKeys(), " ")
	}
	return size, nil
}

// putTypeProperties sets what a transactional or delayed message carries,
// within the configured bounds.
func (s *Server) putTypeProperties(props map[string]string, sp *v2.SystemProperties) error {
	cfg := &s.cfg
	if sp.GetMessageType() == v2.MessageType_TRANSACTION {
		props[message.PropTransactionPrepared] = "true"
		if d := sp.GetOrphanedTransactionRecoveryDuration(); d != nil {
			sec := int64(d.AsDuration() / time.Second)
			if cfg.MaxTransactionRecoverySecond > 0 && sec > cfg.MaxTransactionRecoverySecond {
				return refuse(v2.Code_BAD_REQUEST, "the max transaction recovery time of message is too large, max is "+
					strconv.FormatInt(cfg.MaxTransactionRecoverySecond, 10))
			}
			props[message.PropCheckImmunityTimeSeconds] = strconv.FormatInt(sec, 10)
		}
	}
	if sp.Priority != nil {
		// Apache 5.4's SendMessageActivity hands it to Message.setPriority,
		// which throws for a negative one.
		if sp.GetPriority() < 0 {
			return refuse(v2.Code_BAD_REQUEST, "The priority must be greater than or equal to 0")
		}
		props[message.PropPriority] = strconv.Itoa(int(sp.GetPriority()))
	}
	if ts := sp.GetDeliveryTimestamp(); ts != nil {
		ms := ts.AsTime().UnixMilli()
		if cfg.MaxDelayTimeMills > 0 && ms-time.Now().UnixMilli() > cfg.MaxDelayTimeMills {
			return refuse(v2.Code_ILLEGAL_DELIVERY_TIME, "the max delay time of message is too large, max is "+
				strconv.FormatInt(cfg.MaxDelayTimeMills, 10))
		}
		props[message.PropTimerDeliverMs] = strconv.FormatInt(ms, 10)
	}
	return nil
}

// putMessageGroup checks a FIFO message's group and sets it in props.
func (s *Server) putMessageGroup(props map[string]string, g string) error {
	if g == "" {
		return nil
	}
	switch {
	case strings.TrimSpace(g) == "":
		return refuse(v2.Code_ILLEGAL_MESSAGE_GROUP, "message group cannot be the char sequence of whitespace")
	case s.cfg.MaxMessageGroupSize > 0 && len(g) >= s.cfg.MaxMessageGroupSize:
		return refuse(v2.Code_ILLEGAL_MESSAGE_GROUP, "message group exceed the max size "+strconv.Itoa(s.cfg.MaxMessageGroupSize))
	case hasControl(g):
		return refuse(v2.Code_ILLEGAL_MESSAGE_GROUP, "message group cannot contain control character")
	}
	props[message.PropShardingKey] = g
	return nil
}
