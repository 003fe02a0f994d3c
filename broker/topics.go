package broker

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
func (b *Broker) UpdateTopic(tc tables.TopicConfig) error {
	if err := b.refuseOnSlave(); err != nil {
		return err
	}
	if err := message.ValidTopicName(tc.TopicName); err != nil {
		return err
	}
	if b.Config().ValidateSystemTopicWhenUpdateTopic && b.Topics.IsSystem(tc.TopicName) {
		return systemConflict(tc.TopicName)
	}
	old, ok := b.Topics.Get(tc.TopicName)
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
	return b.Topics.Put(tc)
}

// TopicConfig is GET_TOPIC_CONFIG: a topic's config, or TOPIC_NOT_EXIST
// with Apache's remark. The result must not be modified.
func (b *Broker) TopicConfig(topic string) (*tables.TopicConfig, error) {
	tc, ok := b.Topics.Get(topic)
	if !ok {
		return nil, remoting.Refuse(remoting.TopicNotExist, tables.ErrTopicNotExist, "No topic in this broker. topic: %s", topic)
	}
	return tc, nil
}

// AllTopicConfig is GET_ALL_TOPIC_CONFIG: a copy of the topic table.
func (b *Broker) AllTopicConfig() tables.TopicTable {
	m, v := b.Topics.Snapshot()
	return tables.TopicTable{DataVersion: v, Topics: m}
}

// DeleteTopic is DELETE_TOPIC_IN_BROKER: the topic, its offsets and, off the
// caller's goroutine, its consume queue files. Apache refuses a blank name
// and a system topic; rocketgo also refuses any name that breaks the topic
// rule, which Apache lets through: such a name is no topic of the table, and
// it could name a path outside the store ("..").
func (b *Broker) DeleteTopic(topic string) error {
	if err := b.refuseOnSlave(); err != nil {
		return err
	}
	if message.IsBlank(topic) {
		return remoting.Refuse(remoting.InvalidParameter, message.ErrTopicInvalid, "%s", message.RemarkTopicBlank)
	}
	if b.Config().ValidateSystemTopicWhenUpdateTopic && b.Topics.IsSystem(topic) {
		return systemConflict(topic)
	}
	if err := message.ValidTopicName(topic); err != nil {
		return err
	}
	b.Topics.Delete(topic)
	b.Offsets.DeleteTopic(topic)
	topic = strings.Clone(topic) // outlives the request
	b.Go(func() {
		if err := b.Store.DeleteTopic(topic); err != nil {
			b.log.Error().Err(err).Str("topic", topic).Msg("delete topic files")
		}
	})
	return nil
}

// systemTopics are (re)inserted at every start before topics.json is read.
func systemTopics(c *Config) []tables.TopicConfig {
	out := []tables.TopicConfig{
		{TopicName: message.SelfTestTopic, ReadQueueNums: 1, WriteQueueNums: 1, Perm: message.PermRead | message.PermWrite},
		{TopicName: message.OffsetMovedEvent, ReadQueueNums: 1, WriteQueueNums: 1, Perm: message.PermRead | message.PermWrite},
		{TopicName: message.ScheduleTopic, ReadQueueNums: 18, WriteQueueNums: 18, Perm: message.PermRead | message.PermWrite},
		{TopicName: c.BrokerClusterName + "_REPLY_TOPIC", ReadQueueNums: 1, WriteQueueNums: 1, Perm: message.PermRead | message.PermWrite},
	}
	if c.AutoCreateTopicEnable {
		out = append(out, tables.TopicConfig{TopicName: message.AutoCreateTopicKey, ReadQueueNums: c.DefaultTopicQueueNums,
			WriteQueueNums: c.DefaultTopicQueueNums, Perm: message.PermInherit | message.PermRead | message.PermWrite})
	}
	perm := message.PermInherit
	if c.ClusterTopicEnable {
		perm |= message.PermRead | message.PermWrite
	}
	out = append(out, tables.TopicConfig{TopicName: c.BrokerClusterName, ReadQueueNums: 16, WriteQueueNums: 16, Perm: perm})
	perm = message.PermInherit
	if c.BrokerTopicEnable {
		perm |= message.PermRead | message.PermWrite
	}
	out = append(out, tables.TopicConfig{TopicName: c.BrokerName, ReadQueueNums: 1, WriteQueueNums: 1, Perm: perm})
	if c.TraceTopicEnable {
		out = append(out, tables.TopicConfig{TopicName: c.MsgTraceTopicName, ReadQueueNums: 1, WriteQueueNums: 1, Perm: message.PermRead | message.PermWrite})
	}
	// Apache 5.3.3 creates both at every start, whatever the config: the
	// benchmark topic (1024 queues, for its own benchmark tools) and the
	// topic 5.x brokers of a group sync their membership on (inherit-only:
	// no client reads or writes it). Tools and rocketmq-dashboard list them.
	out = append(out,
		tables.TopicConfig{TopicName: message.BenchmarkTopic, ReadQueueNums: 1024, WriteQueueNums: 1024, Perm: message.PermRead | message.PermWrite},
		tables.TopicConfig{TopicName: message.SyncBrokerMemberPrefix + c.BrokerName, ReadQueueNums: 1, WriteQueueNums: 1, Perm: message.PermInherit})
	return out
}

// ErrSystemTopic: UPDATE_AND_CREATE_TOPIC or DELETE_TOPIC_IN_BROKER of a
// system topic while validateSystemTopicWhenUpdateTopic is on.
var ErrSystemTopic = errors.New("broker: system topic")

func systemConflict(topic string) error {
	return remoting.Refuse(remoting.InvalidParameter, ErrSystemTopic, "The topic[%s] is conflict with system topic.", topic)
}
