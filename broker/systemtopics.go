package broker

import (
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
)

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
