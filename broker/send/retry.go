package send

// Retry and dead-letter queues (Apache AbstractSendMessageProcessor.
// consumerSendMsgBack and SendMessageProcessor.handleRetryAndDLQ).

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

var (
	// ErrLookupFailed: no message at the commit log offset a send-back names.
	ErrLookupFailed = errors.New("send: look message by offset failed")
	// ErrSendBackFailed: the copy a send-back makes was not stored.
	ErrSendBackFailed = errors.New("send: send back failed")
)

// DLQQueueNums is Apache's DLQ_NUMS_PER_GROUP.
const DLQQueueNums = 1

// BackRequest is a CONSUMER_SEND_MSG_BACK request.
type BackRequest struct {
	Group      string
	Offset     int64 // commit log offset of the consumed message
	DelayLevel int32 // 0: 3 + reconsumeTimes; < 0: straight to the DLQ
	// MaxReconsumeTimes overrides the group's retryMaxTimes when HasMax.
	MaxReconsumeTimes int32
	HasMax            bool
	UnitMode          bool
}

// SendBack copies the message at r.Offset into %RETRY%<group> through the
// delay level mechanism, or into %DLQ%<group> once it was reconsumed
// maxReconsumeTimes times or when the level is negative. Refusals are
// Apache's (AbstractSendMessageProcessor.consumerSendMsgBack): *Refusal
// values with its codes and remarks.
func (s *Service) SendBack(r BackRequest) error {
	if cfg := s.d.Config(); cfg.Slave {
		return s.storeRefusal(cfg, ErrSlave)
	}
	gc, ok := s.d.Groups.Get(r.Group)
	if !ok {
		return groupNotExist(r.Group)
	}
	if cfg := s.d.Config(); cfg.Permission&message.PermWrite == 0 {
		return remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission, "the broker[%s] sending message is forbidden", cfg.BrokerIP1)
	}
	if gc.RetryQueueNums <= 0 {
		return nil // Apache answers SUCCESS and drops it
	}
	topic := message.RetryGroupPrefix + r.Group
	queueID := rand.Int32N(gc.RetryQueueNums)
	// The group passed ValidGroupName (Groups' invariant), so the name is a
	// valid topic and its queue count is bounded.
	tc, _, err := s.d.Topics.CreateIfAbsent(tables.TopicConfig{TopicName: topic, ReadQueueNums: gc.RetryQueueNums,
		WriteQueueNums: gc.RetryQueueNums, Perm: message.PermRead | message.PermWrite})
	if err != nil {
		return topicNotCreated(topic, err)
	}
	if !tc.Writable() {
		return remoting.Refuse(remoting.NoPermission, tables.ErrNoPermission, "the topic[%s] sending message is forbidden", topic)
	}
	rec, err := s.d.Store.MessageAt(r.Offset)
	if err != nil {
		return fmt.Errorf("%w: %w", lookupFailed(r.Offset), err)
	}
	v, _, err := message.DecodeRecordView(rec)
	if err != nil {
		return fmt.Errorf("%w: %w", lookupFailed(r.Offset), err)
	}
	props := string(v.Properties)
	var kv []string
	if message.Property(props, message.PropRetryTopic) == "" {
		kv = append(kv, message.PropRetryTopic, string(v.Topic))
	}
	kv = append(kv, message.PropWaitStoreMsgOK, "false")
	maxTimes := gc.RetryMaxTimes
	if r.HasMax {
		maxTimes = r.MaxReconsumeTimes
	}
	level := r.DelayLevel
	if v.ReconsumeTimes >= maxTimes || level < 0 {
		// Apache labels it with the header's originTopic, which the
		// clients set to the message's first topic: RETRY_TOPIC's, else its own.
		origin := message.Property(props, message.PropRetryTopic)
		if origin == "" {
			origin = string(v.Topic)
		}
		s.d.Counts.ToDLQ(r.Group, origin)
		topic = message.DLQGroupPrefix + r.Group
		queueID = rand.Int32N(DLQQueueNums)
		if err := s.CreateDLQ(topic); err != nil {
			return err
		}
		level = 0
	} else if level == 0 {
		level = 3 + v.ReconsumeTimes
	}
	kv = append(kv, message.PropDelayTimeLevel, strconv.Itoa(int(level)))
	if message.Property(props, message.PropOriginMessageID) == "" {
		kv = append(kv, message.PropOriginMessageID, message.OffsetMsgID(v.StoreHost, v.PhysicalOffset))
	}
	m := store.PutMessage{
		Topic:          topic,
		QueueID:        queueID,
		Flag:           v.Flag,
		Body:           v.Body,
		Properties:     message.SetProperties(props, kv...),
		SysFlag:        v.SysFlag,
		BornTimestamp:  v.BornTimestamp,
		BornHost:       v.BornHost,
		StoreHost:      s.d.StoreHost,
		ReconsumeTimes: v.ReconsumeTimes + 1,
	}
	if _, err := s.Put(&m); err != nil {
		// Apache answers SYSTEM_ERROR with the PutMessageStatus's name.
		return fmt.Errorf("%w: send back to %s: %w", remoting.Refuse(remoting.SystemError, ErrSendBackFailed, "%s", PutStatus(err)), topic, err)
	}
	return nil
}

// CreateDLQ creates %DLQ%<group> on demand with one queue, readable and
// writable, as Apache 4.9.8 and 5.3.3 do (consumerSendMsgBack's
// PERM_WRITE | PERM_READ): the dashboard's DLQ page pulls it.
func (s *Service) CreateDLQ(topic string) error {
	if _, _, err := s.d.Topics.CreateIfAbsent(tables.TopicConfig{TopicName: topic, ReadQueueNums: DLQQueueNums,
		WriteQueueNums: DLQQueueNums, Perm: message.PermRead | message.PermWrite}); err != nil {
		return topicNotCreated(topic, err)
	}
	return nil
}

// groupNotExist is Apache's "subscription group not exist" refusal of a send
// back or a send into a retry topic.
func groupNotExist(group string) error {
	return remoting.Refuse(remoting.SubscriptionGroupNotExist, tables.ErrGroupNotExist, "subscription group not exist, %s %s",
		group, remoting.FAQGroupNotExist)
}

// topicNotCreated is Apache's answer when a retry or DLQ topic cannot be
// created (createTopicInSendMessageBackMethod returned null).
func topicNotCreated(topic string, cause error) error {
	return fmt.Errorf("%w: %w", remoting.Refuse(remoting.SystemError, tables.ErrTopicNotExist, "topic[%s] not exist", topic), cause)
}

// lookupFailed is Apache's answer when a send back names no message.
func lookupFailed(offset int64) *remoting.Refusal {
	return remoting.Refuse(remoting.SystemError, ErrLookupFailed, "look message by offset failed, %d", offset)
}

// PutStatus is the name of Apache's PutMessageStatus for a store error.
func PutStatus(err error) string {
	switch {
	case errors.Is(err, store.ErrMessageTooLarge), errors.Is(err, store.ErrTopicTooLong),
		errors.Is(err, store.ErrBadTopic), errors.Is(err, store.ErrBadQueueID), errors.Is(err, store.ErrBadBatch):
		return "MESSAGE_ILLEGAL"
	case errors.Is(err, store.ErrPropertiesTooLarge):
		return "PROPERTIES_SIZE_EXCEEDED"
	case errors.Is(err, store.ErrClosed), errors.Is(err, store.ErrNotStarted), errors.Is(err, store.ErrDiskFull):
		return "SERVICE_NOT_AVAILABLE"
	case errors.Is(err, store.ErrResource):
		return "CREATE_MAPPED_FILE_FAILED"
	case errors.Is(err, ErrTimerIllegal):
		return "WHEEL_TIMER_MSG_ILLEGAL"
	case errors.Is(err, ErrTimerDisabled):
		return "WHEEL_TIMER_NOT_ENABLE"
	}
	return "UNKNOWN_ERROR"
}

// retrySend applies the retry rules to a plain send into %RETRY%<group>
// (the clients' fallback when CONSUMER_SEND_MSG_BACK fails), as Apache's
// handleRetryAndDLQ: when the header's reconsumeTimes exceeds
// maxReconsumeTimes (header value, else the group's retryMaxTimes) or the
// group holds unexpired orderly locks, the message goes to %DLQ%<group>
// instead, without delay (DELAY=-1).
//
// A move to the DLQ is counted under producerGroup and the retry topic, as
// Apache labels it.
func (s *Service) retrySend(m *store.PutMessage, producerGroup string, maxReconsumeTimes int32, hasMax bool) error {
	if !strings.HasPrefix(m.Topic, message.RetryGroupPrefix) {
		return nil
	}
	group := strings.TrimPrefix(m.Topic, message.RetryGroupPrefix)
	gc, ok := s.d.Groups.Get(group)
	if !ok {
		return groupNotExist(group)
	}
	maxTimes := gc.RetryMaxTimes
	if hasMax {
		maxTimes = maxReconsumeTimes
	}
	if m.ReconsumeTimes > maxTimes || s.d.Locks.Held(group, time.Now()) {
		s.d.Counts.ToDLQ(producerGroup, m.Topic)
		m.Topic = message.DLQGroupPrefix + group
		m.QueueID = rand.Int32N(DLQQueueNums)
		if err := s.CreateDLQ(m.Topic); err != nil {
			return err
		}
		m.Properties = message.SetProperties(m.Properties, message.PropDelayTimeLevel, "-1")
	}
	return nil
}
