package send

// Recall of a timer message (Apache 5.3's RecallMessageProcessor).
//
// The answer to a single send that the schedule hook staged in the timer
// carries a recall handle: base64url (padded) of
// "v1 <real topic> <broker name> <TIMER_OUT_MS+1> <UNIQ_KEY>" (the +1 is
// Apache's, "consider of floor"). RECALL_MESSAGE with that handle, before
// the message is due, stores a delete marker: a message to the same topic,
// body "0", tag _RECALL_TAG_, with TIMER_DELIVER_MS the handle's time,
// UNIQ_KEY the handle's id and TIMER_DEL_UNIQKEY "<topic>+<id>". The marker
// goes through the timer like any timer message; the timer, reading it
// (broker/timer), skips the message of that topic and key, and never delivers
// the marker itself. A client's own send carrying TIMER_DEL_UNIQKEY deletes
// the same way, as with Apache.
//
// As Apache's, the recall is refused unless recallMessageEnable, on a
// slave, for a topic not here, a handle of another topic or broker, or a
// time not in (now, now+timerMaxDelaySec). A recall that comes after the
// message was read into the timer but so close to its time that the marker
// is read after the delivery does not stop it, as with Apache.

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// Refusal sentinels of RECALL_MESSAGE.
var (
	ErrRecallDisabled = errors.New("send: recall disabled")
	ErrRecallHandle   = errors.New("send: bad recall handle")
)

const recallTag = "_RECALL_TAG_"

// recallHandle is the handle of a message staged in the timer, from its
// stored properties; empty for a retry topic's, as Apache gives none.
func recallHandle(brokerName, props, uniq string) string {
	out := message.Property(props, message.PropTimerOutMs)
	realTopic := message.Property(props, message.PropRealTopic)
	ms, err := strconv.ParseInt(out, 10, 64)
	if err != nil || realTopic == "" || strings.HasPrefix(realTopic, message.RetryGroupPrefix) {
		return ""
	}
	if uniq == "" {
		uniq = "null" // Apache's String.join of a missing id
	}
	raw := "v1 " + realTopic + " " + brokerName + " " + strconv.FormatInt(ms+1, 10) + " " + uniq
	return base64.URLEncoding.EncodeToString([]byte(raw))
}

// recallHandleV1 is a decoded handle.
type recallHandleV1 struct {
	topic, brokerName, timestamp, messageID string
}

// decodeRecallHandle reads a handle as Apache's decodeHandle does: base64url
// with or without padding, space-separated, "v1" and at least four fields
// after it (extra fields ignored).
func decodeRecallHandle(h string) (recallHandleV1, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(h, "="))
	if h == "" || err != nil {
		return recallHandleV1{}, false
	}
	items := strings.Split(string(raw), " ")
	for len(items) > 0 && items[len(items)-1] == "" { // Java's split drops trailing empties
		items = items[:len(items)-1]
	}
	if len(items) < 5 || items[0] != "v1" {
		return recallHandleV1{}, false
	}
	return recallHandleV1{items[1], items[2], items[3], items[4]}, true
}

// RecallRequest is RecallMessageRequestHeader.
type RecallRequest struct {
	ProducerGroup, Topic, Handle string
}

// Recall checks a recall as Apache's processor does (in its order: the
// key, the role and the permission before the header's fields; an empty
// topic is one not here, an empty handle an invalid one) and returns the
// delete marker to store, through Send (so that it is stored, counted and made
// durable as a send is), and the recalled message's id for the answer.
func (s *Service) Recall(r RecallRequest) (Request, string, error) {
	cfg := s.d.Config()
	switch {
	case !cfg.RecallMessageEnable:
		return Request{}, "", remoting.Refuse(remoting.NoPermission, ErrRecallDisabled, "recall failed, operation is forbidden")
	case cfg.Slave:
		return Request{}, "", remoting.Refuse(remoting.SlaveNotAvailable, ErrSlave, "recall failed, broker service not available")
	case cfg.Permission&message.PermWrite == 0 && !cfg.AllowRecallWhenBrokerNotWriteable:
		return Request{}, "", remoting.Refuse(remoting.ServiceNotAvailable, nil, "recall failed, broker service not available")
	}
	if _, ok := s.d.Topics.Get(r.Topic); !ok {
		return Request{}, "", remoting.Refuse(remoting.TopicNotExist, tables.ErrTopicNotExist, "recall failed, the topic[%s] not exist", r.Topic)
	}
	h, ok := decodeRecallHandle(r.Handle)
	switch {
	case !ok:
		return Request{}, "", remoting.Refuse(remoting.IllegalOperation, ErrRecallHandle, "recall handle is invalid")
	case h.topic != r.Topic:
		return Request{}, "", remoting.Refuse(remoting.IllegalOperation, ErrRecallHandle, "recall failed, topic not match")
	case h.brokerName != cfg.BrokerName:
		return Request{}, "", remoting.Refuse(remoting.IllegalOperation, ErrRecallHandle, "recall failed, broker service not available")
	}
	now := time.Now().UnixMilli()
	ts, err := strconv.ParseInt(h.timestamp, 10, 64)
	if left := ts - now; err != nil || left <= 0 || left >= cfg.TimerMaxDelaySec*1000 {
		return Request{}, "", remoting.Refuse(remoting.IllegalOperation, ErrRecallHandle, "recall failed, timestamp invalid")
	}
	var props []byte
	for _, kv := range [][2]string{
		{message.PropTags, recallTag},
		{message.PropTimerDelUniqKey, h.topic + "+" + h.messageID},
		{message.PropUniqClientMessageID, h.messageID},
		{message.PropTimerDeliverMs, h.timestamp},
		{message.PropBornTimestamp, strconv.FormatInt(now, 10)},
		{message.PropTraceContext, ""},
		{message.PropProducerGroup, r.ProducerGroup},
	} {
		props = message.AppendProperty(props, kv[0], kv[1])
	}
	return Request{ProducerGroup: r.ProducerGroup, Topic: h.topic, QueueID: 0, BornTimestamp: now,
		Properties: string(props), Body: []byte("0")}, h.messageID, nil
}
