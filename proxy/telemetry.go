package proxy

import (
	"context"
	"errors"
	"io"
	"strconv"
	"time"

	v2 "github.com/rocketgo/rocketgo/apis/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Telemetry is the client's bidirectional stream: the client sends its
// settings (answered with the settings merged with the proxy's, as Apache's
// GrpcClientSettingsManager does), thread stack traces and verify-message
// results; the proxy sends settings and RecoverOrphanedTransactionCommand
// when a broker asks to check a transaction.
func (s *Server) Telemetry(stream v2.MessagingService_TelemetryServer) error {
	meta := metaOf(stream.Context())
	if meta.clientID == "" {
		return status.Error(codes.InvalidArgument, "clientID is required")
	}
	c := s.clients.get(meta.clientID, time.Now())
	if c == nil {
		return status.Error(codes.ResourceExhausted, "too many clients")
	}
	// This goroutine is the stream's only writer: what others send the
	// client (settings answers, transaction checks) goes through out.
	out := make(chan *v2.TelemetryCommand, maxTelemetryQueue)
	defer func() {
		c.mu.Lock()
		if c.stream == stream {
			c.stream, c.out = nil, nil
		}
		c.mu.Unlock()
	}()
	cmds, recvErr := receiveCommands(stream)
	limit := newTokenBucket(float64(s.cfg.GrpcTelemetryCommandsPerSecond), time.Now())
	for {
		var cmd *v2.TelemetryCommand
		select {
		case <-s.quit:
			return status.Error(codes.Unavailable, "proxy shutting down")
		case err := <-recvErr:
			if errors.Is(err, io.EOF) {
				return nil
			}
			if streamCancelled(err) {
				s.offlineLiteStream(c, stream)
			}
			return err // the client went away
		case o := <-out:
			if err := stream.Send(o); err != nil {
				return err
			}
			continue
		case cmd = <-cmds:
		}
		if !limit.take(time.Now()) {
			// Apache answers a call its executor rejects with
			// TOO_MANY_REQUESTS "flow limit"; the stream stays.
			s.sampled.Warn().Str("clientId", c.id).Str("remote", meta.remote).Msg("telemetry command refused: flow limit")
			if err := stream.Send(&v2.TelemetryCommand{Status: &v2.Status{Code: v2.Code_TOO_MANY_REQUESTS, Message: "flow limit"}}); err != nil {
				return err
			}
			continue
		}
		if err := s.telemetryCommand(c, stream, out, cmd); err != nil {
			return err
		}
	}
}

// receiveCommands runs the stream's Recv in a goroutine of its own, so
// that Shutdown can end the stream (returning from the handler cancels
// the stream, which ends the blocked Recv).
func receiveCommands(stream v2.MessagingService_TelemetryServer) (<-chan *v2.TelemetryCommand, <-chan error) {
	cmds := make(chan *v2.TelemetryCommand)
	recvErr := make(chan error, 1)
	go func() {
		for {
			cmd, err := stream.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			select {
			case cmds <- cmd:
			case <-stream.Context().Done():
				recvErr <- stream.Context().Err()
				return
			}
		}
	}()
	return cmds, recvErr
}

// telemetryCommand serves one command of c's stream; an error ends the
// stream.
func (s *Server) telemetryCommand(c *client, stream v2.MessagingService_TelemetryServer, out chan *v2.TelemetryCommand,
	cmd *v2.TelemetryCommand) error {
	if st := s.refusedBy(stream.Context(), cmd); st != nil {
		// Apache answers the command with the status and keeps the stream.
		return stream.Send(&v2.TelemetryCommand{Status: st})
	}
	switch cmd.GetCommand().(type) {
	case *v2.TelemetryCommand_Settings:
		return s.clientSettings(c, stream, out, cmd.GetSettings())
	case *v2.TelemetryCommand_ThreadStackTrace:
		s.sampled.Info().Str("clientId", c.id).Str("nonce", clip(cmd.GetThreadStackTrace().GetNonce())).
			Str("threadStackTrace", clip(cmd.GetThreadStackTrace().GetThreadStackTrace())).Msg("client thread stack trace")
	case *v2.TelemetryCommand_VerifyMessageResult:
		s.sampled.Info().Str("clientId", c.id).Str("nonce", clip(cmd.GetVerifyMessageResult().GetNonce())).
			Str("code", cmd.GetStatus().GetCode().String()).Msg("client verify message result")
	default:
		// Apache ignores other commands on the stream.
	}
	return nil
}

// maxLoggedText bounds what a client's text puts in one log line.
const maxLoggedText = 4096

func clip(s string) string {
	if len(s) <= maxLoggedText {
		return s
	}
	return s[:maxLoggedText] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// maxSettingsTopics bounds the topics one publishing settings command may
// list: each is looked up (route, message types) when the settings arrive.
const maxSettingsTopics = 1024

// clientSettings records the client's settings, answers with the merged
// ones and makes this stream (and its queue out) the client's.
func (s *Server) clientSettings(c *client, stream v2.MessagingService_TelemetryServer, out chan *v2.TelemetryCommand, in *v2.Settings) error {
	switch {
	case in.GetPublishing() != nil:
		if n := len(in.GetPublishing().GetTopics()); n > maxSettingsTopics {
			return status.Error(codes.InvalidArgument, "process client telemetryCommand failed. publishing lists "+
				strconv.Itoa(n)+" topics, max is "+strconv.Itoa(maxSettingsTopics))
		}
		for _, t := range in.GetPublishing().GetTopics() {
			if err := validateTopic(t); err != nil {
				return status.Error(codes.InvalidArgument, "process client telemetryCommand failed. "+err.Error())
			}
		}
	case in.GetSubscription() != nil:
		if err := validateGroup(in.GetSubscription().GetGroup()); err != nil {
			return status.Error(codes.InvalidArgument, "process client telemetryCommand failed. "+err.Error())
		}
		if err := s.checkLiteMode(stream.Context(), in, in.GetSubscription().GetGroup().GetName()); err != nil {
			return telemetryError(err)
		}
	default:
		return status.Error(codes.InvalidArgument, "there is no publishing or subscription data in settings")
	}
	if pub := in.GetPublishing(); pub != nil {
		s.registerTxProducer(stream.Context(), pub.GetTopics())
	}
	merged := s.mergeSettings(stream, in)
	c.mu.Lock()
	c.settings = merged
	c.stream, c.out = stream, out
	c.mu.Unlock()
	// Written here, not queued: this goroutine drains out.
	return stream.Send(&v2.TelemetryCommand{Status: okStatus(), Command: &v2.TelemetryCommand_Settings{Settings: merged}})
}

// tokenBucket admits rate events a second with a burst of ten seconds'
// worth; used by one goroutine.
type tokenBucket struct {
	rate, burst, tokens float64
	last                time.Time
}

func newTokenBucket(rate float64, now time.Time) *tokenBucket {
	return &tokenBucket{rate: rate, burst: 10 * rate, tokens: 10 * rate, last: now}
}

func (b *tokenBucket) take(now time.Time) bool {
	b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// mergeSettings is Apache's mergeProducerData / mergeSubscriptionData:
// producers get the proxy's backoff and publishing limits; consumers the
// defaults of createDefaultConsumerSettingsBuilder, their group's retry
// policy and FIFO flag where the broker has the group.
func (s *Server) mergeSettings(stream v2.MessagingService_TelemetryServer, in *v2.Settings) *v2.Settings {
	out := proto.Clone(in).(*v2.Settings)
	if pub := out.GetPublishing(); pub != nil {
		out.BackoffPolicy = &v2.RetryPolicy{
			MaxAttempts: int32(s.cfg.GrpcClientProducerMaxAttempts),
			Strategy: &v2.RetryPolicy_ExponentialBackoff{ExponentialBackoff: &v2.ExponentialBackoff{
				Initial:    durationpb.New(time.Duration(s.cfg.GrpcClientProducerBackoffInitialMillis) * time.Millisecond),
				Max:        durationpb.New(time.Duration(s.cfg.GrpcClientProducerBackoffMaxMillis) * time.Millisecond),
				Multiplier: s.cfg.GrpcClientProducerBackoffMultiplier,
			}},
		}
		pub.ValidateMessageType = s.cfg.EnableTopicMessageTypeCheck
		pub.MaxBodySize = int32(s.cfg.MaxMessageSize)
		return out
	}
	sub := out.GetSubscription()
	if sub.ReceiveBatchSize == nil {
		n := int32(s.cfg.GrpcClientConsumerLongPollingBatchSize)
		sub.ReceiveBatchSize = &n
	}
	if sub.LongPollingTimeout == nil {
		sub.LongPollingTimeout = durationpb.New(time.Duration(s.cfg.GrpcClientConsumerMaxLongPollingTimeoutMillis) * time.Millisecond)
	}
	if sub.Fifo == nil {
		f := false
		sub.Fifo = &f
	}
	// The SDKs' lite consumers subscribe nothing until they have both.
	quota, maxLite := int32(defaultLiteClientQuota), int32(s.cfg.MaxLiteTopicSize)
	sub.LiteSubscriptionQuota, sub.MaxLiteTopicSize = &quota, &maxLite
	g, err := s.groupConfig(stream.Context(), sub.GetGroup().GetName())
	if err != nil || g == nil {
		if err != nil {
			s.sampled.Warn().Err(err).Str("group", sub.GetGroup().GetName()).Msg("subscription group config for settings")
		}
		return out
	}
	fifo := g.ConsumeMessageOrderly
	sub.Fifo = &fifo
	quota = g.liteQuota()
	out.BackoffPolicy = g.retryPolicy()
	return out
}

// registerTxProducer is Apache's registerProducer for TRANSACTION topics
// (addTransactionSubscription): the group (the topic) is heartbeated to the
// topic's brokers from the producer's first settings on, so that half
// messages sent before a proxy restart are checked through this proxy too.
func (s *Server) registerTxProducer(ctx context.Context, topics []*v2.Resource) {
	for _, t := range topics {
		r, err := s.cluster.serving(ctx, t.GetName())
		if err != nil {
			continue // no route yet: registered with its first half message
		}
		for _, q := range r.Queues {
			addr := r.master(q.BrokerName)
			if addr == "" {
				continue
			}
			for _, mt := range s.topicMessageTypes(ctx, t.GetName(), addr) {
				if mt == v2.MessageType_TRANSACTION {
					s.noteTxGroup(addr, t.GetName())
				}
			}
		}
	}
}

// telemetryError is processTelemetryException: a refusal with a client
// error code (BAD_REQUEST up to INTERNAL_ERROR) ends the stream with
// INVALID_ARGUMENT, anything else with INTERNAL.
func telemetryError(err error) error {
	msg := "process client telemetryCommand failed. "
	var r *refusal
	if errors.As(err, &r) {
		msg += r.message
		if r.code >= v2.Code_BAD_REQUEST && r.code < v2.Code_INTERNAL_ERROR {
			return status.Error(codes.InvalidArgument, msg)
		}
		return status.Error(codes.Internal, msg)
	}
	return status.Error(codes.Internal, msg+err.Error())
}

// offlineLiteStream removes a lite consumer's subscriptions when its
// telemetry stream is cancelled, unless the client has opened another
// stream since (it is still there: removing would drop what it consumes
// until its next refresh).
func (s *Server) offlineLiteStream(c *client, stream v2.MessagingService_TelemetryServer) {
	c.mu.Lock()
	current, st := c.stream == stream, c.settings
	c.mu.Unlock()
	if current && isLiteClient(st) {
		s.offlineLite(c.id, st)
	}
}
