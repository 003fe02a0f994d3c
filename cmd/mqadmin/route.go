package main

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/internal/adminclient"
	"github.com/rocketgo/rocketgo/message"
)

const routeFormat = "%-45s %-32s %-50s %-10s %-11s %-5s\n"

func topicRoute(a *admin, o *options, args []string) error {
	topic := o.Req("t", "topic", "topic name")
	list := o.Bool("l", "list", "Use list format to print data")
	if err := a.parse(o, args); err != nil {
		return err
	}
	t, err := requireTopic(*topic)
	if err != nil {
		return err
	}
	r, err := a.Route(t)
	if err != nil {
		return err
	}
	if !*list {
		fmt.Fprintf(a.out, "%s\n", routeJSON(r))
		return nil
	}
	queues := map[string]adminclient.QueueData{}
	for _, q := range r.QueueDatas {
		queues[q.BrokerName] = q
	}
	fmt.Fprintf(a.out, routeFormat, "#ClusterName", "#BrokerName", "#BrokerAddrs", "#ReadQueue", "#WriteQueue", "#Perm")
	var totalRead, totalWrite int32
	for _, bd := range r.SortedBrokers() {
		q := queues[bd.BrokerName]
		totalRead += q.ReadQueueNums
		totalWrite += q.WriteQueueNums
		fmt.Fprintf(a.out, routeFormat, bd.Cluster, bd.BrokerName, javaAddrMap(&bd), strconv.Itoa(int(q.ReadQueueNums)),
			strconv.Itoa(int(q.WriteQueueNums)), strconv.Itoa(int(q.Perm)))
	}
	fmt.Fprintf(a.out, "%s\n", strings.Repeat("-", 158))
	fmt.Fprintf(a.out, routeFormat, "Total:", strconv.Itoa(len(queues)), "", strconv.Itoa(int(totalRead)), strconv.Itoa(int(totalWrite)), "")
	return nil
}

// javaAddrMap is a HashMap<Long, String>'s toString: {0=host:port, 1=...},
// small ids in ascending order as the hash puts them.
func javaAddrMap(bd *adminclient.BrokerData) string {
	var parts []string
	for _, id := range bd.IDs() {
		parts = append(parts, fmt.Sprintf("%d=%s", id, bd.BrokerAddrs[strconv.FormatInt(id, 10)]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func topicStatus(a *admin, o *options, args []string) error {
	topic := o.Req("t", "topic", "topic name")
	cluster := o.String("c", "cluster", "cluster name or lmq parent topic, lmq is used to find the route.")
	if err := a.parse(o, args); err != nil {
		return err
	}
	t, err := requireTopic(*topic)
	if err != nil {
		return err
	}
	routeOf := t
	if c := strings.TrimSpace(*cluster); c != "" {
		routeOf = c // Apache: the route of the cluster's name (its default topic)
	}
	r, err := a.Route(routeOf)
	if err != nil {
		return err
	}
	var all []adminclient.TopicOffset
	for _, bd := range r.BrokerDatas {
		addr := bd.SelectAddr()
		if addr == "" {
			continue
		}
		st, err := a.TopicStats(addr, t)
		if err != nil {
			return err
		}
		all = append(all, st...)
	}
	if len(all) == 0 && routeOf == t {
		return errors.New("not found the topic stats info")
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Less(all[j].MessageQueue) })
	fmt.Fprintf(a.out, "%-32s  %-4s  %-20s  %-20s    %s\n", "#Broker Name", "#QID", "#Min Offset", "#Max Offset", "#Last Updated")
	for _, o := range all {
		human := ""
		if o.LastUpdateTimestamp > 0 {
			human = humanMillis(o.LastUpdateTimestamp)
		}
		fmt.Fprintf(a.out, "%-32s  %-4d  %-20d  %-20d    %s\n", atMost(o.BrokerName, 32), o.QueueID, o.MinOffset, o.MaxOffset, human)
	}
	fmt.Fprintf(a.out, "\n")
	// Apache's examineTopicStats never sets the rate it prints.
	fmt.Fprintf(a.out, "Topic Put TPS: 0.0\n")
	return nil
}

// requireTopic trims a -t value and refuses an empty one.
func requireTopic(t string) (string, error) {
	t = strings.TrimSpace(t)
	if t == "" {
		return "", errors.New("-t topic is required")
	}
	return t, nil
}

// atMost is UtilAll.frontStringAtLeast: s cut to n characters.
func atMost(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// humanMillis is UtilAll.timeMillisToHumanString2: local time with millis.
func humanMillis(ms int64) string {
	return time.UnixMilli(ms).Format("2006-01-02 15:04:05,000")
}

// allocateMQ prints how AllocateMessageQueueAveragely shares the topic's
// queues among the clients of -i, as fastjson writes RebalanceResult:
// clients in the order of Apache's HashMap, queues in that of its HashSet.
func allocateMQ(a *admin, o *options, args []string) error {
	topic := o.Req("t", "topic", "topic name")
	ips := o.Req("i", "ipList", "ipList")
	if err := a.parse(o, args); err != nil {
		return err
	}
	t := strings.TrimSpace(*topic)
	cids := strings.Split(strings.TrimSpace(*ips), ",")
	r, err := a.Route(t)
	if err != nil {
		return err
	}
	mqs := subscribeQueues(r, t)
	keys := append([]string(nil), cids...)
	keys = slices.Compact(uniqueInOrder(keys))
	message.HashMapOrder(keys, 16, message.JavaHash)
	var b strings.Builder
	b.WriteString(`{"result":{`)
	for i, cid := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(jsonString(cid) + ":[")
		for j, mq := range allocateAveragely(cid, mqs, cids) {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"brokerName":%s,"queueId":%d,"topic":%s}`, jsonString(mq.BrokerName), mq.QueueID, jsonString(mq.Topic))
		}
		b.WriteByte(']')
	}
	b.WriteString("}}")
	fmt.Fprintf(a.out, "%s\n", b.String())
	return nil
}

// uniqueInOrder drops repeated strings, keeping the first (a HashMap put
// twice keeps one key).
func uniqueInOrder(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// allocateAveragely is AllocateMessageQueueAveragely.allocate: the
// client's contiguous share of mqAll by its index in cidAll (none when
// it is not there).
func allocateAveragely(cid string, mqAll []adminclient.MessageQueue, cidAll []string) []adminclient.MessageQueue {
	index := slices.Index(cidAll, cid)
	if index < 0 || len(mqAll) == 0 || cid == "" {
		return nil
	}
	n, c := len(mqAll), len(cidAll)
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
	out := []adminclient.MessageQueue{}
	for i := 0; i < min(avg, n-start); i++ {
		out = append(out, mqAll[(start+i)%n])
	}
	return out
}

// jsonString quotes s as fastjson does (", \ and control characters escaped).
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
