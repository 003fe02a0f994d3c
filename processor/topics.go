package processor

import (
	"strings"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

func (p *brokerProcs) registerTopics(t remoting.Table) {
	t[remoting.UpdateAndCreateTopic] = p.updateAndCreateTopic
	t[remoting.DeleteTopicInBroker] = p.deleteTopic
	t[remoting.GetAllTopicConfig] = p.allTopicConfig
	t[remoting.GetAllSubscriptionGroupConfig] = p.allSubscriptionGroups
	t[remoting.UpdateAndCreateSubscription] = p.updateSubscriptionGroup
	t[remoting.DeleteSubscriptionGroup] = p.deleteSubscriptionGroup
	t[remoting.GetSubscriptionGroupConfig] = p.subscriptionGroup
}

// updateAndCreateTopic serves UPDATE_AND_CREATE_TOPIC (CreateTopicRequestHeader):
// the name, system-topic and queue-count rules are the broker's
// (Broker.UpdateTopic), refusals INVALID_PARAMETER.
func (p *brokerProcs) updateAndCreateTopic(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	topic, err := req.RequireStr("topic")
	if err != nil {
		return p.fail(req, err)
	}
	tc := tables.TopicConfig{
		TopicName:       topic,
		TopicFilterType: req.Str("topicFilterType"),
		Order:           req.Bool("order"),
	}
	// Integer fields as Apache's decoder reads them: a value that is not an
	// int32 is a bad header, never truncated to one.
	for _, f := range []struct {
		key string
		dst *int32
		def int32
	}{
		{"readQueueNums", &tc.ReadQueueNums, 16},
		{"writeQueueNums", &tc.WriteQueueNums, 16},
		{"perm", &tc.Perm, message.PermRead | message.PermWrite},
		{"topicSysFlag", &tc.TopicSysFlag, 0},
	} {
		if *f.dst, err = optInt32(req, f.key, f.def); err != nil {
			return p.fail(req, err)
		}
	}
	if tc.Attributes, err = parseTopicAttributes(req.Str("attributes")); err != nil {
		return p.fail(req, err)
	}
	if err := p.admin.UpdateTopic(tc); err != nil {
		return p.refuse(c, req, err)
	}
	p.log.Info().Str("topic", topic).Int32("readQueueNums", tc.ReadQueueNums).
		Int32("writeQueueNums", tc.WriteQueueNums).Int32("perm", tc.Perm).Msg("topic created or updated")
	return remoting.NewResponse(req, remoting.Success, "")
}

// refuse answers an admin request the broker refused, with a sampled line
// naming the caller: a hostile name is worth an operator's look.
func (p *brokerProcs) refuse(c *remoting.Conn, req *remoting.Command, err error) *remoting.Command {
	remote := ""
	if c != nil {
		remote = c.Remote
	}
	p.refused.Warn().Str("remote", remote).Int32("code", req.Code).Str("reason", logName(err.Error())).
		Msg("admin request refused")
	return p.fail(req, err)
}

// optInt32 reads an optional int32 header field: def when absent or empty.
func optInt32(req *remoting.Command, key string, def int32) (int32, error) {
	if req.Str(key) == "" {
		return def, nil
	}
	return req.Int32(key)
}

func (p *brokerProcs) deleteTopic(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	topic, err := req.RequireStr("topic")
	if err != nil {
		return p.fail(req, err)
	}
	if err := p.admin.DeleteTopic(topic); err != nil {
		return p.refuse(c, req, err)
	}
	p.log.Info().Str("topic", topic).Str("remote", c.Remote).Msg("topic deleted")
	return remoting.NewResponse(req, remoting.Success, "")
}

// allTopicConfig is GET_ALL_TOPIC_CONFIG. Apache 5.x answers
// TopicConfigAndMappingSerializeWrapper; rocketgo has no static topics, so
// the mapping tables are empty.
func (p *brokerProcs) allTopicConfig(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	t := p.admin.AllTopicConfig()
	return p.okJSON(req, struct {
		DataVersion                remoting.DataVersion           `json:"dataVersion"`
		TopicConfigTable           map[string]*tables.TopicConfig `json:"topicConfigTable"`
		MappingDataVersion         remoting.DataVersion           `json:"mappingDataVersion"`
		TopicQueueMappingDetailMap struct{}                       `json:"topicQueueMappingDetailMap"`
		TopicQueueMappingInfoMap   struct{}                       `json:"topicQueueMappingInfoMap"`
	}{DataVersion: t.DataVersion, TopicConfigTable: t.Topics})
}

// allSubscriptionGroups is GET_ALL_SUBSCRIPTIONGROUP_CONFIG:
// SubscriptionGroupWrapper.
func (p *brokerProcs) allSubscriptionGroups(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	t := p.admin.AllGroupConfig()
	return p.okJSON(req, struct {
		DataVersion            remoting.DataVersion           `json:"dataVersion"`
		SubscriptionGroupTable map[string]*tables.GroupConfig `json:"subscriptionGroupTable"`
	}{t.DataVersion, t.Groups})
}

// decodeGroupConfig reads UPDATE_AND_CREATE_SUBSCRIPTIONGROUP's body
// (SubscriptionGroupConfig; GroupConfig.UnmarshalJSON starts from Apache's
// defaults).
func decodeGroupConfig(body []byte) (tables.GroupConfig, error) {
	var gc tables.GroupConfig
	err := json.Unmarshal(body, &gc)
	return gc, err
}

// updateSubscriptionGroup is UPDATE_AND_CREATE_SUBSCRIPTIONGROUP.
func (p *brokerProcs) updateSubscriptionGroup(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	gc, err := decodeGroupConfig(req.Body)
	if err != nil {
		return remoting.NewResponse(req, remoting.SystemError, "decode subscription group config: "+err.Error())
	}
	if err := p.admin.UpdateGroup(gc); err != nil {
		return p.refuse(c, req, err)
	}
	return remoting.NewResponse(req, remoting.Success, "")
}

// deleteSubscriptionGroup is DELETE_SUBSCRIPTIONGROUP
// (DeleteSubscriptionGroupRequestHeader: groupName, cleanOffset).
func (p *brokerProcs) deleteSubscriptionGroup(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	group, err := req.RequireStr("groupName")
	if err != nil {
		return p.fail(req, err)
	}
	if err := p.admin.DeleteGroup(group, req.Bool("cleanOffset")); err != nil {
		return p.fail(req, err)
	}
	return remoting.NewResponse(req, remoting.Success, "")
}

// subscriptionGroup is GET_SUBSCRIPTIONGROUP_CONFIG
// (GetSubscriptionGroupConfigRequestHeader: group): the SubscriptionGroupConfig.
func (p *brokerProcs) subscriptionGroup(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	group, err := req.RequireStr("group")
	if err != nil {
		return p.fail(req, err)
	}
	gc, err := p.admin.GroupConfig(group)
	if err != nil {
		return p.fail(req, err)
	}
	return p.okJSON(req, gc)
}

// parseTopicAttributes reads CreateTopicRequestHeader.attributes, Apache's
// AttributeParser format "+key=value,+key2=value2" (5.x: message.type and
// the other TopicAttributes). Removing an attribute ("-key") is not
// supported and refused; nil when the header has none (the topic keeps the
// attributes it has).
func parseTopicAttributes(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || len(k) < 2 || k[0] != '+' || v == "" {
			return nil, &remoting.Refusal{Code: remoting.InvalidParameter, Remark: "attributes format error: " + kv}
		}
		k = k[1:]
		if remark := tables.VerifyTopicAttribute(k, v); remark != "" {
			return nil, &remoting.Refusal{Code: remoting.SystemError, Remark: remark}
		}
		out[k] = v
	}
	return out, nil
}
