package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/internal/adminclient"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// bodyDir is where Apache's tool writes each printed message's body.
const bodyDir = "/tmp/rocketmq/msgbodys"

func queryMsgByKey(a *admin, o *options, args []string) error {
	topic := o.Req("t", "topic", "Topic name")
	key := o.Req("k", "msgKey", "Message Key")
	begin := o.Int64("b", "beginTimestamp", 0, "Begin timestamp(ms). default:0, eg:1676730526212")
	end := o.Int64("e", "endTimestamp", adminclient.MaxTime, "End timestamp(ms). default:Long.MAX_VALUE, eg:1676730526212")
	maxNum := o.Int32("m", "maxNum", 64, "The maximum number of messages returned by the query, default:64")
	o.String("c", "cluster", "Cluster name or lmq parent topic, lmq is used to find the route.")
	o.String("l", "lastKey", "Last Key")
	keyType := o.String("p", "keyType", "Index key type, default index key type is K, you can use K for keys OR T for tags")
	if err := a.parse(o, args); err != nil {
		return err
	}
	kt := "K"
	if o.Given("p") {
		kt = strings.TrimSpace(*keyType)
	}
	if kt != "K" && kt != "T" {
		fmt.Fprint(a.out, "index type error, just support K for keys or T for tags")
		return nil
	}
	if o.Given("l") || kt == "T" {
		return errors.New("-l (last key) and -p T (query by tag) are not implemented by this mqadmin")
	}
	t, err := requireTopic(*topic)
	if err != nil {
		return err
	}
	k := strings.TrimSpace(*key)
	if k == "" {
		return errors.New("-k message key is required")
	}
	ms, err := a.QueryAll(t, k, int(*maxNum), *begin, *end, false)
	if err != nil {
		return err
	}
	// 5.5: each message's index key, hour of its store time (UTC hours, as
	// MixAll.dealTimeToHourStamps), topic, key type, key, id and offset
	fmt.Fprintf(a.out, "%-50s %4s %40s %-200s\n", "#Message ID", "#QID", "#Offset", "#IndexKey")
	for _, m := range ms {
		hour := m.StoreTimestamp
		if hour > 0 {
			hour -= hour % 3_600_000
		}
		ik := fmt.Sprintf("%d@%s@%s@%s@%s@%d", hour, t, kt, k, m.MsgID(), m.PhysicalOffset)
		fmt.Fprintf(a.out, "%-50s %4d %40d %-200s\n", m.MsgID(), m.QueueID, m.QueueOffset, ik)
	}
	return nil
}

func queryMsgByID(a *admin, o *options, args []string) error {
	topic := o.Req("t", "topic", "topic name")
	ids := o.Req("i", "msgId", "Message Id")
	o.String("g", "consumerGroup", "consumer group name")
	o.String("d", "clientId", "The consumer's client id")
	o.String("s", "sendMessage", "resend message")
	o.String("u", "unitName", "unit name")
	format := o.String("f", "bodyFormat", "print message body by the specified format")
	o.String("c", "cluster", "Cluster name or lmq parent topic, lmq is used to find the route.")
	if err := a.parse(o, args); err != nil {
		return err
	}
	for _, f := range []string{"g", "d", "s", "u"} {
		if o.Given(f) {
			return fmt.Errorf("-%s (resend or push the message) is not implemented by this mqadmin", f)
		}
	}
	if err := a.bodyFormat(*format); err != nil {
		return err
	}
	t, err := requireTopic(*topic)
	if err != nil {
		return err
	}
	var list []string
	for _, id := range strings.Split(*ids, ",") {
		if id = strings.TrimSpace(id); id != "" {
			list = append(list, id)
		}
	}
	if len(list) == 0 {
		return errors.New("-i message id is required")
	}
	for _, id := range list {
		m, err := a.messageByID(t, id)
		if err != nil {
			return err
		}
		if err := a.printMsg(m); err != nil {
			return err
		}
	}
	return nil
}

// messageByID is DefaultMQAdminExtImpl.queryMessage: an offset message id
// names its broker and commit-log offset; anything else is looked up as a
// producer's UNIQ_KEY over the last three days.
func (a *admin) messageByID(topic, id string) (*adminclient.Message, error) {
	if host, off, err := message.DecodeOffsetMsgID(id); err == nil {
		if m, err := a.ViewMessage(host.String(), off); err == nil {
			return m, nil
		}
	}
	ms, err := a.QueryAll(topic, id, 32, time.Now().Add(-72*time.Hour).UnixMilli(), adminclient.MaxTime, true)
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, nil
	}
	return ms[0], nil
}

func queryMsgByOffset(a *admin, o *options, args []string) error {
	topic := o.Req("t", "topic", "topic name")
	broker := o.Req("b", "brokerName", "Broker Name")
	queue := o.Int32("i", "queueId", -1, "Queue Id")
	o.require(o.lookup("i"))
	offset := o.Int64("o", "offset", -1, "Queue Offset")
	o.require(o.lookup("o"))
	format := o.String("f", "bodyFormat", "print message body by the specified format")
	routeTopic := o.String("r", "routeTopic", "the topic which is used to find route info")
	if err := a.parse(o, args); err != nil {
		return err
	}
	if err := a.bodyFormat(*format); err != nil {
		return err
	}
	t, err := requireTopic(*topic)
	if err != nil {
		return err
	}
	name := strings.TrimSpace(*broker)
	if name == "" || *queue < 0 || *offset < 0 {
		return errors.New("-b broker name, -i queue id and -o offset are required")
	}
	rt := t // 5.5: the route of another topic (an LMQ's parent) when -r names one
	if s := strings.TrimSpace(*routeTopic); s != "" {
		rt = s
	}
	r, err := a.Route(rt)
	if err != nil {
		return err
	}
	addr := ""
	for _, bd := range r.BrokerDatas {
		if bd.BrokerName == name {
			addr = bd.SelectAddr()
		}
	}
	if addr == "" {
		return fmt.Errorf("broker %s is not in the route of %s", name, t)
	}
	m, err := a.PullOne(addr, adminclient.MessageQueue{Topic: t, BrokerName: name, QueueID: int(*queue)}, *offset)
	if err != nil || m == nil {
		return err // Apache prints nothing when the queue has no message there
	}
	return a.printMsg(m)
}

// printMsg is QueryMsgByIdSubCommand.printMsg: the message's fields, its
// body written under /tmp/rocketmq/msgbodys, and how each consumer group
// stands with it.
func (a *admin) printMsg(m *adminclient.Message) error {
	if m == nil {
		fmt.Fprintf(a.out, "\nMessage not found!")
		return nil
	}
	path := filepath.Join(bodyDir, m.MsgID())
	if err := os.MkdirAll(bodyDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, m.Body, 0o644); err != nil {
		return err
	}
	tags, ok := m.Prop(message.PropTags)
	if !ok {
		tags = "null"
	}
	keys, ok := m.Prop(message.PropKeys)
	if !ok {
		keys = "null"
	}
	row := func(name string, v any) { fmt.Fprintf(a.out, "%-20s %v\n", name, v) }
	row("OffsetID:", m.OffsetMsgID())
	row("Topic:", m.Topic)
	row("Tags:", "["+tags+"]")
	row("Keys:", "["+keys+"]")
	row("Queue ID:", m.QueueID)
	row("Queue Offset:", m.QueueOffset)
	row("CommitLog Offset:", m.PhysicalOffset)
	row("Reconsume Times:", m.ReconsumeTimes)
	row("Born Timestamp:", humanMillis(m.BornTimestamp))
	row("Store Timestamp:", humanMillis(m.StoreTimestamp))
	row("Born Host:", m.BornHost.String())
	row("Store Host:", m.StoreHost.String())
	row("System Flag:", m.SysFlag)
	row("Properties:", javaMapString(m.Props))
	row("Message Body Path:", path)
	if a.printBody {
		row("Message Body:", string(m.Body))
	}
	tracks, err := a.messageTracks(m)
	if err != nil {
		fmt.Fprintf(a.errOut, "%v\n", err) // Apache prints the stack trace, the message stays printed
		return nil
	}
	if len(tracks) == 0 {
		fmt.Fprintf(a.out, "\n\nWARN: No Consumer")
		return nil
	}
	fmt.Fprintf(a.out, "\n\n")
	for _, t := range tracks {
		fmt.Fprintf(a.out, "%s\n", t)
	}
	return nil
}

// messageTracks is DefaultMQAdminExtImpl.messageTrackDetail: for each group
// consuming the topic, whether it consumed the message. A group with no
// consumer online is UNKNOWN with the reason (Apache's text there is a Java
// exception and its first stack frame; this one names the code).
func (a *admin) messageTracks(m *adminclient.Message) ([]string, error) {
	r, err := a.Route(m.Topic)
	if err != nil {
		return nil, err
	}
	var groups []string
	for _, bd := range r.SortedBrokers() {
		if addr := bd.SelectAddr(); addr != "" {
			if groups, err = a.ConsumedBy(addr, m.Topic); err != nil {
				return nil, err
			}
			break // Apache asks one broker of the route
		}
	}
	// Apache: the HashSet fastjson decodes the group list into
	message.HashMapOrder(groups, 16, message.JavaHash)
	var out []string
	for _, g := range groups {
		track, desc := "UNKNOWN", "null"
		cc, err := a.ConsumerConnection(g, "")
		var ce *adminclient.CodeError
		switch {
		case errors.As(err, &ce): // Apache: an MQBrokerException
			if ce.Code == remoting.ConsumerNotOnline {
				track = "NOT_ONLINE"
			}
			desc = fmt.Sprintf("CODE:%d DESC:%s", ce.Code, ce.Remark)
		case errors.Is(err, adminclient.ErrConsumerNotOnline):
			desc = "CODE: 206 DESC: Not found the consumer group connection"
		case err != nil:
			desc = err.Error()
		case cc.ConsumeType == "CONSUME_ACTIVELY":
			track = "PULL"
		case cc.ConsumeType == "CONSUME_PASSIVELY":
			track, desc = a.consumedTrack(m, g, cc)
		}
		out = append(out, fmt.Sprintf("MessageTrack [consumerGroup=%s, trackType=%s, exceptionDesc=%s]", g, track, desc))
	}
	return out, nil
}

// consumedTrack is the CONSUME_PASSIVELY branch of messageTrackDetail.
func (a *admin) consumedTrack(m *adminclient.Message, group string, cc *adminclient.ConsumerConnection) (string, string) {
	cs, err := a.GroupConsumeStats(group, "")
	if err != nil {
		return "UNKNOWN", err.Error()
	}
	ci, err := a.ClusterInfo()
	if err != nil {
		return "UNKNOWN", err.Error()
	}
	consumed := false
	for _, q := range cs.Queues {
		if q.Topic != m.Topic || q.QueueID != int(m.QueueID) {
			continue
		}
		bd, ok := ci.BrokerAddrTable[q.BrokerName]
		if ok && bd.BrokerAddrs["0"] == m.StoreHost.String() && q.ConsumerOffset > m.QueueOffset {
			consumed = true
		}
	}
	if !consumed {
		return "NOT_CONSUME_YET", "null"
	}
	tags, _ := m.Prop(message.PropTags)
	if sd, ok := cc.SubscriptionTable[m.Topic]; ok && len(sd.TagsSet) > 0 {
		for _, t := range sd.TagsSet {
			if t == tags || t == "*" {
				return "CONSUMED", "null"
			}
		}
		return "CONSUMED_BUT_FILTERED", "null"
	}
	return "CONSUMED", "null"
}

// javaMapString is a HashMap<String, String>'s toString, as
// MessageDecoder builds it (new HashMap<>(128)): entries in the table's
// order, by the spread hash of each name, ties in insertion order.
func javaMapString(props []adminclient.Property) string {
	ordered := javaHashOrder(props, 128)
	parts := make([]string, len(ordered))
	for i, p := range ordered {
		parts[i] = p.Name + "=" + p.Value
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// javaHashOrder is the iteration order of a java.util.HashMap<String, ?>
// created with initialCap and filled with props in order.
func javaHashOrder(props []adminclient.Property, initialCap int) []adminclient.Property {
	out := append([]adminclient.Property(nil), props...)
	message.HashMapOrder(out, initialCap, func(p adminclient.Property) int32 { return message.JavaHash(p.Name) })
	return out
}

// bodyFormat takes -f: the charset to print bodies in; UTF-8 only here.
func (a *admin) bodyFormat(charset string) error {
	switch c := strings.ToUpper(strings.TrimSpace(charset)); c {
	case "":
	case "UTF-8", "UTF8":
		a.printBody = true
	default:
		return fmt.Errorf("-f %s: only UTF-8 bodies are printed by this mqadmin", charset)
	}
	return nil
}

func queryMsgByUniqueKey(a *admin, o *options, args []string) error {
	id := o.Req("i", "msgId", "Message Id")
	o.String("g", "consumerGroup", "consumer group name")
	o.String("d", "clientId", "The consumer's client id")
	topic := o.Req("t", "topic", "The topic of msg")
	all := o.Bool("a", "showAll", "Print all message, the limit is 32")
	o.String("c", "cluster", "Cluster name or lmq parent topic, lmq is used to find the route.")
	start := o.String("s", "startTime", "startTime")
	end := o.String("e", "endTime", "endTime")
	if err := a.parse(o, args); err != nil {
		return err
	}
	if o.Given("g") && o.Given("d") {
		return errors.New("-g -d (push the message to a client) is not implemented by this mqadmin")
	}
	begin, until := int64(0), int64(adminclient.MaxTime)
	var err error
	if o.Given("s") {
		if begin, err = timestampFormat(strings.TrimSpace(*start)); err != nil {
			return err
		}
	}
	if o.Given("e") {
		if until, err = timestampFormat(strings.TrimSpace(*end)); err != nil {
			return err
		}
	}
	ms, err := a.QueryAll(strings.TrimSpace(*topic), strings.TrimSpace(*id), 32, begin, until, true)
	if err != nil {
		return err
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].StoreTimestamp < ms[j].StoreTimestamp })
	n := min(len(ms), 1)
	if *all {
		n = len(ms)
	}
	for i := 0; i < n; i++ {
		if err := a.showMessage(ms[i], i); err != nil {
			return err
		}
	}
	return nil
}

// showMessage is QueryMsgByUniqueKeySubCommand.showMessage: printMsg's
// fields but the offset id, the body written under the message id (and
// _index past the first), the tracks one after the other.
func (a *admin) showMessage(m *adminclient.Message, index int) error {
	path := filepath.Join(bodyDir, m.MsgID())
	if index > 0 {
		path += "_" + strconv.Itoa(index)
	}
	if err := os.MkdirAll(bodyDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, m.Body, 0o644); err != nil {
		return err
	}
	tags, ok := m.Prop(message.PropTags)
	if !ok {
		tags = "null"
	}
	keys, ok := m.Prop(message.PropKeys)
	if !ok {
		keys = "null"
	}
	row := func(name string, v any) { fmt.Fprintf(a.out, "%-20s %v\n", name, v) }
	row("Topic:", m.Topic)
	row("Tags:", "["+tags+"]")
	row("Keys:", "["+keys+"]")
	row("Queue ID:", m.QueueID)
	row("Queue Offset:", m.QueueOffset)
	row("CommitLog Offset:", m.PhysicalOffset)
	row("Reconsume Times:", m.ReconsumeTimes)
	row("Born Timestamp:", humanMillis(m.BornTimestamp))
	row("Store Timestamp:", humanMillis(m.StoreTimestamp))
	row("Born Host:", m.BornHost.String())
	row("Store Host:", m.StoreHost.String())
	row("System Flag:", m.SysFlag)
	row("Properties:", javaMapString(m.Props))
	row("Message Body Path:", path)
	tracks, err := a.messageTracks(m)
	if err != nil {
		fmt.Fprintf(a.errOut, "%v\n", err) // Apache prints the stack trace, the message stays printed
		return nil
	}
	if len(tracks) == 0 {
		fmt.Fprintf(a.out, "\n\nWARN: No Consumer")
		return nil
	}
	fmt.Fprintf(a.out, "\n\n")
	for _, t := range tracks {
		fmt.Fprintf(a.out, "%s", t)
	}
	return nil
}
