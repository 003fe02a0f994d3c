package namesrv

// JSON bodies of the name server, written the way clients need them: compact,
// fields in alphabetical order (fastjson's order), map keys sorted, integer map
// keys quoted, null collections never written (empty ones are [] / {}).
//
//	TopicRouteData  {"brokerDatas":[BrokerData...],"filterServerTable":{addr:[..]},
//	                 "orderTopicConf":"a:4;b:4"(optional),"queueDatas":[QueueData...]}
//	BrokerData      {"brokerAddrs":{"0":"ip:port"},"brokerName":"b","cluster":"c",
//	                 "enableActingMaster":false,"zoneName":"z"(optional)}
//	QueueData       {"brokerName":"b","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}
//	ClusterInfo     {"brokerAddrTable":{name:BrokerData},"clusterAddrTable":{cluster:[names]}}
//	TopicList       {"brokerAddr":"ip:port"(optional),"topicList":[..]}
//	KVTable         {"table":{k:v}}
//	DataVersion     {"counter":1,"stateVersion":0,"timestamp":1700000000000}

import (
	"slices"
	"strconv"

	"github.com/rocketgo/rocketgo/remoting"
)

// Perm bits (PermName).
const (
	PermPriority int32 = 8
	PermRead     int32 = 4
	PermWrite    int32 = 2
	PermInherit  int32 = 1
)

// Topic sys flag bits (TopicSysFlag).
const (
	TopicSysFlagUnit    int32 = 1
	TopicSysFlagUnitSub int32 = 2
)

// DataVersion is Apache's DataVersion: a broker's topic config version.
type DataVersion struct {
	Counter      int64 `json:"counter"`
	StateVersion int64 `json:"stateVersion"`
	Timestamp    int64 `json:"timestamp"`
}

// AppendJSON appends the version as fastjson writes it.
func (v DataVersion) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"counter":`...)
	dst = strconv.AppendInt(dst, v.Counter, 10)
	dst = append(dst, `,"stateVersion":`...)
	dst = strconv.AppendInt(dst, v.StateVersion, 10)
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, v.Timestamp, 10)
	return append(dst, '}')
}

// QueueData is one broker's share of a topic.
type QueueData struct {
	BrokerName     string
	ReadQueueNums  int32
	WriteQueueNums int32
	Perm           int32
	TopicSysFlag   int32
}

// AppendJSON appends the queue data.
func (q QueueData) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"brokerName":`...)
	dst = appendString(dst, q.BrokerName)
	dst = append(dst, `,"perm":`...)
	dst = strconv.AppendInt(dst, int64(q.Perm), 10)
	dst = append(dst, `,"readQueueNums":`...)
	dst = strconv.AppendInt(dst, int64(q.ReadQueueNums), 10)
	dst = append(dst, `,"topicSysFlag":`...)
	dst = strconv.AppendInt(dst, int64(q.TopicSysFlag), 10)
	dst = append(dst, `,"writeQueueNums":`...)
	dst = strconv.AppendInt(dst, int64(q.WriteQueueNums), 10)
	return append(dst, '}')
}

// BrokerData is one broker group: its master (id 0) and slaves.
type BrokerData struct {
	Cluster            string
	BrokerName         string
	BrokerAddrs        map[int64]string // brokerId → "ip:port"; never nil
	EnableActingMaster bool
	ZoneName           string
}

func (b *BrokerData) clone() BrokerData {
	c := *b
	c.BrokerAddrs = make(map[int64]string, len(b.BrokerAddrs))
	for id, a := range b.BrokerAddrs {
		c.BrokerAddrs[id] = a
	}
	return c
}

// AppendJSON appends the broker data; brokerAddrs is always an object with
// quoted ids in ascending order.
func (b BrokerData) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"brokerAddrs":{`...)
	ids := make([]int64, 0, len(b.BrokerAddrs))
	for id := range b.BrokerAddrs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, id, 10)
		dst = append(dst, `":`...)
		dst = appendString(dst, b.BrokerAddrs[id])
	}
	dst = append(dst, `},"brokerName":`...)
	dst = appendString(dst, b.BrokerName)
	dst = append(dst, `,"cluster":`...)
	dst = appendString(dst, b.Cluster)
	dst = append(dst, `,"enableActingMaster":`...)
	dst = strconv.AppendBool(dst, b.EnableActingMaster)
	if b.ZoneName != "" {
		dst = append(dst, `,"zoneName":`...)
		dst = appendString(dst, b.ZoneName)
	}
	return append(dst, '}')
}

// TopicRouteData is the answer to GET_ROUTEINFO_BY_TOPIC. Queue and broker
// datas are sorted by brokerName.
type TopicRouteData struct {
	OrderTopicConf    string
	QueueDatas        []QueueData
	BrokerDatas       []BrokerData
	FilterServerTable map[string][]string // broker addr → filter servers
}

// AppendJSON appends the route in the quoted-key form every client accepts.
func (r TopicRouteData) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"brokerDatas":[`...)
	for i, b := range r.BrokerDatas {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = b.AppendJSON(dst)
	}
	dst = append(dst, `],"filterServerTable":{`...)
	addrs := sortedKeys(r.FilterServerTable)
	for i, a := range addrs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, a)
		dst = append(dst, ':')
		dst = appendStrings(dst, r.FilterServerTable[a])
	}
	dst = append(dst, '}')
	if r.OrderTopicConf != "" {
		dst = append(dst, `,"orderTopicConf":`...)
		dst = appendString(dst, r.OrderTopicConf)
	}
	dst = append(dst, `,"queueDatas":[`...)
	for i, q := range r.QueueDatas {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = q.AppendJSON(dst)
	}
	return append(dst, "]}"...)
}

// ClusterInfo is the answer to GET_BROKER_CLUSTER_INFO.
type ClusterInfo struct {
	BrokerAddrTable  map[string]BrokerData // brokerName → data
	ClusterAddrTable map[string][]string   // cluster → sorted brokerNames
}

// AppendJSON appends the cluster info with sorted keys.
func (ci ClusterInfo) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"brokerAddrTable":{`...)
	for i, n := range sortedKeys(ci.BrokerAddrTable) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, n)
		dst = append(dst, ':')
		dst = ci.BrokerAddrTable[n].AppendJSON(dst)
	}
	dst = append(dst, `},"clusterAddrTable":{`...)
	for i, c := range sortedKeys(ci.ClusterAddrTable) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, c)
		dst = append(dst, ':')
		dst = appendStrings(dst, ci.ClusterAddrTable[c])
	}
	return append(dst, "}}"...)
}

// TopicList is the body of the topic-list requests.
type TopicList struct {
	Topics     []string
	BrokerAddr string // only GET_SYSTEM_TOPIC_LIST_FROM_NS sets it
}

// AppendJSON appends the list.
func (tl TopicList) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	if tl.BrokerAddr != "" {
		dst = append(dst, `"brokerAddr":`...)
		dst = appendString(dst, tl.BrokerAddr)
		dst = append(dst, ',')
	}
	dst = append(dst, `"topicList":`...)
	dst = appendStrings(dst, tl.Topics)
	return append(dst, '}')
}

// AppendKVTable appends Apache's KVTable body {"table":{k:v}} with sorted keys.
func AppendKVTable(dst []byte, table map[string]string) []byte {
	dst = append(dst, `{"table":`...)
	dst = appendStringMap(dst, table)
	return append(dst, '}')
}

func appendStringMap(dst []byte, m map[string]string) []byte {
	dst = append(dst, '{')
	for i, k := range sortedKeys(m) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		dst = appendString(dst, m[k])
	}
	return append(dst, '}')
}

func appendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s)
	}
	return append(dst, ']')
}

// appendString appends s as a JSON string the way fastjson writes it.
func appendString(dst []byte, s string) []byte { return remoting.AppendJSONString(dst, s) }

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
