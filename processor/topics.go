package processor

import (
	"fmt"

	jsoniter "github.com/json-iterator/go"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/remoting"
)

func (p *brokerProcs) registerTopics(t Table) {
	t[remoting.UpdateAndCreateTopic] = p.updateAndCreateTopic
	t[remoting.DeleteTopicInBroker] = p.deleteTopic
	t[remoting.GetAllTopicConfig] = p.allTopicConfig
	t[remoting.GetAllSubscriptionGroupConfig] = p.allSubscriptionGroups
	t[remoting.UpdateAndCreateSubscription] = p.updateSubscriptionGroup
	t[remoting.DeleteSubscriptionGroup] = p.deleteSubscriptionGroup
}

func (p *brokerProcs) updateAndCreateTopic(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	topic, err := req.RequireStr("topic")
	if err != nil {
		return p.fail(req, err)
	}
	if err := broker.ValidTopicName(topic); err != nil {
		return remoting.NewResponse(req, remoting.SystemError, err.Error())
	}
	if topic == p.b.Config.BrokerClusterName {
		return remoting.NewResponse(req, remoting.SystemError,
			fmt.Sprintf("the topic[%s] is conflict with system topic.", topic))
	}
	tc := broker.TopicConfig{
		TopicName:       topic,
		ReadQueueNums:   int32(req.OptInt64("readQueueNums", 16)),
		WriteQueueNums:  int32(req.OptInt64("writeQueueNums", 16)),
		Perm:            int32(req.OptInt64("perm", int64(broker.PermRead|broker.PermWrite))),
		TopicFilterType: req.Str("topicFilterType"),
		TopicSysFlag:    int32(req.OptInt64("topicSysFlag", 0)),
		Order:           req.Bool("order"),
	}
	if tc.ReadQueueNums <= 0 || tc.WriteQueueNums <= 0 {
		return remoting.NewResponse(req, remoting.SystemError,
			fmt.Sprintf("queue nums must be positive: read %d write %d", tc.ReadQueueNums, tc.WriteQueueNums))
	}
	p.b.Topics.Put(tc)
	p.log.Info().Str("topic", topic).Int32("readQueueNums", tc.ReadQueueNums).
		Int32("writeQueueNums", tc.WriteQueueNums).Int32("perm", tc.Perm).Msg("topic created or updated")
	return remoting.NewResponse(req, remoting.Success, "")
}

func (p *brokerProcs) deleteTopic(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	topic, err := req.RequireStr("topic")
	if err != nil {
		return p.fail(req, err)
	}
	p.b.Topics.Delete(topic)
	p.b.Offsets.DeleteTopic(topic)
	// Removing consume queue files is disk work: off the event loop.
	p.b.Go(func() {
		if err := p.b.Store.DeleteTopic(topic); err != nil {
			p.log.Error().Err(err).Str("topic", topic).Msg("delete topic files")
		}
	})
	p.log.Info().Str("topic", topic).Msg("topic deleted")
	return remoting.NewResponse(req, remoting.Success, "")
}

func (p *brokerProcs) allTopicConfig(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	body, err := p.b.Topics.MarshalWrapper()
	if err != nil {
		return p.fail(req, err)
	}
	// Apache 5.x answers TopicConfigAndMappingSerializeWrapper; rocketgo has
	// no static topics, so the mapping tables are empty.
	if n := len(body); n > 0 && body[n-1] == '}' {
		body = append(body[:n-1], `,"mappingDataVersion":{"counter":0,"stateVersion":0,"timestamp":0},`+
			`"topicQueueMappingDetailMap":{},"topicQueueMappingInfoMap":{}}`...)
	}
	resp := remoting.NewResponse(req, remoting.Success, "")
	resp.Body = body
	return resp
}

func (p *brokerProcs) allSubscriptionGroups(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	body, err := p.b.Groups.MarshalWrapper()
	if err != nil {
		return p.fail(req, err)
	}
	resp := remoting.NewResponse(req, remoting.Success, "")
	resp.Body = body
	return resp
}

func (p *brokerProcs) updateSubscriptionGroup(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	gc := broker.DefaultGroupConfig("")
	if err := jsoniter.Unmarshal(req.Body, &gc); err != nil {
		return remoting.NewResponse(req, remoting.SystemError, "decode subscription group config: "+err.Error())
	}
	if gc.GroupName == "" {
		return remoting.NewResponse(req, remoting.SystemError, "groupName is empty")
	}
	p.b.Groups.Put(gc)
	return remoting.NewResponse(req, remoting.Success, "")
}

func (p *brokerProcs) deleteSubscriptionGroup(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	group, err := req.RequireStr("groupName")
	if err != nil {
		return p.fail(req, err)
	}
	p.b.Groups.Delete(group)
	return remoting.NewResponse(req, remoting.Success, "")
}
