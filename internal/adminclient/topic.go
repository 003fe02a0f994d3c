package adminclient

import (
	"strconv"

	"github.com/rocketgo/rocketgo/remoting"
)

// TopicConfig is what UPDATE_AND_CREATE_TOPIC carries.
type TopicConfig struct {
	Name              string
	Read, Write, Perm int
	SysFlag           int
	Order             bool
	Attributes        string // AttributeParser's "+a=1,-b" as given, "" for none
}

// CreateTopic creates or updates a topic on one broker, as
// MQClientAPIImpl.createTopic.
func (c *Client) CreateTopic(addr string, tc TopicConfig) error {
	ext := map[string]string{
		"topic": tc.Name, "defaultTopic": "TBW102", "readQueueNums": strconv.Itoa(tc.Read),
		"writeQueueNums": strconv.Itoa(tc.Write), "perm": strconv.Itoa(tc.Perm), "topicFilterType": "SINGLE_TAG",
		"topicSysFlag": strconv.Itoa(tc.SysFlag), "order": strconv.FormatBool(tc.Order), "force": "false",
	}
	if tc.Attributes != "" {
		ext["attributes"] = tc.Attributes
	}
	_, err := c.Call(addr, remoting.UpdateAndCreateTopic, ext, nil)
	return err
}

// MaxOffset is GET_MAX_OFFSET of one queue.
func (c *Client) MaxOffset(addr, topic string, queueID int) (int64, error) {
	return c.offset(addr, remoting.GetMaxOffset, topic, queueID)
}

// MinOffset is GET_MIN_OFFSET of one queue.
func (c *Client) MinOffset(addr, topic string, queueID int) (int64, error) {
	return c.offset(addr, remoting.GetMinOffset, topic, queueID)
}

func (c *Client) offset(addr string, code int32, topic string, queueID int) (int64, error) {
	resp, err := c.Call(addr, code, map[string]string{"topic": topic, "queueId": strconv.Itoa(queueID)}, nil)
	if err != nil {
		return 0, err
	}
	return resp.Int64("offset")
}

// SearchOffset is SEARCH_OFFSET_BY_TIMESTAMP: the queue's first offset
// stored at or after ms (the lower boundary).
func (c *Client) SearchOffset(addr string, mq MessageQueue, ms int64) (int64, error) {
	resp, err := c.Call(addr, remoting.SearchOffsetByTimestamp, withBrokerName(map[string]string{"topic": mq.Topic,
		"queueId": strconv.Itoa(mq.QueueID), "timestamp": strconv.FormatInt(ms, 10), "boundaryType": "LOWER"}, mq), nil)
	if err != nil {
		return 0, err
	}
	return resp.Int64("offset")
}

// UpdateConsumerOffset is UPDATE_CONSUMER_OFFSET: group's committed offset
// of one queue.
func (c *Client) UpdateConsumerOffset(addr, group string, mq MessageQueue, offset int64) error {
	_, err := c.Call(addr, remoting.UpdateConsumerOffset, withBrokerName(map[string]string{"consumerGroup": group, "topic": mq.Topic,
		"queueId": strconv.Itoa(mq.QueueID), "commitOffset": strconv.FormatInt(offset, 10)}, mq), nil)
	return err
}

// withBrokerName adds mq's broker name to a header when the caller knows it
// (Apache's tools leave it out where they do not).
func withBrokerName(ext map[string]string, mq MessageQueue) map[string]string {
	if mq.BrokerName != "" {
		ext["brokerName"] = mq.BrokerName
	}
	return ext
}
