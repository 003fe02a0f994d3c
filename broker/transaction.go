package broker

// Transactional messages: the prepared send, which stores a half message
// in RMQ_SYS_TRANS_HALF_TOPIC queue 0 as Apache's
// TransactionalMessageBridge.parseHalfMessageInner does, is the send
// path's; ending and checking transactions is package broker/tx's.

import (
	"time"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/broker/tx"
	"github.com/rocketgo/rocketgo/message"
)

// transTopics are the half and op topics, created at start as Apache 5.x's
// TopicConfigManager does: one queue each, read and write.
func transTopics() []tables.TopicConfig {
	return []tables.TopicConfig{
		{TopicName: message.TransHalfTopic, ReadQueueNums: 1, WriteQueueNums: 1, Perm: message.PermRead | message.PermWrite},
		{TopicName: message.TransOpHalfTopic, ReadQueueNums: 1, WriteQueueNums: 1, Perm: message.PermRead | message.PermWrite},
	}
}

// txConfig is what the transaction service reads of the configuration in
// force.
func (b *Broker) txConfig() tx.Config {
	c := b.Config()
	return tx.Config{BrokerName: c.BrokerName, TimeOut: c.TransactionTimeOut, CheckMax: c.TransactionCheckMax,
		CheckInterval: time.Duration(c.TransactionCheckInterval) * time.Millisecond, FileReservedTime: c.Store.FileReservedTime,
		MaxMessageSize: c.Store.MaxMessageSize, Durability: c.durability(), Slave: c.IsSlave()}
}
