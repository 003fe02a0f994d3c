package adminclient

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/rocketgo/rocketgo/internal/fastjson"
	"github.com/rocketgo/rocketgo/remoting"
)

// Connection is one client of a ConsumerConnection.
type Connection struct {
	ClientID   string `json:"clientId"`
	ClientAddr string `json:"clientAddr"`
	Language   string `json:"language"`
	Version    int    `json:"version"`
}

// ConsumerConnection is GET_CONSUMER_CONNECTION_LIST's body.
type ConsumerConnection struct {
	ConnectionSet     []Connection `json:"connectionSet"`
	SubscriptionTable map[string]struct {
		Topic     string   `json:"topic"`
		SubString string   `json:"subString"`
		TagsSet   []string `json:"tagsSet"`
	} `json:"subscriptionTable"`
	ConsumeType      string `json:"consumeType"`
	MessageModel     string `json:"messageModel"`
	ConsumeFromWhere string `json:"consumeFromWhere"`
}

// MinVersion is ConsumerConnection.computeMinVersion.
func (cc *ConsumerConnection) MinVersion() int {
	v := int(^uint(0) >> 1)
	for _, c := range cc.ConnectionSet {
		v = min(v, c.Version)
	}
	return v
}

// ErrConsumerNotOnline is Apache's "Not found the consumer group connection".
var ErrConsumerNotOnline = errors.New("not found the consumer group connection")

// ConsumerConnection asks addr, or when addr is "" a broker of the group's
// retry topic, for the group's connected consumers (ErrConsumerNotOnline
// when there are none), as examineConsumerConnectionInfo.
func (c *Client) ConsumerConnection(group, addr string) (*ConsumerConnection, error) {
	if addr == "" {
		r, err := c.Route(RetryTopic(group))
		if err != nil {
			return nil, err
		}
		for _, bd := range r.SortedBrokers() {
			if addr = bd.SelectAddr(); addr != "" {
				break
			}
		}
		if addr == "" {
			return nil, ErrConsumerNotOnline
		}
	}
	resp, err := c.Call(addr, remoting.GetConsumerConnectionList, map[string]string{"consumerGroup": group}, nil)
	if err != nil {
		return nil, err
	}
	var cc ConsumerConnection
	if err := json.Unmarshal(resp.Body, &cc); err != nil {
		return nil, fmt.Errorf("%s: consumer connection: %w", addr, err)
	}
	if len(cc.ConnectionSet) == 0 {
		return nil, ErrConsumerNotOnline
	}
	sort.Slice(cc.ConnectionSet, func(i, j int) bool { return cc.ConnectionSet[i].ClientID < cc.ConnectionSet[j].ClientID })
	return &cc, nil
}

// RetryTopic is MixAll.getRetryTopic.
func RetryTopic(group string) string { return "%RETRY%" + group }

// GroupOfRetryTopic is KeyBuilder.parseGroup: the group of a retry topic,
// "%RETRY%group" or pop's "%RETRY%group+topic".
func GroupOfRetryTopic(topic string) string {
	g := strings.TrimPrefix(topic, "%RETRY%")
	if parts := strings.Split(g, "+"); len(parts) == 2 {
		return parts[0]
	}
	return g
}

// GroupConsumeStats is examineConsumeStats(consumerGroup, topic): the
// group's queues over the brokers of its retry topic's route (or, failing
// that, of topic's); an empty result is an error naming why.
func (c *Client) GroupConsumeStats(group, topic string) (*ConsumeStats, error) {
	routeTopics := []string{RetryTopic(group)}
	if topic != "" {
		routeTopics = append(routeTopics, topic, "%RETRY%"+group+"+"+topic)
	}
	var r *Route
	var err error
	for _, t := range routeTopics {
		if r, err = c.Route(t); err == nil {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	all := &ConsumeStats{}
	for _, bd := range r.BrokerDatas {
		addr := bd.SelectAddr()
		if addr == "" {
			continue
		}
		cs, err := c.ConsumeStats(addr, group, topic)
		if err != nil {
			return nil, err
		}
		all.Merge(cs)
	}
	if len(all.Queues) == 0 {
		cc, err := c.ConsumerConnection(group, "")
		if err != nil {
			return nil, errors.New("not found the consumer group consume stats, because return offset table is empty, maybe the consumer not online")
		}
		if cc.MessageModel == "BROADCASTING" {
			return nil, errors.New("not found the consumer group consume stats, because return offset table is empty, the consumer is under the broadcast mode")
		}
	}
	return all, nil
}

// DiffTotal is ConsumeStats.computeTotalDiff.
func (cs *ConsumeStats) DiffTotal() int64 {
	var d int64
	for _, q := range cs.Queues {
		d += q.BrokerOffset - q.ConsumerOffset
	}
	return d
}

// ProducerConnection is GET_PRODUCER_CONNECTION_LIST: the connected
// producers of group, asked of a broker of topic's route (none is
// ErrProducerNotOnline), as examineProducerConnectionInfo.
func (c *Client) ProducerConnection(group, topic string) ([]Connection, error) {
	r, err := c.Route(topic)
	if err != nil {
		return nil, err
	}
	addr := ""
	for _, bd := range r.SortedBrokers() {
		if addr = bd.SelectAddr(); addr != "" {
			break
		}
	}
	if addr == "" {
		return nil, ErrProducerNotOnline
	}
	resp, err := c.Call(addr, remoting.GetProducerConnectionList, map[string]string{"producerGroup": group}, nil)
	if err != nil {
		return nil, err
	}
	var pc struct {
		ConnectionSet []Connection `json:"connectionSet"`
	}
	if err := json.Unmarshal(resp.Body, &pc); err != nil {
		return nil, fmt.Errorf("%s: producer connection: %w", addr, err)
	}
	if len(pc.ConnectionSet) == 0 {
		return nil, ErrProducerNotOnline
	}
	sort.Slice(pc.ConnectionSet, func(i, j int) bool { return pc.ConnectionSet[i].ClientID < pc.ConnectionSet[j].ClientID })
	return pc.ConnectionSet, nil
}

// ErrProducerNotOnline is Apache's "Not found the producer group connection".
var ErrProducerNotOnline = errors.New("not found the producer group connection")

// ProducerInfo is one producer connection of GET_ALL_PRODUCER_INFO.
type ProducerInfo struct {
	ClientID            string `json:"clientId"`
	RemoteIP            string `json:"remoteIP"`
	Language            string `json:"language"`
	Version             int    `json:"version"`
	LastUpdateTimestamp int64  `json:"lastUpdateTimestamp"`
}

// ProducerGroup is one group of a ProducerTableInfo.
type ProducerGroup struct {
	Group     string
	Producers []ProducerInfo
}

// AllProducerInfo is GET_ALL_PRODUCER_INFO: the producers connected to
// the broker at addr, by group, in the order of the broker's answer (a
// Java HashMap's, which Apache's tool walks).
func (c *Client) AllProducerInfo(addr string) ([]ProducerGroup, error) {
	resp, err := c.Call(addr, remoting.GetAllProducerInfo, nil, nil)
	if err != nil {
		return nil, err
	}
	data, err := field(resp.Body, "data")
	if err != nil || data == nil || string(data) == "null" {
		if err != nil {
			err = fmt.Errorf("%s: producer table: %w", addr, err)
		}
		return nil, err
	}
	fs, err := fastjson.Fields(data)
	if err != nil {
		return nil, fmt.Errorf("%s: producer table: %w", addr, err)
	}
	out := make([]ProducerGroup, 0, len(fs))
	for _, f := range fs {
		var g ProducerGroup
		if err := json.Unmarshal(f.Key, &g.Group); err != nil {
			return nil, fmt.Errorf("%s: producer table: %w", addr, err)
		}
		if err := json.Unmarshal(f.Val, &g.Producers); err != nil {
			return nil, fmt.Errorf("%s: producer table %s: %w", addr, g.Group, err)
		}
		out = append(out, g)
	}
	return out, nil
}
