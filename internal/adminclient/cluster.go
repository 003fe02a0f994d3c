package adminclient

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/rocketgo/rocketgo/remoting"
)

// BrokerData is one broker group of a route or of the cluster info; the
// broker ids are decimal strings ("0" is the master).
type BrokerData struct {
	Cluster            string            `json:"cluster"`
	BrokerName         string            `json:"brokerName"`
	BrokerAddrs        map[string]string `json:"brokerAddrs"`
	EnableActingMaster bool              `json:"enableActingMaster"`
	ZoneName           *string           `json:"zoneName"`
}

// IDs returns the broker ids, ascending.
func (bd *BrokerData) IDs() []int64 {
	ids := make([]int64, 0, len(bd.BrokerAddrs))
	for id := range bd.BrokerAddrs {
		if i, err := strconv.ParseInt(id, 10, 64); err == nil {
			ids = append(ids, i)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// ClusterInfo is GET_BROKER_CLUSTER_INFO's body.
type ClusterInfo struct {
	BrokerAddrTable  map[string]BrokerData `json:"brokerAddrTable"`
	ClusterAddrTable map[string][]string   `json:"clusterAddrTable"`
}

// ClusterInfo asks the name servers for the clusters and their brokers.
func (c *Client) ClusterInfo() (*ClusterInfo, error) {
	resp, err := c.CallNamesrv(remoting.GetBrokerClusterInfo, nil)
	if err != nil {
		return nil, err
	}
	var ci ClusterInfo
	if err := json.Unmarshal(remoting.QuoteIntKeys(resp.Body), &ci); err != nil {
		return nil, fmt.Errorf("cluster info: %w", err)
	}
	return &ci, nil
}

// Broker is one broker group: its master's address ("" when it has none)
// and its slaves', by id.
type Broker struct {
	Name, Master string
	Slaves       []string
}

// Brokers lists cluster's broker groups sorted by name, as
// CommandUtil.fetchMasterAndSlaveDistinguish.
func (ci *ClusterInfo) Brokers(cluster string) ([]Broker, error) {
	names, ok := ci.ClusterAddrTable[strings.TrimSpace(cluster)]
	if !ok {
		return nil, fmt.Errorf("cluster %q not found: make sure the specified clusterName exists or the name server connected to is correct", cluster)
	}
	names = append([]string(nil), names...)
	sort.Strings(names)
	var out []Broker
	for _, n := range names {
		bd := ci.BrokerAddrTable[n]
		b := Broker{Name: n, Master: bd.BrokerAddrs["0"]}
		for _, id := range bd.IDs() {
			if id != 0 {
				b.Slaves = append(b.Slaves, bd.BrokerAddrs[strconv.FormatInt(id, 10)])
			}
		}
		out = append(out, b)
	}
	return out, nil
}

// BrokerNameOf is CommandUtil.fetchBrokerNameByAddr.
func (ci *ClusterInfo) BrokerNameOf(addr string) (string, error) {
	for name, bd := range ci.BrokerAddrTable {
		for _, x := range bd.BrokerAddrs {
			if x == addr {
				return name, nil
			}
		}
	}
	return "", fmt.Errorf("broker %s not found: make sure the specified broker addr exists or the name server connected to is correct", addr)
}
