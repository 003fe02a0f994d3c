package adminclient

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/rocketgo/rocketgo/remoting"
)

// QueueData is one broker's queues of a topic.
type QueueData struct {
	BrokerName     string `json:"brokerName"`
	ReadQueueNums  int32  `json:"readQueueNums"`
	WriteQueueNums int32  `json:"writeQueueNums"`
	Perm           int32  `json:"perm"`
	TopicSysFlag   int32  `json:"topicSysFlag"`
}

// Route is GET_ROUTEINFO_BY_TOPIC's body; Raw keeps the answer as sent.
type Route struct {
	BrokerDatas       []BrokerData        `json:"brokerDatas"`
	QueueDatas        []QueueData         `json:"queueDatas"`
	OrderTopicConf    *string             `json:"orderTopicConf"`
	FilterServerTable map[string][]string `json:"filterServerTable"`
	Raw               []byte              `json:"-"`
}

// Route asks the name servers for topic's route.
func (c *Client) Route(topic string) (*Route, error) {
	resp, err := c.CallNamesrv(remoting.GetRouteInfoByTopic, map[string]string{"topic": topic})
	if err != nil {
		return nil, fmt.Errorf("route of %s: %w", topic, err)
	}
	r := Route{Raw: remoting.QuoteIntKeys(resp.Body)}
	if err := json.Unmarshal(r.Raw, &r); err != nil {
		return nil, fmt.Errorf("route of %s: %w (%.200s)", topic, err, resp.Body)
	}
	return &r, nil
}

// Masters maps each broker name of the route to its master's address,
// leaving out groups without one.
func (r *Route) Masters() map[string]string {
	out := map[string]string{}
	for _, bd := range r.BrokerDatas {
		if addr := bd.BrokerAddrs["0"]; addr != "" {
			out[bd.BrokerName] = addr
		}
	}
	return out
}

// SelectAddr is BrokerData.selectBrokerAddr without its randomness: the
// master, else the lowest-id slave.
func (bd *BrokerData) SelectAddr() string {
	if a := bd.BrokerAddrs["0"]; a != "" {
		return a
	}
	ids := bd.IDs()
	if len(ids) == 0 {
		return ""
	}
	return bd.BrokerAddrs[fmt.Sprint(ids[0])]
}

// SortedBrokers returns the route's broker groups by name.
func (r *Route) SortedBrokers() []BrokerData {
	out := append([]BrokerData(nil), r.BrokerDatas...)
	sort.Slice(out, func(i, j int) bool { return out[i].BrokerName < out[j].BrokerName })
	return out
}

// PublishQueues is MQClientInstance.topicRouteData2TopicPublishInfo's queue
// list, the queues a producer of topic picks among: those of the ordered
// topic's conf, else each writable queue of the brokers with a master, by
// broker name.
func (r *Route) PublishQueues(topic string) ([]MessageQueue, error) {
	var out []MessageQueue
	if r.OrderTopicConf != nil && *r.OrderTopicConf != "" {
		for _, b := range strings.Split(*r.OrderTopicConf, ";") {
			name, nums, ok := strings.Cut(b, ":")
			n, err := strconv.ParseInt(nums, 10, 32)
			if !ok || err != nil {
				return nil, fmt.Errorf("route of %s: orderTopicConf %q", topic, *r.OrderTopicConf)
			}
			for i := 0; i < int(min(n, 1<<16)); i++ {
				out = append(out, MessageQueue{Topic: topic, BrokerName: name, QueueID: i})
			}
		}
		return out, nil
	}
	qds := append([]QueueData(nil), r.QueueDatas...)
	sort.SliceStable(qds, func(i, j int) bool { return qds[i].BrokerName < qds[j].BrokerName })
	masters := r.Masters()
	for _, qd := range qds {
		if qd.Perm&2 == 0 || masters[qd.BrokerName] == "" { // PermName.isWriteable, a master
			continue
		}
		for i := 0; i < int(qd.WriteQueueNums) && i < 1<<16; i++ {
			out = append(out, MessageQueue{Topic: topic, BrokerName: qd.BrokerName, QueueID: i})
		}
	}
	return out, nil
}
