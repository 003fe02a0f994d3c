package adminclient

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/rocketgo/rocketgo/internal/fastjson"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// ConsumerRunningInfo is a consumer's answer to GET_CONSUMER_RUNNING_INFO,
// relayed by a broker: its properties, subscriptions, queues and rates, in
// the orders of the Java Properties, TreeMaps and TreeSet Apache's tool
// decodes them into.
type ConsumerRunningInfo struct {
	Properties       []Property // values as the client wrote them
	Subscriptions    []Subscription
	MQTable          []QueueProcess
	MQPopTable       []QueuePop
	StatusTable      []TopicStatus
	UserConsumerInfo []Property
	// Jstack is the client's thread dump, nil when it sent none (a Go
	// client sends an empty one).
	Jstack *string
}

// Prop is the value of the property name, and whether it is there.
func (ci *ConsumerRunningInfo) Prop(name string) (string, bool) {
	for _, p := range ci.Properties {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}

// Subscription is one SubscriptionData of a running consumer.
type Subscription struct {
	Topic           string `json:"topic"`
	SubString       string `json:"subString"`
	ClassFilterMode bool   `json:"classFilterMode"`
}

// key is what SubscriptionData.compareTo compares: topic@subString.
func (s Subscription) key() string { return s.Topic + "@" + s.SubString }

// QueueProcess is one queue of a push consumer's ProcessQueueInfo.
type QueueProcess struct {
	MessageQueue
	CommitOffset            int64 `json:"commitOffset"`
	CachedMsgMinOffset      int64 `json:"cachedMsgMinOffset"`
	CachedMsgMaxOffset      int64 `json:"cachedMsgMaxOffset"`
	CachedMsgCount          int32 `json:"cachedMsgCount"`
	CachedMsgSizeInMiB      int32 `json:"cachedMsgSizeInMiB"`
	TransactionMsgMinOffset int64 `json:"transactionMsgMinOffset"`
	TransactionMsgMaxOffset int64 `json:"transactionMsgMaxOffset"`
	TransactionMsgCount     int32 `json:"transactionMsgCount"`
	Locked                  bool  `json:"locked"`
	TryUnlockTimes          int64 `json:"tryUnlockTimes"`
	LastLockTimestamp       int64 `json:"lastLockTimestamp"`
	Droped                  bool  `json:"droped"` // Apache's spelling (a Go client writes "dropped", which Apache ignores too)
	LastPullTimestamp       int64 `json:"lastPullTimestamp"`
	LastConsumeTimestamp    int64 `json:"lastConsumeTimestamp"`
}

// QueuePop is one queue of a pop consumer's PopProcessQueueInfo.
type QueuePop struct {
	MessageQueue
	WaitAckCount     int32 `json:"waitAckCount"`
	Droped           bool  `json:"droped"`
	LastPopTimestamp int64 `json:"lastPopTimestamp"`
}

// TopicStatus is one topic's ConsumeStatus.
type TopicStatus struct {
	Topic             string
	PullRT            float64 `json:"pullRT"`
	PullTPS           float64 `json:"pullTPS"`
	ConsumeRT         float64 `json:"consumeRT"`
	ConsumeOKTPS      float64 `json:"consumeOKTPS"`
	ConsumeFailedTPS  float64 `json:"consumeFailedTPS"`
	ConsumeFailedMsgs int64   `json:"consumeFailedMsgs"`
}

// ConsumerRunningInfo asks the broker at addr to ask the consumer clientID
// of group for its running info (its thread dump too when jstack), as
// MQClientAPIImpl.getConsumerRunningInfo.
func (c *Client) ConsumerRunningInfo(addr, group, clientID string, jstack bool) (*ConsumerRunningInfo, error) {
	resp, err := c.Call(addr, remoting.GetConsumerRunningInfo, map[string]string{
		"consumerGroup": group, "clientId": clientID, "jstackEnable": strconv.FormatBool(jstack)}, nil)
	if err != nil {
		return nil, err
	}
	if resp.Body == nil {
		// Apache: an answer without a body is MQClientException(SUCCESS, remark)
		return nil, &CodeError{Addr: addr, Code: resp.Code, Remark: resp.Remark}
	}
	ci, err := DecodeConsumerRunningInfo(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: consumer running info of %s: %w", addr, clientID, err)
	}
	return ci, nil
}

// DecodeConsumerRunningInfo reads a ConsumerRunningInfo as Java's and Go's
// clients write it: mqTable and mqPopTable keyed by MessageQueue objects,
// which makes the whole no JSON; each member is decoded on its own.
func DecodeConsumerRunningInfo(b []byte) (*ConsumerRunningInfo, error) {
	fs, err := fastjson.Fields(b)
	if err != nil {
		return nil, err
	}
	ci := &ConsumerRunningInfo{}
	for _, f := range fs {
		var name string
		if err := json.Unmarshal(f.Key, &name); err != nil {
			return nil, fmt.Errorf("member name: %w", err)
		}
		if string(f.Val) == "null" {
			continue
		}
		if err := ci.decodeMember(name, f.Val); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	// Apache's tool puts them in a Properties in the order sent
	message.ConcurrentHashMapOrder(ci.Properties, 16, func(p Property) int32 { return message.JavaHash(p.Name) })
	sort.Slice(ci.Subscriptions, func(i, j int) bool { return ci.Subscriptions[i].key() < ci.Subscriptions[j].key() })
	sort.Slice(ci.StatusTable, func(i, j int) bool { return ci.StatusTable[i].Topic < ci.StatusTable[j].Topic })
	sort.Slice(ci.UserConsumerInfo, func(i, j int) bool { return ci.UserConsumerInfo[i].Name < ci.UserConsumerInfo[j].Name })
	sort.Slice(ci.MQTable, func(i, j int) bool { return ci.MQTable[i].Less(ci.MQTable[j].MessageQueue) })
	sort.Slice(ci.MQPopTable, func(i, j int) bool { return ci.MQPopTable[i].Less(ci.MQPopTable[j].MessageQueue) })
	return ci, nil
}

func (ci *ConsumerRunningInfo) decodeMember(name string, v []byte) error {
	switch name {
	case "properties":
		fs, err := fastjson.Fields(v)
		if err != nil {
			return err
		}
		for _, f := range fs {
			var k, s string
			if err := json.Unmarshal(f.Key, &k); err != nil {
				return err
			}
			if json.Unmarshal(f.Val, &s) != nil {
				s = string(f.Val) // a number or a boolean, as its text
			}
			ci.Properties = append(ci.Properties, Property{Name: k, Value: s})
		}
	case "subscriptionSet":
		var subs []Subscription
		if err := json.Unmarshal(v, &subs); err != nil {
			return err
		}
		seen := map[string]bool{} // a TreeSet: one entry per topic@subString
		for _, s := range subs {
			if !seen[s.key()] {
				seen[s.key()] = true
				ci.Subscriptions = append(ci.Subscriptions, s)
			}
		}
	case "statusTable":
		var m map[string]TopicStatus
		if err := json.Unmarshal(v, &m); err != nil {
			return err
		}
		for t, s := range m {
			s.Topic = t
			ci.StatusTable = append(ci.StatusTable, s)
		}
	case "userConsumerInfo":
		var m map[string]string
		if err := json.Unmarshal(v, &m); err != nil {
			return err
		}
		for k, s := range m {
			ci.UserConsumerInfo = append(ci.UserConsumerInfo, Property{Name: k, Value: s})
		}
	case "jstack":
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return err
		}
		ci.Jstack = &s
	case "mqTable":
		return queueMap(v, func(mq MessageQueue, val []byte) error {
			var q QueueProcess
			if err := json.Unmarshal(val, &q); err != nil {
				return err
			}
			q.MessageQueue = mq
			ci.MQTable = append(ci.MQTable, q)
			return nil
		})
	case "mqPopTable":
		return queueMap(v, func(mq MessageQueue, val []byte) error {
			var q QueuePop
			if err := json.Unmarshal(val, &q); err != nil {
				return err
			}
			q.MessageQueue = mq
			ci.MQPopTable = append(ci.MQPopTable, q)
			return nil
		})
	}
	return nil
}
