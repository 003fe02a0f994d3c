package proxy

import (
	"context"
	"strconv"
	"strings"
	"time"

	v2 "github.com/rocketgo/rocketgo/apis/v2"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// Consumption through the proxy maps onto the broker's pop family
// (Apache's ReceiveMessageActivity, AckMessageActivity,
// ChangeInvisibleDurationActivity, ForwardMessageToDLQActivity and
// ConsumerProcessor): POP_MESSAGE with queue -1 on the broker the client
// names, ACK_MESSAGE, CHANGE_MESSAGE_INVISIBLETIME and CONSUMER_SEND_MSG_BACK
// to the DLQ, addressed by the receipt handle.

// Apache ProxyConfig bounds of the invisible time (ms).
const (
	minInvisibleMillisForRecv = 10_000
	maxInvisibleMillis        = 12 * 3600 * 1000
)

// ReceiveMessage pops up to batch_size messages and streams them: one
// status, then the messages, then the time of the answer's end in a
// response of its own (delivery_timestamp), as Apache's
// ReceiveMessageResponseStreamWriter ends every answer (its onComplete;
// a call refused by authentication, before the activity, gets the status
// alone there too). The SDKs take it for the messages' transport delivery
// time: the Python SDK's push consumer (5.1.2) fails each receive without it
// and never consumes.
func (s *Server) ReceiveMessage(req *v2.ReceiveMessageRequest, stream v2.MessagingService_ReceiveMessageServer) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	stop := context.AfterFunc(s.base, cancel) // Shutdown ends a parked receive
	defer stop()
	if st := s.refusedBy(ctx, req); st != nil {
		return stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Status{Status: st}})
	}
	if err := s.receive(ctx, req, stream); err != nil {
		return err
	}
	return stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_DeliveryTimestamp{
		DeliveryTimestamp: timestamppb.Now()}})
}

// receive answers a receive the guard let through: a status, and the
// messages after an OK. An error is the stream's (the client is gone).
func (s *Server) receive(ctx context.Context, req *v2.ReceiveMessageRequest, stream v2.MessagingService_ReceiveMessageServer) error {
	writeStatus := func(st *v2.Status) error {
		return stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Status{Status: st}})
	}
	if st := s.clientSettingsOf(metaOf(ctx).clientID); isLiteClient(st) {
		return s.receiveLite(ctx, req, st, stream)
	}
	h, addr, maxAttempts, autoRenew, st := s.popRequest(ctx, req)
	if st != nil {
		return writeStatus(st)
	}
	preq := remoting.NewRequest(remoting.PopMessage, nil, nil)
	h.Encode(preq)
	pctx, pcancel := callContext(ctx, time.Duration(h.PollTime)*time.Millisecond+s.cluster.timeout)
	resp, err := s.cluster.cl.Invoke(pctx, addr, preq)
	pcancel()
	if err != nil {
		return writeStatus(statusOf(err))
	}
	switch resp.Code {
	case remoting.Success:
	case remoting.PollingFull:
		return writeStatus(&v2.Status{Code: v2.Code_TOO_MANY_REQUESTS, Message: "polling full"})
	case remoting.PullNotFound, remoting.NoMessage, remoting.PollingTimeout:
		return writeStatus(&v2.Status{Code: v2.Code_MESSAGE_NOT_FOUND, Message: "no new message"})
	default:
		return writeStatus(statusOf(brokerRefusal(resp)))
	}
	var rh remoting.PopMessageResponseHeader
	if err := rh.Decode(resp); err != nil {
		return writeStatus(statusOf(err))
	}
	msgs := s.popped(ctx, resp.Body, &rh, &h, addr, maxAttempts)
	if len(msgs) == 0 {
		return writeStatus(&v2.Status{Code: v2.Code_MESSAGE_NOT_FOUND, Message: "no match message"})
	}
	rk := renewKey{client: metaOf(ctx).clientID, group: h.ConsumerGroup}
	if autoRenew { // kept before the client can ack
		s.keepForRenewal(rk, h.Topic, msgs)
	}
	if err := writeStatus(okStatus()); err != nil {
		return err
	}
	for i, m := range msgs {
		if err := stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Message{Message: m}}); err != nil {
			s.nackUnsent(rk, h.Topic, msgs[i:])
			return err
		}
	}
	return nil
}

// popRequest validates a receive and builds the pop it becomes: the
// header, the broker's address, the group's max delivery attempts and
// whether the proxy renews the handles; a non-nil status refuses it.
func (s *Server) popRequest(ctx context.Context, req *v2.ReceiveMessageRequest) (h remoting.PopMessageRequestHeader,
	addr string, maxAttempts int32, autoRenew bool, _ *v2.Status) {
	fifo, maxAttempts := s.receiveOrder(ctx, req.GetGroup().GetName())
	pollMs, st := s.pollMillis(ctx, req.GetLongPollingTimeout())
	if st != nil {
		return h, "", 0, false, st
	}
	topic := req.GetMessageQueue().GetTopic()
	if err := validateTopic(topic); err != nil {
		return h, "", 0, false, statusOf(err)
	}
	if err := validateGroup(req.GetGroup()); err != nil {
		return h, "", 0, false, statusOf(err)
	}
	invisible, err := durationMillis(req.GetInvisibleDuration())
	if err != nil {
		return h, "", 0, false, statusOf(err)
	}
	autoRenew = s.cfg.EnableProxyAutoRenew && req.GetAutoRenew()
	if autoRenew {
		invisible = s.cfg.DefaultInvisibleTimeMills
	} else if err := validateInvisible(invisible, minInvisibleMillisForRecv); err != nil {
		return h, "", 0, false, statusOf(err)
	}
	expType, exp := "TAG", "*"
	if fe := req.GetFilterExpression(); fe != nil {
		if fe.GetType() == v2.FilterType_SQL {
			expType = "SQL92"
		}
		if e := strings.TrimSpace(fe.GetExpression()); e != "" {
			exp = e
		}
	}
	brokerName, addr, st := s.readableBroker(ctx, topic.GetName(), req.GetMessageQueue().GetBroker().GetName())
	if st != nil {
		return h, "", 0, false, st
	}
	batch, err := receiveBatch(req.GetBatchSize())
	if err != nil {
		return h, "", 0, false, statusOf(err)
	}
	if batch != req.GetBatchSize() {
		s.sampled.Warn().Int32("batchSize", req.GetBatchSize()).Int32("maxMsgNums", batch).Str("topic", topic.GetName()).
			Str("group", req.GetGroup().GetName()).Msg("receive batch size lowered to the pop bound")
	}
	h = remoting.PopMessageRequestHeader{
		ConsumerGroup: req.GetGroup().GetName(), Topic: topic.GetName(), QueueID: -1, MaxMsgNums: batch,
		InvisibleTime: invisible, PollTime: pollMs, BornTime: time.Now().UnixMilli(), InitMode: 1, // ConsumeInitMode.MAX
		ExpType: expType, Exp: exp, Order: fifo, BrokerName: brokerName,
	}
	return h, addr, maxAttempts, autoRenew, nil
}

// receiveOrder is whether group pops in order and how many times a
// message is delivered before the DLQ. FIFO is the group's
// (consumeMessageOrderly), as the settings the proxy answers say; read
// from the group itself, so that a receive sent before the client's
// settings reached this proxy pops in order too.
func (s *Server) receiveOrder(ctx context.Context, group string) (fifo bool, maxAttempts int32) {
	maxAttempts = 17
	if g, err := s.groupConfig(ctx, group); err == nil && g != nil {
		fifo = g.ConsumeMessageOrderly
	}
	if c := s.clients.lookup(metaOf(ctx).clientID); c != nil {
		c.mu.Lock()
		if st := c.settings; st != nil {
			fifo = fifo || st.GetSubscription().GetFifo()
			if n := st.GetBackoffPolicy().GetMaxAttempts(); n > 0 {
				maxAttempts = n
			}
		}
		c.mu.Unlock()
	}
	return fifo, maxAttempts
}

// pollMillis is ReceiveMessageActivity's long-polling time: the request's
// own (lp) when it names one, else what the call's deadline leaves after
// half the request timeout; clamped to [min, max] long-polling time and to
// what the deadline leaves.
func (s *Server) pollMillis(ctx context.Context, lp *durationpb.Duration) (int64, *v2.Status) {
	pollMs := s.cfg.GrpcClientConsumerMaxLongPollingTimeoutMillis
	remaining := int64(-1)
	if dl, ok := ctx.Deadline(); ok {
		remaining = time.Until(dl).Milliseconds()
		pollMs = remaining - 1500
	}
	if lp != nil {
		pollMs = lp.AsDuration().Milliseconds()
	}
	pollMs = max(pollMs, s.cfg.GrpcClientConsumerMinLongPollingTimeoutMillis)
	pollMs = min(pollMs, s.cfg.GrpcClientConsumerMaxLongPollingTimeoutMillis)
	if remaining >= 0 && pollMs > remaining {
		if remaining < s.cfg.GrpcClientConsumerMinLongPollingTimeoutMillis {
			return 0, &v2.Status{Code: v2.Code_BAD_REQUEST,
				Message: "The deadline time remaining is not enough for polling, please check network condition"}
		}
		pollMs = remaining
	}
	return pollMs, nil
}

// readableBroker is the broker a receive pops from: the one it names if
// it has a master, else (Apache's selector) any with a readable queue.
func (s *Server) readableBroker(ctx context.Context, topic, brokerName string) (string, string, *v2.Status) {
	r, err := s.cluster.serving(ctx, topic)
	if err != nil {
		return "", "", statusOf(err)
	}
	addr := r.master(brokerName)
	if addr == "" {
		for _, q := range r.Queues {
			if q.Perm&permRead != 0 && r.master(q.BrokerName) != "" {
				brokerName, addr = q.BrokerName, r.master(q.BrokerName)
				break
			}
		}
	}
	if addr == "" {
		return "", "", &v2.Status{Code: v2.Code_FORBIDDEN, Message: "no readable queue"}
	}
	return brokerName, addr, nil
}

// keepForRenewal records received messages' handles for auto-renewal.
func (s *Server) keepForRenewal(rk renewKey, topic string, msgs []*v2.Message) {
	now := time.Now()
	for _, m := range msgs {
		raw := m.GetSystemProperties().GetReceiptHandle()
		if hd, err := parseReceiptHandle(raw); err == nil {
			if !s.renew.add(rk, raw, &renewed{handle: hd, topic: topic, liteTopic: m.GetSystemProperties().GetLiteTopic(), received: now,
				reconsume: m.GetSystemProperties().GetDeliveryAttempt() - 1}) {
				s.sampled.Warn().Int("max", maxRenewHandles).Msg("receipt handles kept for renewal at the bound; not renewed")
			}
		}
	}
}

// nackUnsent makes messages the client never got visible again soon
// (Apache's NACK_INVISIBLE_TIME, 1 s): the client is gone.
func (s *Server) nackUnsent(rk renewKey, topic string, msgs []*v2.Message) {
	for _, left := range msgs {
		raw := left.GetSystemProperties().GetReceiptHandle()
		hd, perr := parseReceiptHandle(raw)
		if kept, ok := s.renew.take(rk, raw); ok {
			hd, perr = kept, nil
		}
		if perr == nil {
			// Best effort: the message comes back after its invisible time anyway.
			_, _ = s.changeInvisible(context.Background(), hd, rk.group, topic, 1000, left.GetSystemProperties().GetLiteTopic(), false)
		}
	}
}

// popped decodes a pop answer's messages, gives each its receipt handle
// (MQClientAPIImpl.processPopResponse, then ConsumerProcessor's
// commit-log offset) and applies PopMessageResultFilterImpl: a message
// delivered maxAttempts times goes to the DLQ instead of the client.
func (s *Server) popped(ctx context.Context, body []byte, rh *remoting.PopMessageResponseHeader,
	req *remoting.PopMessageRequestHeader, addr string, maxAttempts int32) []*v2.Message {
	start := offsetInfo(rh.StartOffsetInfo)
	orderCount := offsetInfo(rh.OrderCountInfo)
	firstOffset := map[string]int64{}
	var out []*v2.Message
	for len(body) > 0 {
		rec, rest, err := message.DecodeRecord(body)
		if err != nil {
			s.sampled.Warn().Err(err).Str("brokerAddr", addr).Msg("undecodable message in pop answer")
			break
		}
		body = rest
		props := message.ParseProperties(rec.Properties)
		key := message.PopRetryMark(rec.Topic) + "@" + strconv.Itoa(int(rec.QueueID))
		ck, ok := start[key]
		if !ok {
			if ck, ok = firstOffset[key]; !ok {
				ck = rec.QueueOffset
				firstOffset[key] = ck
			}
		}
		handle := props[message.PropPopCK]
		if handle == "" {
			handle = string(message.AppendExtraInfo(nil, ck, rh.PopTime, rh.InvisibleTime, rh.ReviveQid, rec.Topic, req.BrokerName, rec.QueueID, rec.QueueOffset))
		}
		handle += " " + strconv.FormatInt(rec.PhysicalOffset, 10)
		if req.Order && orderCount != nil {
			n, ok := orderCount[message.PopRetryMark(rec.Topic)+"@qo"+strconv.Itoa(int(rec.QueueID))+"%"+strconv.FormatInt(rec.QueueOffset, 10)]
			if !ok {
				n = orderCount[key]
			}
			if n > 0 {
				rec.ReconsumeTimes = int32(n)
			}
		}
		if _, ok := props[message.PropFirstPopTime]; !ok {
			props[message.PropFirstPopTime] = strconv.FormatInt(rh.PopTime, 10)
		}
		rec.Topic = req.Topic // the client sees the topic, not the retry topic
		if maxAttempts <= rec.ReconsumeTimes {
			if hd, err := parseReceiptHandle(handle); err == nil {
				if err := s.toDLQ(ctx, hd, props[message.PropUniqClientMessageID], req.ConsumerGroup, req.Topic, ""); err != nil {
					s.sampled.Warn().Err(err).Str("group", req.ConsumerGroup).Msg("forward to DLQ after max attempts")
				}
			}
			continue
		}
		out = append(out, messageOf(&rec, props, handle))
	}
	return out
}

// maxReceiveBatch is the broker's POP_MESSAGE bound on maxMsgNums
// (ProxyUtils.MAX_MSG_NUMS_FOR_POP_REQUEST).
const maxReceiveBatch = 32

// receiveBatch is the pop's maxMsgNums for a batch_size: Apache's
// ConsumerProcessor lowers a batch past 32 to 32 (with a warning); a batch
// below 1, which Apache hands to the broker to fail or to poll for
// nothing, is BAD_REQUEST here.
func receiveBatch(n int32) (int32, error) {
	if n <= 0 {
		return 0, refuse(v2.Code_BAD_REQUEST, "batch size must be positive")
	}
	return min(n, maxReceiveBatch), nil
}

// durationMillis is protobuf-java's Durations.toMillis as Apache's proxy
// calls it: an unset duration is 0; one outside protobuf's range (±10,000
// years, nanos of the seconds' sign) fails with IllegalArgumentException,
// which Apache answers INTERNAL_SERVER_ERROR.
func durationMillis(d *durationpb.Duration) (int64, error) {
	if d == nil {
		return 0, nil
	}
	if err := d.CheckValid(); err != nil {
		return 0, refuse(v2.Code_INTERNAL_SERVER_ERROR, "Duration is not valid. "+err.Error())
	}
	return d.AsDuration().Milliseconds(), nil
}

func validateInvisible(ms, minMs int64) error {
	if ms < minMs {
		return refuse(v2.Code_ILLEGAL_INVISIBLE_TIME, "the invisibleTime is too small. min is "+strconv.FormatInt(minMs, 10))
	}
	if ms > maxInvisibleMillis {
		return refuse(v2.Code_ILLEGAL_INVISIBLE_TIME, "the invisibleTime is too large. max is "+strconv.Itoa(maxInvisibleMillis))
	}
	return nil
}

// handleBroker is the address of the broker a receipt handle names.
func (s *Server) handleBroker(ctx context.Context, h receiptHandle, topic string) (string, error) {
	r, err := s.cluster.serving(ctx, topic)
	if err != nil {
		return "", err
	}
	if a := r.master(h.brokerName); a != "" {
		return a, nil
	}
	return "", refuse(v2.Code_INVALID_RECEIPT_HANDLE, "broker "+h.brokerName+" of the receipt handle is not in the route")
}

// AckMessage acknowledges each entry with ACK_MESSAGE.
func (s *Server) AckMessage(ctx context.Context, req *v2.AckMessageRequest) (*v2.AckMessageResponse, error) {
	if err := validateTopic(req.GetTopic()); err != nil {
		return &v2.AckMessageResponse{Status: statusOf(err)}, nil
	}
	if err := validateGroup(req.GetGroup()); err != nil {
		return &v2.AckMessageResponse{Status: statusOf(err)}, nil
	}
	if len(req.GetEntries()) == 0 {
		return &v2.AckMessageResponse{Status: statusOf(refuse(v2.Code_BAD_REQUEST, "no entries"))}, nil
	}
	entries := make([]*v2.AckMessageResultEntry, len(req.GetEntries()))
	codes := map[v2.Code]bool{}
	for i, e := range req.GetEntries() {
		st := statusOf(s.ack(ctx, e.GetReceiptHandle(), req.GetGroup().GetName(), req.GetTopic().GetName(), e.GetLiteTopic()))
		entries[i] = &v2.AckMessageResultEntry{MessageId: e.GetMessageId(), ReceiptHandle: e.GetReceiptHandle(), Status: st}
		codes[st.GetCode()] = true
	}
	resp := &v2.AckMessageResponse{Entries: entries}
	if len(codes) > 1 {
		resp.Status = &v2.Status{Code: v2.Code_MULTIPLE_RESULTS, Message: v2.Code_MULTIPLE_RESULTS.String()}
	} else {
		resp.Status = entries[0].GetStatus()
	}
	return resp, nil
}

func (s *Server) ack(ctx context.Context, handle, group, topic, lite string) error {
	h, err := s.latestHandle(ctx, handle, group)
	if err != nil {
		return err
	}
	if h.expired(time.Now()) {
		return errExpiredHandle
	}
	return s.ackHandle(ctx, h, group, topic, lite)
}

// ackHandle sends ACK_MESSAGE for a parsed handle; lite, when not "", is
// the lite topic of a lite consumer's message (the header's liteTopic).
func (s *Server) ackHandle(ctx context.Context, h receiptHandle, group, topic, lite string) error {
	addr, err := s.handleBroker(ctx, h, topic)
	if err != nil {
		return err
	}
	r := remoting.NewRequest(remoting.AckMessage, nil, nil)
	(&remoting.AckMessageRequestHeader{ConsumerGroup: group, Topic: h.realTopic(topic, group), QueueID: h.queueID,
		ExtraInfo: h.raw, Offset: h.offset, BrokerName: h.brokerName}).Encode(r)
	if lite != "" {
		r.Set("liteTopic", lite)
	}
	resp, err := s.cluster.invoke(ctx, addr, r)
	if err != nil {
		return err
	}
	if resp.Code != remoting.Success {
		return brokerRefusal(resp)
	}
	return nil
}

// latestHandle parses the handle a client sends, or, when the proxy keeps
// it for renewal, takes it out and returns its latest form (Apache's
// removeReceiptHandle before an ack, a change or a forward to the DLQ).
func (s *Server) latestHandle(ctx context.Context, raw, group string) (receiptHandle, error) {
	if h, ok := s.renew.take(renewKey{client: metaOf(ctx).clientID, group: group}, raw); ok {
		return h, nil
	}
	return parseReceiptHandle(raw)
}

// ChangeInvisibleDuration sets a new invisible time and answers the new
// receipt handle.
func (s *Server) ChangeInvisibleDuration(ctx context.Context, req *v2.ChangeInvisibleDurationRequest) (*v2.ChangeInvisibleDurationResponse, error) {
	fail := func(err error) (*v2.ChangeInvisibleDurationResponse, error) {
		return &v2.ChangeInvisibleDurationResponse{Status: statusOf(err)}, nil
	}
	if err := validateTopic(req.GetTopic()); err != nil {
		return fail(err)
	}
	if err := validateGroup(req.GetGroup()); err != nil {
		return fail(err)
	}
	ms, err := durationMillis(req.GetInvisibleDuration())
	if err != nil {
		return fail(err)
	}
	if err := validateInvisible(ms, 0); err != nil {
		return fail(err)
	}
	h, err := s.latestHandle(ctx, req.GetReceiptHandle(), req.GetGroup().GetName())
	if err != nil {
		return fail(err)
	}
	if h.expired(time.Now()) {
		return fail(errExpiredHandle)
	}
	nh, err := s.changeInvisible(ctx, h, req.GetGroup().GetName(), req.GetTopic().GetName(), ms, req.GetLiteTopic(), req.GetSuspend())
	if err != nil {
		return fail(err)
	}
	return &v2.ChangeInvisibleDurationResponse{Status: okStatus(), ReceiptHandle: nh}, nil
}

// changeInvisible sends CHANGE_MESSAGE_INVISIBLETIME and builds the new
// handle as MQClientAPIImpl and ConsumerProcessor do. lite and suspend are
// the header's liteTopic and suspend (a lite message: the broker moves its
// lite topic's batch; suspend does not count the redelivery).
func (s *Server) changeInvisible(ctx context.Context, h receiptHandle, group, topic string, ms int64, lite string, suspend bool) (string, error) {
	addr, err := s.handleBroker(ctx, h, topic)
	if err != nil {
		return "", err
	}
	rt := h.realTopic(topic, group)
	r := remoting.NewRequest(remoting.ChangeMessageInvisibleTime, nil, nil)
	(&remoting.ChangeInvisibleTimeRequestHeader{ConsumerGroup: group, Topic: rt, QueueID: h.queueID,
		ExtraInfo: h.raw, Offset: h.offset, InvisibleTime: ms, BrokerName: h.brokerName}).Encode(r)
	if lite != "" {
		r.Set("liteTopic", lite)
	}
	r.Set("suspend", strconv.FormatBool(suspend))
	resp, err := s.cluster.invoke(ctx, addr, r)
	if err != nil {
		return "", err
	}
	if resp.Code != remoting.Success {
		return "", brokerRefusal(resp)
	}
	var rh remoting.ChangeInvisibleTimeResponseHeader
	if err := rh.Decode(resp); err != nil {
		return "", err
	}
	nh := string(message.AppendExtraInfo(nil, h.offset, rh.PopTime, rh.InvisibleTime, rh.ReviveQid, rt, h.brokerName, h.queueID, h.offset))
	return nh + " " + strconv.FormatInt(h.commitLogOffset, 10), nil
}

// ForwardMessageToDeadLetterQueue sends the message to the group's DLQ
// (CONSUMER_SEND_MSG_BACK, delayLevel -1) and acknowledges it.
func (s *Server) ForwardMessageToDeadLetterQueue(ctx context.Context, req *v2.ForwardMessageToDeadLetterQueueRequest) (*v2.ForwardMessageToDeadLetterQueueResponse, error) {
	if err := validateTopic(req.GetTopic()); err != nil {
		return &v2.ForwardMessageToDeadLetterQueueResponse{Status: statusOf(err)}, nil
	}
	if err := validateGroup(req.GetGroup()); err != nil {
		return &v2.ForwardMessageToDeadLetterQueueResponse{Status: statusOf(err)}, nil
	}
	h, err := s.latestHandle(ctx, req.GetReceiptHandle(), req.GetGroup().GetName())
	if err == nil {
		err = s.toDLQ(ctx, h, req.GetMessageId(), req.GetGroup().GetName(), req.GetTopic().GetName(), req.GetLiteTopic())
	}
	return &v2.ForwardMessageToDeadLetterQueueResponse{Status: statusOf(err)}, nil
}

func (s *Server) toDLQ(ctx context.Context, h receiptHandle, msgID, group, topic, lite string) error {
	if h.commitLogOffset < 0 {
		return refuse(v2.Code_INVALID_RECEIPT_HANDLE, "commit log offset is empty")
	}
	addr, err := s.handleBroker(ctx, h, topic)
	if err != nil {
		return err
	}
	r := remoting.NewRequest(remoting.ConsumerSendMsgBack, nil, nil)
	r.SetInt64("offset", h.commitLogOffset)
	r.Set("group", group)
	r.SetInt64("delayLevel", -1)
	r.Set("originMsgId", msgID)
	r.Set("originTopic", h.realTopic(topic, group))
	r.Set("unitMode", "false")
	r.SetInt64("maxReconsumeTimes", 0)
	r.Set("bname", h.brokerName)
	resp, err := s.cluster.invoke(ctx, addr, r)
	if err != nil {
		return err
	}
	if resp.Code != remoting.Success {
		return brokerRefusal(resp)
	}
	// The answer is the send-back's, as Apache's ProducerProcessor: the ack
	// after it is best effort (a client retrying a forward whose ack the
	// broker refuses would fill the DLQ with copies).
	if err := s.ackHandle(ctx, h, group, topic, lite); err != nil {
		s.sampled.Warn().Err(err).Str("group", group).Str("topic", topic).Msg("ack after forward to DLQ")
	}
	return nil
}
