package main

// exportMetadata, exportConfigs and exportMetrics write what Apache 5.5's
// export commands write (tools/command/export): fastjson2's
// JSON.toJSONString(x, PrettyFormat) of the Java objects the tool built —
// bean fields by name, null ones left out, maps in their Java hash order,
// a collection an item a line (an empty one too: the pretty printer opens
// a line in it), an array of numbers on one line.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/internal/adminclient"
	"github.com/rocketgo/rocketgo/internal/fastjson"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// exportDir is the commands' default -f.
const exportDir = "/tmp/rocketmq/export"

type (
	// fjSet is a java.util.Collection as fastjson2 pretty-prints it.
	fjSet []fjValue
	// fjArray is a Java array: on one line.
	fjArray []fjValue
	// fjMap is a java.util.Map: entries with a nil value are left out, and
	// a map of only those still opens a line.
	fjMap []fjField
)

func (l fjSet) write(b *strings.Builder, depth int) {
	b.WriteByte('[')
	indent(b, depth+1)
	for i, v := range l {
		if i > 0 {
			b.WriteByte(',')
			indent(b, depth+1)
		}
		v.write(b, depth+1)
	}
	indent(b, depth)
	b.WriteByte(']')
}

func (l fjArray) write(b *strings.Builder, depth int) {
	b.WriteByte('[')
	for i, v := range l {
		if i > 0 {
			b.WriteByte(',')
		}
		v.write(b, depth+1)
	}
	b.WriteByte(']')
}

func (m fjMap) write(b *strings.Builder, depth int) {
	if len(m) == 0 {
		b.WriteString("{}")
		return
	}
	b.WriteByte('{')
	indent(b, depth+1)
	first := true
	for _, f := range m {
		if f.val == nil {
			continue
		}
		if !first {
			b.WriteByte(',')
			indent(b, depth+1)
		}
		first = false
		b.WriteString(string(fjString(f.name)))
		b.WriteByte(':')
		f.val.write(b, depth+1)
	}
	indent(b, depth)
	b.WriteByte('}')
}

// hashMap is a java.util.HashMap filled with fields in order.
func hashMap(fields ...fjField) fjMap {
	message.HashMapOrder(fields, 16, func(f fjField) int32 { return message.JavaHash(f.name) })
	return fields
}

// concurrentMap is a ConcurrentHashMap filled in order, as fastjson2
// decodes one.
func concurrentMap(fields []fjField) fjMap {
	message.ConcurrentHashMapOrder(fields, 16, func(f fjField) int32 { return message.JavaHash(f.name) })
	return fields
}

// copiedTable is a broker's table as MQClientAPIImpl hands it to the tool:
// decoded into a ConcurrentHashMap (entries in the order sent), then put
// into a new one with putAll, which sizes the new table for the count and
// (ConcurrentHashMap.tryPresize) doubles it once more.
func copiedTable(fields []fjField) fjMap {
	fields = concurrentMap(fields)
	n := 1
	for n < len(fields)+len(fields)/2+1 {
		n <<= 1
	}
	message.ConcurrentHashMapOrder(fields, 2*n, func(f fjField) int32 { return message.JavaHash(f.name) })
	return fields
}

func fjLong(n int64) fjRaw     { return fjRaw(strconv.FormatInt(n, 10)) }
func fjBool(v bool) fjRaw      { return fjRaw(strconv.FormatBool(v)) }
func fjDouble(v float64) fjRaw { return fjRaw(javaDouble(v)) }

// javaDouble is Double.toString for the values the tools print (rates):
// at least one decimal, exponent form outside [1e-3, 1e7).
func javaDouble(v float64) string {
	if a := max(v, -v); a != 0 && (a < 1e-3 || a >= 1e7) {
		s := strconv.FormatFloat(v, 'E', -1, 64)
		mant, exp, _ := strings.Cut(s, "E")
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		e, _ := strconv.Atoi(exp) // "+07", "-04": FormatFloat's forms
		return mant + "E" + strconv.Itoa(e)
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// rawObject is an object of the broker's answer, its fields in order.
type rawObject []fastjson.Field

func (o rawObject) get(name string) []byte {
	for _, f := range o {
		var k string
		if json.Unmarshal(f.Key, &k) == nil && k == name {
			return f.Val
		}
	}
	return nil
}

func rawFields(b []byte) (rawObject, error) {
	if b == nil || string(b) == "null" {
		return nil, nil
	}
	fs, err := fastjson.Fields(b)
	return rawObject(fs), err
}

// dataVersionJSON is DataVersion as fastjson2 writes it.
func dataVersionJSON(b []byte) (fjValue, error) {
	var dv struct {
		Counter      int64 `json:"counter"`
		StateVersion int64 `json:"stateVersion"`
		Timestamp    int64 `json:"timestamp"`
	}
	if b != nil {
		if err := json.Unmarshal(b, &dv); err != nil {
			return nil, fmt.Errorf("dataVersion: %w", err)
		}
	}
	return fjObject{{"counter", fjLong(dv.Counter)}, {"stateVersion", fjLong(dv.StateVersion)}, {"timestamp", fjLong(dv.Timestamp)}}, nil
}

// exportTopic is a TopicConfig with Apache's field defaults.
type exportTopic struct {
	TopicName       *string           `json:"topicName"`
	ReadQueueNums   int32             `json:"readQueueNums"`
	WriteQueueNums  int32             `json:"writeQueueNums"`
	Perm            int32             `json:"perm"`
	TopicFilterType string            `json:"topicFilterType"`
	TopicSysFlag    int32             `json:"topicSysFlag"`
	Order           bool              `json:"order"`
	Attributes      map[string]string `json:"attributes"`
	attrOrder       []string
}

func decodeExportTopic(b []byte) (*exportTopic, error) {
	t := &exportTopic{ReadQueueNums: 16, WriteQueueNums: 16, Perm: 6, TopicFilterType: "SINGLE_TAG"}
	if err := json.Unmarshal(b, t); err != nil {
		return nil, err
	}
	o, err := rawFields(b)
	if err != nil {
		return nil, err
	}
	t.attrOrder, err = keysInOrder(o.get("attributes"))
	return t, err
}

// keysInOrder lists an object's keys as sent.
func keysInOrder(b []byte) ([]string, error) {
	o, err := rawFields(b)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(o))
	for _, f := range o {
		var k string
		if err := json.Unmarshal(f.Key, &k); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}

func stringMap(m map[string]string, order []string) fjMap {
	if m == nil {
		return nil
	}
	var fs []fjField
	for _, k := range order {
		if v, ok := m[k]; ok {
			fs = append(fs, fjField{k, fjString(v)})
		}
	}
	return hashMap(fs...)
}

func (t *exportTopic) json() fjValue {
	o := fjObject{}
	if t.Attributes != nil {
		o = append(o, fjField{"attributes", stringMap(t.Attributes, t.attrOrder)})
	}
	o = append(o, fjField{"order", fjBool(t.Order)}, fjField{"perm", fjInt(t.Perm)}, fjField{"readQueueNums", fjInt(t.ReadQueueNums)},
		fjField{"topicFilterType", fjString(t.TopicFilterType)})
	if t.TopicName != nil {
		o = append(o, fjField{"topicName", fjString(*t.TopicName)})
	}
	return append(o, fjField{"topicSysFlag", fjInt(t.TopicSysFlag)}, fjField{"writeQueueNums", fjInt(t.WriteQueueNums)})
}

// exportGroup is a SubscriptionGroupConfig with Apache's field defaults.
type exportGroup struct {
	subGroup
	SubscriptionDataSet *[]struct {
		Topic          *string `json:"topic"`
		ExpressionType *string `json:"expressionType"`
		Expression     *string `json:"expression"`
		Version        int64   `json:"version"`
	} `json:"subscriptionDataSet"`
	attrOrder []string
}

func decodeExportGroup(b []byte) (*exportGroup, error) {
	g := &exportGroup{subGroup: subGroup{ConsumeEnable: true, ConsumeFromMinEnable: true, ConsumeBroadcastEnable: true,
		RetryQueueNums: 1, RetryMaxTimes: 16, GroupRetryPolicy: retryPolicy{Type: "CUSTOMIZED"}, WhichBrokerWhenConsumeSlowly: 1,
		NotifyConsumerIdsChangedEnable: true, ConsumeTimeoutMinute: 15, Attributes: map[string]string{}}}
	if err := json.Unmarshal(b, g); err != nil {
		return nil, err
	}
	o, err := rawFields(b)
	if err != nil {
		return nil, err
	}
	g.attrOrder, err = keysInOrder(o.get("attributes"))
	return g, err
}

func (g *exportGroup) json() fjValue {
	o := fjObject{}
	if g.Attributes != nil {
		o = append(o, fjField{"attributes", stringMap(g.Attributes, g.attrOrder)})
	}
	policy := fjObject{}
	if c := g.GroupRetryPolicy.Customized; c != nil {
		next := fjArray{}
		for _, n := range c.Next {
			next = append(next, fjLong(n))
		}
		policy = append(policy, fjField{"customizedRetryPolicy", fjObject{{"next", next}}})
	}
	if e := g.GroupRetryPolicy.Exponential; e != nil {
		policy = append(policy, fjField{"exponentialRetryPolicy", fjObject{{"initial", fjLong(e.Initial)}, {"max", fjLong(e.Max)},
			{"multiplier", fjLong(e.Multiplier)}}})
	}
	if g.GroupRetryPolicy.Type != "" {
		policy = append(policy, fjField{"type", fjString(g.GroupRetryPolicy.Type)})
	}
	o = append(o, fjField{"brokerId", fjLong(g.BrokerID)}, fjField{"consumeBroadcastEnable", fjBool(g.ConsumeBroadcastEnable)},
		fjField{"consumeEnable", fjBool(g.ConsumeEnable)}, fjField{"consumeFromMinEnable", fjBool(g.ConsumeFromMinEnable)},
		fjField{"consumeMessageOrderly", fjBool(g.ConsumeMessageOrderly)}, fjField{"consumeTimeoutMinute", fjInt(g.ConsumeTimeoutMinute)})
	if g.GroupName != "" {
		o = append(o, fjField{"groupName", fjString(g.GroupName)})
	}
	o = append(o, fjField{"groupRetryPolicy", policy}, fjField{"groupSysFlag", fjInt(g.GroupSysFlag)},
		fjField{"notifyConsumerIdsChangedEnable", fjBool(g.NotifyConsumerIdsChangedEnable)},
		fjField{"retryMaxTimes", fjInt(g.RetryMaxTimes)}, fjField{"retryQueueNums", fjInt(g.RetryQueueNums)})
	if g.SubscriptionDataSet != nil {
		set := fjSet{}
		for _, s := range *g.SubscriptionDataSet {
			d := fjObject{}
			for _, f := range []struct {
				name string
				v    *string
			}{{"expression", s.Expression}, {"expressionType", s.ExpressionType}, {"topic", s.Topic}} {
				if f.v != nil {
					d = append(d, fjField{f.name, fjString(*f.v)})
				}
			}
			set = append(set, append(d, fjField{"version", fjLong(s.Version)}))
		}
		o = append(o, fjField{"subscriptionDataSet", set})
	}
	return append(o, fjField{"whichBrokerWhenConsumeSlowly", fjLong(g.WhichBrokerWhenConsumeSlowly)})
}

// userTopics is DefaultMQAdminExtImpl.getUserTopicConfig: the broker's
// topics but its system ones (those it lists, and TopicValidator's), the
// retry and dead-letter topics unless special, and those of an invalid
// perm; in the order of the ConcurrentHashMap Apache's tool holds them in
// (copiedTable). The topic table's data version comes too.
func (a *admin) userTopics(addr string, special bool) ([]string, map[string]*exportTopic, fjValue, error) {
	resp, err := a.Call(addr, remoting.GetAllTopicConfig, nil, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	o, err := rawFields(resp.Body)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: topic configs: %w", addr, err)
	}
	dv, err := dataVersionJSON(o.get("dataVersion"))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: topic configs: %w", addr, err)
	}
	sysResp, err := a.Call(addr, remoting.GetSystemTopicListFromBroker, nil, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	var sys struct {
		TopicList []string `json:"topicList"`
	}
	if err := json.Unmarshal(sysResp.Body, &sys); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: system topics: %w", addr, err)
	}
	system := map[string]bool{}
	for _, t := range sys.TopicList {
		system[t] = true
	}
	table, err := rawFields(o.get("topicConfigTable"))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: topic configs: %w", addr, err)
	}
	var order []fjField
	topics := map[string]*exportTopic{}
	for _, f := range table {
		var name string
		if err := json.Unmarshal(f.Key, &name); err != nil {
			return nil, nil, nil, fmt.Errorf("%s: topic configs: %w", addr, err)
		}
		tc, err := decodeExportTopic(f.Val)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: topic %s: %w", addr, name, err)
		}
		topics[name] = tc
		order = append(order, fjField{name: name})
	}
	// the table's order holds every topic; then the tool leaves some out
	var user []string
	for _, name := range fieldNames(copiedTable(order)) {
		tn := javaString(topics[name].TopicName)
		switch {
		case system[tn] || message.IsSystemTopicName(tn):
		case !special && (strings.HasPrefix(tn, "%RETRY%") || strings.HasPrefix(tn, "%DLQ%")):
		case topics[name].Perm < 0 || topics[name].Perm >= 8: // PermName.isValid
		default:
			user = append(user, name)
		}
	}
	return user, topics, dv, nil
}

func fieldNames(fs []fjField) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.name
	}
	return out
}

// predefinedGroups is MixAll's PREDEFINE_GROUP_SET.
var predefinedGroups = map[string]bool{"DEFAULT_CONSUMER": true, "DEFAULT_PRODUCER": true, "TOOLS_CONSUMER": true,
	"SCHEDULE_CONSUMER": true, "FILTERSRV_CONSUMER": true, "__MONITOR_CONSUMER": true, "CLIENT_INNER_PRODUCER": true,
	"SELF_TEST_P_GROUP": true, "SELF_TEST_C_GROUP": true, "CID_ONS-HTTP-PROXY": true, "CID_ONSAPI_PERMISSION": true,
	"CID_ONSAPI_OWNER": true, "CID_ONSAPI_PULL": true, message.TransGroup: true}

// groupsExport is a broker's subscription groups as getUserSubscriptionGroup
// leaves them.
type groupsExport struct {
	order     []string
	groups    map[string]*exportGroup
	version   fjValue
	forbidden fjValue
}

// userGroups is DefaultMQAdminExtImpl.getUserSubscriptionGroup: the
// broker's groups but the system (CID_RMQ_SYS_) and predefined ones.
func (a *admin) userGroups(addr string) (*groupsExport, error) {
	resp, err := a.Call(addr, remoting.GetAllSubscriptionGroupConfig, nil, nil)
	if err != nil {
		return nil, err
	}
	o, err := rawFields(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: subscription groups: %w", addr, err)
	}
	ge := &groupsExport{groups: map[string]*exportGroup{}}
	if ge.version, err = dataVersionJSON(o.get("dataVersion")); err != nil {
		return nil, fmt.Errorf("%s: subscription groups: %w", addr, err)
	}
	if ge.forbidden, err = forbiddenJSON(o.get("forbiddenTable")); err != nil {
		return nil, fmt.Errorf("%s: forbidden table: %w", addr, err)
	}
	table, err := rawFields(o.get("subscriptionGroupTable"))
	if err != nil {
		return nil, fmt.Errorf("%s: subscription groups: %w", addr, err)
	}
	var order []fjField
	for _, f := range table {
		var name string
		if err := json.Unmarshal(f.Key, &name); err != nil {
			return nil, fmt.Errorf("%s: subscription groups: %w", addr, err)
		}
		g, err := decodeExportGroup(f.Val)
		if err != nil {
			return nil, fmt.Errorf("%s: group %s: %w", addr, name, err)
		}
		ge.groups[name] = g
		order = append(order, fjField{name: name})
	}
	// the table's order holds every group; then the tool leaves some out
	for _, name := range fieldNames(copiedTable(order)) {
		if !strings.HasPrefix(name, "CID_RMQ_SYS_") && !predefinedGroups[name] {
			ge.order = append(ge.order, name)
		}
	}
	return ge, nil
}

// forbiddenJSON is the wrapper's forbiddenTable: group → topic → bits
// (empty when the broker sent none: the field's initial value).
func forbiddenJSON(b []byte) (fjValue, error) {
	o, err := rawFields(b)
	if err != nil {
		return nil, err
	}
	var groups []fjField
	for _, f := range o {
		var g string
		if err := json.Unmarshal(f.Key, &g); err != nil {
			return nil, err
		}
		inner, err := rawFields(f.Val)
		if err != nil {
			return nil, err
		}
		var topics []fjField
		for _, t := range inner {
			var name string
			var bits int32
			if err := json.Unmarshal(t.Key, &name); err != nil {
				return nil, err
			}
			if err := json.Unmarshal(t.Val, &bits); err != nil {
				return nil, err
			}
			topics = append(topics, fjField{name, fjInt(bits)})
		}
		groups = append(groups, fjField{g, concurrentMap(topics)})
	}
	return copiedTable(groups), nil
}

func writeExport(path string, v fjValue) error {
	var b strings.Builder
	v.write(&b, 0)
	return writeFileMkdirs(path, b.String())
}

func exportMetadata(a *admin, o *options, args []string) error {
	cluster := o.String("c", "clusterName", "choose a cluster to export")
	broker := o.String("b", "brokerAddr", "choose a broker to export")
	file := o.String("f", "filePath", "export metadata.json path | default /tmp/rocketmq/export")
	topicsOnly := o.Bool("t", "topic", "only export topic metadata")
	groupsOnly := o.Bool("g", "subscriptionGroup", "only export subscriptionGroup metadata")
	special := o.Bool("s", "specialTopic", "need retryTopic and dlqTopic")
	if err := a.parse(o, args); err != nil {
		return err
	}
	dir := exportDir
	if o.Given("f") {
		dir = strings.TrimSpace(*file)
	}
	switch {
	case o.Given("b"):
		addr := strings.TrimSpace(*broker)
		switch {
		case *topicsOnly:
			order, topics, dv, err := a.userTopics(addr, *special)
			if err != nil {
				return err
			}
			table := fjMap{}
			for _, n := range order {
				table = append(table, fjField{n, topics[n].json()})
			}
			path := dir + "/topic.json"
			if err := writeExport(path, fjObject{{"dataVersion", dv}, {"topicConfigTable", table}}); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "export %s success", path)
		case *groupsOnly:
			ge, err := a.userGroups(addr)
			if err != nil {
				return err
			}
			table := fjMap{}
			for _, n := range ge.order {
				table = append(table, fjField{n, ge.groups[n].json()})
			}
			w := fjObject{{"dataVersion", ge.version}, {"forbiddenTable", ge.forbidden}, {"subscriptionGroupTable", table}}
			path := dir + "/subscriptionGroup.json"
			if err := writeExport(path, w); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "export %s success", path)
		}
		return nil
	case o.Given("c"):
		return a.exportCluster(strings.TrimSpace(*cluster), dir, *topicsOnly, *groupsOnly, *special)
	}
	a.usage()
	return nil
}

// exportCluster is exportMetadata -c: the topics and groups of every master
// of the cluster, queue numbers summed over the brokers that have a topic
// or group.
func (a *admin) exportCluster(cluster, dir string, topicsOnly, groupsOnly, special bool) error {
	bs, err := a.clusterBrokers(cluster)
	if err != nil {
		return err
	}
	topics, groups := map[string]*exportTopic{}, map[string]*exportGroup{}
	var topicOrder, groupOrder []fjField
	for _, addr := range addrsOf(bs, false) {
		order, ts, _, err := a.userTopics(addr, special)
		if err != nil {
			return err
		}
		ge, err := a.userGroups(addr)
		if err != nil {
			return err
		}
		for _, n := range order {
			t := ts[n]
			if prev, ok := topics[n]; ok {
				t.WriteQueueNums += prev.WriteQueueNums
				t.ReadQueueNums += prev.ReadQueueNums
			} else {
				topicOrder = append(topicOrder, fjField{name: n})
			}
			topics[n] = t
		}
		for _, n := range ge.order {
			g := ge.groups[n]
			if prev, ok := groups[n]; ok {
				g.RetryQueueNums += prev.RetryQueueNums
			} else {
				groupOrder = append(groupOrder, fjField{name: n})
			}
			groups[n] = g
		}
	}
	topicTable, groupTable := fjMap{}, fjMap{}
	for _, n := range fieldNames(hashMap(topicOrder...)) {
		topicTable = append(topicTable, fjField{n, topics[n].json()})
	}
	for _, n := range fieldNames(hashMap(groupOrder...)) {
		groupTable = append(groupTable, fjField{n, groups[n].json()})
	}
	var result []fjField
	path := dir + "/metadata.json"
	switch {
	case topicsOnly:
		result, path = append(result, fjField{"topicConfigTable", topicTable}), dir+"/topic.json"
	case groupsOnly:
		result, path = append(result, fjField{"subscriptionGroupTable", groupTable}), dir+"/subscriptionGroup.json"
	default:
		result = append(result, fjField{"topicConfigTable", topicTable}, fjField{"subscriptionGroupTable", groupTable})
	}
	result = append(result, fjField{"exportTime", fjLong(time.Now().UnixMilli())})
	if err := writeExport(path, hashMap(result...)); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "export %s success\n", path)
	return nil
}

// exportedBrokerKeys are the broker config keys exportConfigs keeps, in
// its order.
var exportedBrokerKeys = []string{"brokerClusterName", "brokerId", "brokerName", "brokerRole", "fileReservedTime", "filterServerNums",
	"flushDiskType", "maxMessageSize", "messageDelayLevel", "msgTraceTopicName", "slaveReadEnable", "traceOn", "traceTopicEnable",
	"useTLS", "autoCreateTopicEnable", "autoCreateSubscriptionGroup"}

// exportConfigs writes each master's chief config keys (a Properties each,
// by broker name) and the cluster's size to <-f>/configs.json.
func exportConfigs(a *admin, o *options, args []string) error {
	cluster := o.Req("c", "clusterName", "choose a cluster to export")
	file := o.String("f", "filePath", "export configs.json path | default /tmp/rocketmq/export")
	if err := a.parse(o, args); err != nil {
		return err
	}
	dir := exportDir
	if o.Given("f") {
		dir = strings.TrimSpace(*file)
	}
	bs, err := a.clusterBrokers(*cluster)
	if err != nil {
		return err
	}
	var configs []fjField
	masters, slaves := 0, 0
	for _, b := range bs {
		if b.Master == "" { // CommandUtil.fetchMasterAndSlaveDistinguish: groups without a master are left out
			continue
		}
		props, err := a.brokerConfig(b.Master)
		if err != nil {
			return err
		}
		masters++
		slaves += len(b.Slaves)
		var kept []fjField
		for _, k := range exportedBrokerKeys {
			if v, ok := props[k]; ok {
				kept = append(kept, fjField{k, fjString(v)})
			}
		}
		message.ConcurrentHashMapOrder(kept, 16, func(f fjField) int32 { return message.JavaHash(f.name) })
		name, ok := props["brokerName"]
		if !ok {
			return fmt.Errorf("%s: broker config without brokerName", b.Master)
		}
		configs = append(configs, fjField{name, fjMap(kept)})
	}
	scale := hashMap(fjField{"namesrvSize", fjInt(int32(len(a.NameServers)))}, fjField{"masterBrokerSize", fjInt(int32(masters))},
		fjField{"slaveBrokerSize", fjInt(int32(slaves))})
	path := dir + "/configs.json"
	if err := writeExport(path, hashMap(fjField{"brokerConfigs", hashMap(configs...)}, fjField{"clusterScale", scale})); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "export %s success", path)
	return nil
}

// exportMetrics writes each broker's runtime environment, quotas (disk,
// rates, a day's messages, topics and groups) and client versions, and the
// cluster's totals, to <-f>/metrics.json.
func exportMetrics(a *admin, o *options, args []string) error {
	cluster := o.Req("c", "clusterName", "choose a cluster to export")
	file := o.String("f", "filePath", "export metrics.json path | default /tmp/rocketmq/export")
	if err := a.parse(o, args); err != nil {
		return err
	}
	dir := exportDir
	if o.Given("f") {
		dir = strings.TrimSpace(*file)
	}
	ci, err := a.ClusterInfo()
	if err != nil {
		return err
	}
	names, ok := ci.ClusterAddrTable[strings.TrimSpace(*cluster)]
	if !ok {
		return fmt.Errorf("cluster %q not found", strings.TrimSpace(*cluster))
	}
	var total metricsTotal
	var report []fjField
	for _, n := range javaSetOrder(names) {
		bd, ok := ci.BrokerAddrTable[n]
		if !ok {
			continue
		}
		info, err := a.brokerMetrics(bd.BrokerAddrs["0"], &total)
		if err != nil {
			return err
		}
		report = append(report, fjField{n, info})
	}
	totals := hashMap(
		fjField{"totalTps", hashMap(fjField{"totalNormalInTps", fjDouble(total.normalIn)}, fjField{"totalNormalOutTps", fjDouble(total.normalOut)},
			fjField{"totalTransInTps", fjDouble(total.transIn)}, fjField{"totalScheduleInTps", fjDouble(total.scheduleIn)})},
		fjField{"totalOneDayNum", hashMap(fjField{"normalOneDayInNum", fjLong(total.dayIn)}, fjField{"normalOneDayOutNum", fjLong(total.dayOut)},
			fjField{"transOneDayInNum", fjLong(total.dayTrans)}, fjField{"scheduleOneDayInNum", fjLong(total.daySchedule)})})
	path := dir + "/metrics.json"
	if err := writeExport(path, hashMap(fjField{"evaluateReport", hashMap(report...)}, fjField{"totalData", totals})); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "export %s success", path)
	return nil
}

// metricsTotal is exportMetrics' sums over the cluster's brokers.
type metricsTotal struct {
	normalIn, normalOut, transIn, scheduleIn float64
	dayIn, dayOut, dayTrans, daySchedule     int64
}

// brokerMetrics is one broker's entry of exportMetrics.
func (a *admin) brokerMetrics(addr string, total *metricsTotal) (fjValue, error) {
	kv, err := a.RuntimeInfo(addr)
	if err != nil {
		return nil, err
	}
	props, err := a.brokerConfig(addr)
	if err != nil {
		return nil, err
	}
	ge, err := a.userGroups(addr)
	if err != nil {
		return nil, err
	}
	kvValue := func(k string) fjValue {
		if v, ok := kv[k]; ok {
			return fjString(v)
		}
		return nil
	}
	var cpus fjValue
	if v, ok := props["clientCallbackExecutorThreads"]; ok {
		cpus = fjString(v)
	}
	env := hashMap(fjField{"cpuNum", cpus}, fjField{"totalMemKBytes", kvValue("totalMemKBytes")})

	topicOrder, _, _, err := a.userTopics(addr, false)
	if err != nil {
		return nil, err
	}
	// a refusal (no such statistic) counts as none, as Apache's tool takes it
	stats := func(topic string) (*adminclient.BrokerStatsData, error) {
		d, err := a.BrokerStats(addr, "TOPIC_PUT_NUMS", topic)
		var ce *adminclient.CodeError
		if errors.As(err, &ce) {
			return nil, nil
		}
		return d, err
	}
	trans, err := stats(message.TransHalfTopic)
	if err != nil {
		return nil, err
	}
	sched, err := stats(message.ScheduleTopic)
	if err != nil {
		return nil, err
	}
	firstRate := func(k string) (float64, error) {
		v, ok := kv[k]
		if !ok {
			return 0, fmt.Errorf("%s: runtime info without %s", addr, k)
		}
		f, err := strconv.ParseFloat(strings.Split(v, " ")[0], 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %s %q: %w", addr, k, v, err)
		}
		return f, nil
	}
	in, err := firstRate("putTps")
	if err != nil {
		return nil, err
	}
	out, err := firstRate("getTransferredTps")
	if err != nil {
		return nil, err
	}
	var transTps, schedTps float64
	var transDay, schedDay int64
	if trans != nil {
		transTps, transDay = trans.Minute.TPS, trans.Sum24h()
	}
	if sched != nil {
		schedTps, schedDay = sched.Minute.TPS, sched.Sum24h()
	}
	count := func(k string) (int64, error) {
		n, err := strconv.ParseInt(kv[k], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: runtime info %s %q: %w", addr, k, kv[k], err)
		}
		return n, nil
	}
	var day [4]int64
	for i, k := range []string{"msgPutTotalTodayMorning", "msgPutTotalYesterdayMorning", "msgGetTotalTodayMorning", "msgGetTotalYesterdayMorning"} {
		if day[i], err = count(k); err != nil {
			return nil, err
		}
	}
	dayIn, dayOut := day[0]-day[1], day[2]-day[3]
	total.normalIn += in
	total.normalOut += out
	total.transIn += transTps
	total.scheduleIn += schedTps
	total.dayIn += dayIn
	total.dayOut += dayOut
	total.dayTrans += transDay
	total.daySchedule += schedDay
	quota := hashMap(
		fjField{"diskRatio", hashMap(fjField{"commitLogDiskRatio", kvValue("commitLogDiskRatio")},
			fjField{"consumeQueueDiskRatio", kvValue("consumeQueueDiskRatio")})},
		fjField{"tps", hashMap(fjField{"normalInTps", fjDouble(in)}, fjField{"normalOutTps", fjDouble(out)},
			fjField{"transInTps", fjDouble(transTps)}, fjField{"scheduleInTps", fjDouble(schedTps)})},
		fjField{"oneDayNum", hashMap(fjField{"normalOneDayInNum", fjLong(dayIn)}, fjField{"normalOneDayOutNum", fjLong(dayOut)},
			fjField{"transOneDayInNum", fjLong(transDay)}, fjField{"scheduleOneDayInNum", fjLong(schedDay)})},
		fjField{"messageAverageSize", kvValue("putMessageAverageSize")},
		fjField{"topicSize", fjInt(int32(len(topicOrder)))},
		fjField{"groupSize", fjInt(int32(len(ge.order)))})

	// the languages and versions of the groups' consumers online
	var clients []string
	seen := map[string]bool{}
	for _, g := range ge.order {
		cc, err := a.ConsumerConnection(ge.groups[g].GroupName, "")
		if err != nil {
			continue // Apache goes on with the next group
		}
		for _, c := range cc.ConnectionSet {
			if s := c.Language + "%" + versionDesc(c.Version); !seen[s] {
				seen[s] = true
				clients = append(clients, s)
			}
		}
	}
	clientSet := fjSet{}
	for _, s := range javaSetOrder(clients) {
		clientSet = append(clientSet, fjString(s))
	}
	version := hashMap(fjField{"rocketmqVersion", fjString(remoting.DefaultVersion)}, fjField{"clientInfo", clientSet})
	return hashMap(fjField{"runtimeEnv", env}, fjField{"runtimeQuota", quota}, fjField{"runtimeVersion", version}), nil
}

// exportPopRecord asks the broker of -b, or every broker (slaves too) of
// -c's cluster, to write out its pop consumers' records (POP_ROLLBACK).
// As Apache's, a dry run is "-d false" (its test reads the option so).
func exportPopRecord(a *admin, o *options, args []string) error {
	cluster := o.String("c", "clusterName", "choose one cluster to export")
	broker := o.String("b", "brokerAddr", "choose one broker to export")
	dry := o.String("d", "dryRun", "no actual changes will be made")
	if err := a.parse(o, args); err != nil {
		return err
	}
	dryRun := o.Given("d") && strings.EqualFold(*dry, "false")
	export := func(addr, name string) {
		var err error
		if !dryRun {
			_, err = a.Call(addr, remoting.PopRollback, nil, nil)
		}
		if err != nil {
			fmt.Fprintf(a.out, "Export broker records error, brokerName=%s, brokerAddr=%s, dryRun=%t\n%v", name, addr, dryRun, err)
			return
		}
		fmt.Fprintf(a.out, "Export broker records, brokerName=%s, brokerAddr=%s, dryRun=%t\n", name, addr, dryRun)
	}
	switch {
	case o.Given("b"):
		addr := strings.TrimSpace(*broker)
		props, err := a.brokerConfig(addr)
		if err != nil {
			return err
		}
		name, ok := props["brokerName"]
		if !ok {
			name = "null"
		}
		export(addr, name)
	case o.Given("c"):
		ci, err := a.ClusterInfo()
		if err != nil {
			return err
		}
		// Apache walks the cluster's broker names (a HashSet) and each
		// one's addresses by id
		for _, n := range javaSetOrder(ci.ClusterAddrTable[strings.TrimSpace(*cluster)]) {
			bd, ok := ci.BrokerAddrTable[n]
			if !ok {
				continue
			}
			for _, id := range bd.IDs() {
				export(bd.BrokerAddrs[strconv.FormatInt(id, 10)], n)
			}
		}
	}
	return nil
}
