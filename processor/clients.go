package processor

import (
	"strconv"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/remoting"
)

func (p *brokerProcs) registerClients(t remoting.Table) {
	t[remoting.HeartBeat] = p.heartbeat
	t[remoting.UnregisterClient] = p.unregisterClient
	t[remoting.GetConsumerListByGroup] = p.consumerList
}

// heartbeatData is HeartbeatData. codeSet and tagsSet are ignored: Java
// sends numbers, Go strings, and Go hashes UTF-8 rather than UTF-16, so the
// broker parses and hashes the expression itself.
type heartbeatData struct {
	ClientID        string         `json:"clientID"`
	ProducerDataSet []producerData `json:"producerDataSet"`
	ConsumerDataSet []consumerData `json:"consumerDataSet"`
	// A 5.x Java client's heartbeat V2 (rocketmq.client.heartbeat.v2=true).
	HeartbeatFingerprint int32 `json:"heartbeatFingerprint"`
	WithoutSub           bool  `json:"withoutSub"`
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
	Topic          string `json:"topic"`
	SubString      string `json:"subString"`
	SubVersion     int64  `json:"subVersion"`
	ExpressionType string `json:"expressionType"`
}

// decodeHeartbeat decodes a HEART_BEAT body into the broker's Heartbeat;
// the name rules are the broker's (Heartbeat.DropInvalid).
func decodeHeartbeat(req *remoting.Command) (tables.Heartbeat, error) {
	var d heartbeatData
	if err := json.Unmarshal(req.Body, &d); err != nil {
		return tables.Heartbeat{}, err
	}
	hb := tables.Heartbeat{ClientID: d.ClientID, Language: req.Language, Version: req.Version,
		Fingerprint: d.HeartbeatFingerprint, WithoutSub: d.WithoutSub,
		Producers: make([]string, 0, len(d.ProducerDataSet)), Consumers: make([]tables.HeartbeatConsumer, 0, len(d.ConsumerDataSet))}
	for _, pd := range d.ProducerDataSet {
		hb.Producers = append(hb.Producers, pd.GroupName)
	}
	for _, cd := range d.ConsumerDataSet {
		hc := tables.HeartbeatConsumer{Group: cd.GroupName, ConsumeType: cd.ConsumeType, MessageModel: cd.MessageModel,
			ConsumeFromWhere: cd.ConsumeFromWhere, Subscriptions: make([]tables.SubscriptionData, 0, len(cd.SubscriptionDataSet))}
		for _, sd := range cd.SubscriptionDataSet {
			hc.Subscriptions = append(hc.Subscriptions, tables.SubscriptionData{Topic: sd.Topic, SubString: sd.SubString,
				ExpressionType: sd.ExpressionType, SubVersion: sd.SubVersion})
		}
		hb.Consumers = append(hb.Consumers, hc)
	}
	return hb, nil
}

// logName shortens a name a client sent for a log line: it may be as long
// as a frame.
func logName(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// heartbeat is HEART_BEAT: names that break the rules are dropped (and
// logged) by the broker, the rest registered; always SUCCESS, as Apache,
// with Apache 5.x's IS_SUPPORT_HEART_BEAT_V2 and IS_SUB_CHANGE: a 5.x Java
// client with heartbeat V2 on then sends its subscriptions only when they
// changed (withoutSub otherwise).
func (p *brokerProcs) heartbeat(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	hb, err := decodeHeartbeat(req)
	if err != nil {
		return remoting.NewResponse(req, remoting.SystemError, "decode heartbeat body: "+err.Error())
	}
	res := p.clients.Heartbeat(c, hb)
	resp := remoting.NewResponse(req, remoting.Success, "")
	resp.Set("IS_SUPPORT_HEART_BEAT_V2", "true")
	resp.Set("IS_SUB_CHANGE", strconv.FormatBool(res.SubChange))
	return resp
}

// unregisterClient is UNREGISTER_CLIENT.
func (p *brokerProcs) unregisterClient(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	p.clients.UnregisterClient(c, req.Str("producerGroup"), req.Str("consumerGroup"))
	return remoting.NewResponse(req, remoting.Success, "")
}

// consumerList is GET_CONSUMER_LIST_BY_GROUP: GetConsumerListByGroupResponseBody.
func (p *brokerProcs) consumerList(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	group, err := req.RequireStr("consumerGroup")
	if err != nil {
		return p.fail(req, err)
	}
	ids, err := p.clients.ConsumerIDs(group)
	if err != nil {
		return p.fail(req, err)
	}
	return p.okJSON(req, struct {
		ConsumerIDList []string `json:"consumerIdList"`
	}{ids})
}
