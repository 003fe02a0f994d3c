package main

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/rocketgo/rocketgo/internal/adminclient"
	"github.com/rocketgo/rocketgo/remoting"
)

// Topic system flags (TopicSysFlag) and permissions (PermName).
const (
	flagUnit    = 1 << 0
	flagUnitSub = 1 << 1
	permRead    = 1 << 2
	permWrite   = 1 << 1
	permInherit = 1 << 0
)

// topicConfig is what updateTopic sends and prints (TopicConfig.toString).
type topicConfig struct {
	name                string
	read, write, perm   int
	sysFlag             int
	order               bool
	attributes          map[string]string // "+key" -> value, as AttributeParser.parseToMap
	attributesRequested string
}

func (tc *topicConfig) String() string {
	return fmt.Sprintf("TopicConfig [topicName=%s, readQueueNums=%d, writeQueueNums=%d, perm=%s, topicFilterType=SINGLE_TAG, topicSysFlag=%d, order=%t, attributes=%s]",
		tc.name, tc.read, tc.write, permString(tc.perm), tc.sysFlag, tc.order, attrsString(tc.attributes))
}

// attrsString prints an attribute map as Java's toString, keys sorted
// (Apache: the HashMap's order).
func attrsString(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// permString is PermName.perm2String.
func permString(perm int) string {
	b := []byte("---")
	if perm&permRead != 0 {
		b[0] = 'R'
	}
	if perm&permWrite != 0 {
		b[1] = 'W'
	}
	if perm&permInherit != 0 {
		b[2] = 'X'
	}
	return string(b)
}

// parseAttributes is AttributeParser.parseToMap: "+a=1,+b=2,-c".
func parseAttributes(s string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, kv := range strings.Split(s, ",") {
		switch {
		case strings.HasPrefix(kv, "+"):
			k, v, ok := strings.Cut(kv, "=")
			if !ok || len(k) < 2 || v == "" {
				return nil, fmt.Errorf("add/alter attribute format is wrong: %s", kv)
			}
			out[k] = v
		case strings.HasPrefix(kv, "-"):
			if len(kv) < 2 || strings.Contains(kv, "=") {
				return nil, fmt.Errorf("delete attribute format is wrong: %s", kv)
			}
			out[kv] = ""
		default:
			return nil, fmt.Errorf("attribute format is wrong: %s", kv)
		}
	}
	return out, nil
}

func updateTopic(a *admin, o *options, args []string) error {
	broker := o.String("b", "brokerAddr", "create topic to which broker")
	cluster := o.String("c", "clusterName", "create topic to which cluster")
	o.Group(true, "b", "c")
	attrs := o.String("a", "attributes", "attribute(+a=b,+c=d,-e)")
	topic := o.Req("t", "topic", "topic name")
	read := o.Int32("r", "readQueueNums", 8, "set read queue nums")
	write := o.Int32("w", "writeQueueNums", 8, "set write queue nums")
	perm := o.Int32("p", "perm", permRead|permWrite, "set topic's permission(2|4|6), intro[2:W 4:R; 6:RW]")
	order := o.StringDef("o", "order", "false", "set topic's order(true|false)")
	unit := o.StringDef("u", "unit", "false", "is unit topic (true|false)")
	centerSync := o.StringDef("s", "hasUnitSub", "false", "has unit sub (true|false)")
	if err := a.parse(o, args); err != nil {
		return err
	}
	if strings.TrimSpace(*topic) == "" {
		return errors.New("-t topic is required")
	}
	tc := &topicConfig{name: strings.TrimSpace(*topic), read: int(*read), write: int(*write), perm: int(*perm),
		order: javaBool(*order), attributesRequested: strings.TrimSpace(*attrs)}
	if javaBool(*unit) {
		tc.sysFlag |= flagUnit
	}
	if javaBool(*centerSync) {
		tc.sysFlag |= flagUnitSub
	}
	var err error
	if tc.attributes, err = parseAttributes(tc.attributesRequested); err != nil {
		return err
	}
	switch {
	case *broker != "":
		addr := strings.TrimSpace(*broker)
		if err := a.createTopic(addr, tc); err != nil {
			return err
		}
		if tc.order {
			name, err := a.brokerNameOf(addr)
			if err != nil {
				return err
			}
			conf := name + ":" + strconv.Itoa(tc.write)
			if err := a.putOrderConf(tc.name, conf); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "set broker orderConf. isOrder=%t, orderConf=[%s]\n", tc.order, conf)
		}
		fmt.Fprintf(a.out, "create topic to %s success.\n", addr)
		fmt.Fprintf(a.out, "%s\n", tc)
		return nil
	case *cluster != "":
		bs, err := a.clusterBrokers(*cluster)
		if err != nil {
			return err
		}
		var names []string
		for _, b := range bs {
			names = append(names, b.Name+":"+strconv.Itoa(tc.write))
			if b.Master == "" {
				continue
			}
			if err := a.createTopic(b.Master, tc); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "create topic to %s success.\n", b.Master)
		}
		if tc.order {
			conf := strings.Join(names, ";")
			if err := a.putOrderConf(tc.name, conf); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "set cluster orderConf. isOrder=%t, orderConf=[%s]\n", tc.order, conf)
		}
		fmt.Fprintf(a.out, "%s\n", tc)
		return nil
	}
	a.usage()
	return nil
}

// createTopic sends UPDATE_AND_CREATE_TOPIC as createAndUpdateTopicConfig.
func (a *admin) createTopic(addr string, tc *topicConfig) error {
	return a.CreateTopic(addr, adminclient.TopicConfig{Name: tc.name, Read: tc.read, Write: tc.write, Perm: tc.perm,
		SysFlag: tc.sysFlag, Order: tc.order, Attributes: tc.attributesRequested})
}

// putOrderConf is createOrUpdateOrderConf: the ORDER_TOPIC_CONFIG key-value
// on every name server.
func (a *admin) putOrderConf(topic, conf string) error {
	return a.EachNamesrv(remoting.PutKVConfig, map[string]string{"namespace": "ORDER_TOPIC_CONFIG", "key": topic, "value": conf})
}

// brokerNameOf is CommandUtil.fetchBrokerNameByAddr.
func (a *admin) brokerNameOf(addr string) (string, error) {
	ci, err := a.ClusterInfo()
	if err != nil {
		return "", err
	}
	return ci.BrokerNameOf(addr)
}

func deleteTopic(a *admin, o *options, args []string) error {
	topic := o.Req("t", "topic", "topic name")
	cluster := o.Req("c", "clusterName", "delete topic from which cluster")
	if err := a.parse(o, args); err != nil {
		return err
	}
	t, c := strings.TrimSpace(*topic), strings.TrimSpace(*cluster)
	if t == "" || c == "" {
		a.usage()
		return nil
	}
	bs, err := a.clusterBrokers(c)
	if err != nil {
		return err
	}
	if err := a.deleteTopicInBrokers(bs, t); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "delete topic [%s] from cluster [%s] success.\n", t, c)
	if err := a.deleteTopicInNamesrv(c, t); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "delete topic [%s] from NameServer success.\n", t)
	return nil
}

// removeTopic is MQAdminExt.deleteTopic: from the cluster's masters, then
// from the name servers.
func (a *admin) removeTopic(bs []adminclient.Broker, cluster, topic string) error {
	if err := a.deleteTopicInBrokers(bs, topic); err != nil {
		return err
	}
	return a.deleteTopicInNamesrv(cluster, topic)
}

func (a *admin) deleteTopicInBrokers(bs []adminclient.Broker, topic string) error {
	for _, b := range bs {
		if b.Master == "" {
			continue
		}
		if _, err := a.Call(b.Master, remoting.DeleteTopicInBroker, map[string]string{"topic": topic}, nil); err != nil {
			return err
		}
	}
	return nil
}

func (a *admin) deleteTopicInNamesrv(cluster, topic string) error {
	return a.EachNamesrv(remoting.DeleteTopicInNamesrv, map[string]string{"topic": topic, "clusterName": cluster})
}

// javaBool is Boolean.parseBoolean: "true" in any case, anything else false.
func javaBool(s string) bool { return strings.EqualFold(strings.TrimSpace(s), "true") }

// clusterOfBroker is the cluster whose broker list names brokerName, ""
// when none does (Apache: the first in the hash order; a broker is in one
// cluster).
func clusterOfBroker(ci *adminclient.ClusterInfo, brokerName string) (string, bool) {
	names := make([]string, 0, len(ci.ClusterAddrTable))
	for c := range ci.ClusterAddrTable {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		for _, b := range ci.ClusterAddrTable[c] {
			if b == brokerName {
				return c, true
			}
		}
	}
	return "", false
}

func topicClusterList(a *admin, o *options, args []string) error {
	topic := o.Req("t", "topic", "topic name")
	if err := a.parse(o, args); err != nil {
		return err
	}
	t := strings.TrimSpace(*topic)
	ci, err := a.ClusterInfo()
	if err != nil {
		return err
	}
	r, err := a.Route(t)
	if err != nil {
		return err
	}
	if len(r.BrokerDatas) == 0 {
		return fmt.Errorf("route of %s names no broker", t)
	}
	// Apache: the clusters naming the route's first broker, a HashSet
	var out []string
	for c, bs := range ci.ClusterAddrTable {
		for _, b := range bs {
			if b == r.BrokerDatas[0].BrokerName {
				out = append(out, c)
				break
			}
		}
	}
	sort.Strings(out)
	for _, c := range out {
		fmt.Fprintf(a.out, "%s\n", c)
	}
	return nil
}

// topicListClusters is topicList -c: each topic but the retry and DLQ ones,
// its cluster and the groups consuming it (one line each, or one with no
// group), topics sorted (Apache: the name server's HashSet order).
func (a *admin) topicListClusters() error {
	ci, err := a.ClusterInfo()
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out, "%-20s  %-48s  %-48s\n", "#Cluster Name", "#Topic", "#Consumer Group")
	topics, err := a.topicNames()
	if err != nil {
		return err
	}
	for _, t := range topics {
		if strings.HasPrefix(t, "%RETRY%") || strings.HasPrefix(t, "%DLQ%") {
			continue
		}
		cluster, groups := a.topicClusterAndGroups(ci, t)
		if len(groups) == 0 {
			groups = []string{""}
		}
		for _, g := range groups {
			fmt.Fprintf(a.out, "%-20s  %-64s  %-64s\n", frontAtLeast(cluster, 20), frontAtLeast(t, 64), frontAtLeast(g, 64))
		}
	}
	return nil
}

// topicClusterAndGroups is findTopicBelongToWhichCluster and
// queryTopicConsumeByWho; a failure leaves "" and no group, as Apache's
// (which swallows it).
func (a *admin) topicClusterAndGroups(ci *adminclient.ClusterInfo, topic string) (string, []string) {
	r, err := a.Route(topic)
	if err != nil || len(r.BrokerDatas) == 0 {
		return "", nil
	}
	cluster, ok := clusterOfBroker(ci, r.BrokerDatas[0].BrokerName)
	if !ok {
		cluster = "null" // Apache prints the null it found
	}
	for _, bd := range r.BrokerDatas {
		if addr := bd.SelectAddr(); addr != "" {
			groups, err := a.ConsumedBy(addr, topic)
			if err != nil {
				return cluster, nil
			}
			sort.Strings(groups) // Apache: a HashSet's order
			return cluster, groups
		}
	}
	return cluster, nil
}

// frontAtLeast is UtilAll.frontStringAtLeast: s cut to size.
func frontAtLeast(s string, size int) string {
	if len(s) > size {
		return s[:size]
	}
	return s
}

func updateTopicPerm(a *admin, o *options, args []string) error {
	broker := o.String("b", "brokerAddr", "create topic to which broker")
	cluster := o.String("c", "clusterName", "create topic to which cluster")
	topic := o.Req("t", "topic", "topic name")
	permArg := o.Req("p", "perm", "set topic's permission(2|4|6), intro[2:W; 4:R; 6:RW]")
	if err := a.parse(o, args); err != nil {
		return err
	}
	t := strings.TrimSpace(*topic)
	r, err := a.Route(t)
	if err != nil {
		return err
	}
	if len(r.QueueDatas) == 0 {
		return fmt.Errorf("route of %s has no queues", t)
	}
	qd := r.QueueDatas[0]
	n, err := strconv.ParseInt(strings.TrimSpace(*permArg), 10, 32)
	if err != nil {
		return fmt.Errorf("-p: %q is not a 32-bit integer", *permArg)
	}
	perm := int(n)
	tc := &topicConfig{name: t, read: int(qd.ReadQueueNums), write: int(qd.WriteQueueNums), perm: perm,
		sysFlag: int(qd.TopicSysFlag), attributes: map[string]string{}}
	switch {
	case o.Given("b"):
		addr := strings.TrimSpace(*broker)
		name := ""
		for _, bd := range r.BrokerDatas {
			if bd.BrokerAddrs["0"] == addr {
				name = bd.BrokerName
				break
			}
		}
		if name == "" {
			fmt.Fprintf(a.out, "updateTopicPerm error broker not exit or broker is not master!.\n")
			return nil
		}
		old := 0
		for _, q := range r.QueueDatas {
			if q.BrokerName == name {
				old = int(q.Perm)
				if perm == old {
					fmt.Fprintf(a.out, "new perm equals to the old one!\n")
					return nil
				}
				break
			}
		}
		if err := a.createTopic(addr, tc); err != nil {
			return err
		}
		fmt.Fprintf(a.out, "update topic perm from %d to %d in %s success.\n", old, perm, addr)
		fmt.Fprintf(a.out, "%s.\n", tc)
		return nil
	case o.Given("c"):
		bs, err := a.clusterBrokers(strings.TrimSpace(*cluster))
		if err != nil {
			return err
		}
		for _, addr := range addrsOf(bs, false) {
			if err := a.createTopic(addr, tc); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "update topic perm from %d to %d in %s success.\n", qd.Perm, perm, addr)
		}
		return nil
	}
	a.usage()
	return nil
}
