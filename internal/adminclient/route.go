package adminclient

import (
	"fmt"
	"sort"

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
