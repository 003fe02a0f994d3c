package processor

// Smaller admin requests of mqadmin and the dashboard, answered as Apache's
// AdminBrokerProcessor answers them: GET_SYSTEM_TOPIC_LIST_FROM_BROKER
// (305), QUERY_CORRECTION_OFFSET (308), CLONE_GROUP_OFFSET (314),
// GET_ALL_PRODUCER_INFO (328), QUERY_SUBSCRIPTION_BY_CONSUMER (345),
// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST (225), GET_BROKER_CONSUME_STATS
// (317), VIEW_BROKER_STATS_DATA (315), UPDATE_AND_CREATE_TOPIC_LIST (18),
// POP_ROLLBACK (200056).

import (
	"sort"
	"strconv"
	"strings"

	jsoniter "github.com/json-iterator/go"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

func (p *brokerProcs) registerAdminTables(t remoting.Table) {
	t[remoting.GetSystemTopicListFromBroker] = p.systemTopicList
	t[remoting.QueryCorrectionOffset] = p.correctionOffset
	t[remoting.CloneGroupOffset] = p.cloneGroupOffset
	t[remoting.GetAllProducerInfo] = p.allProducerInfo
	t[remoting.QuerySubscriptionByConsumer] = p.subscriptionByConsumer
	t[remoting.UpdateAndCreateSubscriptionGroupList] = p.updateSubscriptionGroupList
	t[remoting.GetBrokerConsumeStats] = p.brokerConsumeStats
	t[remoting.ViewBrokerStatsData] = p.viewBrokerStatsData
	t[remoting.UpdateAndCreateTopicList] = p.updateAndCreateTopicList
	t[remoting.PopRollback] = p.popRollback
}

// updateAndCreateTopicList is UPDATE_AND_CREATE_TOPIC_LIST (mqadmin 5.x
// updateTopicList): CreateTopicListRequestBody, {"topicConfigList":
// [TopicConfig,...]}, attributes keyed "+name" as the tools write them;
// each topic created or updated as UPDATE_AND_CREATE_TOPIC does it.
// Apache answers SUCCESS without applying any when one of them is
// unchanged; rocketgo applies the others. A refusal stops the list, those
// before it applied.
func (p *brokerProcs) updateAndCreateTopicList(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	var list struct {
		TopicConfigList []struct {
			tables.TopicConfig
			Attributes map[string]string `json:"attributes"`
		} `json:"topicConfigList"`
	}
	if err := json.Unmarshal(req.Body, &list); err != nil {
		return remoting.NewResponse(req, remoting.SystemError, "decode topic config list: "+err.Error())
	}
	names := make([]string, 0, len(list.TopicConfigList))
	for _, e := range list.TopicConfigList {
		tc := e.TopicConfig
		attrs := make([]string, 0, len(e.Attributes))
		for k, v := range e.Attributes {
			attrs = append(attrs, k+"="+v)
		}
		sort.Strings(attrs)
		var err error
		if tc.Attributes, err = parseTopicAttributes(strings.Join(attrs, ",")); err != nil {
			return p.refuse(c, req, err)
		}
		if err := p.admin.UpdateTopic(tc); err != nil {
			return p.refuse(c, req, err)
		}
		names = append(names, tc.TopicName)
	}
	p.log.Info().Str("remote", c.Remote).Strs("topics", names).Msg("topics created or updated")
	return remoting.NewResponse(req, remoting.Success, "")
}

// popRollback is POP_ROLLBACK (Apache's transferPopToFsStore): the move of
// pop state from Apache's key-value pop store back to its file store.
// rocketgo keeps pop state in files only: SUCCESS, as Apache answers when
// its key-value store is off (the default), with the remark its
// createResponseCommand(null) leaves.
func (p *brokerProcs) popRollback(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	return remoting.NewResponse(req, remoting.Success, "not set any response code")
}

// viewBrokerStatsData is VIEW_BROKER_STATS_DATA (ViewBrokerStatsDataRequestHeader:
// statsName, statsKey): BrokerStatsData, {"statsDay":{"avgpt":..,"sum":..,
// "tps":..},"statsHour":{..},"statsMinute":{..}}; SYSTEM_ERROR with
// Apache's remark for an item that does not exist.
func (p *brokerProcs) viewBrokerStatsData(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	name, err := req.RequireStr("statsName")
	if err != nil {
		return p.fail(req, err)
	}
	key, err := req.RequireStr("statsKey")
	if err != nil {
		return p.fail(req, err)
	}
	d, err := p.admin.StatsData(name, key)
	if err != nil {
		return p.fail(req, err)
	}
	body := make([]byte, 0, 160)
	for i, w := range []struct {
		name string
		s    stats.StatsSnapshot
	}{{"statsDay", d.Day}, {"statsHour", d.Hour}, {"statsMinute", d.Minute}} {
		if i == 0 {
			body = append(body, '{')
		} else {
			body = append(body, ',')
		}
		body = remoting.AppendJSONString(body, w.name)
		body = append(body, `:{"avgpt":`...)
		body = append(body, broker.JavaDouble(w.s.Avgpt)...)
		body = append(body, `,"sum":`...)
		body = strconv.AppendInt(body, w.s.Sum, 10)
		body = append(body, `,"tps":`...)
		body = append(body, broker.JavaDouble(w.s.Tps)...)
		body = append(body, '}')
	}
	return okBody(req, append(body, '}'))
}

// brokerConsumeStats is GET_BROKER_CONSUME_STATS (GetConsumeStatsInBrokerHeader:
// isOrder): ConsumeStatsList, {"brokerAddr":..,"consumeStatsList":[{"<group>":
// [ConsumeStats,...]},...],"totalDiff":..,"totalInflightDiff":..}.
func (p *brokerProcs) brokerConsumeStats(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	all := p.admin.BrokerConsumeStats(req.Bool("isOrder"))
	body := append(make([]byte, 0, 256), `{"brokerAddr":`...)
	body = remoting.AppendJSONString(body, p.host.Config().Addr())
	body = append(body, `,"consumeStatsList":[`...)
	var diff int64
	for i, g := range all {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, '{')
		body = remoting.AppendJSONString(body, g.Group)
		body = append(body, ":["...)
		for j, qs := range g.Topics {
			if j > 0 {
				body = append(body, ',')
			}
			body = p.appendConsumeStats(body, g.Group, qs)
			for _, q := range qs {
				diff += q.BrokerOffset - q.ConsumerOffset
			}
		}
		body = append(body, "]}"...)
	}
	body = append(body, `],"totalDiff":`...)
	body = strconv.AppendInt(body, diff, 10)
	// pullOffset is the consumer offset here (no pop in-flight counted).
	body = append(body, `,"totalInflightDiff":0}`...)
	return okBody(req, body)
}

// updateSubscriptionGroupList is UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST
// (mqadmin 5.x updateSubGroupList): SubscriptionGroupList,
// {"groupConfigList":[SubscriptionGroupConfig,...]}, each group created or
// updated as UPDATE_AND_CREATE_SUBSCRIPTIONGROUP does it. Apache checks no
// name here; rocketgo refuses the list at the first group its single
// update refuses, those before it applied.
func (p *brokerProcs) updateSubscriptionGroupList(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	var list struct {
		GroupConfigList []jsoniter.RawMessage `json:"groupConfigList"`
	}
	if err := json.Unmarshal(req.Body, &list); err != nil {
		return remoting.NewResponse(req, remoting.SystemError, "decode subscription group list: "+err.Error())
	}
	names := make([]string, 0, len(list.GroupConfigList))
	for _, raw := range list.GroupConfigList {
		gc, err := decodeGroupConfig(raw)
		if err != nil {
			return remoting.NewResponse(req, remoting.SystemError, "decode subscription group config: "+err.Error())
		}
		if err := p.admin.UpdateGroup(gc); err != nil {
			return p.refuse(c, req, err)
		}
		names = append(names, gc.GroupName)
	}
	p.log.Info().Str("remote", c.Remote).Strs("groups", names).Msg("subscription groups created or updated")
	return remoting.NewResponse(req, remoting.Success, "")
}

// systemTopicList is TopicList: {"topicList":[...]}.
func (p *brokerProcs) systemTopicList(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	return p.okJSON(req, struct {
		TopicList []string `json:"topicList"`
	}{p.admin.SystemTopics()})
}

// correctionOffset is QueryCorrectionOffsetBody: {"correctionOffsets":{0:5,...}}
// (fastjson writes the Integer keys bare; a HashMap of small ints iterates
// in key order).
func (p *brokerProcs) correctionOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	topic, err := req.RequireStr("topic")
	if err != nil {
		return p.fail(req, err)
	}
	compare, err := req.RequireStr("compareGroup")
	if err != nil {
		return p.fail(req, err)
	}
	offs, err := p.offsets.CorrectionOffsets(topic, compare, req.Str("filterGroups"))
	if err != nil {
		return p.fail(req, err)
	}
	qs := make([]int32, 0, len(offs))
	for q := range offs {
		qs = append(qs, q)
	}
	message.HashMapOrder(qs, 16, func(q int32) int32 { return q })
	body := append(make([]byte, 0, 32+24*len(qs)), `{"correctionOffsets":{`...)
	for i, q := range qs {
		if i > 0 {
			body = append(body, ',')
		}
		body = strconv.AppendInt(body, int64(q), 10)
		body = append(body, ':')
		body = strconv.AppendInt(body, offs[q], 10)
	}
	return okBody(req, append(body, "}}"...))
}

func (p *brokerProcs) cloneGroupOffset(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	src, err := req.RequireStr("srcGroup")
	if err != nil {
		return p.fail(req, err)
	}
	dst, err := req.RequireStr("destGroup")
	if err != nil {
		return p.fail(req, err)
	}
	if err := p.offsets.CloneGroupOffset(src, dst, req.Str("topic"), req.Bool("offline")); err != nil {
		return p.fail(req, err)
	}
	p.log.Info().Str("remote", c.Remote).Str("srcGroup", src).Str("destGroup", dst).Str("topic", req.Str("topic")).
		Msg("group offsets cloned")
	return remoting.NewResponse(req, remoting.Success, "")
}

// allProducerInfo is ProducerTableInfo: {"data":{"<group>":[ProducerInfo,...]}},
// the groups in HashMap order.
func (p *brokerProcs) allProducerInfo(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	table := p.clients.ProducerTable()
	groups := make([]string, 0, len(table))
	for g := range table {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	message.HashMapOrder(groups, 16, message.JavaHash)
	body := append([]byte(nil), `{"data":{`...)
	for i, g := range groups {
		if i > 0 {
			body = append(body, ',')
		}
		body = remoting.AppendJSONString(body, g)
		body = append(body, ':')
		list, err := json.Marshal(table[g])
		if err != nil {
			return p.fail(req, err)
		}
		body = append(body, list...)
	}
	return okBody(req, append(body, "}}"...))
}

// subscriptionByConsumer is QuerySubscriptionResponseBody: the group's
// subscription to topic as its members announced it, none when unknown.
func (p *brokerProcs) subscriptionByConsumer(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	group, err := req.RequireStr("group")
	if err != nil {
		return p.fail(req, err)
	}
	topic, err := req.RequireStr("topic")
	if err != nil {
		return p.fail(req, err)
	}
	var data *subscriptionData
	if sub, _ := p.clients.Subscription(group, topic); sub != nil {
		d := toSubscriptionData(sub)
		data = &d
	}
	return p.okJSON(req, struct {
		Group            string            `json:"group"`
		SubscriptionData *subscriptionData `json:"subscriptionData,omitempty"`
		Topic            string            `json:"topic"`
	}{group, data, topic})
}
