package adminclient

import (
	"fmt"
	"strconv"

	"github.com/rocketgo/rocketgo/remoting"
)

// The lite-topic admin requests of Apache 5.5 (LiteManagerProcessor), as
// MQClientAPIImpl makes them; each answer's lists in the order sent.

// BrokerLiteInfo is GET_BROKER_LITE_INFO's body.
type BrokerLiteInfo struct {
	StoreType             *string             `json:"storeType"`
	MaxLmqNum             int32               `json:"maxLmqNum"`
	CurrentLmqNum         int32               `json:"currentLmqNum"`
	LiteSubscriptionCount int32               `json:"liteSubscriptionCount"`
	OrderInfoCount        int32               `json:"orderInfoCount"`
	CqTableSize           int32               `json:"cqTableSize"`
	OffsetTableSize       int32               `json:"offsetTableSize"`
	EventMapSize          int32               `json:"eventMapSize"`
	TopicMeta             map[string]int32    `json:"topicMeta"`
	GroupMeta             map[string][]string `json:"groupMeta"`
}

// ParentTopicInfo is GET_PARENT_TOPIC_INFO's body.
type ParentTopicInfo struct {
	Topic          string   `json:"topic"`
	TTL            int32    `json:"ttl"`
	Groups         []string `json:"groups"` // nil: none sent
	LmqNum         int32    `json:"lmqNum"`
	LiteTopicCount int32    `json:"liteTopicCount"`
}

// ClientGroup is one subscriber of a lite topic ("*" for every client of
// a group).
type ClientGroup struct {
	ClientID string `json:"clientId"`
	Group    string `json:"group"`
}

// LiteTopicInfo is GET_LITE_TOPIC_INFO's body.
type LiteTopicInfo struct {
	ParentTopic string        `json:"parentTopic"`
	LiteTopic   string        `json:"liteTopic"`
	Subscriber  []ClientGroup `json:"subscriber"`
	TopicOffset *struct {
		MinOffset           int64 `json:"minOffset"`
		MaxOffset           int64 `json:"maxOffset"`
		LastUpdateTimestamp int64 `json:"lastUpdateTimestamp"`
	} `json:"topicOffset"`
	ShardingToBroker bool `json:"shardingToBroker"`
}

// LiteClientInfo is GET_LITE_CLIENT_INFO's body.
type LiteClientInfo struct {
	LastAccessTime  int64    `json:"lastAccessTime"`
	LastConsumeTime int64    `json:"lastConsumeTime"`
	LiteTopicCount  int32    `json:"liteTopicCount"`
	LiteTopicSet    []string `json:"liteTopicSet"` // nil: none sent
}

// LiteLagInfo is one lite topic's lag.
type LiteLagInfo struct {
	LiteTopic                   *string `json:"liteTopic"`
	LagCount                    int64   `json:"lagCount"`
	EarliestUnconsumedTimestamp int64   `json:"earliestUnconsumedTimestamp"`
}

// LiteGroupInfo is GET_LITE_GROUP_INFO's body.
type LiteGroupInfo struct {
	EarliestUnconsumedTimestamp int64          `json:"earliestUnconsumedTimestamp"`
	TotalLagCount               int64          `json:"totalLagCount"`
	LiteTopicOffsetWrapper      *OffsetWrapper `json:"liteTopicOffsetWrapper"`
	LagCountTopK                []LiteLagInfo  `json:"lagCountTopK"`
	LagTimestampTopK            []LiteLagInfo  `json:"lagTimestampTopK"`
}

func (c *Client) liteCall(addr string, code int32, ext map[string]string, out any) error {
	resp, err := c.Call(addr, code, ext, nil)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return fmt.Errorf("%s: request %d: %w", addr, code, err)
	}
	return nil
}

// BrokerLiteInfo is GET_BROKER_LITE_INFO.
func (c *Client) BrokerLiteInfo(addr string) (*BrokerLiteInfo, error) {
	var b BrokerLiteInfo
	if err := c.liteCall(addr, remoting.GetBrokerLiteInfo, nil, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// ParentTopicInfo is GET_PARENT_TOPIC_INFO.
func (c *Client) ParentTopicInfo(addr, topic string) (*ParentTopicInfo, error) {
	var b ParentTopicInfo
	if err := c.liteCall(addr, remoting.GetParentTopicInfo, map[string]string{"topic": topic}, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// LiteTopicInfo is GET_LITE_TOPIC_INFO.
func (c *Client) LiteTopicInfo(addr, parent, lite string) (*LiteTopicInfo, error) {
	var b LiteTopicInfo
	if err := c.liteCall(addr, remoting.GetLiteTopicInfo, map[string]string{"parentTopic": parent, "liteTopic": lite}, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// LiteClientInfo is GET_LITE_CLIENT_INFO (at most 1000 lite topics listed,
// the request header's default).
func (c *Client) LiteClientInfo(addr, parent, group, clientID string) (*LiteClientInfo, error) {
	var b LiteClientInfo
	ext := map[string]string{"parentTopic": parent, "group": group, "clientId": clientID, "maxCount": "1000"}
	if err := c.liteCall(addr, remoting.GetLiteClientInfo, ext, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// LiteGroupInfo is GET_LITE_GROUP_INFO: one lite topic's offsets when lite
// is not "", else the topK lite topics by lag count and by lag time.
func (c *Client) LiteGroupInfo(addr, group, lite string, topK int32) (*LiteGroupInfo, error) {
	ext := map[string]string{"group": group, "topK": strconv.Itoa(int(topK))}
	if lite != "" {
		ext["liteTopic"] = lite
	}
	b := LiteGroupInfo{EarliestUnconsumedTimestamp: -1}
	if err := c.liteCall(addr, remoting.GetLiteGroupInfo, ext, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// TriggerLiteDispatch is TRIGGER_LITE_DISPATCH: the group's (one client's
// when clientID is not "") lite subscriptions dispatched again.
func (c *Client) TriggerLiteDispatch(addr, group, clientID string) error {
	ext := map[string]string{"group": group}
	if clientID != "" {
		ext["clientId"] = clientID
	}
	_, err := c.Call(addr, remoting.TriggerLiteDispatch, ext, nil)
	return err
}
