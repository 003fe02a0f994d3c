package processor

import (
	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/remoting"
)

// brokerProcs serves a broker's request codes.
type brokerProcs struct {
	b   *broker.Broker
	log zerolog.Logger
}

// BrokerTable returns the broker's request table.
func BrokerTable(b *broker.Broker, log zerolog.Logger) Table {
	p := &brokerProcs{b: b, log: log.With().Str("component", "processor").Logger()}
	return Table{
		remoting.SendMessage:                   p.send,
		remoting.SendMessageV2:                 p.send,
		remoting.SendBatchMessage:              p.send,
		remoting.SendReplyMessage:              p.send,
		remoting.SendReplyMessageV2:            p.send,
		remoting.PullMessage:                   p.pull,
		remoting.LitePullMessage:               p.pull,
		remoting.HeartBeat:                     p.heartbeat,
		remoting.UnregisterClient:              p.unregisterClient,
		remoting.GetConsumerListByGroup:        p.consumerList,
		remoting.QueryConsumerOffset:           p.queryConsumerOffset,
		remoting.UpdateConsumerOffset:          p.updateConsumerOffset,
		remoting.GetMaxOffset:                  p.maxOffset,
		remoting.GetMinOffset:                  p.minOffset,
		remoting.SearchOffsetByTimestamp:       p.searchOffset,
		remoting.GetEarliestMsgStoreTime:       p.earliestMsgStoreTime,
		remoting.UpdateAndCreateTopic:          p.updateAndCreateTopic,
		remoting.DeleteTopicInBroker:           p.deleteTopic,
		remoting.GetAllTopicConfig:             p.allTopicConfig,
		remoting.GetAllSubscriptionGroupConfig: p.allSubscriptionGroups,
		remoting.UpdateAndCreateSubscription:   p.updateSubscriptionGroup,
		remoting.DeleteSubscriptionGroup:       p.deleteSubscriptionGroup,
	}
}

func (p *brokerProcs) fail(req *remoting.Command, err error) *remoting.Command {
	return errorResponse(&p.log, req, err)
}
