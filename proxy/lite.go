package proxy

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	v2 "github.com/rocketgo/rocketgo/apis/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// Lite topics (Apache 5.5, RIP-83) through the proxy. A lite consumer's
// group is bound to one LITE topic (lite.bind.topic); the client tells the
// proxy which lite topics it wants (SyncLiteSubscription), the proxy pushes
// that to every broker of the topic (LITE_SUBSCRIPTION_CTL) and pops with
// POP_LITE_MESSAGE, keyed by the client id; the broker answers messages of
// the lite topics' queues (%LMQ%$topic$lite), each acknowledged with its
// lite topic. A broker that takes a lite topic from a client (exclusive
// groups) tells it through the proxy (NOTIFY_UNSUBSCRIBE_LITE →
// NotifyUnsubscribeLiteCommand on the client's telemetry stream). The
// broker's side is in docs/lite.md; the rules here are Apache 5.5's proxy
// (ClientActivity, ClientProcessor, ReceiveMessageActivity,
// LiteSubscriptionService) unless said otherwise.

// liteSubscriptionQuotaBuffer is what a request's lite topic set may
// exceed the group's per-client quota by (ClientProcessor's quotaBuffer):
// the SDKs check the quota themselves, the proxy only stops the absurd.
const liteSubscriptionQuotaBuffer = 300

// liteCtlTimeout bounds a LITE_SUBSCRIPTION_CTL fan-out (Apache: 2 s).
const liteCtlTimeout = 2 * time.Second

// isLiteClient reports a lite consumer's settings. LITE_SIMPLE_CONSUMER is
// rocketgo's extension (Apache 5.5.0 refuses it; the Python SDK 5.1.2 has
// one): it consumes exactly as a lite push consumer does.
func isLiteClient(st *v2.Settings) bool {
	t := st.GetClientType()
	return t == v2.ClientType_LITE_PUSH_CONSUMER || t == v2.ClientType_LITE_SIMPLE_CONSUMER
}

// clientSettingsOf is the settings the client with id last sent, or nil.
func (s *Server) clientSettingsOf(id string) *v2.Settings {
	c := s.clients.lookup(id)
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.settings
}

// validateLiteTopic is GrpcValidator.validateLiteTopic.
func (s *Server) validateLiteTopic(lite string) error {
	if p := message.LiteTopicProblem(lite, s.cfg.MaxLiteTopicSize); p != "" {
		return refuse(v2.Code_ILLEGAL_LITE_TOPIC, p)
	}
	return nil
}

// liteGroup is the group's config, ILLEGAL_CONSUMER_GROUP "group not found"
// when no broker has it (ClientProcessor.getGroupOrException).
func (s *Server) liteGroup(ctx context.Context, group string) (*groupConfig, error) {
	g, err := s.groupConfig(ctx, group)
	if err != nil {
		return nil, err
	}
	if g == nil {
		return nil, refuse(v2.Code_ILLEGAL_CONSUMER_GROUP, "group not found: "+group)
	}
	return g, nil
}

// javaString is how String.format prints a string that may be null.
func javaString(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

// checkLiteBindTopic is ClientProcessor.validateLiteBindTopic.
func checkLiteBindTopic(g *groupConfig, group, topic string) error {
	if want := g.liteBindTopic(); want != topic {
		return refuse(v2.Code_ILLEGAL_TOPIC, "lite group "+group+" is expected to bind topic "+javaString(want)+
			", but actual is "+javaString(topic))
	}
	return nil
}

// checkLiteMode is ClientProcessor.validateLiteMode and validateLiteSubTopic
// for a consumer registering (settings, heartbeat): a lite client needs a
// lite group bound to the topic it subscribes; a lite group takes only lite
// clients. Apache 5.5 refuses any consumer whose group the brokers do not
// have; rocketgo refuses only lite clients then, so that other consumers
// keep working with groups the broker creates on their first pop.
func (s *Server) checkLiteMode(ctx context.Context, st *v2.Settings, group string) error {
	lite := isLiteClient(st)
	g, err := s.groupConfig(ctx, group)
	if err != nil {
		if lite {
			return err
		}
		return nil // a regular consumer is not held up by a metadata failure
	}
	if g == nil {
		if lite {
			return refuse(v2.Code_ILLEGAL_CONSUMER_GROUP, "group not found: "+group)
		}
		return nil
	}
	bind := g.liteBindTopic()
	switch {
	case bind == "" && lite:
		return refuse(v2.Code_ILLEGAL_CONSUMER_GROUP, "regular group cannot use LITE mode: "+group)
	case bind != "" && !lite:
		return refuse(v2.Code_ILLEGAL_CONSUMER_GROUP, "lite group must use LITE mode: "+group)
	}
	if subs := st.GetSubscription().GetSubscriptions(); lite && len(subs) > 0 {
		return checkLiteBindTopic(g, group, subs[0].GetTopic().GetName())
	}
	return nil
}

// liteAction is LiteSubscriptionAction's name on the wire (Apache's enum).
func liteAction(a v2.LiteSubscriptionAction) (string, error) {
	switch a {
	case v2.LiteSubscriptionAction_PARTIAL_ADD, v2.LiteSubscriptionAction_PARTIAL_REMOVE,
		v2.LiteSubscriptionAction_COMPLETE_ADD, v2.LiteSubscriptionAction_COMPLETE_REMOVE:
		return a.String(), nil
	}
	// Apache's toLiteAction throws IllegalArgumentException: INTERNAL.
	return "", refuse(v2.Code_INTERNAL_SERVER_ERROR, "unknown LiteSubscriptionAction: UNRECOGNIZED")
}

// liteSub is one LiteSubscriptionDTO.
type liteSub struct {
	action   string
	clientID string
	group    string
	topic    string
	lites    []string // deduplicated, in request order
	version  int64
	offset   *v2.OffsetOption // PARTIAL_ADD only
}

// SyncLiteSubscription is ClientActivity.syncLiteSubscription: the checks
// in Apache's order, then LITE_SUBSCRIPTION_CTL to every broker of the
// topic, all of which must accept it.
func (s *Server) SyncLiteSubscription(ctx context.Context, req *v2.SyncLiteSubscriptionRequest) (*v2.SyncLiteSubscriptionResponse, error) {
	err := s.syncLiteSubscription(ctx, req)
	if err != nil {
		return &v2.SyncLiteSubscriptionResponse{Status: statusOf(err)}, nil
	}
	// Apache's buildStatus(OK, null): the code's name as the message.
	return &v2.SyncLiteSubscriptionResponse{Status: okStatus()}, nil
}

func (s *Server) syncLiteSubscription(ctx context.Context, req *v2.SyncLiteSubscriptionRequest) error {
	if err := validateTopic(req.GetTopic()); err != nil {
		return err
	}
	if err := validateGroup(req.GetGroup()); err != nil {
		return err
	}
	action, err := liteAction(req.GetAction())
	if err != nil {
		return err
	}
	raw := req.GetLiteTopicSet()
	// Names go to the brokers and into their registries: an add is checked
	// name by name (Apache checks PARTIAL_ADD only; rocketgo also
	// COMPLETE_ADD, so that what PARTIAL_ADD refuses cannot come in by the
	// periodic refresh).
	if action == "PARTIAL_ADD" || action == "COMPLETE_ADD" {
		for _, l := range raw {
			if err := s.validateLiteTopic(l); err != nil {
				return err
			}
		}
	}
	sub := liteSub{action: action, clientID: metaOf(ctx).clientID, group: req.GetGroup().GetName(),
		topic: req.GetTopic().GetName(), version: req.GetVersion()}
	if action == "PARTIAL_ADD" {
		sub.offset = req.GetOffsetOption()
	}
	g, err := s.liteGroup(ctx, sub.group)
	if err != nil {
		return err
	}
	if err := checkLiteBindTopic(g, sub.group, sub.topic); err != nil {
		return err
	}
	sub.lites = dedupe(raw) // a set, as Apache's ImmutableSet
	if quota := int64(g.liteQuota()); len(sub.lites) > 0 && int64(len(sub.lites)) > quota+liteSubscriptionQuotaBuffer {
		return refuse(v2.Code_LITE_SUBSCRIPTION_QUOTA_EXCEEDED, "lite subscription quota exceeded: "+strconv.FormatInt(quota, 10))
	}
	if action == "PARTIAL_ADD" && !s.liteRate.take(time.Now()) {
		s.sampled.Warn().Str("topic", sub.topic).Str("group", sub.group).Str("clientId", sub.clientID).
			Msg("syncLiteSubscription refused: rate limit")
		return refuse(v2.Code_TOO_MANY_REQUESTS, "Too many syncLiteSubscription requests, topic="+sub.topic+
			", group="+sub.group+", clientId="+sub.clientID)
	}
	return s.sendLiteCtl(ctx, sub)
}

func dedupe(in []string) []string {
	seen := make(map[string]struct{}, len(in))
	out := make([]string, 0, len(in))
	for _, l := range in {
		if _, ok := seen[l]; !ok {
			seen[l] = struct{}{}
			out = append(out, l)
		}
	}
	return out
}

// sendLiteCtl sends sub to the master of every broker with readable queues
// of its topic (LiteSubscriptionService: the read selector's broker acting
// queues), at once, within liteCtlTimeout; the first refusal is the answer.
// In local mode too the whole route is used: the other brokers' registries
// must learn the subscription as well.
func (s *Server) sendLiteCtl(ctx context.Context, sub liteSub) error {
	r, err := s.cluster.route(ctx, sub.topic)
	if err != nil {
		return err
	}
	var addrs []string
	seen := map[string]bool{}
	for _, q := range r.Queues {
		a := r.master(q.BrokerName)
		if q.Perm&permRead == 0 || a == "" || seen[a] {
			continue
		}
		seen[a] = true
		addrs = append(addrs, a)
	}
	body := liteCtlBody(nil, sub)
	ctx, cancel := callContext(ctx, liteCtlTimeout)
	defer cancel()
	errs := make([]error, len(addrs))
	var wg sync.WaitGroup
	for i, a := range addrs {
		wg.Add(1)
		go func() { // one per broker of the topic, ended by the timeout
			defer wg.Done()
			resp, err := s.cluster.cl.Invoke(ctx, a, remoting.NewRequest(remoting.LiteSubscriptionCtl, nil, body))
			switch {
			case err != nil:
				errs[i] = err
			case resp.Code != remoting.Success:
				errs[i] = brokerRefusal(resp)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// liteCtlBody appends LiteSubscriptionCtlRequestBody's JSON with one
// LiteSubscriptionDTO:
//
//	{"subscriptionSet":[{"action":"PARTIAL_ADD","clientId":"c","group":"g",
//	  "liteTopicSet":["a"],"offsetOption":{"type":"POLICY","value":1},
//	  "topic":"t","version":0}]}
func liteCtlBody(b []byte, sub liteSub) []byte {
	b = append(b, `{"subscriptionSet":[{"action":"`...)
	b = append(b, sub.action...)
	b = append(b, `","clientId":`...)
	b = remoting.AppendJSONString(b, sub.clientID)
	b = append(b, `,"group":`...)
	b = remoting.AppendJSONString(b, sub.group)
	b = append(b, `,"liteTopicSet":[`...)
	for i, l := range sub.lites {
		if i > 0 {
			b = append(b, ',')
		}
		b = remoting.AppendJSONString(b, l)
	}
	b = append(b, ']')
	if typ, v, ok := offsetOption(sub.offset); ok {
		b = append(b, `,"offsetOption":{"type":"`...)
		b = append(b, typ...)
		b = append(b, `","value":`...)
		b = strconv.AppendInt(b, v, 10)
		b = append(b, '}')
	}
	b = append(b, `,"topic":`...)
	b = remoting.AppendJSONString(b, sub.topic)
	b = append(b, `,"version":`...)
	b = strconv.AppendInt(b, sub.version, 10)
	return append(b, "}]}"...)
}

// offsetOption is ClientActivity.toOffsetOption: the type's name and value.
func offsetOption(o *v2.OffsetOption) (string, int64, bool) {
	switch t := o.GetOffsetType().(type) {
	case *v2.OffsetOption_Policy_:
		switch t.Policy {
		case v2.OffsetOption_MIN:
			return "POLICY", 1, true
		case v2.OffsetOption_MAX:
			return "POLICY", 2, true
		}
		return "POLICY", 0, true
	case *v2.OffsetOption_Offset:
		return "OFFSET", t.Offset, true
	case *v2.OffsetOption_TailN:
		return "TAIL_N", t.TailN, true
	case *v2.OffsetOption_Timestamp:
		return "TIMESTAMP", t.Timestamp, true
	}
	return "", 0, false
}

// offlineLite is GrpcClientSettingsManager.offlineClientLiteSubscription:
// when a lite consumer terminates or its telemetry stream is cancelled,
// the brokers drop all its lite subscriptions (COMPLETE_REMOVE) at once
// instead of after their 3-minute expiry.
func (s *Server) offlineLite(clientID string, st *v2.Settings) {
	if !isLiteClient(st) || len(st.GetSubscription().GetSubscriptions()) == 0 {
		return
	}
	sub := liteSub{action: "COMPLETE_REMOVE", clientID: clientID, group: st.GetSubscription().GetGroup().GetName(),
		topic: st.GetSubscription().GetSubscriptions()[0].GetTopic().GetName()}
	ctx, cancel := context.WithTimeout(s.base, liteCtlTimeout)
	defer cancel()
	err := func() error {
		g, err := s.liteGroup(ctx, sub.group)
		if err != nil {
			return err
		}
		if err := checkLiteBindTopic(g, sub.group, sub.topic); err != nil {
			return err
		}
		return s.sendLiteCtl(ctx, sub)
	}()
	if err != nil {
		s.sampled.Warn().Err(err).Str("topic", sub.topic).Str("group", sub.group).Str("clientId", clientID).
			Msg("lite subscriptions of an offline client not removed")
		return
	}
	s.log.Debug().Str("topic", sub.topic).Str("group", sub.group).Str("clientId", clientID).Msg("lite subscriptions of an offline client removed")
}

// streamCancelled reports a telemetry stream ended by the client going
// away (Apache's handleGrpcCancel: CANCELLED or UNAVAILABLE), not closed.
func streamCancelled(err error) bool {
	if err == nil || errors.Is(err, io.EOF) {
		return false
	}
	if errors.Is(err, context.Canceled) {
		return true
	}
	c := status.Code(err)
	return c == codes.Canceled || c == codes.Unavailable
}

// notifyUnsubscribeLite relays a broker's NOTIFY_UNSUBSCRIBE_LITE to the
// client's telemetry stream (ProxyClientRemotingProcessor): it runs on a
// connection reader, so it only queues, and a client whose queue is full
// loses it (its next COMPLETE_ADD still names the lite topic; the broker
// evicts it again).
func (s *Server) notifyUnsubscribeLite(addr string, req *remoting.Command) {
	clientID, group, lite := req.Str("clientId"), req.Str("consumerGroup"), req.Str("liteTopic")
	if strings.TrimSpace(clientID) == "" || strings.TrimSpace(group) == "" {
		s.sampled.Warn().Str("remote", addr).Msg("notifyUnsubscribeLite without clientId or consumerGroup")
		return
	}
	c := s.clients.lookup(clientID)
	if c == nil {
		s.sampled.Info().Str("clientId", clientID).Str("group", group).Msg("notifyUnsubscribeLite for an unknown client")
		return
	}
	c.mu.Lock()
	st := c.settings
	c.mu.Unlock()
	if !isLiteClient(st) || st.GetSubscription().GetGroup().GetName() != group {
		s.sampled.Info().Str("clientId", clientID).Str("group", group).Msg("notifyUnsubscribeLite for a client not in the group")
		return
	}
	if !c.send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_NotifyUnsubscribeLiteCommand{
		NotifyUnsubscribeLiteCommand: &v2.NotifyUnsubscribeLiteCommand{LiteTopic: lite}}}) {
		s.sampled.Warn().Str("clientId", clientID).Str("group", group).Msg("notifyUnsubscribeLite: telemetry write failed")
	}
}

// rateLimiter admits rate events a second with a burst of one second's
// worth (Guava's RateLimiter.create, which Apache uses); safe for
// concurrent use.
type rateLimiter struct {
	mu sync.Mutex
	b  tokenBucket
}

func newRateLimiter(rate int, now time.Time) *rateLimiter {
	r := float64(rate)
	return &rateLimiter{b: tokenBucket{rate: r, burst: r, tokens: r, last: now}}
}

func (l *rateLimiter) take(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.take(now)
}

// receiveLite is ReceiveMessageActivity's lite branch: POP_LITE_MESSAGE
// for the client (the broker picks the lite topics from the client's
// subscription), each message's handle naming its lite topic's queue
// offset, then PopMessageResultFilterImpl (tag mismatch: acked; delivered
// maxAttempts times: to the DLQ).
func (s *Server) receiveLite(ctx context.Context, req *v2.ReceiveMessageRequest, st *v2.Settings,
	stream v2.MessagingService_ReceiveMessageServer) error {
	writeStatus := func(st *v2.Status) error {
		return stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Status{Status: st}})
	}
	p, sts := s.popLiteRequest(ctx, req, st)
	if sts != nil {
		return writeStatus(sts)
	}
	preq := remoting.NewRequest(remoting.PopLiteMessage, nil, nil)
	preq.Set("clientId", p.clientID)
	preq.Set("consumerGroup", p.group)
	preq.Set("topic", p.topic)
	preq.SetInt64("maxMsgNum", int64(p.batch))
	preq.SetInt64("invisibleTime", p.invisible)
	preq.SetInt64("pollTime", p.pollMs)
	preq.SetInt64("bornTime", time.Now().UnixMilli())
	if p.attemptID != "" {
		preq.Set("attemptId", p.attemptID)
	}
	pctx, pcancel := callContext(ctx, time.Duration(p.pollMs)*time.Millisecond+s.cluster.timeout)
	resp, err := s.cluster.cl.Invoke(pctx, p.addr, preq)
	pcancel()
	if err != nil {
		return writeStatus(statusOf(err))
	}
	switch resp.Code {
	case remoting.Success:
	case remoting.PollingFull:
		return writeStatus(&v2.Status{Code: v2.Code_TOO_MANY_REQUESTS, Message: "polling full"})
	case remoting.PullNotFound, remoting.PollingTimeout:
		return writeStatus(&v2.Status{Code: v2.Code_MESSAGE_NOT_FOUND, Message: "no new message"})
	default:
		return writeStatus(statusOf(brokerRefusal(resp)))
	}
	popTime, err1 := resp.Int64("popTime")
	invisible, err2 := resp.Int64("invisibleTime")
	reviveQid, err3 := resp.Int32("reviveQid")
	if err := errors.Join(err1, err2, err3); err != nil {
		return writeStatus(statusOf(err))
	}
	msgs := s.poppedLite(ctx, resp.Body, resp.Str("orderCountInfo"), popTime, invisible, reviveQid, &p)
	if len(msgs) == 0 {
		return writeStatus(&v2.Status{Code: v2.Code_MESSAGE_NOT_FOUND, Message: "no match message"})
	}
	rk := renewKey{client: p.clientID, group: p.group}
	if p.autoRenew {
		s.keepForRenewal(rk, p.topic, msgs)
	}
	if err := writeStatus(okStatus()); err != nil {
		return err
	}
	for i, m := range msgs {
		if err := stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Message{Message: m}}); err != nil {
			s.nackUnsent(rk, p.topic, msgs[i:])
			return err
		}
	}
	return nil
}

// popLite is a validated lite receive.
type popLite struct {
	clientID, group, topic string
	brokerName, addr       string
	batch                  int32
	invisible, pollMs      int64
	attemptID              string
	autoRenew              bool
	maxAttempts            int32
	tags                   map[string]bool // nil: every tag
}

// popLiteRequest checks a lite receive in ReceiveMessageActivity's order.
func (s *Server) popLiteRequest(ctx context.Context, req *v2.ReceiveMessageRequest, st *v2.Settings) (popLite, *v2.Status) {
	p := popLite{clientID: metaOf(ctx).clientID, maxAttempts: 17}
	if n := st.GetBackoffPolicy().GetMaxAttempts(); n > 0 {
		p.maxAttempts = n
	}
	var sts *v2.Status
	p.pollMs, sts = s.pollMillis(ctx, req.GetLongPollingTimeout())
	if sts != nil {
		return p, sts
	}
	topic := req.GetMessageQueue().GetTopic()
	if err := validateTopic(topic); err != nil {
		return p, statusOf(err)
	}
	if err := validateGroup(req.GetGroup()); err != nil {
		return p, statusOf(err)
	}
	p.topic, p.group = topic.GetName(), req.GetGroup().GetName()
	invisible, err := durationMillis(req.GetInvisibleDuration())
	if err != nil {
		return p, statusOf(err)
	}
	p.autoRenew = s.cfg.EnableProxyAutoRenew && req.GetAutoRenew()
	if p.autoRenew {
		invisible = s.cfg.DefaultInvisibleTimeMills
	} else if err := validateInvisible(invisible, minInvisibleMillisForRecv); err != nil {
		return p, statusOf(err)
	}
	p.invisible = invisible
	p.tags = tagSet(req.GetFilterExpression())
	if c := s.clients.lookup(p.clientID); c == nil || !c.streaming() {
		return p, &v2.Status{Code: v2.Code_BAD_REQUEST, Message: "The client [" + p.clientID + "] is disconnected."}
	}
	if n := s.renew.count(renewKey{client: p.clientID, group: p.group}); n > s.cfg.MaxLiteRenewNumPerChannel {
		return p, &v2.Status{Code: v2.Code_FORBIDDEN, Message: "The client [" + p.clientID +
			"] has too many unacked messages. Unacked count: " + strconv.Itoa(n)}
	}
	var bst *v2.Status
	p.brokerName, p.addr, bst = s.readableBroker(ctx, p.topic, req.GetMessageQueue().GetBroker().GetName())
	if bst != nil {
		return p, bst
	}
	if p.batch, err = receiveBatch(req.GetBatchSize()); err != nil {
		return p, statusOf(err)
	}
	if req.AttemptId != nil {
		p.attemptID = req.GetAttemptId()
		if len(p.attemptID) > maxAttemptIDLength || hasControl(p.attemptID) {
			return p, &v2.Status{Code: v2.Code_BAD_REQUEST, Message: "attempt id is longer than " +
				strconv.Itoa(maxAttemptIDLength) + " bytes or has control characters"}
		}
	}
	return p, nil
}

// maxAttemptIDLength bounds a receive's attempt_id (rocketgo's bound: the
// SDKs send a UUID; the broker keeps it with the lite topic's batch).
const maxAttemptIDLength = 128

// tagSet is FilterAPI.build's tag set for a TAG expression: nil for "*",
// empty or SQL92 (every message passes the proxy's filter).
func tagSet(fe *v2.FilterExpression) map[string]bool {
	if fe == nil || fe.GetType() == v2.FilterType_SQL {
		return nil
	}
	e := strings.TrimSpace(fe.GetExpression())
	if e == "" || e == "*" {
		return nil
	}
	out := map[string]bool{}
	for _, t := range strings.Split(e, "||") {
		if t = strings.TrimSpace(t); t != "" {
			out[t] = true
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// poppedLite decodes a POP_LITE_MESSAGE answer as
// MQClientAPIImpl.processPopLiteResponse and filters it as
// ConsumerProcessor: each message names one lite topic queue and its offset
// there (INNER_MULTI_DISPATCH, INNER_MULTI_QUEUE_OFFSET); its handle is
// "0 popTime invisibleTime reviveQid 0 broker 0 lmqOffset" plus the
// commit-log offset, its queue offset the lite topic's, its delivery count
// the broker's orderCountInfo entry.
func (s *Server) poppedLite(ctx context.Context, body []byte, orderCountInfo string, popTime, invisible int64,
	reviveQid int32, p *popLite) []*v2.Message {
	var recs []message.Record
	for len(body) > 0 {
		rec, rest, err := message.DecodeRecord(body)
		if err != nil {
			s.sampled.Warn().Err(err).Str("brokerAddr", p.addr).Msg("undecodable message in pop lite answer")
			break
		}
		body = rest
		recs = append(recs, rec)
	}
	counts := liteOrderCounts(orderCountInfo, len(recs))
	var out []*v2.Message
	for i := range recs {
		rec := &recs[i]
		props := message.ParseProperties(rec.Properties)
		queues, offsets := props[message.PropInnerMultiDispatch], props[message.PropInnerMultiQueueOffset]
		lmqOffset, err := strconv.ParseInt(offsets, 10, 64)
		if queues == "" || strings.Contains(queues, ",") || err != nil {
			s.sampled.Warn().Str("brokerAddr", p.addr).Str("queues", clip(queues)).
				Msg("pop lite answer with a message of no single lite topic queue; skipped")
			continue
		}
		handle := string(message.AppendExtraInfo(nil, 0, popTime, invisible, reviveQid, p.topic, p.brokerName, 0, lmqOffset)) +
			" " + strconv.FormatInt(rec.PhysicalOffset, 10)
		if _, ok := props[message.PropFirstPopTime]; !ok {
			props[message.PropFirstPopTime] = strconv.FormatInt(popTime, 10)
		}
		rec.ReconsumeTimes = 0
		if counts != nil {
			rec.ReconsumeTimes = counts[i]
		}
		rec.QueueOffset = lmqOffset
		lite := props[message.PropLiteTopic]
		if p.tags != nil && !p.tags[props[message.PropTags]] {
			if hd, err := parseReceiptHandle(handle); err == nil {
				if err := s.ackHandle(ctx, hd, p.group, p.topic, lite); err != nil {
					s.sampled.Warn().Err(err).Str("group", p.group).Msg("ack of a lite message the filter drops")
				}
			}
			continue
		}
		if p.maxAttempts <= rec.ReconsumeTimes {
			if hd, err := parseReceiptHandle(handle); err == nil {
				if err := s.toDLQ(ctx, hd, props[message.PropUniqClientMessageID], p.group, p.topic, lite); err != nil {
					s.sampled.Warn().Err(err).Str("group", p.group).Msg("forward lite message to DLQ after max attempts")
				}
			}
			continue
		}
		out = append(out, messageOf(rec, props, handle))
	}
	return out
}

// liteOrderCounts is ExtraInfoUtil.parseLiteOrderCountInfo: one delivery
// count per message, ";"-joined; nil unless there is exactly one per
// message. An entry "type queue count" counts its third part.
func liteOrderCounts(info string, n int) []int32 {
	if info == "" {
		return nil
	}
	parts := strings.Split(info, ";")
	if len(parts) != n {
		return nil
	}
	out := make([]int32, n)
	for i, p := range parts {
		if f := strings.Split(p, " "); len(f) == 3 {
			p = f[2]
		} else if len(f) != 1 {
			continue
		}
		if v, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32); err == nil {
			out[i] = int32(v)
		}
	}
	return out
}
