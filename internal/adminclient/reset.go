package adminclient

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/rocketgo/rocketgo/remoting"
)

// QueueOffset is one queue and an offset.
type QueueOffset struct {
	MessageQueue
	Offset int64
}

// ResetOffset is INVOKE_BROKER_TO_RESET_OFFSET: the broker moves group's
// offsets of topic to ms (queueID -1: every queue; else that queue to
// offset, offset -1 meaning none) and tells its online consumers. A group
// with no consumer online is a *CodeError with remoting.ConsumerNotOnline.
func (c *Client) ResetOffset(addr, topic, group string, ms int64, force bool, queueID int, offset int64) ([]QueueOffset, error) {
	resp, err := c.Call(addr, remoting.InvokeBrokerToResetOffset, map[string]string{"topic": topic, "group": group,
		"timestamp": strconv.FormatInt(ms, 10), "isForce": strconv.FormatBool(force), "queueId": strconv.Itoa(queueID),
		"offset": strconv.FormatInt(offset, 10)}, nil)
	if err != nil {
		return nil, err
	}
	var out []QueueOffset
	if len(resp.Body) == 0 {
		return out, nil
	}
	table, err := field(resp.Body, "offsetTable")
	if err != nil {
		return nil, fmt.Errorf("%s: reset offset: %w", addr, err)
	}
	err = queueMap(table, func(mq MessageQueue, v []byte) error {
		var off int64
		if err := json.Unmarshal(v, &off); err != nil {
			return err
		}
		out = append(out, QueueOffset{mq, off})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: reset offset: %w", addr, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j].MessageQueue) })
	return out, nil
}
