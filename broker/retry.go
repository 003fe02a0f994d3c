package broker

// Retry and dead-letter queues (Apache AbstractSendMessageProcessor.
// consumerSendMsgBack and SendMessageProcessor.handleRetryAndDLQ).

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/store"
)

var (
	// ErrGroupNotExist: no subscription group of that name.
	ErrGroupNotExist = errors.New("broker: subscription group not exist")
	// ErrLookupFailed: no message at the commit log offset a send-back names.
	ErrLookupFailed = errors.New("broker: look message by offset failed")
)

// dlqQueueNums is Apache's DLQ_NUMS_PER_GROUP.
const dlqQueueNums = 1

// SendBack is a CONSUMER_SEND_MSG_BACK request.
type SendBack struct {
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
// maxReconsumeTimes times or when the level is negative.
func (b *Broker) SendBack(r SendBack) error {
	gc, ok := b.Groups.Get(r.Group)
	if !ok {
		return groupNotExist(r.Group)
	}
	if b.Config().BrokerPermission&PermWrite == 0 {
		return fmt.Errorf("%w: the broker[%s] sending message is forbidden", ErrNoPermission, b.Config().BrokerIP1)
	}
	if gc.RetryQueueNums <= 0 {
		return nil // Apache answers SUCCESS and drops it
	}
	topic := RetryGroupPrefix + r.Group
	queueID := rand.Int32N(gc.RetryQueueNums)
	// The group passed ValidGroupName (Groups' invariant), so the name is a
	// valid topic and its queue count is bounded.
	tc, _, err := b.Topics.CreateIfAbsent(TopicConfig{TopicName: topic, ReadQueueNums: gc.RetryQueueNums,
		WriteQueueNums: gc.RetryQueueNums, Perm: PermRead | PermWrite})
	if err != nil {
		return fmt.Errorf("send back to %s: %w", topic, err)
	}
	if !tc.Writable() {
		return fmt.Errorf("%w: the topic[%s] sending message is forbidden", ErrNoPermission, topic)
	}
	rec, err := b.Store.MessageAt(r.Offset)
	if err != nil {
		return fmt.Errorf("%w, %d: %w", ErrLookupFailed, r.Offset, err)
	}
	v, _, err := message.DecodeRecordView(rec)
	if err != nil {
		return fmt.Errorf("%w, %d: %w", ErrLookupFailed, r.Offset, err)
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
		topic = DLQGroupPrefix + r.Group
		queueID = rand.Int32N(dlqQueueNums)
		if err := b.createDLQ(topic); err != nil {
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
		Properties:     propsSet(props, kv...),
		SysFlag:        v.SysFlag,
		BornTimestamp:  v.BornTimestamp,
		BornHost:       v.BornHost,
		StoreHost:      b.StoreHost,
		ReconsumeTimes: v.ReconsumeTimes + 1,
	}
	if _, err := b.Put(&m); err != nil {
		return fmt.Errorf("send back to %s: %w", topic, err)
	}
	return nil
}

// createDLQ creates %DLQ%<group> on demand with one write-only queue, as
// Apache 4.9 does (an operator grants read to consume it).
func (b *Broker) createDLQ(topic string) error {
	if _, _, err := b.Topics.CreateIfAbsent(TopicConfig{TopicName: topic, ReadQueueNums: dlqQueueNums,
		WriteQueueNums: dlqQueueNums, Perm: PermWrite}); err != nil {
		return fmt.Errorf("create %s: %w", topic, err)
	}
	return nil
}

// FAQGroupNotExist is FAQUrl.suggestTodo(SUBSCRIPTION_GROUP_NOT_EXIST), which
// Apache appends to its remarks about a missing group.
const FAQGroupNotExist = "\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details."

// groupNotExist is Apache's "subscription group not exist" refusal of a send
// back or a send into a retry topic.
func groupNotExist(group string) error {
	return fmt.Errorf("%w, %s %s", ErrGroupNotExist, group, FAQGroupNotExist)
}

// RetrySend applies the retry rules to a plain send into %RETRY%<group>
// (the clients' fallback when CONSUMER_SEND_MSG_BACK fails): when the
// header's reconsumeTimes exceeds maxReconsumeTimes (header value, else the
// group's retryMaxTimes) or the group holds unexpired orderly locks, the
// message goes to %DLQ%<group> instead, without delay.
func (b *Broker) RetrySend(m *store.PutMessage, maxReconsumeTimes int32, hasMax bool) error {
	if !strings.HasPrefix(m.Topic, RetryGroupPrefix) {
		return nil
	}
	group := strings.TrimPrefix(m.Topic, RetryGroupPrefix)
	gc, ok := b.Groups.Get(group)
	if !ok {
		return groupNotExist(group)
	}
	maxTimes := gc.RetryMaxTimes
	if hasMax {
		maxTimes = maxReconsumeTimes
	}
	if m.ReconsumeTimes > maxTimes || b.lockedGroup(group) {
		m.Topic = DLQGroupPrefix + group
		m.QueueID = rand.Int32N(dlqQueueNums)
		if err := b.createDLQ(m.Topic); err != nil {
			return err
		}
		m.Properties = propsSet(m.Properties, message.PropDelayTimeLevel, "0")
	}
	return nil
}
