package admin

// GetConsumerStatusBody, the body of a client's answer to
// GET_CONSUMER_STATUS_FROM_CLIENT (221) and of the broker's answer to
// INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223), as fastjson writes it:
//
//	{"consumerTable":{"<clientId>":{<MessageQueue>:<offset>,...},...},
//	 "messageQueueTable":{<MessageQueue>:<offset>,...}}
//
// A client fills messageQueueTable (its offsets for one topic); the broker
// fills consumerTable, one entry per client that answered. Both maps are
// java.util.HashMaps on Apache's side (fastjson decodes into one), so they
// are written in HashMap order: tools print them as they come.

import (
	"fmt"
	"strconv"

	"github.com/rocketgo/rocketgo/internal/fastjson"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// ClientOffsets is one client's answer: its offsets by queue.
type ClientOffsets struct {
	ClientID string
	Offsets  []QueueOffset
}

// ParseClientConsumerStatus reads a client's GetConsumerStatusBody (its
// messageQueueTable), in the order written.
func ParseClientConsumerStatus(body []byte) ([]QueueOffset, error) {
	table, err := fastjson.Lookup(body, "messageQueueTable")
	if err != nil {
		return nil, fmt.Errorf("consumer status body: %w", err)
	}
	if table == nil || string(table) == "null" {
		return nil, nil
	}
	fs, err := fastjson.Fields(table)
	if err != nil {
		return nil, fmt.Errorf("consumer status messageQueueTable: %w", err)
	}
	out := make([]QueueOffset, 0, len(fs))
	for _, f := range fs {
		var q QueueOffset
		if err := json.Unmarshal(f.Key, &q.Queue); err != nil {
			return nil, fmt.Errorf("consumer status queue key: %w", err)
		}
		if err := json.Unmarshal(f.Val, &q.Offset); err != nil {
			return nil, fmt.Errorf("consumer status offset: %w", err)
		}
		out = append(out, q)
	}
	return out, nil
}

// AppendConsumerStatus appends the broker's GetConsumerStatusBody: the
// clients (in the order they answered) and each one's offsets (in the
// order its answer listed them), both placed as Apache's HashMaps place
// them; messageQueueTable is empty.
func AppendConsumerStatus(dst []byte, clients []ClientOffsets) []byte {
	cl := append([]ClientOffsets(nil), clients...)
	message.HashMapOrder(cl, 16, func(c ClientOffsets) int32 { return message.JavaHash(c.ClientID) })
	dst = append(dst, `{"consumerTable":{`...)
	for i, c := range cl {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = remoting.AppendJSONString(dst, c.ClientID)
		dst = append(dst, `:{`...)
		offs := append([]QueueOffset(nil), c.Offsets...)
		message.HashMapOrder(offs, 16, func(q QueueOffset) int32 { return q.Queue.JavaHash() })
		for j, o := range offs {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = o.Queue.AppendJSON(dst)
			dst = append(dst, ':')
			dst = strconv.AppendInt(dst, o.Offset, 10)
		}
		dst = append(dst, '}')
	}
	return append(dst, `},"messageQueueTable":{}}`...)
}
