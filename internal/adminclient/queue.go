package adminclient

import (
	"fmt"
	"strconv"

	"github.com/rocketgo/rocketgo/remoting"
)

// ConsumeQueueData is one entry of a QUERY_CONSUME_QUEUE answer; the
// strings are nil when the broker left them out.
type ConsumeQueueData struct {
	PhysicOffset   int64   `json:"physicOffset"`
	PhysicSize     int32   `json:"physicSize"`
	TagsCode       int64   `json:"tagsCode"`
	ExtendDataJSON *string `json:"extendDataJson"`
	BitMap         *string `json:"bitMap"`
	Eval           bool    `json:"eval"`
	Msg            *string `json:"msg"`
}

// SubscriptionData is a group's subscription to a topic as a broker
// answers it; the strings are nil when it left them out.
type SubscriptionData struct {
	ClassFilterMode bool     `json:"classFilterMode"`
	Topic           *string  `json:"topic"`
	SubString       *string  `json:"subString"`
	TagsSet         []string `json:"tagsSet"`
	CodeSet         []int32  `json:"codeSet"`
	SubVersion      int64    `json:"subVersion"`
	ExpressionType  *string  `json:"expressionType"`
}

// ConsumeQueue is QueryConsumeQueueResponseBody.
type ConsumeQueue struct {
	SubscriptionData *SubscriptionData  `json:"subscriptionData"`
	FilterData       *string            `json:"filterData"`
	QueueData        []ConsumeQueueData `json:"queueData"`
	MaxQueueIndex    int64              `json:"maxQueueIndex"`
	MinQueueIndex    int64              `json:"minQueueIndex"`
}

// QueryConsumeQueue is QUERY_CONSUME_QUEUE: count entries of the queue from
// index, and with group its subscription and filter. An answer without a
// body (the index is outside the queue; Apache's tool fails on it) is a
// *CodeError carrying the broker's remark.
func (c *Client) QueryConsumeQueue(addr, topic string, queueID int32, index int64, count int32, group string) (*ConsumeQueue, error) {
	ext := map[string]string{"topic": topic, "queueId": strconv.Itoa(int(queueID)),
		"index": strconv.FormatInt(index, 10), "count": strconv.Itoa(int(count))}
	if group != "" {
		ext["consumerGroup"] = group
	}
	resp, err := c.Call(addr, remoting.QueryConsumeQueue, ext, nil)
	if err != nil {
		return nil, err
	}
	if len(resp.Body) == 0 {
		return nil, &CodeError{Addr: addr, Code: resp.Code, Remark: resp.Remark}
	}
	var cq ConsumeQueue
	if err := json.Unmarshal(resp.Body, &cq); err != nil {
		return nil, fmt.Errorf("%s: consume queue: %w", addr, err)
	}
	return &cq, nil
}
