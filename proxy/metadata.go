package proxy

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	v2 "github.com/rocketgo/rocketgo/apis/v2"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/rocketgo/rocketgo/remoting"
)

// Topic and subscription group metadata read from the brokers, as Apache's
// ClusterMetadataService does, cached for metaTTL.

const (
	metaTTL = 5 * time.Second
	maxMeta = 10_000 // cached entries (keys are names clients send)
)

// groupConfig is the part of SubscriptionGroupConfig the settings need.
type groupConfig struct {
	GroupName             string            `json:"groupName"`
	ConsumeMessageOrderly bool              `json:"consumeMessageOrderly"`
	RetryMaxTimes         int32             `json:"retryMaxTimes"`
	GroupRetryPolicy      *groupRetryPolicy `json:"groupRetryPolicy"`
	Attributes            map[string]string `json:"attributes"`
}

// attr is a group attribute, stored with or without Apache's '+' mark.
func (g *groupConfig) attr(key string) (string, bool) {
	if v, ok := g.Attributes[key]; ok {
		return v, true
	}
	v, ok := g.Attributes["+"+key]
	return v, ok
}

// liteBindTopic is the LITE topic of a lite group (lite.bind.topic), ""
// for any other group (SubscriptionGroupConfig.getLiteBindTopic).
func (g *groupConfig) liteBindTopic() string {
	v, _ := g.attr("lite.bind.topic")
	return v
}

// liteQuota is lite.sub.client.quota, 2000 when unset
// (SubscriptionGroupConfig.getLiteSubClientQuota), clamped to an int32.
func (g *groupConfig) liteQuota() int32 {
	v, ok := g.attr("lite.sub.client.quota")
	if !ok {
		return defaultLiteClientQuota
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return defaultLiteClientQuota
	}
	return int32(max(min(n, math.MaxInt32), math.MinInt32))
}

// defaultLiteClientQuota is lite.sub.client.quota's default.
const defaultLiteClientQuota = 2000

// groupRetryPolicy is GroupRetryPolicy: an exponential or a customized
// schedule.
type groupRetryPolicy struct {
	Type                   string               `json:"type"`
	ExponentialRetryPolicy *exponentialSchedule `json:"exponentialRetryPolicy"`
	CustomizedRetryPolicy  *struct {
		Next []int64 `json:"next"`
	} `json:"customizedRetryPolicy"`
}

// exponentialSchedule is ExponentialRetryPolicy (ms).
type exponentialSchedule struct {
	Initial    int64   `json:"initial"`
	Max        int64   `json:"max"`
	Multiplier float32 `json:"multiplier"`
}

// defaultRetryNext is CustomizedRetryPolicy's default schedule (ms): the
// broker's delay levels.
var defaultRetryNext = []int64{1000, 5000, 10000, 30000, 60000, 120000, 180000, 240000, 300000, 360000,
	420000, 480000, 540000, 600000, 1200000, 1800000, 3600000, 7200000}

// retryPolicy is Apache's mergeSubscriptionData backoff: retryMaxTimes+1
// attempts, the group's exponential or customized schedule.
func (g *groupConfig) retryPolicy() *v2.RetryPolicy {
	p := &v2.RetryPolicy{MaxAttempts: g.RetryMaxTimes + 1}
	if rp := g.GroupRetryPolicy; rp != nil && rp.Type == "EXPONENTIAL" && rp.ExponentialRetryPolicy != nil {
		e := rp.ExponentialRetryPolicy
		p.Strategy = &v2.RetryPolicy_ExponentialBackoff{ExponentialBackoff: &v2.ExponentialBackoff{
			Initial: durationpb.New(time.Duration(e.Initial) * time.Millisecond),
			Max:     durationpb.New(time.Duration(e.Max) * time.Millisecond), Multiplier: e.Multiplier}}
		return p
	}
	next := defaultRetryNext
	if rp := g.GroupRetryPolicy; rp != nil && rp.CustomizedRetryPolicy != nil && len(rp.CustomizedRetryPolicy.Next) > 0 {
		next = rp.CustomizedRetryPolicy.Next
	}
	cb := &v2.CustomizedBackoff{}
	for _, ms := range next {
		cb.Next = append(cb.Next, durationpb.New(time.Duration(ms)*time.Millisecond))
	}
	p.Strategy = &v2.RetryPolicy_CustomizedBackoff{CustomizedBackoff: cb}
	return p
}

type metaEntry struct {
	at        time.Time
	group     *groupConfig
	topicType string
}

type metaCache struct {
	mu sync.Mutex
	m  map[string]metaEntry
}

func (mc *metaCache) get(key string, now time.Time) (metaEntry, bool) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	e, ok := mc.m[key]
	return e, ok && now.Sub(e.at) < metaTTL
}

func (mc *metaCache) put(key string, e metaEntry) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if mc.m == nil || len(mc.m) >= maxMeta {
		mc.m = make(map[string]metaEntry)
	}
	mc.m[key] = e
}

// masters lists the master addresses of every broker the name servers know
// (GET_BROKER_CLUSTER_INFO).
func (c *cluster) masters(ctx context.Context) ([]string, error) {
	resp, err := c.invokeNamesrv(ctx, remoting.GetBrokerClusterInfo, nil)
	if err != nil {
		return nil, fmt.Errorf("cluster info: %w", err)
	}
	if resp.Code != remoting.Success {
		return nil, fmt.Errorf("cluster info: code %d %s", resp.Code, resp.Remark)
	}
	var ci struct {
		BrokerAddrTable map[string]struct {
			BrokerAddrs map[string]string `json:"brokerAddrs"`
		} `json:"brokerAddrTable"`
	}
	if err := json.Unmarshal(remoting.QuoteIntKeys(resp.Body), &ci); err != nil {
		return nil, fmt.Errorf("cluster info: %w", err)
	}
	var out []string
	for _, b := range ci.BrokerAddrTable {
		if a := b.BrokerAddrs["0"]; a != "" {
			out = append(out, a)
		}
	}
	return out, nil
}

// groupConfig returns the subscription group's config from the first
// master that has it; nil when none does.
func (s *Server) groupConfig(ctx context.Context, group string) (*groupConfig, error) {
	now := time.Now()
	if e, ok := s.meta.get("g\x00"+group, now); ok {
		return e.group, nil
	}
	addrs, err := s.cluster.masters(ctx)
	if err != nil {
		return nil, err
	}
	var found *groupConfig
	for _, a := range addrs {
		resp, err := s.cluster.invoke(ctx, a, remoting.NewRequest(remoting.GetSubscriptionGroupConfig, map[string]string{"group": group}, nil))
		if err != nil || resp.Code != remoting.Success {
			continue
		}
		g := &groupConfig{RetryMaxTimes: 16}
		if json.Unmarshal(resp.Body, g) == nil {
			found = g
			break
		}
	}
	s.meta.put("g\x00"+group, metaEntry{at: now, group: found})
	return found, nil
}

// topicType is the topic's message type as Apache's ClusterMetadataService
// gives it: its message.type attribute (TopicConfig.getTopicMessageType:
// NORMAL when it has none), UNSPECIFIED when the broker at addr has no such
// topic or does not answer.
func (s *Server) topicType(ctx context.Context, topic string, addr string) string {
	now := time.Now()
	if e, ok := s.meta.get("t\x00"+topic, now); ok {
		return e.topicType
	}
	t := "UNSPECIFIED"
	resp, err := s.cluster.invoke(ctx, addr, remoting.NewRequest(remoting.GetTopicConfig, map[string]string{"topic": topic}, nil))
	if err == nil && resp.Code == remoting.Success {
		var tc struct {
			Attributes       map[string]string `json:"attributes"`
			TopicMessageType string            `json:"topicMessageType"`
		}
		if json.Unmarshal(resp.Body, &tc) == nil {
			t = tc.Attributes["message.type"]
			if t == "" {
				t = tc.Attributes["+message.type"]
			}
			if t == "" {
				t = tc.TopicMessageType
			}
			if t == "" {
				t = "NORMAL"
			}
		}
	}
	s.meta.put("t\x00"+topic, metaEntry{at: now, topicType: t})
	return t
}

// topicMessageTypes is the accept_message_types of the topic's queues, as
// Apache's RouteActivity maps the topic's type.
func (s *Server) topicMessageTypes(ctx context.Context, topic string, addr string) []v2.MessageType {
	switch s.topicType(ctx, topic, addr) {
	case "NORMAL":
		return []v2.MessageType{v2.MessageType_NORMAL}
	case "FIFO":
		return []v2.MessageType{v2.MessageType_FIFO}
	case "DELAY":
		return []v2.MessageType{v2.MessageType_DELAY}
	case "TRANSACTION":
		return []v2.MessageType{v2.MessageType_TRANSACTION}
	case "PRIORITY":
		return []v2.MessageType{v2.MessageType_PRIORITY}
	case "LITE":
		return []v2.MessageType{v2.MessageType_LITE}
	case "MIXED":
		return []v2.MessageType{v2.MessageType_NORMAL, v2.MessageType_FIFO, v2.MessageType_DELAY, v2.MessageType_TRANSACTION}
	}
	return []v2.MessageType{v2.MessageType_MESSAGE_TYPE_UNSPECIFIED}
}
