package send

// Lite topics on the send path (Apache 5.5 SendMessageProcessor and
// HookUtils.handleLmqQuota). A single message whose __LITE_TOPIC is set is
// stored in its topic as any message, with INNER_MULTI_DISPATCH naming the
// lite topic's light message queue, %LMQ%$<topic>$<lite>; the store indexes
// it there too when enableLmq and enableMultiDispatch are on (store/lmq.go).
// Batches are stored in their topic only, as Apache's.

import (
	"bytes"
	"errors"
	"strings"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// ErrBadLiteTopic: a __LITE_TOPIC that cannot name a light message queue.
var ErrBadLiteTopic = errors.New("send: lite topic cannot name a light message queue")

// ErrLmqQuota: a send would make an LMQ beyond maxLmqConsumeQueueNum.
var ErrLmqQuota = errors.New("send: lmq consume queue num exceeded")

// LmqQuotaRemark is Apache's remark for LMQ_QUOTA_EXCEEDED.
const LmqQuotaRemark = "[LMQ_CONSUME_QUEUE_NUM_EXCEEDED]lmq consume queue num exceeded."

var propLiteTopic = []byte(message.PropLiteTopic)

// LMQName is the light message queue of a lite topic (LiteUtil.toLmqName).
func LMQName(topic, lite string) string { return "%LMQ%$" + topic + "$" + lite }

// liteProperties returns props with INNER_MULTI_DISPATCH naming the LMQ of
// the message's lite topic, replacing the client's, or props itself when
// the message has no lite topic. Apache checks nothing of the name; a name
// the store could not take as a directory (store.SafeName: longer than 255
// bytes with its prefix and topic, or characters outside
// [%|a-zA-Z0-9_-]) is refused here with MESSAGE_ILLEGAL instead of stored
// in the topic alone.
func liteProperties(topic string, props []byte) ([]byte, error) {
	if !bytes.Contains(props, propLiteTopic) {
		return props, nil
	}
	lite := message.PropertyBytes(props, message.PropLiteTopic)
	if len(lite) == 0 {
		return props, nil
	}
	lmq := LMQName(topic, string(lite))
	if !store.SafeName(lmq) {
		return nil, remoting.Refuse(remoting.MessageIllegal, ErrBadLiteTopic,
			"the lite topic cannot name a light message queue: %d bytes with its prefix and topic (at most %d), characters in [%%|a-zA-Z0-9_-]",
			len(lmq), store.MaxTopicLen)
	}
	out := []byte(message.DeleteProperties(string(props), message.PropInnerMultiDispatch))
	return message.AppendProperty(out, message.PropInnerMultiDispatch, lmq), nil
}

// checkLmqQuota refuses a message naming an LMQ the store does not have
// while it has LmqQuota of them or more (HookUtils.handleLmqQuota, run on
// every put when enableLmqQuota, enableLmq and enableMultiDispatch).
func (s *Service) checkLmqQuota(m *store.PutMessage) error {
	cfg := s.d.Config()
	if !cfg.LmqQuota || s.d.Store.LmqNum() < int64(cfg.MaxLmqConsumeQueueNum) ||
		!strings.Contains(m.Properties, message.PropInnerMultiDispatch) {
		return nil
	}
	if !store.TopicAllowsLMQ(m.Topic) {
		return nil
	}
	names := message.Property(m.Properties, message.PropInnerMultiDispatch)
	for names != "" {
		var name string
		name, names, _ = strings.Cut(names, ",")
		if store.IsLMQ(name) && !s.d.Store.LmqExists(name) {
			return remoting.Refuse(remoting.LmqQuotaExceeded, ErrLmqQuota, LmqQuotaRemark)
		}
	}
	return nil
}
