package namesrv

import (
	"slices"
	"sort"
	"sync"
	"time"
)

// MasterID is the brokerId of a master.
const MasterID int64 = 0

// DefaultBrokerChannelExpiredTime is how long a broker that stopped
// registering stays in the tables (Apache's BROKER_CHANNEL_EXPIRED_TIME)
// unless its registration said otherwise (heartbeatTimeoutMillis).
const DefaultBrokerChannelExpiredTime = 120 * time.Second

// BrokerAddr identifies a live broker: Apache's BrokerAddrInfo.
type BrokerAddr struct {
	Cluster string
	Addr    string
}

// brokerLive is Apache's BrokerLiveInfo.
type brokerLive struct {
	lastUpdate   time.Time
	timeout      time.Duration
	dataVersion  DataVersion
	connID       uint64 // remoting.Conn.ID the registration arrived on; 0 = none
	haServerAddr string
}

// Registration is one REGISTER_BROKER request, decoded.
type Registration struct {
	ClusterName  string
	BrokerAddr   string
	BrokerName   string
	BrokerID     int64
	HAServerAddr string
	ZoneName     string
	// HeartbeatTimeout overrides DefaultBrokerChannelExpiredTime when > 0.
	HeartbeatTimeout time.Duration
	// EnableActingMaster is nil for brokers that do not send it (pre-5.0).
	EnableActingMaster *bool
	// Topics is the body's topic table; nil when the broker sent none.
	Topics        map[string]TopicConfig
	DataVersion   DataVersion
	FilterServers []string // nil = leave as is; empty = clear
	ConnID        uint64
}

// RegisterResult answers a slave with its master's addresses; empty for masters.
type RegisterResult struct {
	HAServerAddr string
	MasterAddr   string
	// First is set when the address was not live before (worth a log line).
	First bool
}

// Routes is Apache's RouteInfoManager: safe for concurrent use; it reads no
// clock (callers pass now).
type Routes struct {
	supportActingMaster bool
	deleteUnlisted      bool // deleteTopicWithBrokerRegistration

	mu            sync.RWMutex
	topics        map[string]map[string]QueueData // topic → brokerName → queue data
	brokers       map[string]*BrokerData          // brokerName → data
	clusters      map[string]map[string]struct{}  // cluster → brokerNames
	live          map[BrokerAddr]*brokerLive
	filterServers map[BrokerAddr][]string
}

// NewRoutes returns empty tables configured from cfg.
func NewRoutes(cfg Config) *Routes {
	return &Routes{
		supportActingMaster: cfg.SupportActingMaster,
		deleteUnlisted:      cfg.DeleteTopicWithBrokerRegistration,
		topics:              make(map[string]map[string]QueueData),
		brokers:             make(map[string]*BrokerData),
		clusters:            make(map[string]map[string]struct{}),
		live:                make(map[BrokerAddr]*brokerLive),
		filterServers:       make(map[BrokerAddr][]string),
	}
}

// Register records a broker registration, as RouteInfoManager.registerBroker:
// the master's (or, in acting-master mode, the smallest slave's) topic table
// updates queue data when its data version changed or on first registration;
// topics the body omits keep their queue data unless
// deleteTopicWithBrokerRegistration is set.
func (r *Routes) Register(reg Registration, now time.Time) (RegisterResult, error) {
	var res RegisterResult
	r.mu.Lock()
	defer r.mu.Unlock()

	names := r.clusters[reg.ClusterName]
	if names == nil {
		names = make(map[string]struct{})
		r.clusters[reg.ClusterName] = names
	}
	names[reg.BrokerName] = struct{}{}

	registerFirst := false
	bd := r.brokers[reg.BrokerName]
	if bd == nil {
		registerFirst = true
		bd = &BrokerData{Cluster: reg.ClusterName, BrokerName: reg.BrokerName, BrokerAddrs: make(map[int64]string)}
		r.brokers[reg.BrokerName] = bd
	}
	oldVersionBroker := reg.EnableActingMaster == nil
	bd.EnableActingMaster = !oldVersionBroker && *reg.EnableActingMaster
	bd.ZoneName = reg.ZoneName

	// Slave switched to master: one address has one id.
	for id, a := range bd.BrokerAddrs {
		if a == reg.BrokerAddr && id != reg.BrokerID {
			delete(bd.BrokerAddrs, id)
		}
	}
	key := BrokerAddr{Cluster: reg.ClusterName, Addr: reg.BrokerAddr}
	if old, ok := bd.BrokerAddrs[reg.BrokerID]; ok && old != reg.BrokerAddr {
		if ol := r.live[BrokerAddr{Cluster: reg.ClusterName, Addr: old}]; ol != nil &&
			ol.dataVersion.StateVersion > reg.DataVersion.StateVersion {
			delete(r.live, key) // a stale broker lost the id to a newer one
			return res, nil
		}
	}
	if _, ok := bd.BrokerAddrs[reg.BrokerID]; !ok && len(reg.Topics) == 1 {
		// A single-topic registration before the broker's full one.
		r.dropEmptyLocked(reg.ClusterName, reg.BrokerName)
		return res, ErrRegisterRejected
	}
	old := bd.BrokerAddrs[reg.BrokerID]
	bd.BrokerAddrs[reg.BrokerID] = reg.BrokerAddr
	registerFirst = registerFirst || old == ""

	isMaster := reg.BrokerID == MasterID
	isPrimeSlave := !oldVersionBroker && !isMaster && reg.BrokerID == minID(bd.BrokerAddrs)
	if reg.Topics != nil && (isMaster || isPrimeSlave) {
		changed := r.versionChangedLocked(key, reg.DataVersion)
		if r.deleteUnlisted {
			for topic, qds := range r.topics {
				if _, listed := reg.Topics[topic]; listed {
					continue
				}
				if _, ok := qds[reg.BrokerName]; ok {
					delete(qds, reg.BrokerName)
					if len(qds) == 0 {
						delete(r.topics, topic)
					}
				}
			}
		}
		for _, tc := range reg.Topics {
			if !registerFirst && !changed {
				if _, ok := r.topics[tc.TopicName][reg.BrokerName]; ok {
					continue
				}
			}
			perm := tc.Perm
			if isPrimeSlave && bd.EnableActingMaster {
				perm &^= PermWrite
			}
			qds := r.topics[tc.TopicName]
			if qds == nil {
				qds = make(map[string]QueueData)
				r.topics[tc.TopicName] = qds
			}
			qds[reg.BrokerName] = QueueData{
				BrokerName:     reg.BrokerName,
				ReadQueueNums:  tc.ReadQueueNums,
				WriteQueueNums: tc.WriteQueueNums,
				Perm:           perm,
				TopicSysFlag:   tc.TopicSysFlag,
			}
		}
	}

	timeout := reg.HeartbeatTimeout
	if timeout <= 0 {
		timeout = DefaultBrokerChannelExpiredTime
	}
	res.First = r.live[key] == nil
	r.live[key] = &brokerLive{
		lastUpdate:   now,
		timeout:      timeout,
		dataVersion:  reg.DataVersion,
		connID:       reg.ConnID,
		haServerAddr: reg.HAServerAddr,
	}
	if reg.FilterServers != nil {
		if len(reg.FilterServers) == 0 {
			delete(r.filterServers, key)
		} else {
			r.filterServers[key] = slices.Clone(reg.FilterServers)
		}
	}
	if !isMaster {
		if ma, ok := bd.BrokerAddrs[MasterID]; ok {
			if ml := r.live[BrokerAddr{Cluster: reg.ClusterName, Addr: ma}]; ml != nil {
				res.HAServerAddr = ml.haServerAddr
				res.MasterAddr = ma
			}
		}
	}
	return res, nil
}

// dropEmptyLocked undoes the cluster/broker entries a rejected first
// registration created.
func (r *Routes) dropEmptyLocked(cluster, name string) {
	if bd := r.brokers[name]; bd != nil && len(bd.BrokerAddrs) == 0 {
		delete(r.brokers, name)
		if names := r.clusters[cluster]; names != nil {
			delete(names, name)
			if len(names) == 0 {
				delete(r.clusters, cluster)
			}
		}
	}
}

func (r *Routes) versionChangedLocked(key BrokerAddr, v DataVersion) bool {
	bl := r.live[key]
	return bl == nil || bl.dataVersion != v
}

// QueryDataVersion answers QUERY_DATA_VERSION: whether v differs from what
// the broker last registered, and the name server's copy (nil if unknown).
// It counts as a heartbeat.
func (r *Routes) QueryDataVersion(key BrokerAddr, v DataVersion, now time.Time) (changed bool, have *DataVersion) {
	r.mu.Lock()
	defer r.mu.Unlock()
	changed = r.versionChangedLocked(key, v)
	if bl := r.live[key]; bl != nil {
		bl.lastUpdate = now
		dv := bl.dataVersion
		have = &dv
	}
	return changed, have
}

// Heartbeat refreshes a live broker's timestamp (BROKER_HEARTBEAT).
func (r *Routes) Heartbeat(key BrokerAddr, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if bl := r.live[key]; bl != nil {
		bl.lastUpdate = now
	}
}

// Unregister removes a broker address (UNREGISTER_BROKER). The brokerName's
// queue data goes when its last address does.
func (r *Routes) Unregister(key BrokerAddr, brokerName string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.unregisterLocked(key, brokerName)
}

func (r *Routes) unregisterLocked(key BrokerAddr, brokerName string) {
	delete(r.live, key)
	delete(r.filterServers, key)
	bd := r.brokers[brokerName]
	if bd == nil {
		return
	}
	for id, a := range bd.BrokerAddrs {
		if a == key.Addr {
			delete(bd.BrokerAddrs, id)
		}
	}
	if len(bd.BrokerAddrs) > 0 {
		if bd.EnableActingMaster && minID(bd.BrokerAddrs) > MasterID {
			// No master left: the brokerName's queues become read-only.
			for _, qds := range r.topics {
				if qd, ok := qds[brokerName]; ok {
					qd.Perm &^= PermWrite
					qds[brokerName] = qd
				}
			}
		}
		return
	}
	delete(r.brokers, brokerName)
	if names := r.clusters[key.Cluster]; names != nil {
		delete(names, brokerName)
		if len(names) == 0 {
			delete(r.clusters, key.Cluster)
		}
	}
	for topic, qds := range r.topics {
		delete(qds, brokerName)
		if len(qds) == 0 {
			delete(r.topics, topic)
		}
	}
}

// removeLiveLocked drops a live broker and, if found, its address in the
// broker tables (Apache's onChannelDestroy).
func (r *Routes) removeLiveLocked(key BrokerAddr) {
	for name, bd := range r.brokers {
		if bd.Cluster != key.Cluster {
			continue
		}
		for _, a := range bd.BrokerAddrs {
			if a == key.Addr {
				r.unregisterLocked(key, name)
				return
			}
		}
	}
	delete(r.live, key)
	delete(r.filterServers, key)
}

// Expire removes brokers not heard from within their timeout and returns them.
func (r *Routes) Expire(now time.Time) []BrokerAddr {
	r.mu.Lock()
	defer r.mu.Unlock()
	var gone []BrokerAddr
	for key, bl := range r.live {
		if bl.lastUpdate.Add(bl.timeout).Before(now) {
			gone = append(gone, key)
		}
	}
	for _, key := range gone {
		r.removeLiveLocked(key)
	}
	return gone
}

// OnConn returns the brokers registered over a connection, keeping them.
func (r *Routes) OnConn(connID uint64) []BrokerAddr {
	if connID == 0 {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []BrokerAddr
	for key, bl := range r.live {
		if bl.connID == connID {
			out = append(out, key)
		}
	}
	return out
}

// ConnClosed removes the brokers registered over the closed connection and
// returns them.
func (r *Routes) ConnClosed(connID uint64) []BrokerAddr {
	if connID == 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var gone []BrokerAddr
	for key, bl := range r.live {
		if bl.connID == connID {
			gone = append(gone, key)
		}
	}
	for _, key := range gone {
		r.removeLiveLocked(key)
	}
	return gone
}

// Route returns the topic's route (Apache's pickupTopicRouteData): it needs
// queue data and at least one known broker.
func (r *Routes) Route(topic string) (TopicRouteData, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	qds := r.topics[topic]
	if qds == nil {
		return TopicRouteData{}, ErrTopicNotExist
	}
	rd := TopicRouteData{
		QueueDatas:        make([]QueueData, 0, len(qds)),
		BrokerDatas:       make([]BrokerData, 0, len(qds)),
		FilterServerTable: map[string][]string{},
	}
	for name, qd := range qds {
		rd.QueueDatas = append(rd.QueueDatas, qd)
		bd := r.brokers[name]
		if bd == nil {
			continue
		}
		c := bd.clone()
		rd.BrokerDatas = append(rd.BrokerDatas, c)
		if len(r.filterServers) == 0 {
			continue
		}
		for _, a := range c.BrokerAddrs {
			rd.FilterServerTable[a] = slices.Clone(r.filterServers[BrokerAddr{Cluster: c.Cluster, Addr: a}])
		}
	}
	if len(rd.BrokerDatas) == 0 {
		return TopicRouteData{}, ErrTopicNotExist
	}
	sort.Slice(rd.QueueDatas, func(i, j int) bool { return rd.QueueDatas[i].BrokerName < rd.QueueDatas[j].BrokerName })
	sort.Slice(rd.BrokerDatas, func(i, j int) bool { return rd.BrokerDatas[i].BrokerName < rd.BrokerDatas[j].BrokerName })
	if r.supportActingMaster {
		actingMaster(&rd)
	}
	return rd, nil
}

// actingMaster shows the smallest slave as id 0 for brokers in acting-master
// mode that have lost their master and whose queues are read-only.
func actingMaster(rd *TopicRouteData) {
	for i := range rd.BrokerDatas {
		bd := &rd.BrokerDatas[i]
		if len(bd.BrokerAddrs) == 0 || !bd.EnableActingMaster {
			continue
		}
		if _, ok := bd.BrokerAddrs[MasterID]; ok {
			continue
		}
		for _, qd := range rd.QueueDatas {
			if qd.BrokerName == bd.BrokerName {
				if qd.Perm&PermWrite == 0 {
					id := minID(bd.BrokerAddrs)
					bd.BrokerAddrs[MasterID] = bd.BrokerAddrs[id]
					delete(bd.BrokerAddrs, id)
				}
				break
			}
		}
	}
}

// ClusterInfo returns a copy of the broker and cluster tables.
func (r *Routes) ClusterInfo() ClusterInfo {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ci := ClusterInfo{
		BrokerAddrTable:  make(map[string]BrokerData, len(r.brokers)),
		ClusterAddrTable: make(map[string][]string, len(r.clusters)),
	}
	for name, bd := range r.brokers {
		ci.BrokerAddrTable[name] = bd.clone()
	}
	for c, names := range r.clusters {
		ci.ClusterAddrTable[c] = sortedKeys(names)
	}
	return ci
}

// Topics lists every topic with queue data, sorted.
func (r *Routes) Topics() TopicList {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return TopicList{Topics: sortedKeys(r.topics)}
}

// TopicsByCluster lists topics with queue data on a broker of the cluster.
func (r *Routes) TopicsByCluster(cluster string) TopicList {
	r.mu.RLock()
	defer r.mu.RUnlock()
	tl := TopicList{Topics: []string{}}
	names := r.clusters[cluster]
	for _, topic := range sortedKeys(r.topics) {
		for name := range r.topics[topic] {
			if _, ok := names[name]; ok {
				tl.Topics = append(tl.Topics, topic)
				break
			}
		}
	}
	return tl
}

// SystemTopics lists cluster and broker names (the topics brokers create for
// them) plus one broker address, as Apache's getSystemTopicList.
func (r *Routes) SystemTopics() TopicList {
	r.mu.RLock()
	defer r.mu.RUnlock()
	tl := TopicList{Topics: []string{}}
	for _, c := range sortedKeys(r.clusters) {
		tl.Topics = append(tl.Topics, c)
		tl.Topics = append(tl.Topics, sortedKeys(r.clusters[c])...)
	}
	for _, name := range sortedKeys(r.brokers) {
		if addrs := r.brokers[name].BrokerAddrs; len(addrs) > 0 {
			tl.BrokerAddr = addrs[minID(addrs)]
			break
		}
	}
	return tl
}

// TopicsWithFlags lists topics whose queue data match: some broker's
// topicSysFlag has all of want set and none of without.
func (r *Routes) TopicsWithFlags(want, without int32) TopicList {
	r.mu.RLock()
	defer r.mu.RUnlock()
	tl := TopicList{Topics: []string{}}
	for _, topic := range sortedKeys(r.topics) {
		for _, qd := range r.topics[topic] {
			if qd.TopicSysFlag&want == want && qd.TopicSysFlag&without == 0 {
				tl.Topics = append(tl.Topics, topic)
				break
			}
		}
	}
	return tl
}

// DeleteTopic removes a topic's queue data: everywhere when cluster is "",
// else only the cluster's brokers'.
func (r *Routes) DeleteTopic(topic, cluster string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cluster == "" {
		delete(r.topics, topic)
		return
	}
	qds := r.topics[topic]
	if qds == nil {
		return
	}
	for name := range r.clusters[cluster] {
		delete(qds, name)
	}
	if len(qds) == 0 {
		delete(r.topics, topic)
	}
}

// RegisterTopic adds queue data for brokers the name server knows
// (REGISTER_TOPIC_IN_NAMESRV); existing entries are kept.
func (r *Routes) RegisterTopic(topic string, qds []QueueData) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(qds) == 0 {
		return
	}
	m := r.topics[topic]
	for _, qd := range qds {
		if r.brokers[qd.BrokerName] == nil {
			continue
		}
		if m == nil {
			m = make(map[string]QueueData)
			r.topics[topic] = m
		}
		if _, ok := m[qd.BrokerName]; !ok {
			m[qd.BrokerName] = qd
		}
	}
}

// WipeWritePerm clears the write bit of every queue data of brokerName and
// returns how many topics it touched.
func (r *Routes) WipeWritePerm(brokerName string) int {
	return r.setPerm(brokerName, func(p int32) int32 { return p &^ PermWrite })
}

// AddWritePerm makes every queue data of brokerName read-write and returns
// how many topics it touched.
func (r *Routes) AddWritePerm(brokerName string) int {
	return r.setPerm(brokerName, func(int32) int32 { return PermRead | PermWrite })
}

func (r *Routes) setPerm(brokerName string, f func(int32) int32) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, qds := range r.topics {
		if qd, ok := qds[brokerName]; ok {
			qd.Perm = f(qd.Perm)
			qds[brokerName] = qd
			n++
		}
	}
	return n
}

func minID(m map[int64]string) int64 {
	first := true
	var lo int64
	for id := range m {
		if first || id < lo {
			lo, first = id, false
		}
	}
	return lo
}
