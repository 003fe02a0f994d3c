package admin

import (
	"errors"
	"strings"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// UpdateTopic creates or replaces a topic for UPDATE_AND_CREATE_TOPIC, as
// Apache's AdminBrokerProcessor.updateAndCreateTopic checks it: the topic
// rule, then no system topic (validateSystemTopicWhenUpdateTopic), then
// (rocketgo) queue counts in [1, maxTopicQueueNums]. Refusals are
// INVALID_PARAMETER with Apache's remarks. A config equal to the one in the
// table changes nothing (Apache's idempotent update: no new data version, no
// registration).
func (s *Service) UpdateTopic(tc tables.TopicConfig) error {
	if err := s.refuseOnSlave(); err != nil {
		return err
	}
	if err := message.ValidTopicName(tc.TopicName); err != nil {
		return err
	}
	if s.d.Config().ValidateSystemTopicWhenUpdateTopic && s.d.Topics.IsSystem(tc.TopicName) {
		return systemConflict(tc.TopicName)
	}
	old, ok := s.d.Topics.Get(tc.TopicName)
	if ok && len(old.Attributes) > 0 {
		// Apache alters the current attributes with the request's: keys
		// it names change, the others stay.
		merged := make(map[string]string, len(old.Attributes)+len(tc.Attributes))
		for k, v := range old.Attributes {
			merged[k] = v
		}
		for k, v := range tc.Attributes {
			merged[k] = v
		}
		tc.Attributes = merged
	}
	if ok && tables.SameTopic(old, &tc) {
		return nil
	}
	return s.d.Topics.Put(tc)
}

// TopicConfig is GET_TOPIC_CONFIG: a topic's config, or TOPIC_NOT_EXIST
// with Apache's remark. The result must not be modified.
func (s *Service) TopicConfig(topic string) (*tables.TopicConfig, error) {
	tc, ok := s.d.Topics.Get(topic)
	if !ok {
		return nil, remoting.Refuse(remoting.TopicNotExist, tables.ErrTopicNotExist, "No topic in this broker. topic: %s", topic)
	}
	return tc, nil
}

// AllTopicConfig is GET_ALL_TOPIC_CONFIG: a copy of the topic table.
func (s *Service) AllTopicConfig() tables.TopicTable {
	m, v := s.d.Topics.Snapshot()
	return tables.TopicTable{DataVersion: v, Topics: m}
}

// DeleteTopic is DELETE_TOPIC_IN_BROKER: the topic, its offsets and, off the
// caller's goroutine, its consume queue files. Apache refuses a blank name
// and a system topic; rocketgo also refuses any name that breaks the topic
// rule, which Apache lets through: such a name is no topic of the table, and
// it could name a path outside the store ("..").
func (s *Service) DeleteTopic(topic string) error {
	if err := s.refuseOnSlave(); err != nil {
		return err
	}
	if message.IsBlank(topic) {
		return remoting.Refuse(remoting.InvalidParameter, message.ErrTopicInvalid, "%s", message.RemarkTopicBlank)
	}
	if s.d.Config().ValidateSystemTopicWhenUpdateTopic && s.d.Topics.IsSystem(topic) {
		return systemConflict(topic)
	}
	if err := message.ValidTopicName(topic); err != nil {
		return err
	}
	s.d.Topics.Delete(topic)
	s.d.Offsets.DeleteTopic(topic)
	topic = strings.Clone(topic) // outlives the request
	s.d.Go(func() {
		if err := s.d.Store.DeleteTopic(topic); err != nil {
			s.log.Error().Err(err).Str("topic", topic).Msg("delete topic files")
		}
		if s.d.TopicDeleted != nil {
			s.d.TopicDeleted(topic)
		}
	})
	return nil
}

// ErrSystemTopic: UPDATE_AND_CREATE_TOPIC or DELETE_TOPIC_IN_BROKER of a
// system topic while validateSystemTopicWhenUpdateTopic is on.
var ErrSystemTopic = errors.New("admin: system topic")

// errSlave: a slave does not take the change asked for.
var errSlave = errors.New("admin: the broker is a slave")

// refuseOnSlave is Apache 4.9's answer to a topic or group change asked of
// a slave (AdminBrokerProcessor.validateSlave): the slave's tables are its
// master's, and its next sync would undo the change. Apache 5.3.3 has the
// check but no longer calls it.
func (s *Service) refuseOnSlave() error {
	if !s.d.Config().IsSlave {
		return nil
	}
	return remoting.Refuse(remoting.SystemError, errSlave,
		"Can't modify topic or subscription group from slave broker, please execute it from master broker.")
}

func systemConflict(topic string) error {
	return remoting.Refuse(remoting.InvalidParameter, ErrSystemTopic, "The topic[%s] is conflict with system topic.", topic)
}
