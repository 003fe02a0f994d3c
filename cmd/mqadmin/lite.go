package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/internal/adminclient"
	"github.com/rocketgo/rocketgo/message"
)

// The lite-topic commands of Apache 5.5 (tools/command/lite): a LITE
// parent topic's lite topics, groups and clients, asked of each broker of
// the parent's route in the route's order. Where Apache prints a Java
// HashSet or HashMap it decoded, the Go tool prints that container's order
// (javaSetOrder).

// javaSetOrder is the iteration order of a java.util.HashSet<String> (a
// HashMap's keys) filled with items in order, as fastjson2 decodes a JSON
// array into one.
func javaSetOrder(items []string) []string {
	out := append([]string(nil), items...)
	message.HashMapOrder(out, 16, message.JavaHash)
	return out
}

// javaSet is AbstractCollection.toString of a HashSet of items.
func javaSet(items []string) string { return "[" + strings.Join(javaSetOrder(items), ", ") + "]" }

func getBrokerLiteInfo(a *admin, o *options, args []string) error {
	broker := o.String("b", "brokerAddr", "Broker address")
	cluster := o.String("c", "cluster", "Cluster name")
	o.Group(true, "b", "c")
	detail := o.Bool("d", "showDetail", "Show topic and group detail info")
	if err := a.parse(o, args); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "%-30s %-17s %-10s %-14s %-20s %-17s %-15s %-18s %-15s\n", "#Broker", "#Store Type", "#Max LMQ",
		"#Current LMQ", "#SubscriptionCount", "#OrderInfoCount", "#CQTableSize", "#OffsetTableSize", "#eventMapSize")
	row := func(addr string, b *adminclient.BrokerLiteInfo) {
		fmt.Fprintf(a.out, "%-30s %-17s %-10d %-14d %-20d %-17d %-15d %-18d %-15d\n", addr, javaString(b.StoreType), b.MaxLmqNum,
			b.CurrentLmqNum, b.LiteSubscriptionCount, b.OrderInfoCount, b.CqTableSize, b.OffsetTableSize, b.EventMapSize)
		if *detail {
			fmt.Fprintf(a.out, "Topic Meta: %s\n", topicMetaJSON(b.TopicMeta))
			fmt.Fprintf(a.out, "Group Meta: %s\n\n", groupMetaJSON(b.GroupMeta))
		}
	}
	if o.Given("b") {
		addr := strings.TrimSpace(*broker)
		b, err := a.BrokerLiteInfo(addr)
		if err != nil {
			return err
		}
		row(addr, b)
		return nil
	}
	bs, err := a.clusterBrokers(*cluster)
	if err != nil {
		return err
	}
	for _, addr := range addrsOf(bs, false) {
		b, err := a.BrokerLiteInfo(addr)
		if err != nil {
			fmt.Fprintf(a.out, "[%s] error.\n", addr)
			fmt.Fprintf(a.errOut, "%v\n", err)
			continue
		}
		row(addr, b)
	}
	return nil
}

// topicMetaJSON is fastjson2's JSON.toJSONString of the HashMap<String,
// Integer> Apache's tool decoded: keys in the map's order.
func topicMetaJSON(m map[string]int32) string {
	if m == nil {
		return "null"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the broker's order (it sorts), then the HashMap's
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range javaSetOrder(keys) {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s:%d", fjString(k), m[k])
	}
	b.WriteByte('}')
	return b.String()
}

// groupMetaJSON is topicMetaJSON for the HashMap<String, Set<String>> of
// each parent topic's groups.
func groupMetaJSON(m map[string][]string) string {
	if m == nil {
		return "null"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range javaSetOrder(keys) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(string(fjString(k)))
		if m[k] == nil {
			b.WriteString(":null")
			continue
		}
		b.WriteString(":[")
		for j, g := range javaSetOrder(m[k]) {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(string(fjString(g)))
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return b.String()
}

func getParentTopicInfo(a *admin, o *options, args []string) error {
	parent := o.Req("p", "parentTopic", "Parent topic name")
	if err := a.parse(o, args); err != nil {
		return err
	}
	p := strings.TrimSpace(*parent)
	r, err := a.Route(p)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out, "Parent Topic Info: [%s]\n", p)
	fmt.Fprintf(a.out, "%-50s %-8s %-14s %-14s %-100s \n", "#Broker Name", "#TTL", "#Lite Count", "#LMQ NUM", "#GROUPS")
	for _, bd := range r.BrokerDatas {
		addr := bd.SelectAddr()
		if addr == "" {
			continue
		}
		info, err := a.ParentTopicInfo(addr, p)
		if err != nil {
			fmt.Fprintf(a.out, "[%s] error.\n", bd.BrokerName)
			fmt.Fprintf(a.errOut, "%v\n", err)
			continue
		}
		groups := "null"
		if info.Groups != nil {
			groups = javaSet(info.Groups)
		}
		fmt.Fprintf(a.out, "%-50s %-8d %-14d %-14d %-100s \n", atMost(bd.BrokerName, 40), info.TTL, info.LiteTopicCount, info.LmqNum, groups)
	}
	return nil
}

func getLiteTopicInfo(a *admin, o *options, args []string) error {
	parent := o.Req("p", "parentTopic", "Parent topic name")
	lite := o.Req("l", "liteTopic", "Lite topic name")
	showClients := o.Bool("s", "showClientId", "Show all clientId")
	if err := a.parse(o, args); err != nil {
		return err
	}
	p, l := strings.TrimSpace(*parent), strings.TrimSpace(*lite)
	r, err := a.Route(p)
	if err != nil {
		return err
	}
	lmq := message.LiteQueue(p, l)
	if lmq == "" {
		lmq = "null" // LiteUtil.toLmqName of an empty name
	}
	fmt.Fprintf(a.out, "Lite Topic Info: [%s] [%s] [%s]\n", p, l, lmq)
	fmt.Fprintf(a.out, "%-50s %-14s %-14s %-30s %-12s %-18s \n", "#Broker Name", "#MinOffset", "#MaxOffset", "#LastUpdate",
		"#Sharding", "#SubClientCount")
	for _, bd := range r.BrokerDatas {
		addr := bd.SelectAddr()
		if addr == "" {
			continue
		}
		info, err := a.LiteTopicInfo(addr, p, l)
		if err != nil {
			fmt.Fprintf(a.out, "[%s] error.\n", bd.BrokerName)
			fmt.Fprintf(a.errOut, "%v\n", err)
			continue
		}
		if info.TopicOffset == nil {
			return fmt.Errorf("%s: lite topic info without topicOffset", addr)
		}
		last := "-"
		if info.TopicOffset.LastUpdateTimestamp > 0 {
			last = humanMillis(info.TopicOffset.LastUpdateTimestamp)
		}
		subs := clientGroupSetOrder(info.Subscriber)
		fmt.Fprintf(a.out, "%-50s %-14d %-14d %-30s %-12t %-18d \n", atMost(bd.BrokerName, 40), info.TopicOffset.MinOffset,
			info.TopicOffset.MaxOffset, last, info.ShardingToBroker, len(subs))
		if *showClients {
			names := make([]string, len(subs))
			for i, s := range subs {
				names[i] = s.ClientID + "@" + s.Group
			}
			fmt.Fprintf(a.out, "[%s]\n", strings.Join(names, ", "))
		}
	}
	return nil
}

// clientGroupSetOrder is the order of the HashSet<ClientGroup> Apache's
// tool decodes the subscribers into (ClientGroup.hashCode is
// Objects.hash(clientId, group)); a repeated subscriber is kept once.
func clientGroupSetOrder(cgs []adminclient.ClientGroup) []adminclient.ClientGroup {
	seen := map[adminclient.ClientGroup]bool{}
	var out []adminclient.ClientGroup
	for _, cg := range cgs {
		if !seen[cg] {
			seen[cg] = true
			out = append(out, cg)
		}
	}
	message.HashMapOrder(out, 16, func(cg adminclient.ClientGroup) int32 {
		return 31*(31+message.JavaHash(cg.ClientID)) + message.JavaHash(cg.Group)
	})
	return out
}

func getLiteClientInfo(a *admin, o *options, args []string) error {
	parent := o.Req("p", "parentTopic", "Parent topic name")
	group := o.Req("g", "group", "Consumer group")
	client := o.Req("c", "clientId", "Client id")
	detail := o.Bool("s", "showDetail", "Show details")
	if err := a.parse(o, args); err != nil {
		return err
	}
	p, g, id := strings.TrimSpace(*parent), strings.TrimSpace(*group), strings.TrimSpace(*client)
	r, err := a.Route(p)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out, "Lite Client Info: [%s] [%s] [%s]\n", p, g, id)
	fmt.Fprintf(a.out, "%-30s %-20s %-30s %-30s \n", "#Broker", "#LiteTopicCount", "#LastAccessTime", "#LastConsumeTime")
	orNA := func(ms int64) string {
		if ms > 0 {
			return humanMillis(ms)
		}
		return "N/A"
	}
	for _, bd := range r.BrokerDatas {
		addr := bd.SelectAddr()
		if addr == "" {
			continue
		}
		info, err := a.LiteClientInfo(addr, p, g, id)
		if err != nil {
			fmt.Fprintf(a.out, "[%s] error.\n", bd.BrokerName)
			fmt.Fprintf(a.errOut, "%v\n", err)
			continue
		}
		count := "N/A"
		if info.LiteTopicCount > 0 {
			count = strconv.Itoa(int(info.LiteTopicCount))
		}
		fmt.Fprintf(a.out, "%-30s %-20s %-30s %-30s \n", bd.BrokerName, count, orNA(info.LastAccessTime), orNA(info.LastConsumeTime))
		if *detail && info.LiteTopicSet != nil {
			fmt.Fprintf(a.out, "Lite Topics: %s\n\n", javaSet(info.LiteTopicSet))
		}
	}
	return nil
}

func getLiteGroupInfo(a *admin, o *options, args []string) error {
	parent := o.Req("p", "parentTopic", "Parent topic name")
	group := o.Req("g", "group", "Consumer group")
	lite := o.String("l", "liteTopic", "query lite topic detail")
	topK := o.Int32("k", "topK", 20, "topK value of each broker")
	if err := a.parse(o, args); err != nil {
		return err
	}
	p, g, l := strings.TrimSpace(*parent), strings.TrimSpace(*group), strings.TrimSpace(*lite)
	byLite := l != ""
	r, err := a.Route(p)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out, "Lite Group Info: [%s] [%s]\n", g, p)
	const rowFmt = "%-50s %-16s %-16s %-16s %-30s\n"
	if byLite {
		fmt.Fprintf(a.out, rowFmt, "#Broker Name", "#BrokerOffset", "#ConsumeOffset", "#LagCount", "#LastUpdate")
	}
	var total int64
	earliest := time.Now().UnixMilli()
	var byCount, byTime []adminclient.LiteLagInfo
	for _, bd := range r.BrokerDatas {
		addr := bd.SelectAddr()
		if addr == "" {
			continue
		}
		info, err := a.LiteGroupInfo(addr, g, l, *topK)
		if err != nil {
			fmt.Fprintf(a.out, "[%s] error.\n", bd.BrokerName)
			fmt.Fprintf(a.errOut, "%v\n", err)
			continue
		}
		total += max(info.TotalLagCount, 0)
		if info.EarliestUnconsumedTimestamp > 0 {
			earliest = min(earliest, info.EarliestUnconsumedTimestamp)
		}
		if byLite {
			if w := info.LiteTopicOffsetWrapper; w == nil {
				fmt.Fprintf(a.out, rowFmt, bd.BrokerName, "-", "-", "-", "-")
			} else {
				last := "-"
				if w.LastTimestamp > 0 {
					last = humanMillis(w.LastTimestamp)
				}
				fmt.Fprintf(a.out, rowFmt, bd.BrokerName, strconv.FormatInt(w.BrokerOffset, 10), strconv.FormatInt(w.ConsumerOffset, 10),
					strconv.FormatInt(w.BrokerOffset-w.ConsumerOffset, 10), last)
			}
		}
		byCount = append(byCount, info.LagCountTopK...)
		byTime = append(byTime, info.LagTimestampTopK...)
	}
	fmt.Fprintf(a.out, "Total Lag Count: %d\n", total)
	fmt.Fprintf(a.out, "Min Unconsumed Timestamp: %d (%d s ago)\n\n", earliest, (time.Now().UnixMilli()-earliest)/1000)
	if byLite {
		return nil
	}
	const topFmt = "%-6s %-40s %-12s %-30s\n"
	lagRows := func(lags []adminclient.LiteLagInfo) {
		fmt.Fprintf(a.out, topFmt, "NO", "Lite Topic", "Lag Count", "UnconsumedTimestamp")
		for i, li := range lags {
			ts := "-"
			if li.EarliestUnconsumedTimestamp > 0 {
				ts = humanMillis(li.EarliestUnconsumedTimestamp)
			}
			fmt.Fprintf(a.out, topFmt, strconv.Itoa(i+1), javaString(li.LiteTopic), strconv.FormatInt(li.LagCount, 10), ts)
		}
	}
	sort.SliceStable(byCount, func(i, j int) bool { return byCount[i].LagCount > byCount[j].LagCount })
	fmt.Fprintf(a.out, "------TopK by lag count-----\n")
	lagRows(byCount)
	sort.SliceStable(byTime, func(i, j int) bool {
		return byTime[i].EarliestUnconsumedTimestamp < byTime[j].EarliestUnconsumedTimestamp
	})
	fmt.Fprintf(a.out, "\n------TopK by lag time------\n")
	lagRows(byTime)
	return nil
}

func triggerLiteDispatch(a *admin, o *options, args []string) error {
	parent := o.Req("p", "parentTopic", "Parent topic name")
	group := o.Req("g", "group", "Consumer group")
	client := o.String("c", "clientId", "clientId (optional)")
	broker := o.String("b", "brokerName", "brokerName (optional)")
	if err := a.parse(o, args); err != nil {
		return err
	}
	p, g := strings.TrimSpace(*parent), strings.TrimSpace(*group)
	r, err := a.Route(p)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out, "Group And Topic Info: [%s] [%s]\n\n", g, p)
	for _, bd := range r.BrokerDatas {
		addr := bd.SelectAddr()
		if addr == "" || o.Given("b") && strings.TrimSpace(*broker) != bd.BrokerName {
			continue
		}
		status := "dispatched"
		if err := a.TriggerLiteDispatch(addr, g, strings.TrimSpace(*client)); err != nil {
			status = "error"
			fmt.Fprintf(a.errOut, "%v\n", err)
		}
		fmt.Fprintf(a.out, "%-30s %-12s\n", bd.BrokerName, status)
	}
	return nil
}
