package send

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

var (
	// ErrTimerIllegal: a timer message asks for a time beyond timerMaxDelaySec
	// or carries an unparsable time (Apache WHEEL_TIMER_MSG_ILLEGAL).
	ErrTimerIllegal = errors.New("send: timer message illegal")
	// ErrTimerDisabled: a timer message while timerWheelEnable=false.
	ErrTimerDisabled = errors.New("send: timer wheel not enabled")
)

// Put stores one message after Apache's schedule hook
// (HookUtils.handleScheduleMessage): a positive DELAY level moves it to
// SCHEDULE_TOPIC_XXXX (queue level-1), a TIMER_* property to the timer topic,
// both keeping the real topic and queue in REAL_TOPIC / REAL_QID.
func (s *Service) Put(m *store.PutMessage) (store.PutResult, error) {
	if err := s.schedule(m, time.Now().UnixMilli()); err != nil {
		return store.PutResult{}, err
	}
	if err := s.checkLmqQuota(m); err != nil {
		return store.PutResult{}, err
	}
	return s.d.Store.Put(m)
}

func (s *Service) schedule(m *store.PutMessage, now int64) error {
	// Fast path for the plain send: one substring search, no property parse.
	if !strings.Contains(m.Properties, message.PropDelayTimeLevel) && !strings.Contains(m.Properties, "TIMER_") {
		return nil
	}
	t := message.TransactionType(m.SysFlag)
	if t != message.TransactionNot && t != message.TransactionCommit {
		return nil
	}
	level, _ := strconv.Atoi(message.Property(m.Properties, message.PropDelayTimeLevel))
	if level > 0 {
		// A level wins over timer properties, which are dropped.
		if hasTimerProps(m.Properties) {
			m.Properties = message.DeleteProperties(m.Properties, message.PropTimerDeliverMs, message.PropTimerDelaySec, message.PropTimerDelayMs)
		}
		s.toDelayLevel(m, level)
		return nil
	}
	if m.Topic == message.TimerTopic || message.Property(m.Properties, message.PropTimerOutMs) != "" || !hasTimerProps(m.Properties) {
		return nil
	}
	if !s.d.Config().TimerWheelEnable {
		return remoting.Refuse(remoting.SystemError, ErrTimerDisabled, "accurate timer message is not enabled, timerWheelEnable is false")
	}
	return s.toTimer(m, now)
}

// timerIllegal is Apache's answer to WHEEL_TIMER_MSG_ILLEGAL; cause is
// wrapped for logs and tests, the remark is Apache's.
func (s *Service) timerIllegal(cause error) error {
	r := remoting.Refuse(remoting.MessageIllegal, ErrTimerIllegal, "timer message illegal, the delay time should not be bigger "+
		"than the max delay %dms; or if set del msg, the delay time should be bigger than the current time",
		s.d.Config().TimerMaxDelaySec*1000)
	return fmt.Errorf("%w: %w", r, cause)
}

func hasTimerProps(props string) bool {
	return message.Property(props, message.PropTimerDeliverMs) != "" ||
		message.Property(props, message.PropTimerDelaySec) != "" ||
		message.Property(props, message.PropTimerDelayMs) != ""
}

func (s *Service) toDelayLevel(m *store.PutMessage, level int) {
	levels := s.d.DelayLevels
	if len(levels) == 0 {
		return
	}
	kv := []string{message.PropRealTopic, m.Topic, message.PropRealQueueID, strconv.Itoa(int(m.QueueID))}
	if level > len(levels) {
		level = len(levels)
		kv = append(kv, message.PropDelayTimeLevel, strconv.Itoa(level))
	}
	m.Properties = message.SetProperties(m.Properties, kv...)
	m.Topic = message.ScheduleTopic
	m.QueueID = int32(level - 1)
}

// toTimer computes the delivery time (precedence TIMER_DELAY_SEC,
// TIMER_DELAY_MS, TIMER_DELIVER_MS, as Apache) and stages the message in
// the timer topic. A time not in the future stores the message as is.
func (s *Service) toTimer(m *store.PutMessage, now int64) error {
	var deliver int64
	var err error
	if s := message.Property(m.Properties, message.PropTimerDelaySec); s != "" {
		var n int64
		n, err = strconv.ParseInt(s, 10, 64)
		deliver = now + n*1000
	} else if s := message.Property(m.Properties, message.PropTimerDelayMs); s != "" {
		var n int64
		n, err = strconv.ParseInt(s, 10, 64)
		deliver = now + n
	} else {
		deliver, err = strconv.ParseInt(message.Property(m.Properties, message.PropTimerDeliverMs), 10, 64)
	}
	if err != nil {
		return s.timerIllegal(fmt.Errorf("put %s: %w", m.Topic, err))
	}
	if deliver <= now {
		if message.Property(m.Properties, message.PropTimerDelUniqKey) != "" {
			return s.timerIllegal(fmt.Errorf("put %s: delete marker in the past", m.Topic))
		}
		return nil
	}
	if deliver-now > s.d.Config().TimerMaxDelaySec*1000 {
		return s.timerIllegal(fmt.Errorf("put %s: delay %d ms", m.Topic, deliver-now))
	}
	m.Properties = message.SetProperties(m.Properties, message.PropTimerOutMs, strconv.FormatInt(deliver, 10),
		message.PropRealTopic, m.Topic, message.PropRealQueueID, strconv.Itoa(int(m.QueueID)))
	m.Topic = message.TimerTopic
	m.QueueID = 0
	return nil
}

// CheckRealTopic refuses a REAL_TOPIC / REAL_QID no client could have sent
// to: a name that breaks the topic rule (it could name a path outside the
// store), a topic clients may not send to (the staging topics themselves),
// or a queue id outside [0, maxTopicQueueNums). Staging writes both from a
// checked send, so only a record written otherwise (by an older broker, or
// forged) fails; the error wraps ErrTopicInvalid, a permanent refusal.
func (s *Service) CheckRealTopic(topic string, qid int) error {
	if err := message.ValidTopicName(topic); err != nil {
		return fmt.Errorf("REAL_TOPIC %q: %w", topic, err)
	}
	if message.NotAllowedSend(topic) {
		return fmt.Errorf("REAL_TOPIC %s: %w: clients may not send to it", topic, message.ErrTopicInvalid)
	}
	if qid < 0 || qid >= int(s.d.Config().MaxTopicQueueNums) {
		return fmt.Errorf("REAL_QID %d of %s not in [0, %d): %w", qid, topic, s.d.Config().MaxTopicQueueNums, message.ErrTopicInvalid)
	}
	return nil
}

// errNoRealTopic: a staged record without REAL_TOPIC; it is skipped.
var errNoRealTopic = errors.New("send: staged message without REAL_TOPIC")

// ReputReal stores a copy of a staged record (delay level or timer) in its
// REAL_TOPIC / REAL_QID, as ScheduleMessageService.messageTimeUp and
// TimerMessageStore.convertMessage do: same body, flag, born info, reconsume
// times, and the staged properties with add set. Apache serialises the
// properties before it clears DELAY, TIMER_DELIVER_MS, TIMER_DELAY_SEC,
// REAL_TOPIC and REAL_QID from its copy and sets WAIT=false on it, so the
// delivered message keeps the first five and has no WAIT: consumers read
// getDelayTimeLevel() and the real topic from it. Nothing is stripped here.
// It returns the topic and the bytes stored.
func (s *Service) ReputReal(rec []byte, add ...string) (string, int32, error) {
	v, _, err := message.DecodeRecordView(rec)
	if err != nil {
		return "", 0, fmt.Errorf("reput: %w", err)
	}
	topic := string(message.PropertyBytes(v.Properties, message.PropRealTopic))
	qid, err := strconv.Atoi(string(message.PropertyBytes(v.Properties, message.PropRealQueueID)))
	if topic == "" || err != nil {
		return "", 0, fmt.Errorf("reput record at %d: %w", v.PhysicalOffset, errNoRealTopic)
	}
	if err := s.CheckRealTopic(topic, qid); err != nil {
		return "", 0, fmt.Errorf("reput record at %d: %w", v.PhysicalOffset, err)
	}
	props := string(v.Properties)
	if len(add) > 0 {
		props = message.SetProperties(props, add...)
	}
	m := store.PutMessage{
		Topic:                     topic,
		QueueID:                   int32(qid),
		Flag:                      v.Flag,
		Body:                      v.Body,
		Properties:                props,
		SysFlag:                   v.SysFlag,
		BornTimestamp:             v.BornTimestamp,
		BornHost:                  v.BornHost,
		StoreHost:                 v.StoreHost,
		ReconsumeTimes:            v.ReconsumeTimes,
		PreparedTransactionOffset: v.PreparedTransactionOffset,
	}
	pr, err := s.d.Store.Put(&m)
	if err != nil {
		return "", 0, fmt.Errorf("reput to %s-%d: %w", topic, qid, err)
	}
	return topic, pr.WroteBytes, nil
}
