package send

import (
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
)

// routePriority is Apache 5.4's routing of a priority message (RIP-80): a
// single message whose properties make it a priority message (see
// message.KindOf) goes to the queue numbered by its priority, the last
// write queue for any higher one, whatever queue the producer picked and
// whatever the topic's message.type; a priority on a message of another
// kind (a delay, a transaction, a message group) is dropped from its
// properties. Pop consumers take a PRIORITY topic's queues highest first
// (broker/pop).
func routePriority(r *Request, tc *tables.TopicConfig, queueID int32) int32 {
	p := message.Priority(r.Properties)
	if p < 0 || tc.WriteQueueNums <= 0 {
		return queueID
	}
	if message.KindOf(r.Properties) != message.KindPriority {
		r.Properties = message.DeleteProperties(r.Properties, message.PropPriority)
		return queueID
	}
	return int32(min(p, int(tc.WriteQueueNums)-1))
}
