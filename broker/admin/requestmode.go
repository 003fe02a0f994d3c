package admin

import (
	"fmt"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// SetMessageRequestMode is SET_MESSAGE_REQUEST_MODE (body SetMessageRequestModeRequestBody).
func (s *Service) SetMessageRequestMode(body []byte) error {
	r := tables.RequestMode{Mode: "PULL"}
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("%w: set message request mode body: %w", remoting.ErrBadField, err)
	}
	if r.Mode != "PULL" && r.Mode != "POP" {
		return fmt.Errorf("%w: mode %q", remoting.ErrBadField, r.Mode)
	}
	if message.IsRetryTopic(r.Topic) {
		return remoting.Refuse(remoting.NoPermission, nil, "retry topic is not allowed to set mode")
	}
	if _, ok := s.d.Topics.Get(r.Topic); !ok {
		return remoting.Refuse(remoting.TopicNotExist, tables.ErrTopicNotExist, "topic[%s] not exist", r.Topic)
	}
	if _, ok := s.d.Groups.Get(r.ConsumerGroup); !ok {
		return remoting.Refuse(remoting.SubscriptionGroupNotExist, tables.ErrGroupNotExist, "subscription group does not exist")
	}
	s.d.Modes.Set(r)
	return nil
}
