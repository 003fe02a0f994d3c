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
	ClientID        string         `json:"clientID"`
	ProducerDataSet []producerData `json:"producerDataSet"`
	ConsumerDataSet []consumerData `json:"consumerDataSet"`
}

type producerData struct {
	GroupName string `json:"groupName"`
}

type consumerData struct {
	GroupName           string             `json:"groupName"`
	ConsumeType         string             `json:"consumeType"`
	MessageModel        string             `json:"messageModel"`
	ConsumeFromWhere    string             `json:"consumeFromWhere"`
	SubscriptionDataSet []subscriptionItem `json:"subscriptionDataSet"`
}

type subscriptionItem struct {
	Topic          string   `json:"topic"`
	SubString      string   `json:"subString"`
	TagsSet        []string `json:"tagsSet"`
	SubVersion     int64    `json:"subVersion"`
	ExpressionType string   `json:"expressionType"`
}

// parseHeartbeat decodes a HEART_BEAT body and keeps only what the name
// rules allow: producer and consumer groups that pass ValidGroupName,
// subscriptions to topics that pass ValidTopicName. Apache skips a consumer
// group it cannot create the same way; rocketgo also drops the rest, which
// could only ever name groups and topics that cannot exist. dropped counts
// what went; the first few are named, for the log.
func parseHeartbeat(body []byte) (hb heartbeatData, dropped int, named []string, err error) {
	if err := jsoniter.Unmarshal(body, &hb); err != nil {
		return hb, 0, nil, err
	}
	drop := func(what string) {
		if dropped++; len(named) < 4 {
			named = append(named, logName(what))
		}
	}
	producers := hb.ProducerDataSet[:0]
	for _, pd := range hb.ProducerDataSet {
		if broker.ValidGroupName(pd.GroupName) != nil {
			drop("producerGroup " + pd.GroupName)
			continue
		}
		producers = append(producers, pd)
	}
	hb.ProducerDataSet = producers
	consumers := hb.ConsumerDataSet[:0]
	for _, cd := range hb.ConsumerDataSet {
		if broker.ValidGroupName(cd.GroupName) != nil {
			drop("consumerGroup " + cd.GroupName)
			continue
		}
		subs := cd.SubscriptionDataSet[:0]
		for _, sd := range cd.SubscriptionDataSet {
			if broker.ValidTopicName(sd.Topic) != nil {
				drop("subscription topic " + sd.Topic)
				continue
			}
			subs = append(subs, sd)
		}
		cd.SubscriptionDataSet = subs
		consumers = append(consumers, cd)
	}
	hb.ConsumerDataSet = consumers
	return hb, dropped, named, nil
}

// logName shortens a name a client sent for a log line: it may be as long
// as a frame.
func logName(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

func (p *brokerProcs) heartbeat(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	hb, dropped, named, err := parseHeartbeat(req.Body)
	if err != nil {
		return remoting.NewResponse(req, remoting.SystemError, "decode heartbeat body: "+err.Error())
	}
	if dropped > 0 {
		p.refused.Warn().Str("remote", c.Remote).Str("clientId", hb.ClientID).Int("dropped", dropped).
			Strs("first", named).Msg("heartbeat names refused")
	}
	for _, cd := range hb.ConsumerDataSet {
		gc, ok := p.b.Groups.Get(cd.GroupName)
		if !ok {
			continue
		}
		// Apache creates the group's retry topic on every heartbeat. A group
		// without retry queues (retryQueueNums 0) gets none here.
		if gc.RetryQueueNums > 0 {
			if _, _, err := p.b.Topics.CreateIfAbsent(broker.TopicConfig{
				TopicName:      broker.RetryGroupPrefix + cd.GroupName,
				ReadQueueNums:  gc.RetryQueueNums,
				WriteQueueNums: gc.RetryQueueNums,
				Perm:           broker.PermRead | broker.PermWrite,
			}); err != nil {
				p.refused.Warn().Err(err).Str("consumerGroup", cd.GroupName).Msg("heartbeat retry topic refused")
				continue
			}
		}
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
