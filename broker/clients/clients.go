package clients

import (
	"strings"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/logging"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// Heartbeat is HEART_BEAT: it registers the client's producer and consumer
// groups on connection c (DropInvalid first), creating each consumer
// group's config when autoCreateSubscriptionGroup allows and its retry topic
// (%RETRY%<group>, retryQueueNums queues) as Apache does on every heartbeat.
// A group that is not configured and cannot be created is skipped.
func (s *Service) Heartbeat(c *remoting.Conn, hb tables.Heartbeat) tables.HeartbeatResult {
	res := tables.HeartbeatResult{SubChange: hb.Fingerprint == 0}
	res.Dropped, res.Named = hb.DropInvalid()
	if res.Dropped > 0 {
		s.sampled.Warn().Str("remote", c.Remote).Str("clientId", logging.Cut(hb.ClientID)).Int("dropped", res.Dropped).
			Strs("first", res.Named).Msg("heartbeat names refused")
	}
	for _, cd := range hb.Consumers {
		gc, ok := s.d.Groups.Get(cd.Group)
		if !ok {
			continue
		}
		// A group without retry queues (retryQueueNums 0) gets no retry topic.
		if gc.RetryQueueNums > 0 {
			if _, _, err := s.d.Topics.CreateIfAbsent(tables.TopicConfig{
				TopicName:      message.RetryGroupPrefix + cd.Group,
				ReadQueueNums:  gc.RetryQueueNums,
				WriteQueueNums: gc.RetryQueueNums,
				Perm:           message.PermRead | message.PermWrite,
			}); err != nil {
				s.sampled.Warn().Err(err).Str("consumerGroup", cd.Group).Msg("heartbeat retry topic refused")
				continue
			}
		}
		info := tables.ConsumerInfo{Group: cd.Group, ConsumeType: cd.ConsumeType, MessageModel: cd.MessageModel,
			ConsumeFromWhere: cd.ConsumeFromWhere}
		for _, sd := range cd.Subscriptions {
			var s *tables.Subscription
			if sd.ExpressionType == "" || strings.EqualFold(sd.ExpressionType, "TAG") {
				s = tables.NewTagSubscription(sd.Topic, sd.SubString, sd.SubVersion)
			} else {
				s = &tables.Subscription{Topic: sd.Topic, SubString: sd.SubString, ExpressionType: sd.ExpressionType,
					SubVersion: sd.SubVersion}
			}
			info.Subscriptions = append(info.Subscriptions, s)
		}
		if s.d.Clients.RegisterConsumerV2(c, hb.ClientID, hb.Language, hb.Version, info, gc.NotifyConsumerIdsChangedEnable,
			hb.Fingerprint, hb.WithoutSub) {
			res.SubChange = true
		}
		res.Consumers++
	}
	for _, g := range hb.Producers {
		s.d.Clients.RegisterProducer(c, hb.ClientID, g, hb.Language, hb.Version)
		res.Producers++
	}
	return res
}

// UnregisterClient is UNREGISTER_CLIENT: connection c leaves the producer
// group and the consumer group named (either may be empty).
func (s *Service) UnregisterClient(c *remoting.Conn, producerGroup, consumerGroup string) {
	if producerGroup != "" {
		s.d.Clients.UnregisterProducer(c, producerGroup)
	}
	if consumerGroup != "" {
		s.d.Clients.UnregisterConsumer(c, consumerGroup)
	}
}

// ConsumerIDs is GET_CONSUMER_LIST_BY_GROUP: the client ids of a group's
// live members, sorted; SYSTEM_ERROR with Apache's remark when there are none.
func (s *Service) ConsumerIDs(group string) ([]string, error) {
	ids := s.d.Clients.ConsumerIDs(group)
	if len(ids) == 0 {
		return nil, remoting.Refuse(remoting.SystemError, nil, "no consumer for this group, %s", group)
	}
	return ids, nil
}

// ConsumerConn is the connection of group's consumer clientID, for the
// codes the broker relays to a consumer; SYSTEM_ERROR with Apache's remark
// when it is not online.
func (s *Service) ConsumerConn(group, clientID string) (*remoting.Conn, error) {
	c, ok := s.d.Clients.ConsumerConn(group, clientID)
	if !ok {
		return nil, remoting.Refuse(remoting.SystemError, nil, "The Consumer <%s> <%s> not online", group, clientID)
	}
	return c, nil
}

// ConsumerMembers are group's online consumers.
func (s *Service) ConsumerMembers(group string) []tables.ConsumerMember {
	return s.d.Clients.ConsumerMembers(group)
}

// Subscription is group's subscription to topic as its members announced
// it; groupKnown says whether any member is online.
func (s *Service) Subscription(group, topic string) (sub *tables.Subscription, groupKnown bool) {
	return s.d.Clients.Subscription(group, topic)
}

// ProducerTable is every online producer by group.
func (s *Service) ProducerTable() map[string][]tables.ProducerInfo {
	return s.d.Clients.ProducerTable()
}
