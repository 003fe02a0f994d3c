package main

import (
	"bytes"
	"sort"
	"strconv"
	"strings"

	"github.com/rocketgo/rocketgo/internal/adminclient"
)

// routeJSON is TopicRouteData.toJson(true) as Apache's tool prints it:
// fastjson's PrettyFormat of the route the Java client decoded — fields by
// name, a tab per level, null fields left out, Java defaults for fields the
// name server did not send, a map with numeric keys (brokerAddrs) with
// its keys unquoted and, as Apache 5.5's tool (fastjson2) prints it, an
// entry per line (5.3.3's fastjson put them on the opening line).
func routeJSON(r *adminclient.Route) string {
	brokers := make(fjList, len(r.BrokerDatas))
	for i, bd := range r.BrokerDatas {
		addrs := fjIntMap{}
		for _, id := range bd.IDs() {
			addrs = append(addrs, fjField{strconv.FormatInt(id, 10), fjString(bd.BrokerAddrs[strconv.FormatInt(id, 10)])})
		}
		o := fjObject{{"brokerAddrs", addrs}, {"brokerName", fjString(bd.BrokerName)}, {"cluster", fjString(bd.Cluster)},
			{"enableActingMaster", fjRaw(strconv.FormatBool(bd.EnableActingMaster))}}
		if bd.ZoneName != nil {
			o = append(o, fjField{"zoneName", fjString(*bd.ZoneName)})
		}
		brokers[i] = o
	}
	filters := fjObject{} // a HashMap: Apache's order is the hash's, this one sorts
	names := make([]string, 0, len(r.FilterServerTable))
	for k := range r.FilterServerTable {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		l := fjList{}
		for _, v := range r.FilterServerTable[k] {
			l = append(l, fjString(v))
		}
		filters = append(filters, fjField{k, l})
	}
	queues := make(fjList, len(r.QueueDatas))
	for i, q := range r.QueueDatas {
		queues[i] = fjObject{{"brokerName", fjString(q.BrokerName)}, {"perm", fjInt(q.Perm)}, {"readQueueNums", fjInt(q.ReadQueueNums)},
			{"topicSysFlag", fjInt(q.TopicSysFlag)}, {"writeQueueNums", fjInt(q.WriteQueueNums)}}
	}
	root := fjObject{{"brokerDatas", brokers}, {"filterServerTable", filters}}
	if r.OrderTopicConf != nil {
		root = append(root, fjField{"orderTopicConf", fjString(*r.OrderTopicConf)})
	}
	root = append(root, fjField{"queueDatas", queues})
	var b strings.Builder
	root.write(&b, 0)
	return b.String()
}

// fjValue is a value of fastjson's pretty printer.
type fjValue interface {
	write(b *strings.Builder, depth int)
}

type (
	fjRaw    string    // a number or literal, as written
	fjObject []fjField // a bean or a string-keyed map, fields in order
	fjIntMap []fjField // a map with numeric keys
	fjList   []fjValue
)

type fjField struct {
	name string
	val  fjValue
}

func fjString(s string) fjRaw {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return fjRaw(strings.TrimSuffix(b.String(), "\n"))
}

func fjInt(n int32) fjRaw { return fjRaw(strconv.Itoa(int(n))) }

func indent(b *strings.Builder, depth int) {
	b.WriteByte('\n')
	b.WriteString(strings.Repeat("\t", depth))
}

func (v fjRaw) write(b *strings.Builder, _ int) { b.WriteString(string(v)) }

func (o fjObject) write(b *strings.Builder, depth int) {
	writeSeq(b, depth, '{', '}', len(o), true, func(i int) {
		b.WriteString(string(fjString(o[i].name)))
		b.WriteByte(':')
		o[i].val.write(b, depth+1)
	})
}

// write puts a numeric-keyed map's entries a line each, keys unquoted.
func (m fjIntMap) write(b *strings.Builder, depth int) {
	writeSeq(b, depth, '{', '}', len(m), true, func(i int) {
		b.WriteString(m[i].name)
		b.WriteByte(':')
		m[i].val.write(b, depth+1)
	})
}

func (l fjList) write(b *strings.Builder, depth int) {
	writeSeq(b, depth, '[', ']', len(l), true, func(i int) { l[i].write(b, depth+1) })
}

// writeSeq writes n items between open and close, comma-separated, each on
// a line of its own one level deeper when itemLines; empty is "{}" or "[]".
func writeSeq(b *strings.Builder, depth int, open, close byte, n int, itemLines bool, item func(i int)) {
	b.WriteByte(open)
	if n == 0 {
		b.WriteByte(close)
		return
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		if itemLines {
			indent(b, depth+1)
		}
		item(i)
	}
	indent(b, depth)
	b.WriteByte(close)
}
