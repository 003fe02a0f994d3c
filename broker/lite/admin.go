package lite

// The lite admin codes' answers (Apache 5.5 LiteManagerProcessor): the
// bodies as fastjson writes them, Apache's refusal texts. Lists are capped
// at maxReturnCount names.

import (
	"sort"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/jsonlib"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// maxReturnCount bounds the names one answer lists (MAX_RETURN_COUNT).
const maxReturnCount = 10000

// ClientGroup is a subscriber (ClientGroup): "*" for a wildcard group.
type ClientGroup struct {
	ClientID string `json:"clientId"`
	Group    string `json:"group"`
}

type brokerLiteInfo struct {
	StoreType             string              `json:"storeType"`
	MaxLmqNum             int64               `json:"maxLmqNum"`
	CurrentLmqNum         int64               `json:"currentLmqNum"`
	LiteSubscriptionCount int64               `json:"liteSubscriptionCount"`
	OrderInfoCount        int                 `json:"orderInfoCount"`
	CqTableSize           int64               `json:"cqTableSize"`
	OffsetTableSize       int                 `json:"offsetTableSize"`
	EventMapSize          int                 `json:"eventMapSize"`
	TopicMeta             map[string]int64    `json:"topicMeta"`
	GroupMeta             map[string][]string `json:"groupMeta"`
}

// groupMeta is parent topic → its lite groups (LiteMetadataUtil.getSubscriberGroupMap).
func (s *Service) groupMeta() map[string][]string {
	out := map[string][]string{}
	for name, gc := range s.d.Groups.Snapshot().Groups {
		if t := gc.LiteBindTopic(); t != "" && len(out[t]) < maxReturnCount {
			out[t] = append(out[t], name)
		}
	}
	for _, gs := range out {
		sort.Strings(gs)
	}
	return out
}

// BrokerLiteInfo is GET_BROKER_LITE_INFO's body.
func (s *Service) BrokerLiteInfo() ([]byte, error) {
	cfg := s.d.Config()
	offsetTableSize, cqTableSize, lite := 0, int(s.d.Store.LmqNum()), map[string]int64{}
	if s.d.Meta != nil {
		offsetTableSize, cqTableSize, lite = s.d.Meta()
	}
	subs, events := s.Counts()
	orders := 0
	if s.d.Orders != nil {
		orders = s.d.Orders.LiteOrderCount()
	}
	b := brokerLiteInfo{StoreType: "default", MaxLmqNum: cfg.MaxLmqConsumeQueueNum, CurrentLmqNum: s.d.Store.LmqNum(),
		LiteSubscriptionCount: subs, OrderInfoCount: orders, CqTableSize: int64(cqTableSize),
		OffsetTableSize: offsetTableSize, EventMapSize: events, TopicMeta: lite, GroupMeta: s.groupMeta()}
	return jsonlib.Std.Marshal(b)
}

// parent refuses a parent topic that is missing or not LITE.
func (s *Service) parent(topic string) (*tables.TopicConfig, error) {
	tc, ok := s.d.Topics.Get(topic)
	if !ok {
		return nil, remoting.Refuse(remoting.TopicNotExist, tables.ErrTopicNotExist, "Topic [%s] not exist.", topic)
	}
	if !tc.Lite() {
		return nil, remoting.Refuse(remoting.InvalidParameter, nil, "Topic [%s] type not match.", topic)
	}
	return tc, nil
}

type parentTopicInfo struct {
	Topic          string   `json:"topic"`
	TTL            int64    `json:"ttl"`
	Groups         []string `json:"groups,omitempty"`
	LmqNum         int64    `json:"lmqNum"`
	LiteTopicCount int      `json:"liteTopicCount"`
}

// ParentTopicInfo is GET_PARENT_TOPIC_INFO's body.
func (s *Service) ParentTopicInfo(topic string) ([]byte, error) {
	tc, err := s.parent(topic)
	if err != nil {
		return nil, err
	}
	n := 0
	s.d.Store.ForEachLMQ(func(name string, _ int64) bool {
		if message.LiteQueueOf(name, topic) {
			n++
		}
		return true
	})
	b := parentTopicInfo{Topic: topic, TTL: tc.LiteExpiration(), Groups: s.groupMeta()[topic], LmqNum: s.d.Store.LmqNum(),
		LiteTopicCount: n}
	return jsonlib.Std.Marshal(b)
}

type topicOffset struct {
	MinOffset           int64 `json:"minOffset"`
	MaxOffset           int64 `json:"maxOffset"`
	LastUpdateTimestamp int64 `json:"lastUpdateTimestamp"`
}

type liteTopicInfo struct {
	ParentTopic      string        `json:"parentTopic"`
	LiteTopic        string        `json:"liteTopic"`
	Subscriber       []ClientGroup `json:"subscriber"`
	TopicOffset      topicOffset   `json:"topicOffset"`
	ShardingToBroker bool          `json:"shardingToBroker"`
}

// LiteTopicInfo is GET_LITE_TOPIC_INFO's body.
func (s *Service) LiteTopicInfo(parent, lite string) ([]byte, error) {
	if _, err := s.parent(parent); err != nil {
		return nil, err
	}
	lmq := message.LiteQueue(parent, lite)
	var off topicOffset
	if hi := s.d.Store.MaxOffset(lmq, 0); hi > 0 {
		off.MaxOffset = hi
		off.MinOffset = max(0, s.d.Store.MinOffset(lmq, 0))
		off.LastUpdateTimestamp, _ = s.d.Store.StoreTimeAt(lmq, 0, hi-1)
	}
	b := liteTopicInfo{ParentTopic: parent, LiteTopic: lite, Subscriber: s.subscribers(parent, lmq), TopicOffset: off,
		ShardingToBroker: s.d.Owner == nil || s.d.Owner(parent, lite)}
	return jsonlib.Std.Marshal(b)
}

func (s *Service) subscribers(parent, lmq string) []ClientGroup {
	out := []ClientGroup{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.byLMQ[lmq] {
		if len(out) >= maxReturnCount {
			break
		}
		out = append(out, ClientGroup{ClientID: c.id, Group: c.group})
	}
	for g := range s.wildcard[parent] {
		out = append(out, ClientGroup{ClientID: "*", Group: g})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].ClientID < out[j].ClientID
	})
	return out
}

type liteClientInfo struct {
	ParentTopic     string   `json:"parentTopic"`
	Group           string   `json:"group"`
	ClientID        string   `json:"clientId"`
	LastAccessTime  int64    `json:"lastAccessTime"`
	LastConsumeTime int64    `json:"lastConsumeTime"`
	LiteTopicCount  int      `json:"liteTopicCount"`
	LiteTopicSet    []string `json:"liteTopicSet,omitempty"`
}

// LiteClientInfo is GET_LITE_CLIENT_INFO's body.
func (s *Service) LiteClientInfo(parent, group, clientID string, maxCount int) ([]byte, error) {
	if _, err := s.parent(parent); err != nil {
		return nil, err
	}
	gc, ok := s.d.Groups.Get(group)
	if !ok {
		return nil, remoting.Refuse(remoting.SubscriptionGroupNotExist, tables.ErrGroupNotExist, "Group [%s] not exist.", group)
	}
	if gc.LiteBindTopic() != parent {
		return nil, remoting.Refuse(remoting.InvalidParameter, nil, "Subscription [%s]-[%s] not match.", group, parent)
	}
	maxCount = max(0, min(maxCount, maxReturnCount))
	b := liteClientInfo{ParentTopic: parent, Group: group, ClientID: clientID, LastAccessTime: -1, LiteTopicCount: -1}
	s.mu.Lock()
	if c := s.clients[clientID]; c != nil {
		b.LiteTopicCount = len(c.set)
		for q := range c.set {
			if len(b.LiteTopicSet) >= maxCount {
				break
			}
			b.LiteTopicSet = append(b.LiteTopicSet, q)
		}
		if c.ev != nil {
			b.LastAccessTime = c.ev.lastAccess
		}
	}
	s.mu.Unlock()
	sort.Strings(b.LiteTopicSet)
	return jsonlib.Std.Marshal(b)
}

// LagInfo is one lite topic's lag (LiteLagInfo).
type LagInfo struct {
	LiteTopic                   string `json:"liteTopic"`
	LagCount                    int64  `json:"lagCount"`
	EarliestUnconsumedTimestamp int64  `json:"earliestUnconsumedTimestamp"`
}

type offsetWrapper struct {
	BrokerOffset   int64 `json:"brokerOffset"`
	ConsumerOffset int64 `json:"consumerOffset"`
	PullOffset     int64 `json:"pullOffset"`
	LastTimestamp  int64 `json:"lastTimestamp"`
}

type liteGroupInfo struct {
	Group                       string         `json:"group"`
	ParentTopic                 string         `json:"parentTopic"`
	LiteTopic                   string         `json:"liteTopic,omitempty"`
	LagCountTopK                []LagInfo      `json:"lagCountTopK,omitempty"`
	TotalLagCount               int64          `json:"totalLagCount"`
	LagTimestampTopK            []LagInfo      `json:"lagTimestampTopK,omitempty"`
	EarliestUnconsumedTimestamp int64          `json:"earliestUnconsumedTimestamp"`
	LiteTopicOffsetWrapper      *offsetWrapper `json:"liteTopicOffsetWrapper,omitempty"`
}

// liteGroup refuses a group that is missing or not a lite group.
func (s *Service) liteGroup(group string) (*tables.GroupConfig, error) {
	gc, ok := s.d.Groups.Get(group)
	if !ok {
		return nil, remoting.Refuse(remoting.SubscriptionGroupNotExist, tables.ErrGroupNotExist, "Group [%s] not exist.", group)
	}
	if gc.LiteBindTopic() == "" {
		return nil, remoting.Refuse(remoting.InvalidParameter, nil, "Group [%s] is not a LITE group.", group)
	}
	return gc, nil
}

// LiteGroupInfo is GET_LITE_GROUP_INFO's body: the group's lag over its
// lite topics (top K by count and by age), or one lite topic's offsets.
func (s *Service) LiteGroupInfo(group, lite string, topK int) ([]byte, error) {
	gc, err := s.liteGroup(group)
	if err != nil {
		return nil, err
	}
	parent := gc.LiteBindTopic()
	b := liteGroupInfo{Group: group, ParentTopic: parent, LiteTopic: lite}
	if lite != "" {
		lmq := message.LiteQueue(parent, lite)
		b.TotalLagCount, b.EarliestUnconsumedTimestamp = -1, -1
		if hi := s.d.Store.MaxOffset(lmq, 0); hi > 0 {
			if off, ok := s.d.Offsets.Query(group, lmq, 0); ok && off >= 0 {
				b.TotalLagCount = hi - off
				b.EarliestUnconsumedTimestamp, _ = s.d.Store.StoreTimeAt(lmq, 0, off)
				w := &offsetWrapper{BrokerOffset: hi, ConsumerOffset: off}
				if off-1 >= 0 {
					w.LastTimestamp, _ = s.d.Store.StoreTimeAt(lmq, 0, off-1)
				}
				b.LiteTopicOffsetWrapper = w
			}
		}
		return jsonlib.Std.Marshal(b)
	}
	topK = max(0, min(topK, maxReturnCount))
	var lags []LagInfo
	s.d.Store.ForEachLMQ(func(name string, maxOff int64) bool {
		_, l, ok := message.ParseLiteQueue(name)
		if !ok || !message.LiteQueueOf(name, parent) {
			return true
		}
		off, ok := s.d.Offsets.Query(group, name, 0)
		if !ok || off < 0 || off >= maxOff {
			return true
		}
		ts, _ := s.d.Store.StoreTimeAt(name, 0, off)
		lags = append(lags, LagInfo{LiteTopic: l, LagCount: maxOff - off, EarliestUnconsumedTimestamp: ts})
		b.TotalLagCount += maxOff - off
		return true
	})
	b.EarliestUnconsumedTimestamp = -1
	for _, l := range lags {
		if b.EarliestUnconsumedTimestamp < 0 || l.EarliestUnconsumedTimestamp < b.EarliestUnconsumedTimestamp {
			b.EarliestUnconsumedTimestamp = l.EarliestUnconsumedTimestamp
		}
	}
	byCount := append([]LagInfo(nil), lags...)
	// Ties go by name, so that two calls list the same lag in one order.
	sort.Slice(byCount, func(i, j int) bool {
		a, b := byCount[i], byCount[j]
		return a.LagCount > b.LagCount || a.LagCount == b.LagCount && a.LiteTopic < b.LiteTopic
	})
	sort.Slice(lags, func(i, j int) bool {
		a, b := lags[i], lags[j]
		return a.EarliestUnconsumedTimestamp < b.EarliestUnconsumedTimestamp ||
			a.EarliestUnconsumedTimestamp == b.EarliestUnconsumedTimestamp && a.LiteTopic < b.LiteTopic
	})
	b.LagCountTopK = byCount[:min(topK, len(byCount))]
	b.LagTimestampTopK = lags[:min(topK, len(lags))]
	return jsonlib.Std.Marshal(b)
}

// TriggerLiteDispatch is TRIGGER_LITE_DISPATCH after its group checks.
func (s *Service) TriggerLiteDispatch(group, clientID string) error {
	if _, err := s.liteGroup(group); err != nil {
		return err
	}
	s.TriggerDispatch(group, clientID)
	return nil
}
