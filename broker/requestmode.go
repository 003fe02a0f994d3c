package broker

// Message request modes and broker-side rebalancing (Apache 5.x
// QueryAssignmentProcessor, MessageRequestModeManager): a 5.x push consumer
// with clientRebalance false asks the broker for its queues
// (QUERY_ASSIGNMENT) and pops instead of pulling when the broker says the
// group's mode on the topic is POP. The mode is set per topic and group by
// SET_MESSAGE_REQUEST_MODE (mqadmin setConsumeMode) and persisted as
// config/messageRequestMode.json in Apache's shape; without one a topic is
// PULL (defaultMessageRequestMode) and a retry topic always PULL.
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
	"os"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// SetRequestModeBody is SetMessageRequestModeRequestBody.
type SetRequestModeBody struct {
	ConsumerGroup    string `json:"consumerGroup"`
	Mode             string `json:"mode"` // PULL or POP
	PopShareQueueNum int32  `json:"popShareQueueNum"`
	Topic            string `json:"topic"`
}

// RequestModes is the mode table, persisted as config/messageRequestMode.json.
type RequestModes struct {
	path  string
	mu    sync.Mutex
	table map[string]map[string]SetRequestModeBody // topic → group → mode
	dirty atomic.Bool
}

type requestModesFile struct {
	MessageRequestModeMap map[string]map[string]SetRequestModeBody `json:"messageRequestModeMap"`
}

func newRequestModes(path string) *RequestModes {
	return &RequestModes{path: path, table: make(map[string]map[string]SetRequestModeBody)}
}

func (m *RequestModes) load() error {
	b, err := os.ReadFile(m.path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var f requestModesFile
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("%s: %w", m.path, err)
	}
	if f.MessageRequestModeMap != nil {
		m.table = f.MessageRequestModeMap
	}
	return nil
}

func (m *RequestModes) marshal() ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return json.Marshal(requestModesFile{MessageRequestModeMap: m.table})
}

func (m *RequestModes) persistIfDirty() error {
	return config.PersistIfDirty(m.path, &m.dirty, m.marshal)
}

func (m *RequestModes) get(topic, group string) (SetRequestModeBody, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.table[topic][group]
	return v, ok
}

// SetMessageRequestMode is SET_MESSAGE_REQUEST_MODE (body SetMessageRequestModeRequestBody).
func (b *Broker) SetMessageRequestMode(body []byte) error {
	r := SetRequestModeBody{Mode: "PULL"}
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("%w: set message request mode body: %w", remoting.ErrBadField, err)
	}
	if r.Mode != "PULL" && r.Mode != "POP" {
		return fmt.Errorf("%w: mode %q", remoting.ErrBadField, r.Mode)
	}
	if message.IsRetryTopic(r.Topic) {
		return remoting.Refuse(remoting.NoPermission, nil, "retry topic is not allowed to set mode")
	}
	if _, ok := b.Topics.Get(r.Topic); !ok {
		return remoting.Refuse(remoting.TopicNotExist, tables.ErrTopicNotExist, "topic[%s] not exist", r.Topic)
	}
	if _, ok := b.Groups.Get(r.ConsumerGroup); !ok {
		return remoting.Refuse(remoting.SubscriptionGroupNotExist, tables.ErrGroupNotExist, "subscription group does not exist")
	}
	m := b.requestModes
	m.mu.Lock()
	if m.table[r.Topic] == nil {
		m.table[r.Topic] = make(map[string]SetRequestModeBody)
	}
	m.table[r.Topic][r.ConsumerGroup] = r
	m.mu.Unlock()
	m.dirty.Store(true)
	b.persistSoon()
	return nil
}

// AllMessageRequestModes is GET_ALL_MESSAGE_REQUEST_MODE's body, which a
// 5.x slave asks its master for: Apache's MessageRequestModeManager.encode.
func (b *Broker) AllMessageRequestModes() []byte {
	out, err := b.requestModes.marshal()
	if err != nil { // maps of strings and ints: cannot fail
		return []byte(`{"messageRequestModeMap":{}}`)
	}
	return out
}

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
func (b *Broker) QueryAssignment(body []byte) ([]byte, error) {
	var r queryAssignmentBody
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("%w: query assignment body: %w", remoting.ErrBadField, err)
	}
	mode, ok := b.requestModes.get(r.Topic, r.ConsumerGroup)
	if !ok {
		mode = SetRequestModeBody{Topic: r.Topic, ConsumerGroup: r.ConsumerGroup, Mode: "PULL"}
	}
	queues := b.assign(&r, &mode)
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
func (b *Broker) assign(r *queryAssignmentBody, mode *SetRequestModeBody) []assignedQueue {
	tc, ok := b.Topics.Get(r.Topic)
	if !ok || tc.ReadQueueNums <= 0 {
		return nil
	}
	brokerName := b.Config().BrokerName
	all := make([]assignedQueue, tc.ReadQueueNums)
	for i := range all {
		all[i] = assignedQueue{BrokerName: brokerName, QueueID: int32(i), Topic: r.Topic}
	}
	if r.MessageModel == "BROADCASTING" {
		return all
	}
	cids := b.Clients.ConsumerIDs(r.ConsumerGroup)
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
