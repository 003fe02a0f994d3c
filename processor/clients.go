package processor

import (
	"fmt"

	jsoniter "github.com/json-iterator/go"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/remoting"
)

func (p *brokerProcs) registerClients(t Table) {
	t[remoting.HeartBeat] = p.heartbeat
	t[remoting.UnregisterClient] = p.unregisterClient
	t[remoting.GetConsumerListByGroup] = p.consumerList
}

// heartbeatData is HeartbeatData. codeSet is ignored: Java sends numbers, Go
// sends strings, and Go hashes UTF-8 rather than UTF-16, so tags are re-hashed here.
type heartbeatData struct {
	ClientID        string `json:"clientID"`
	ProducerDataSet []struct {
		GroupName string `json:"groupName"`
	} `json:"producerDataSet"`
	ConsumerDataSet []struct {
		GroupName           string `json:"groupName"`
		ConsumeType         string `json:"consumeType"`
		MessageModel        string `json:"messageModel"`
		ConsumeFromWhere    string `json:"consumeFromWhere"`
		SubscriptionDataSet []struct {
			Topic          string   `json:"topic"`
			SubString      string   `json:"subString"`
			TagsSet        []string `json:"tagsSet"`
			SubVersion     int64    `json:"subVersion"`
			ExpressionType string   `json:"expressionType"`
		} `json:"subscriptionDataSet"`
	} `json:"consumerDataSet"`
}

func (p *brokerProcs) heartbeat(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	var hb heartbeatData
	if err := jsoniter.Unmarshal(req.Body, &hb); err != nil {
		return remoting.NewResponse(req, remoting.SystemError, "decode heartbeat body: "+err.Error())
	}
	for _, cd := range hb.ConsumerDataSet {
		gc, ok := p.b.Groups.Get(cd.GroupName)
		if !ok {
			continue
		}
		// Apache creates the group's retry topic on every heartbeat.
		p.b.Topics.CreateIfAbsent(broker.TopicConfig{
			TopicName:      broker.RetryGroupPrefix + cd.GroupName,
			ReadQueueNums:  gc.RetryQueueNums,
			WriteQueueNums: gc.RetryQueueNums,
			Perm:           broker.PermRead | broker.PermWrite,
		})
		info := broker.ConsumerInfo{
			Group:            cd.GroupName,
			ConsumeType:      cd.ConsumeType,
			MessageModel:     cd.MessageModel,
			ConsumeFromWhere: cd.ConsumeFromWhere,
		}
		for _, sd := range cd.SubscriptionDataSet {
			var s *broker.Subscription
			if isTagType(sd.ExpressionType) {
				s = broker.NewTagSubscription(sd.Topic, sd.SubString, sd.SubVersion)
			} else {
				s = &broker.Subscription{Topic: sd.Topic, SubString: sd.SubString, ExpressionType: sd.ExpressionType,
					SubVersion: sd.SubVersion}
			}
			info.Subscriptions = append(info.Subscriptions, s)
		}
		p.b.Clients.RegisterConsumer(c, hb.ClientID, req.Language, req.Version, info, gc.NotifyConsumerIdsChangedEnable)
	}
	for _, pd := range hb.ProducerDataSet {
		p.b.Clients.RegisterProducer(c, hb.ClientID, pd.GroupName, req.Language, req.Version)
	}
	return remoting.NewResponse(req, remoting.Success, "")
}

func (p *brokerProcs) unregisterClient(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	if g := req.Str("producerGroup"); g != "" {
		p.b.Clients.UnregisterProducer(c, g)
	}
	if g := req.Str("consumerGroup"); g != "" {
		p.b.Clients.UnregisterConsumer(c, g)
	}
	return remoting.NewResponse(req, remoting.Success, "")
}

func (p *brokerProcs) consumerList(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	group, err := req.RequireStr("consumerGroup")
	if err != nil {
		return p.fail(req, err)
	}
	ids := p.b.Clients.ConsumerIDs(group)
	if len(ids) == 0 {
		return remoting.NewResponse(req, remoting.SystemError, fmt.Sprintf("no consumer for this group, %s", group))
	}
	body, err := jsoniter.Marshal(struct {
		ConsumerIDList []string `json:"consumerIdList"`
	}{ids})
	if err != nil {
		return p.fail(req, err)
	}
	resp := remoting.NewResponse(req, remoting.Success, "")
	resp.Body = body
	return resp
}
