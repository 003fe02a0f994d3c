package processor

// mqadmin's broker requests: runtime info, topic and consume statistics,
// client connections, broker config, offset reset, topic config lookups,
// messages by offset. Each handler decodes its header, calls one broker
// service and encodes the result in Apache's (fastjson) shape.

import (
	"sort"
	"strconv"
	"strings"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/broker/admin"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/remoting"
)

func (p *brokerProcs) registerAdmin(t remoting.Table) {
	t[remoting.GetBrokerRuntimeInfo] = p.runtimeInfo
	t[remoting.GetTopicStatsInfo] = p.topicStats
	t[remoting.GetConsumeStats] = p.consumeStats
	t[remoting.GetConsumerConnectionList] = p.consumerConnections
	t[remoting.GetProducerConnectionList] = p.producerConnections
	t[remoting.QueryTopicConsumeByWho] = p.topicConsumeByWho
	t[remoting.QueryTopicsByConsumer] = p.topicsByConsumer
	t[remoting.GetTopicConfig] = p.topicConfig
	t[remoting.GetBrokerConfig] = p.brokerConfig
	t[remoting.UpdateBrokerConfig] = p.updateBrokerConfig
	t[remoting.InvokeBrokerToResetOffset] = p.resetOffset
	t[remoting.ViewMessageByID] = p.viewMessage
	t[remoting.GetConsumerRunningInfo] = p.consumerRunningInfo // callclient.go
	t[remoting.QueryConsumeTimeSpan] = p.consumeTimeSpan       // timespan.go
	t[remoting.QueryConsumeQueue] = p.queryConsumeQueue
	t[remoting.DeleteExpiredCommitLog] = p.deleteExpiredCommitLog
	t[remoting.ConsumeMessageDirectly] = p.consumeMessageDirectly
	t[remoting.InvokeBrokerToGetConsumerStatus] = p.consumerStatus // consumerstatus.go
	t[remoting.CleanExpiredConsumeQueue] = p.cleanExpiredConsumeQueue
	t[remoting.CleanUnusedTopic] = p.cleanUnusedTopic
	p.registerAdminTables(t)
}

func okBody(req *remoting.Command, body []byte) *remoting.Command {
	resp := remoting.NewResponse(req, remoting.Success, "")
	resp.Body = body
	return resp
}

// okJSON answers v as JSON.
func (p *brokerProcs) okJSON(req *remoting.Command, v any) *remoting.Command {
	body, err := json.Marshal(v)
	if err != nil {
		return p.fail(req, err)
	}
	return okBody(req, body)
}

func (p *brokerProcs) runtimeInfo(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	return p.okJSON(req, struct {
		Table map[string]string `json:"table"`
	}{p.ops.RuntimeInfo()})
}

// topicStats is GET_TOPIC_STATS_INFO: TopicStatsTable,
// {"offsetTable":{<MessageQueue>:{"lastUpdateTimestamp":..,"maxOffset":..,"minOffset":..}},"topicPutTps":12.5}.
func (p *brokerProcs) topicStats(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	topic, err := req.RequireStr("topic")
	if err != nil {
		return p.fail(req, err)
	}
	qs, err := p.admin.TopicStats(topic)
	if err != nil {
		return p.fail(req, err)
	}
	// ~110 bytes and the two names per queue: sized once.
	body := append(make([]byte, 0, 64+len(qs)*(110+2*len(topic))), `{"offsetTable":{`...)
	for i, q := range qs {
		if i > 0 {
			body = append(body, ',')
		}
		body = q.Queue.AppendJSON(body)
		body = append(body, `:{"lastUpdateTimestamp":`...)
		body = strconv.AppendInt(body, q.LastUpdateTimestamp, 10)
		body = append(body, `,"maxOffset":`...)
		body = strconv.AppendInt(body, q.MaxOffset, 10)
		body = append(body, `,"minOffset":`...)
		body = strconv.AppendInt(body, q.MinOffset, 10)
		body = append(body, '}')
	}
	body = append(body, `},"topicPutTps":`...)
	body = append(body, broker.JavaDouble(p.admin.TopicPutTps(topic))...)
	body = append(body, '}')
	return okBody(req, body)
}

// consumeStats is GET_CONSUME_STATS: ConsumeStats,
// {"consumeTps":12.5,"offsetTable":{<MessageQueue>:{"brokerOffset":..,"consumerOffset":..,"lastTimestamp":..,"pullOffset":..}}}.
func (p *brokerProcs) consumeStats(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	group, err := req.RequireStr("consumerGroup")
	if err != nil {
		return p.fail(req, err)
	}
	r := admin.ConsumeStatsRequest{Group: group, Topic: req.Str("topic")}
	if list := req.Str("topicList"); list != "" {
		r.Topics = strings.Split(list, ";")
	}
	qs := p.admin.ConsumeStats(r)
	return okBody(req, p.appendConsumeStats(make([]byte, 0, 64+len(qs)*160), group, qs))
}

// appendConsumeStats appends ConsumeStats as fastjson writes it.
func (p *brokerProcs) appendConsumeStats(body []byte, group string, qs []admin.QueueConsumeStats) []byte {
	// Apache sums the group's rate over the topics the answer covers.
	var tps float64
	for i, q := range qs {
		if i == 0 || q.Queue.Topic != qs[i-1].Queue.Topic {
			tps += p.admin.ConsumeTps(group, q.Queue.Topic)
		}
	}
	body = append(body, `{"consumeTps":`...)
	body = append(body, broker.JavaDouble(tps)...)
	body = append(body, `,"offsetTable":{`...)
	for i, q := range qs {
		if i > 0 {
			body = append(body, ',')
		}
		body = q.Queue.AppendJSON(body)
		body = append(body, `:{"brokerOffset":`...)
		body = strconv.AppendInt(body, q.BrokerOffset, 10)
		body = append(body, `,"consumerOffset":`...)
		body = strconv.AppendInt(body, q.ConsumerOffset, 10)
		body = append(body, `,"lastTimestamp":`...)
		body = strconv.AppendInt(body, q.LastTimestamp, 10)
		body = append(body, `,"pullOffset":`...)
		body = strconv.AppendInt(body, q.ConsumerOffset, 10)
		body = append(body, '}')
	}
	return append(body, "}}"...)
}

// subscriptionData is Apache's SubscriptionData as fastjson writes it.
type subscriptionData struct {
	ClassFilterMode bool     `json:"classFilterMode"`
	CodeSet         []int32  `json:"codeSet"`
	ExpressionType  string   `json:"expressionType"`
	SubString       string   `json:"subString"`
	SubVersion      int64    `json:"subVersion"`
	TagsSet         []string `json:"tagsSet"`
	Topic           string   `json:"topic"`
}

func toSubscriptionData(s *tables.Subscription) subscriptionData {
	d := subscriptionData{CodeSet: []int32{}, TagsSet: []string{}, ExpressionType: s.ExpressionType,
		SubString: s.SubString, SubVersion: s.SubVersion, Topic: s.Topic}
	if d.ExpressionType == "" {
		d.ExpressionType = "TAG"
	}
	d.TagsSet = append(d.TagsSet, s.Tags...)
	for c := range s.Codes {
		d.CodeSet = append(d.CodeSet, int32(c))
	}
	sort.Slice(d.CodeSet, func(i, j int) bool { return d.CodeSet[i] < d.CodeSet[j] })
	return d
}

// consumerConnections is GET_CONSUMER_CONNECTION_LIST: ConsumerConnection.
func (p *brokerProcs) consumerConnections(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	group, err := req.RequireStr("consumerGroup")
	if err != nil {
		return p.fail(req, err)
	}
	state, err := p.admin.ConsumerConnections(group)
	if err != nil {
		return p.fail(req, err)
	}
	subs := make(map[string]subscriptionData, len(state.Subscriptions))
	for t, s := range state.Subscriptions {
		subs[t] = toSubscriptionData(s)
	}
	return p.okJSON(req, struct {
		ConnectionSet     []tables.Connection         `json:"connectionSet"`
		ConsumeFromWhere  string                      `json:"consumeFromWhere"`
		ConsumeType       string                      `json:"consumeType"`
		MessageModel      string                      `json:"messageModel"`
		SubscriptionTable map[string]subscriptionData `json:"subscriptionTable"`
	}{state.Connections, state.Info.ConsumeFromWhere, state.Info.ConsumeType, state.Info.MessageModel, subs})
}

// producerConnections is GET_PRODUCER_CONNECTION_LIST: ProducerConnection.
func (p *brokerProcs) producerConnections(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	group, err := req.RequireStr("producerGroup")
	if err != nil {
		return p.fail(req, err)
	}
	conns, err := p.admin.ProducerConnections(group)
	if err != nil {
		return p.fail(req, err)
	}
	return p.okJSON(req, struct {
		ConnectionSet []tables.Connection `json:"connectionSet"`
	}{conns})
}

// topicConsumeByWho is QUERY_TOPIC_CONSUME_BY_WHO: GroupList.
func (p *brokerProcs) topicConsumeByWho(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	topic, err := req.RequireStr("topic")
	if err != nil {
		return p.fail(req, err)
	}
	return p.okJSON(req, struct {
		GroupList []string `json:"groupList"`
	}{p.admin.TopicConsumers(topic)})
}

// topicsByConsumer is QUERY_TOPICS_BY_CONSUMER: TopicList.
func (p *brokerProcs) topicsByConsumer(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	group, err := req.RequireStr("group")
	if err != nil {
		return p.fail(req, err)
	}
	ct := p.admin.ConsumerTopics(group)
	return p.okJSON(req, struct {
		BrokerAddr string   `json:"brokerAddr"`
		TopicList  []string `json:"topicList"`
	}{ct.BrokerAddr, ct.Topics})
}

// topicConfig is GET_TOPIC_CONFIG: the TopicConfig.
func (p *brokerProcs) topicConfig(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	topic, err := req.RequireStr("topic")
	if err != nil {
		return p.fail(req, err)
	}
	tc, err := p.admin.TopicConfig(topic)
	if err != nil {
		return p.fail(req, err)
	}
	return p.okJSON(req, tc)
}

// brokerConfig is GET_BROKER_CONFIG: properties text, the data version in
// the header.
func (p *brokerProcs) brokerConfig(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	body, version := p.ops.ConfigProperties()
	v, err := json.Marshal(version)
	if err != nil {
		return p.fail(req, err)
	}
	resp := okBody(req, body)
	resp.Set("version", string(v))
	return resp
}

// updateBrokerConfig is UPDATE_BROKER_CONFIG: properties text in the body.
func (p *brokerProcs) updateBrokerConfig(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	ch, err := p.ops.UpdateConfig(req.Body)
	if err != nil {
		return p.refuse(c, req, err)
	}
	p.log.Info().Str("remote", c.Remote).Strs("applied", ch.Applied).Strs("recordedForRestart", ch.Recorded).
		Strs("ignored", ch.Ignored).Msg("broker config updated")
	return remoting.NewResponse(req, remoting.Success, "")
}

// resetOffset is INVOKE_BROKER_TO_RESET_OFFSET: the consumers are told
// (RESET_CONSUMER_CLIENT_OFFSET) and the answer is the same ResetOffsetBody.
func (p *brokerProcs) resetOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	topic, group, err := topicAndGroup(req)
	if err != nil {
		return p.fail(req, err)
	}
	ts, err := req.Int64("timestamp")
	if err != nil {
		return p.fail(req, err)
	}
	r := admin.ResetOffsetRequest{Topic: topic, Group: group, Timestamp: ts, Force: req.Bool("isForce")}
	// Apache 5.x's queueId (default -1) and offset: absent from 4.x tools.
	if req.Str("queueId") != "" {
		if r.QueueID, err = req.Int32("queueId"); err != nil {
			return p.fail(req, err)
		}
		r.OneQueue = r.QueueID >= 0
	}
	if req.Str("offset") != "" {
		if r.Offset, err = req.Int64("offset"); err != nil {
			return p.fail(req, err)
		}
		r.HasOffset = true
	}
	res, err := p.offsets.ResetOffset(r)
	if err != nil {
		return p.fail(req, err)
	}
	return okBody(req, res.AppendJSON(make([]byte, 0, 64+64*len(res.Offsets))))
}

// viewMessage is VIEW_MESSAGE_BY_ID: the stored record at the commit-log
// offset taken from an offset message id.
func (p *brokerProcs) viewMessage(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	off, err := req.Int64("offset")
	if err != nil {
		return p.fail(req, err)
	}
	rec, err := p.reads.ViewMessage(off)
	if err != nil {
		return p.fail(req, err)
	}
	return okBody(req, rec)
}

// deleteExpiredCommitLog is DELETE_EXPIRED_COMMITLOG (mqadmin
// deleteExpiredCommitLog): expired commit log files go at the next cleanup
// rounds whatever the hour; SUCCESS at once, as Apache.
func (p *brokerProcs) deleteExpiredCommitLog(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	p.admin.DeleteExpiredCommitLog()
	return remoting.NewResponse(req, remoting.Success, "")
}

// cleanExpiredConsumeQueue is CLEAN_EXPIRED_CONSUMEQUEUE (mqadmin
// cleanExpiredCQ): SUCCESS, the cleaning done off the handler.
func (p *brokerProcs) cleanExpiredConsumeQueue(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	p.admin.CleanExpiredConsumeQueues()
	return remoting.NewResponse(req, remoting.Success, "")
}

// cleanUnusedTopic is CLEAN_UNUSED_TOPIC (mqadmin cleanUnusedTopic):
// SUCCESS, the queues of topics no longer configured deleted off the handler.
func (p *brokerProcs) cleanUnusedTopic(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	if unused := p.admin.CleanUnusedTopics(); len(unused) > 0 {
		p.log.Warn().Str("remote", c.Remote).Int("topics", len(unused)).Msg("clean unused topics")
	}
	return remoting.NewResponse(req, remoting.Success, "")
}
