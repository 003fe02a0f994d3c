package adminclient

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/rocketgo/rocketgo/remoting"
)

// MessageQueue is one queue of one broker; Less is MessageQueue.compareTo.
type MessageQueue struct {
	Topic      string `json:"topic"`
	BrokerName string `json:"brokerName"`
	QueueID    int    `json:"queueId"`
}

// Less orders by topic, broker name, queue id.
func (q MessageQueue) Less(o MessageQueue) bool {
	if q.Topic != o.Topic {
		return q.Topic < o.Topic
	}
	if q.BrokerName != o.BrokerName {
		return q.BrokerName < o.BrokerName
	}
	return q.QueueID < o.QueueID
}

// RuntimeInfo is GET_BROKER_RUNTIME_INFO's KVTable.
func (c *Client) RuntimeInfo(addr string) (map[string]string, error) {
	resp, err := c.Call(addr, remoting.GetBrokerRuntimeInfo, nil, nil)
	if err != nil {
		return nil, err
	}
	var kv struct {
		Table map[string]string `json:"table"`
	}
	if err := json.Unmarshal(resp.Body, &kv); err != nil {
		return nil, fmt.Errorf("%s: runtime info: %w", addr, err)
	}
	return kv.Table, nil
}

// TopicOffset is one queue's line of a TopicStatsTable.
type TopicOffset struct {
	MessageQueue
	MinOffset           int64 `json:"minOffset"`
	MaxOffset           int64 `json:"maxOffset"`
	LastUpdateTimestamp int64 `json:"lastUpdateTimestamp"`
}

// TopicStats is GET_TOPIC_STATS_INFO of one broker.
func (c *Client) TopicStats(addr, topic string) ([]TopicOffset, error) {
	resp, err := c.Call(addr, remoting.GetTopicStatsInfo, map[string]string{"topic": topic}, nil)
	if err != nil {
		return nil, err
	}
	table, err := field(resp.Body, "offsetTable")
	if err != nil {
		return nil, fmt.Errorf("%s: topic stats: %w", addr, err)
	}
	var out []TopicOffset
	err = queueMap(table, func(mq MessageQueue, v []byte) error {
		to := TopicOffset{MessageQueue: mq}
		if err := json.Unmarshal(v, &to); err != nil {
			return err
		}
		to.MessageQueue = mq
		out = append(out, to)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: topic stats: %w", addr, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j].MessageQueue) })
	return out, nil
}

// OffsetWrapper is one queue's line of a ConsumeStats.
type OffsetWrapper struct {
	MessageQueue
	BrokerOffset   int64 `json:"brokerOffset"`
	ConsumerOffset int64 `json:"consumerOffset"`
	PullOffset     int64 `json:"pullOffset"`
	LastTimestamp  int64 `json:"lastTimestamp"`
}

// ConsumeStats is a group's ConsumeStats, merged over brokers.
type ConsumeStats struct {
	ConsumeTps float64
	Queues     []OffsetWrapper // sorted
}

// ConsumeStats asks one broker for group's consume stats (of topic, "" for all).
func (c *Client) ConsumeStats(addr, group, topic string) (*ConsumeStats, error) {
	ext := map[string]string{"consumerGroup": group}
	if topic != "" {
		ext["topic"] = topic
	}
	resp, err := c.Call(addr, remoting.GetConsumeStats, ext, nil)
	if err != nil {
		return nil, err
	}
	cs, err := decodeConsumeStats(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: consume stats: %w", addr, err)
	}
	return cs, nil
}

// decodeConsumeStats reads one ConsumeStats object.
func decodeConsumeStats(b []byte) (*ConsumeStats, error) {
	var cs ConsumeStats
	if tps, err := field(b, "consumeTps"); err != nil {
		return nil, err
	} else if tps != nil {
		if cs.ConsumeTps, err = strconv.ParseFloat(string(tps), 64); err != nil {
			return nil, fmt.Errorf("consumeTps: %w", err)
		}
	}
	table, _ := field(b, "offsetTable")
	err := queueMap(table, func(mq MessageQueue, v []byte) error {
		ow := OffsetWrapper{}
		if err := json.Unmarshal(v, &ow); err != nil {
			return err
		}
		ow.MessageQueue = mq
		cs.Queues = append(cs.Queues, ow)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(cs.Queues, func(i, j int) bool { return cs.Queues[i].Less(cs.Queues[j].MessageQueue) })
	return &cs, nil
}

// Merge adds o's queues and rate to cs and keeps the queues sorted.
func (cs *ConsumeStats) Merge(o *ConsumeStats) {
	cs.ConsumeTps += o.ConsumeTps
	cs.Queues = append(cs.Queues, o.Queues...)
	sort.Slice(cs.Queues, func(i, j int) bool { return cs.Queues[i].Less(cs.Queues[j].MessageQueue) })
}
