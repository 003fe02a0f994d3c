package send

import (
	"testing"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
)

// A priority message goes to the queue of its priority (the last for a
// higher one), whatever queue the producer chose; a priority on a message of
// another kind leaves the queue and is dropped from its properties; a value
// that is not a non-negative int changes nothing.
func TestRoutePriority(t *testing.T) {
	tc := &tables.TopicConfig{TopicName: "T", ReadQueueNums: 4, WriteQueueNums: 4}
	cases := []struct {
		name      string
		props     string
		chosen    int32
		want      int32
		wantProps string
	}{
		{"none", message.SetProperties("", "KEYS", "k"), 1, 1, message.SetProperties("", "KEYS", "k")},
		{"priority", message.SetProperties("", message.PropPriority, "2"), 0, 2, message.SetProperties("", message.PropPriority, "2")},
		{"above the queues", message.SetProperties("", message.PropPriority, "9"), 0, 3, message.SetProperties("", message.PropPriority, "9")},
		{"zero", message.SetProperties("", message.PropPriority, "0"), 3, 0, message.SetProperties("", message.PropPriority, "0")},
		{"negative", message.SetProperties("", message.PropPriority, "-1"), 1, 1, message.SetProperties("", message.PropPriority, "-1")},
		{"not a number", message.SetProperties("", message.PropPriority, "high"), 1, 1, message.SetProperties("", message.PropPriority, "high")},
		{"overflow", message.SetProperties("", message.PropPriority, "2147483648"), 1, 1, message.SetProperties("", message.PropPriority, "2147483648")},
		{"delay", message.SetProperties("", message.PropPriority, "2", message.PropDelayTimeLevel, "3"), 1, 1,
			message.SetProperties("", message.PropDelayTimeLevel, "3")},
		{"message group", message.SetProperties("", message.PropShardingKey, "g", message.PropPriority, "2"), 1, 1,
			message.SetProperties("", message.PropShardingKey, "g")},
		{"transaction", message.SetProperties("", message.PropTransactionPrepared, "true", message.PropPriority, "2"), 1, 1,
			message.SetProperties("", message.PropTransactionPrepared, "true")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Request{Topic: "T", Properties: c.props}
			if got := routePriority(r, tc, c.chosen); got != c.want {
				t.Errorf("queue %d, want %d", got, c.want)
			}
			if r.Properties != c.wantProps {
				t.Errorf("properties %q, want %q", r.Properties, c.wantProps)
			}
		})
	}
}
