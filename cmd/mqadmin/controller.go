package main

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/remoting"
)

// The controller commands: the controller's metadata and config, the sync
// state sets it keeps, an election it is asked for, and the brokers' epochs.

// controllerMeta is CONTROLLER_GET_METADATA_INFO's answer
// (GetMetaDataResponseHeader).
type controllerMeta struct{ group, leaderID, leaderAddr, peers string }

func (a *admin) controllerMeta(addr string) (*controllerMeta, error) {
	resp, err := a.Call(addr, remoting.ControllerGetMetadataInfo, nil, nil)
	if err != nil {
		return nil, err
	}
	return &controllerMeta{group: lookupNull(resp, "group"), leaderID: lookupNull(resp, "controllerLeaderId"),
		leaderAddr: lookupNull(resp, "controllerLeaderAddress"), peers: resp.Str("peers")}, nil
}

// lookupNull is a header field as Java prints a String field: "null" when
// absent.
func lookupNull(resp *remoting.Command, key string) string {
	if v, ok := resp.Lookup(key); ok {
		return v
	}
	return "null"
}

// leader is the controller leader's address as the one at addr knows it.
func (a *admin) leader(addr string) (string, error) {
	m, err := a.controllerMeta(addr)
	if err != nil {
		return "", err
	}
	if m.leaderAddr == "null" || m.leaderAddr == "" {
		return "", fmt.Errorf("%s: the controller knows no leader", addr)
	}
	return m.leaderAddr, nil
}

func getControllerMetaData(a *admin, o *options, args []string) error {
	ctl := o.Req("a", "controllerAddress", "the address of controller")
	if err := a.parse(o, args); err != nil {
		return err
	}
	m, err := a.controllerMeta(strings.TrimSpace(*ctl))
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out, "\n#ControllerGroup\t%s", m.group)
	fmt.Fprintf(a.out, "\n#ControllerLeaderId\t%s", m.leaderID)
	fmt.Fprintf(a.out, "\n#ControllerLeaderAddress\t%s", m.leaderAddr)
	if m.peers != "" {
		for _, p := range javaSplit(m.peers, ";") {
			fmt.Fprintf(a.out, "\n#Peer:\t%s", p)
		}
	}
	fmt.Fprintf(a.out, "\n")
	return nil
}

// javaSplit is String.split(sep) for a plain separator: trailing empty
// strings removed.
func javaSplit(s, sep string) []string {
	out := strings.Split(s, sep)
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// controllerList is -a split as Apache's: trimmed, on ';'.
func controllerList(s string) []string {
	var out []string
	for _, p := range strings.Split(strings.TrimSpace(s), ";") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

func getControllerConfig(a *admin, o *options, args []string) error {
	ctl := o.Req("a", "controllerAddress", "Controller address list, eg: 192.168.0.1:9878;192.168.0.2:9878")
	if err := a.parse(o, args); err != nil {
		return err
	}
	list := controllerList(*ctl)
	sort.Strings(list) // Apache: a HashMap by address
	for _, addr := range list {
		resp, err := a.Call(addr, remoting.GetControllerConfig, nil, nil)
		if err != nil {
			return err
		}
		printConfig(a, addr, resp.Body)
	}
	return nil
}

func updateControllerConfig(a *admin, o *options, args []string) error {
	ctl := o.Req("a", "controllerAddress", "Controller address list, eg: 192.168.0.1:9878;192.168.0.2:9878")
	key := o.Req("k", "key", "config key")
	value := o.Req("v", "value", "config value")
	if err := a.parse(o, args); err != nil {
		return err
	}
	k, v, err := configPair(*key, *value)
	if err != nil {
		return err
	}
	list := controllerList(*ctl)
	for _, addr := range list {
		if _, err := a.Call(addr, remoting.UpdateControllerConfig, nil, []byte(k+"="+v+"\n")); err != nil {
			return err
		}
	}
	fmt.Fprintf(a.out, "update controller config success!%s\n%s : %s\n", javaList(list), k, v)
	return nil
}

// brokerMemberGroup is BrokerMemberGroup's JSON.
type brokerMemberGroup struct {
	Cluster     string            `json:"cluster"`
	BrokerName  string            `json:"brokerName"`
	BrokerAddrs map[string]string `json:"brokerAddrs"`
}

func electMaster(a *admin, o *options, args []string) error {
	ctl := o.Req("a", "controllerAddress", "The address of controller")
	id := o.Req("b", "brokerId", "The id of the broker which requires to become master")
	name := o.Req("bn", "brokerName", "The broker name of the replicas that require to be manipulated")
	cluster := o.Req("c", "clusterName", "the clusterName of broker")
	if err := a.parse(o, args); err != nil {
		return err
	}
	c, bn := strings.TrimSpace(*cluster), strings.TrimSpace(*name)
	brokerID, err := strconv.ParseInt(strings.TrimSpace(*id), 10, 64)
	if err != nil {
		return fmt.Errorf("-b: %q is not a number", *id)
	}
	leader, err := a.leader(strings.TrimSpace(*ctl))
	if err != nil {
		return err
	}
	resp, err := a.Call(leader, remoting.ControllerElectMaster, map[string]string{"clusterName": c, "brokerName": bn,
		"brokerId": strconv.FormatInt(brokerID, 10), "designateElect": "true",
		"invokeTime": strconv.FormatInt(time.Now().UnixMilli(), 10)}, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out, "\n#ClusterName\t%s", c)
	fmt.Fprintf(a.out, "\n#BrokerName\t%s", bn)
	fmt.Fprintf(a.out, "\n#BrokerMasterAddr\t%s", lookupNull(resp, "masterAddress"))
	fmt.Fprintf(a.out, "\n#MasterEpoch\t%s", lookupNull(resp, "masterEpoch"))
	fmt.Fprintf(a.out, "\n#SyncStateSetEpoch\t%s\n", lookupNull(resp, "syncStateSetEpoch"))
	if len(resp.Body) == 0 {
		return nil
	}
	var g brokerMemberGroup
	if err := json.Unmarshal(remoting.QuoteIntKeys(resp.Body), &g); err != nil {
		return fmt.Errorf("%s: elect master: %w", leader, err)
	}
	for _, bid := range sortedIDs(g.BrokerAddrs) { // Apache: a HashMap<Long, String>'s order, by id for small ids
		fmt.Fprintf(a.out, "\t#Broker\t%d\t%s\n", bid, g.BrokerAddrs[strconv.FormatInt(bid, 10)])
	}
	return nil
}

// sortedIDs is the numeric keys of m, ascending (others left out).
func sortedIDs(m map[string]string) []int64 {
	var ids []int64
	for k := range m {
		if n, err := strconv.ParseInt(k, 10, 64); err == nil {
			ids = append(ids, n)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// replica is BrokerReplicasInfo.ReplicaIdentity.
type replica struct {
	BrokerName    *string `json:"brokerName"`
	BrokerID      *int64  `json:"brokerId"`
	BrokerAddress *string `json:"brokerAddress"`
	Alive         *bool   `json:"alive"`
}

func (r replica) String() string {
	id, alive := "null", "null"
	if r.BrokerID != nil {
		id = strconv.FormatInt(*r.BrokerID, 10)
	}
	if r.Alive != nil {
		alive = strconv.FormatBool(*r.Alive)
	}
	return fmt.Sprintf("ReplicaIdentity{brokerName='%s', brokerId=%s, brokerAddress='%s', alive=%s}", deref(r.BrokerName), id, deref(r.BrokerAddress), alive)
}

func getSyncStateSet(a *admin, o *options, args []string) error {
	ctl := o.Req("a", "controllerAddress", "the address of controller")
	cluster := o.String("c", "clusterName", "which cluster")
	broker := o.String("b", "brokerName", "which broker to fetch")
	interval := o.String("i", "interval", "the interval(second) of get info")
	if err := a.parse(o, args); err != nil {
		return err
	}
	var names []string
	switch {
	case o.Given("b"):
		names = []string{strings.TrimSpace(*broker)}
	case o.Given("c"):
		bs, err := a.clusterBrokers(strings.TrimSpace(*cluster))
		if err != nil {
			return err
		}
		for _, b := range bs {
			names = append(names, b.Name)
		}
	default:
		a.usage()
		return nil
	}
	addr := controllerList(*ctl)
	if len(addr) == 0 {
		return fmt.Errorf("-a: no controller address")
	}
	return a.every(o.Given("i"), *interval, func() error { return a.printSyncStateSets(addr[0], names) })
}

// every runs fn once, or with -i every interval seconds (3 when blank)
// until it fails, as the commands with -i do.
func (a *admin) every(repeat bool, interval string, fn func() error) error {
	if !repeat {
		return fn()
	}
	secs := int64(3)
	if s := strings.TrimSpace(interval); s != "" {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil || n < 0 {
			return fmt.Errorf("-i: %q is not a number of seconds", interval)
		}
		secs = n
	}
	for {
		if err := fn(); err != nil {
			return err
		}
		time.Sleep(time.Duration(secs) * time.Second)
	}
}

func (a *admin) printSyncStateSets(ctl string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	leader, err := a.leader(ctl)
	if err != nil {
		return err
	}
	body, err := json.Marshal(names)
	if err != nil {
		return err
	}
	resp, err := a.Call(leader, remoting.ControllerGetSyncStateData, nil, body)
	if err != nil {
		return err
	}
	var info struct {
		Table map[string]struct {
			MasterBrokerID    *int64    `json:"masterBrokerId"`
			MasterAddress     *string   `json:"masterAddress"`
			MasterEpoch       *int32    `json:"masterEpoch"`
			SyncStateSetEpoch *int32    `json:"syncStateSetEpoch"`
			InSync            []replica `json:"inSyncReplicas"`
			NotInSync         []replica `json:"notInSyncReplicas"`
		} `json:"replicasInfoTable"`
	}
	if err := json.Unmarshal(remoting.QuoteIntKeys(resp.Body), &info); err != nil {
		return fmt.Errorf("%s: sync state sets: %w", leader, err)
	}
	keys := make([]string, 0, len(info.Table))
	for k := range info.Table {
		keys = append(keys, k)
	}
	sort.Strings(keys) // Apache: a HashMap's order
	num := func(p any) string {
		switch v := p.(type) {
		case *int64:
			if v != nil {
				return strconv.FormatInt(*v, 10)
			}
		case *int32:
			if v != nil {
				return strconv.FormatInt(int64(*v), 10)
			}
		}
		return "null"
	}
	for _, k := range keys {
		r := info.Table[k]
		fmt.Fprintf(a.out, "\n#brokerName\t%s\n#MasterBrokerId\t%s\n#MasterAddr\t%s\n#MasterEpoch\t%s\n#SyncStateSetEpoch\t%s\n#SyncStateSetNums\t%d\n",
			k, num(r.MasterBrokerID), deref(r.MasterAddress), num(r.MasterEpoch), num(r.SyncStateSetEpoch), len(r.InSync))
		for _, m := range r.InSync {
			fmt.Fprintf(a.out, "\nInSyncReplica:\t%s\n", m)
		}
		for _, m := range r.NotInSync {
			fmt.Fprintf(a.out, "\nNotInSyncReplica:\t%s\n", m)
		}
	}
	return nil
}

func getBrokerEpoch(a *admin, o *options, args []string) error {
	broker := o.String("b", "brokerName", "which broker to fetch")
	cluster := o.String("c", "clusterName", "which cluster")
	o.Group(true, "b", "c")
	interval := o.String("i", "interval", "the interval(second) of get info")
	if err := a.parse(o, args); err != nil {
		return err
	}
	return a.every(o.Given("i"), *interval, func() error {
		ci, err := a.ClusterInfo()
		if err != nil {
			return err
		}
		var addrs []string
		if o.Given("b") {
			bd, ok := ci.BrokerAddrTable[strings.TrimSpace(*broker)]
			if !ok {
				return fmt.Errorf("broker %s not found: make sure the specified brokerName exists or the name server connected to is correct", *broker)
			}
			for _, addr := range bd.BrokerAddrs {
				addrs = append(addrs, addr)
			}
			sort.Strings(addrs) // Apache: a HashSet
		} else {
			bs, err := ci.Brokers(strings.TrimSpace(*cluster))
			if err != nil {
				return err
			}
			addrs = addrsOf(bs, true)
		}
		for _, addr := range addrs {
			if err := a.printEpochs(addr); err != nil {
				return err
			}
		}
		return nil
	})
}

func (a *admin) printEpochs(addr string) error {
	resp, err := a.Call(addr, remoting.GetBrokerEpochCache, nil, nil)
	if err != nil {
		return err
	}
	var c struct {
		ClusterName *string `json:"clusterName"`
		BrokerName  *string `json:"brokerName"`
		BrokerID    int64   `json:"brokerId"`
		MaxOffset   int64   `json:"maxOffset"`
		EpochList   []struct {
			Epoch       int32 `json:"epoch"`
			StartOffset int64 `json:"startOffset"`
			EndOffset   int64 `json:"endOffset"`
		} `json:"epochList"`
	}
	if err := json.Unmarshal(resp.Body, &c); err != nil {
		return fmt.Errorf("%s: epochs: %w", addr, err)
	}
	fmt.Fprintf(a.out, "\n#clusterName\t%s\n#brokerName\t%s\n#brokerAddr\t%s\n#brokerId\t%d", deref(c.ClusterName), deref(c.BrokerName), addr, c.BrokerID)
	for i, e := range c.EpochList {
		if i == len(c.EpochList)-1 {
			e.EndOffset = c.MaxOffset
		}
		fmt.Fprintf(a.out, "\n#Epoch: EpochEntry{epoch=%d, startOffset=%d, endOffset=%d}", e.Epoch, e.StartOffset, e.EndOffset)
	}
	fmt.Fprint(a.out, "\n")
	return nil
}

func haStatus(a *admin, o *options, args []string) error {
	cluster := o.String("c", "clusterName", "which cluster")
	broker := o.String("b", "brokerAddr", "which broker to fetch")
	interval := o.String("i", "interval", "the interval(second) of get info")
	if err := a.parse(o, args); err != nil {
		return err
	}
	if !o.Given("b") && !o.Given("c") {
		a.usage()
		return nil
	}
	return a.every(o.Given("i"), *interval, func() error {
		addrs := []string{strings.TrimSpace(*broker)}
		if !o.Given("b") {
			bs, err := a.clusterBrokers(strings.TrimSpace(*cluster))
			if err != nil {
				return err
			}
			addrs = addrsOf(bs, false)
		}
		for _, addr := range addrs {
			if err := a.printHAStatus(addr); err != nil {
				return err
			}
		}
		return nil
	})
}

// printHAStatus is HAStatusSubCommand.printStatus of GET_BROKER_HA_STATUS:
// a master's slaves, or a slave's replication.
func (a *admin) printHAStatus(addr string) error {
	resp, err := a.Call(addr, remoting.GetBrokerHAStatus, nil, nil)
	if err != nil {
		return err
	}
	var hi struct {
		Master          bool  `json:"master"`
		MasterMaxOffset int64 `json:"masterCommitLogMaxOffset"`
		InSyncSlaveNums int32 `json:"inSyncSlaveNums"`
		Conns           []struct {
			Addr              *string `json:"addr"`
			SlaveAckOffset    int64   `json:"slaveAckOffset"`
			Diff              int64   `json:"diff"`
			InSync            bool    `json:"inSync"`
			TransferredBytes  int64   `json:"transferredByteInSecond"`
			TransferFromWhere int64   `json:"transferFromWhere"`
		} `json:"haConnectionInfo"`
		Client *struct {
			MasterAddr        *string `json:"masterAddr"`
			TransferredBytes  int64   `json:"transferredByteInSecond"`
			MaxOffset         int64   `json:"maxOffset"`
			LastReadTimestamp int64   `json:"lastReadTimestamp"`
			LastWriteTime     int64   `json:"lastWriteTimestamp"`
			MasterFlushOffset int64   `json:"masterFlushOffset"`
		} `json:"haClientRuntimeInfo"`
	}
	if err := json.Unmarshal(resp.Body, &hi); err != nil {
		return fmt.Errorf("%s: ha status: %w", addr, err)
	}
	if hi.Master {
		fmt.Fprintf(a.out, "\n#MasterAddr\t%s\n#MasterCommitLogMaxOffset\t%d\n#SlaveNum\t%d\n#InSyncSlaveNum\t%d\n", addr,
			hi.MasterMaxOffset, len(hi.Conns), hi.InSyncSlaveNums)
		fmt.Fprintf(a.out, "%-32s  %-16s %16s %16s %16s %16s\n", "#SlaveAddr", "#SlaveAckOffset", "#Diff", "#TransferSpeed(KB/s)", "#Status", "#TransferFromWhere")
		for _, c := range hi.Conns {
			status := "Fall Behind"
			if c.InSync {
				status = "OK"
			}
			fmt.Fprintf(a.out, "%-32s  %-16d %16d %16.2f %16s %16d\n", deref(c.Addr), c.SlaveAckOffset, c.Diff,
				float64(c.TransferredBytes)/1024.0, status, c.TransferFromWhere)
		}
		return nil
	}
	if hi.Client == nil {
		return fmt.Errorf("%s: ha status: a slave without its client's runtime info", addr)
	}
	c := hi.Client
	fmt.Fprintf(a.out, "\n#MasterAddr\t%s\n", deref(c.MasterAddr))
	fmt.Fprintf(a.out, "#CommitLogMaxOffset\t%d\n", c.MaxOffset)
	fmt.Fprintf(a.out, "#TransferSpeed(KB/s)\t%.2f\n", float64(c.TransferredBytes)/1024.0)
	fmt.Fprintf(a.out, "#LastReadTime\t%s\n", humanMillis(c.LastReadTimestamp))
	fmt.Fprintf(a.out, "#LastWriteTime\t%s\n", humanMillis(c.LastWriteTime))
	fmt.Fprintf(a.out, "#MasterFlushOffset\t%d\n", c.MasterFlushOffset)
	return nil
}

func cleanBrokerMetadata(a *admin, o *options, args []string) error {
	ctl := o.Req("a", "controllerAddress", "The address of controller")
	ids := o.String("b", "brokerControllerIdsToClean", "The brokerController id list which requires to clean metadata. eg: 1;2;3, means that clean broker-1, broker-2 and broker-3")
	name := o.Req("bn", "brokerName", "The broker name of the replicas that require to be manipulated")
	cluster := o.String("c", "clusterName", "The clusterName of broker")
	living := o.Bool("l", "cleanLivingBroker", "Whether clean up living brokers,default value is false")
	if err := a.parse(o, args); err != nil {
		return err
	}
	bn := strings.TrimSpace(*name)
	ext := map[string]string{"brokerName": bn, "isCleanLivingBroker": strconv.FormatBool(*living),
		"invokeTime": strconv.FormatInt(time.Now().UnixMilli(), 10)}
	if o.Given("c") {
		ext["clusterName"] = strings.TrimSpace(*cluster)
	}
	if o.Given("b") {
		v := strings.TrimSpace(*ids)
		for _, id := range strings.Split(v, ";") {
			if _, err := strconv.ParseInt(id, 10, 64); err != nil {
				return fmt.Errorf("please set the option <brokerControllerIdsToClean> according to the format: %q", v)
			}
		}
		ext["brokerControllerIdsToClean"] = v
	}
	if !*living && ext["clusterName"] == "" {
		return errors.New("cleanLivingBroker option is false, clusterName option can not be empty")
	}
	leader, err := a.leader(strings.TrimSpace(*ctl))
	if err != nil {
		return err
	}
	if _, err := a.Call(leader, remoting.CleanBrokerData, ext, nil); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "clear broker %s metadata from controller success! \n", bn)
	return nil
}
