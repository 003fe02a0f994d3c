package clients

// Message request modes and broker-side rebalancing (Apache 5.x
// QueryAssignmentProcessor, MessageRequestModeManager): a 5.x push consumer
// with clientRebalance false asks the broker for its queues
// (QUERY_ASSIGNMENT) and pops instead of pulling when the broker says the
// group's mode on the topic is POP. The mode is set per topic and group by
// SET_MESSAGE_REQUEST_MODE (mqadmin setConsumeMode, broker/admin) and
// persisted as config/messageRequestMode.json (broker/tables) in Apache's
// shape; without one a topic is PULL (defaultMessageRequestMode) and a
// retry topic always PULL.
//
// Where rocketgo differs: the queues assigned are this broker's readable
// queues of the topic (Apache asks the name servers for the topic's route
// and assigns every broker's queues); a client asks each broker of the
// topic, so each hands out its own. Only the AVG strategy
// (AllocateMessageQueueAveragely, the clients' default) allocates in PULL
// mode; another answers no assignment, as Apache does for a strategy it
// does not know.

import (
	"fmt"
	"sort"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/remoting"
)

// queryAssignmentBody is QueryAssignmentRequestBody.
type queryAssignmentBody struct {
	Topic         string `json:"topic"`
	ConsumerGroup string `json:"consumerGroup"`
	ClientID      string `json:"clientId"`
	StrategyName  string `json:"strategyName"`
	MessageModel  string `json:"messageModel"`
}

type assignedQueue struct {
	BrokerName string `json:"brokerName"`
	QueueID    int32  `json:"queueId"`
	Topic      string `json:"topic"`
}

type queueAssignment struct {
	MessageQueue assignedQueue `json:"messageQueue"`
	Mode         string        `json:"mode"`
}

// QueryAssignment is QUERY_ASSIGNMENT: the queues of the topic the client
// consumes, and how (QueryAssignmentResponseBody).
func (s *Service) QueryAssignment(body []byte) ([]byte, error) {
	var r queryAssignmentBody
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("%w: query assignment body: %w", remoting.ErrBadField, err)
	}
	mode, ok := s.d.Modes.Get(r.Topic, r.ConsumerGroup)
	if !ok {
		mode = tables.RequestMode{Topic: r.Topic, ConsumerGroup: r.ConsumerGroup, Mode: "PULL"}
	}
	queues := s.assign(&r, &mode)
	type responseBody struct {
		MessageQueueAssignments []queueAssignment `json:"messageQueueAssignments,omitempty"`
	}
	var out responseBody
	if queues != nil {
		out.MessageQueueAssignments = make([]queueAssignment, 0, len(queues))
		for _, q := range queues {
			out.MessageQueueAssignments = append(out.MessageQueueAssignments, queueAssignment{MessageQueue: q, Mode: mode.Mode})
		}
	}
	return json.Marshal(out)
}

// assign is Apache's doLoadBalance over this broker's queues; nil means no assignment.
func (s *Service) assign(r *queryAssignmentBody, mode *tables.RequestMode) []assignedQueue {
	tc, ok := s.d.Topics.Get(r.Topic)
	if !ok || tc.ReadQueueNums <= 0 {
		return nil
	}
	brokerName := s.d.BrokerName()
	all := make([]assignedQueue, tc.ReadQueueNums)
	for i := range all {
		all[i] = assignedQueue{BrokerName: brokerName, QueueID: int32(i), Topic: r.Topic}
	}
	if r.MessageModel == "BROADCASTING" {
		return all
	}
	cids := s.d.Clients.ConsumerIDs(r.ConsumerGroup)
	if len(cids) == 0 {
		return nil
	}
	sort.Strings(cids)
	if r.StrategyName != "AVG" {
		return nil
	}
	if mode.Mode == "POP" {
		n := int(mode.PopShareQueueNum)
		if n <= 0 || n >= len(cids)-1 {
			// Every client pops every queue: one queue -1 per broker.
			return []assignedQueue{{BrokerName: brokerName, QueueID: -1, Topic: r.Topic}}
		}
		if len(cids) > len(all) {
			// More clients than queues: each gets one, round robin (QueryAssignmentProcessor.allocate).
			for i, c := range cids {
				if c == r.ClientID {
					return []assignedQueue{all[i%len(all)]}
				}
			}
			return []assignedQueue{}
		}
		out := allocateAvg(all, cids, r.ClientID)
		idx := sort.SearchStrings(cids, r.ClientID)
		if idx < len(cids) && cids[idx] == r.ClientID {
			for i := 1; i <= n; i++ {
				out = append(out, allocateAvg(all, cids, cids[(idx+i)%len(cids)])...)
			}
		}
		return out
	}
	return allocateAvg(all, cids, r.ClientID)
}

// allocateAvg is AllocateMessageQueueAveragely.
func allocateAvg(all []assignedQueue, cids []string, cid string) []assignedQueue {
	index := -1
	for i, c := range cids {
		if c == cid {
			index = i
			break
		}
	}
	if index < 0 {
		return []assignedQueue{}
	}
	n, c := len(all), len(cids)
	mod := n % c
	avg := n / c
	switch {
	case n <= c:
		avg = 1
	case mod > 0 && index < mod:
		avg = n/c + 1
	}
	start := index*avg + mod
	if mod > 0 && index < mod {
		start = index * avg
	}
	out := []assignedQueue{}
	for i := 0; i < min(avg, n-start); i++ {
		out = append(out, all[(start+i)%n])
	}
	return out
}
