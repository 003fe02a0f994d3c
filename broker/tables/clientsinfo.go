package tables

import (
	"sort"

	"github.com/rocketgo/rocketgo/message"
)

// ProducerInfo is one producer connection as GET_ALL_PRODUCER_INFO lists
// it (Apache's ProducerInfo): remoteIP is the channel's address as Netty
// prints it, "/ip:port".
type ProducerInfo struct {
	ClientID            string `json:"clientId"`
	RemoteIP            string `json:"remoteIP"`
	Language            string `json:"language"`
	Version             int32  `json:"version"`
	LastUpdateTimestamp int64  `json:"lastUpdateTimestamp"`
}

// ProducerTable is GET_ALL_PRODUCER_INFO: every producer group's
// connections, each group's in client id order.
func (cs *Clients) ProducerTable() map[string][]ProducerInfo {
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	out := make(map[string][]ProducerInfo, len(cs.producers))
	for group, chans := range cs.producers {
		if len(chans) == 0 {
			continue
		}
		list := make([]ProducerInfo, 0, len(chans))
		for _, ch := range chans {
			list = append(list, ProducerInfo{ClientID: ch.clientID, RemoteIP: "/" + ch.conn.Remote, Language: ch.language.String(),
				Version: ch.version, LastUpdateTimestamp: ch.lastUpdate.UnixMilli()})
		}
		sort.Slice(list, func(i, j int) bool { return list[i].ClientID < list[j].ClientID })
		out[group] = list
	}
	return out
}

// SystemTopics is GET_SYSTEM_TOPIC_LIST_FROM_BROKER: Apache's
// TopicValidator system topic set, with the names this broker added
// (cluster, broker, trace and reply topics), sorted.
func (t *Topics) SystemTopics() []string {
	t.mu.RLock()
	static := message.StaticSystemTopics()
	seen := make(map[string]bool, len(static)+len(t.system))
	for _, n := range static {
		seen[n] = true
	}
	for n := range t.system {
		seen[n] = true
	}
	t.mu.RUnlock()
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
