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
)

func consumerProgress(a *admin, o *options, args []string) error {
	group := o.String("g", "groupName", "consumer group name")
	topic := o.String("t", "topicName", "topic name")
	showIP := o.String("s", "showClientIP", "Show Client IP per Queue")
	o.String("c", "cluster", "Cluster name or lmq parent topic, lmq is used to find the route.")
	if err := a.parse(o, args); err != nil {
		return err
	}
	if javaBool(*showIP) {
		return fmt.Errorf("-s true (client per queue, GET_CONSUMER_RUNNING_INFO) is not implemented by this mqadmin")
	}
	if g := strings.TrimSpace(*group); g != "" {
		return a.groupProgress(g, strings.TrimSpace(*topic))
	}
	return a.groupList()
}

// groupProgress is consumerProgress -g: the group's queues, diff, inflight.
func (a *admin) groupProgress(group, topic string) error {
	cs, err := a.GroupConsumeStats(group, topic)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out, "%-64s  %-32s  %-4s  %-20s  %-20s  %-20s %-20s%s\n",
		"#Topic", "#Broker Name", "#QID", "#Broker Offset", "#Consumer Offset", "#Diff", "#Inflight", "#LastTime")
	var diffTotal, inflightTotal int64
	for _, q := range cs.Queues {
		diff, inflight := q.BrokerOffset-q.ConsumerOffset, q.PullOffset-q.ConsumerOffset
		diffTotal += diff
		inflightTotal += inflight
		last := "N/A"
		if q.LastTimestamp != 0 {
			last = time.UnixMilli(q.LastTimestamp).Format("2006-01-02 15:04:05")
		}
		fmt.Fprintf(a.out, "%-64s  %-32s  %-4d  %-20d  %-20d  %-20d %-20d %s\n",
			atMost(q.Topic, 64), atMost(q.BrokerName, 32), q.QueueID, q.BrokerOffset, q.ConsumerOffset, diff, inflight, last)
	}
	fmt.Fprintf(a.out, "\n")
	fmt.Fprintf(a.out, "Consume TPS: %.2f\n", cs.ConsumeTps)
	fmt.Fprintf(a.out, "Consume Diff Total: %d\n", diffTotal)
	fmt.Fprintf(a.out, "Consume Inflight Total: %d\n", inflightTotal)
	return nil
}

// groupList is consumerProgress without -g: every group that has a retry
// topic, its consumers and total diff. Apache walks the topic list's hash
// order; this one sorts.
func (a *admin) groupList() error {
	topics, err := a.topicNames()
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out, "%-64s  %-6s  %-24s %-5s  %-14s  %-7s  %s\n", "#Group", "#Count", "#Version", "#Type", "#Model", "#TPS", "#Diff Total")
	for _, t := range topics {
		if !strings.HasPrefix(t, "%RETRY%") {
			continue
		}
		g := adminclient.GroupOfRetryTopic(t)
		var tps, diff int64
		if cs, err := a.GroupConsumeStats(g, ""); err == nil {
			tps, diff = int64(cs.ConsumeTps), cs.DiffTotal()
		}
		count, version, ctype, model := 0, "OFFLINE", "", ""
		if cc, err := a.ConsumerConnection(g, ""); err == nil {
			count, version = len(cc.ConnectionSet), versionDesc(cc.MinVersion())
			ctype = "PUSH"
			if cc.ConsumeType == "CONSUME_ACTIVELY" {
				ctype = "PULL"
			}
			if cc.ConsumeType == "CONSUME_PASSIVELY" {
				model = cc.MessageModel
			}
		}
		fmt.Fprintf(a.out, "%-64s  %-6d  %-24s %-5s  %-14s  %-7d  %d\n", atMost(g, 64), count, version, ctype, model, tps, diff)
	}
	return nil
}

// consumerStatus asks each consumer of the group (or the one of -i) for its
// running info through a broker, as Apache's: without -i, one line per
// consumer and its ConsumerRunningInfo.formatString in the file
// <now ms>/<clientId> under the working directory, then the group's
// analysis; with -i, that client's formatString.
func consumerStatus(a *admin, o *options, args []string) error {
	group := o.Req("g", "consumerGroup", "consumer group name")
	clientID := o.String("i", "clientId", "The consumer's client id")
	broker := o.String("b", "brokerAddr", "broker address")
	jstack := o.Bool("s", "jstack", "Run jstack command in the consumer progress")
	if err := a.parse(o, args); err != nil {
		return err
	}
	g := strings.TrimSpace(*group)
	addr := ""
	if o.Given("b") {
		addr = strings.TrimSpace(*broker)
	}
	cc, err := a.ConsumerConnection(g, addr)
	if err != nil {
		return err
	}
	if o.Given("i") {
		ci, err := a.consumerRunningInfo(g, strings.TrimSpace(*clientID), *jstack)
		if err != nil {
			return err
		}
		if ci != nil {
			fmt.Fprint(a.out, formatRunningInfo(ci))
		}
		return nil
	}
	now := time.Now().UnixMilli()
	fmt.Fprintf(a.out, "%-10s %-40s %-20s %s\n", "#Index", "#ClientId", "#Version", "#ConsumerRunningInfoFile")
	type running struct {
		clientID string
		info     *adminclient.ConsumerRunningInfo
	}
	var infos []running // sorted by client id, as Apache's TreeMap
	for _, conn := range cc.ConnectionSet {
		ci, err := a.consumerRunningInfo(g, conn.ClientID, *jstack)
		if err == nil && ci != nil {
			path := fmt.Sprintf("%d/%s", now, conn.ClientID)
			err = writeFileMkdirs(path, formatRunningInfo(ci))
			if err == nil {
				infos = append(infos, running{conn.ClientID, ci})
				fmt.Fprintf(a.out, "%-10d %-40s %-20s %s\n", len(infos), conn.ClientID, versionDesc(conn.Version), path)
			}
		}
		if err != nil { // Apache prints the stack trace and goes on
			fmt.Fprintf(a.errOut, "%s: %v\n", conn.ClientID, err)
		}
	}
	if len(infos) == 0 {
		return nil
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].clientID < infos[j].clientID })
	// ConsumerRunningInfo.analyzeSubscription: the push consumers of a
	// group started over two minutes ago subscribe alike
	first := infos[0].info
	push, err := pushConsumer(first)
	if err != nil {
		return err
	}
	started, _ := first.Prop("PROP_CONSUMER_START_TIMESTAMP")
	since, err := strconv.ParseInt(started, 10, 64)
	if err != nil {
		return fmt.Errorf("%s: PROP_CONSUMER_START_TIMESTAMP %q is not a number", infos[0].clientID, started)
	}
	subSame := true
	if push && time.Now().UnixMilli()-since > 2*60*1000 {
		for _, r := range infos[1:] {
			if !sameSubscriptions(r.info.Subscriptions, first.Subscriptions) {
				subSame = false
				break
			}
		}
	}
	if !subSame {
		fmt.Fprint(a.out, "\n\nWARN: Different subscription in the same group of consumer!!!")
		return nil
	}
	fmt.Fprint(a.out, "\n\nSame subscription in the same group of consumer")
	fmt.Fprint(a.out, "\n\nRebalance OK\n") // Apache's analyzeRebalance answers true
	for _, r := range infos {
		s, err := analyzeProcessQueue(r.clientID, r.info)
		if err != nil {
			return err
		}
		fmt.Fprint(a.out, s)
	}
	return nil
}

// consumerRunningInfo is DefaultMQAdminExt.getConsumerRunningInfo: asked
// through the first broker of the group's retry topic that has an address;
// nil when none has.
func (a *admin) consumerRunningInfo(group, clientID string, jstack bool) (*adminclient.ConsumerRunningInfo, error) {
	r, err := a.Route(adminclient.RetryTopic(group))
	if err != nil {
		return nil, err
	}
	for _, bd := range r.SortedBrokers() {
		if addr := bd.SelectAddr(); addr != "" {
			return a.ConsumerRunningInfo(addr, group, clientID, jstack)
		}
	}
	return nil, nil
}

// pushConsumer is ConsumerRunningInfo.isPushType.
func pushConsumer(ci *adminclient.ConsumerRunningInfo) (bool, error) {
	t, ok := ci.Prop("PROP_CONSUME_TYPE")
	switch {
	case !ok:
		return false, errors.New("consumer running info without PROP_CONSUME_TYPE")
	case t == "CONSUME_PASSIVELY":
		return true, nil
	case t == "CONSUME_ACTIVELY", t == "CONSUME_POP":
		return false, nil
	}
	return false, fmt.Errorf("PROP_CONSUME_TYPE %q is no ConsumeType", t)
}

// sameSubscriptions is TreeSet.equals: the same topic@subString entries.
func sameSubscriptions(x, y []adminclient.Subscription) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i].Topic != y[i].Topic || x[i].SubString != y[i].SubString {
			return false
		}
	}
	return true
}

// analyzeProcessQueue is ConsumerRunningInfo.analyzeProcessQueue: the queues
// of a push consumer that cannot lock (orderly) or have not consumed for a
// minute with messages cached.
func analyzeProcessQueue(clientID string, ci *adminclient.ConsumerRunningInfo) (string, error) {
	push, err := pushConsumer(ci)
	if err != nil || !push {
		return "", err
	}
	orderly, _ := ci.Prop("PROP_CONSUMEORDERLY")
	var b strings.Builder
	now := time.Now().UnixMilli()
	for _, q := range ci.MQTable {
		switch {
		case javaBool(orderly) && !q.Locked:
			fmt.Fprintf(&b, "%s %s can't lock for a while, %dms\n", clientID, mqString(q.MessageQueue), now-q.LastLockTimestamp)
		case javaBool(orderly):
			if q.Droped && q.TryUnlockTimes > 0 {
				fmt.Fprintf(&b, "%s %s unlock %d times, still failed\n", clientID, mqString(q.MessageQueue), q.TryUnlockTimes)
			}
		default:
			if diff := now - q.LastConsumeTimestamp; diff > 60*1000 && q.CachedMsgCount > 0 {
				fmt.Fprintf(&b, "%s %s can't consume for a while, maybe blocked, %dms\n", clientID, mqString(q.MessageQueue), diff)
			}
		}
	}
	return b.String(), nil
}

// formatRunningInfo is ConsumerRunningInfo.formatString.
func formatRunningInfo(ci *adminclient.ConsumerRunningInfo) string {
	var b strings.Builder
	b.WriteString("#Consumer Properties#\n")
	for _, p := range ci.Properties {
		fmt.Fprintf(&b, "%-40s: %s\n", p.Name, p.Value)
	}
	b.WriteString("\n\n#Consumer Subscription#\n")
	for i, s := range ci.Subscriptions {
		fmt.Fprintf(&b, "%03d Topic: %-40s ClassFilter: %-8t SubExpression: %s\n", i+1, s.Topic, s.ClassFilterMode, s.SubString)
	}
	b.WriteString("\n\n#Consumer Offset#\n")
	fmt.Fprintf(&b, "%-64s  %-32s  %-4s  %-20s\n", "#Topic", "#Broker Name", "#QID", "#Consumer Offset")
	for _, q := range ci.MQTable {
		fmt.Fprintf(&b, "%-32s  %-32s  %-4d  %-20d\n", q.Topic, q.BrokerName, q.QueueID, q.CommitOffset)
	}
	b.WriteString("\n\n#Consumer MQ Detail#\n")
	fmt.Fprintf(&b, "%-64s  %-32s  %-4s  %-20s\n", "#Topic", "#Broker Name", "#QID", "#ProcessQueueInfo")
	for _, q := range ci.MQTable {
		fmt.Fprintf(&b, "%-64s  %-32s  %-4d  %s\n", q.Topic, q.BrokerName, q.QueueID, processQueueString(q))
	}
	b.WriteString("\n\n#Consumer Pop Detail#\n")
	fmt.Fprintf(&b, "%-32s  %-32s  %-4s  %-20s\n", "#Topic", "#Broker Name", "#QID", "#ProcessQueueInfo")
	for _, q := range ci.MQPopTable {
		fmt.Fprintf(&b, "%-32s  %-32s  %-4d  PopProcessQueueInfo [waitAckCount:%d, droped:%t, lastPopTimestamp:%d]\n",
			q.Topic, q.BrokerName, q.QueueID, q.WaitAckCount, q.Droped, q.LastPopTimestamp)
	}
	b.WriteString("\n\n#Consumer RT&TPS#\n")
	fmt.Fprintf(&b, "%-64s  %14s %14s %14s %14s %18s %25s\n", "#Topic", "#Pull RT", "#Pull TPS", "#Consume RT",
		"#ConsumeOK TPS", "#ConsumeFailed TPS", "#ConsumeFailedMsgsInHour")
	for _, s := range ci.StatusTable {
		fmt.Fprintf(&b, "%-32s  %14.2f %14.2f %14.2f %14.2f %18.2f %25d\n", s.Topic, s.PullRT, s.PullTPS, s.ConsumeRT,
			s.ConsumeOKTPS, s.ConsumeFailedTPS, s.ConsumeFailedMsgs)
	}
	b.WriteString("\n\n#User Consume Info#\n")
	for _, p := range ci.UserConsumerInfo {
		fmt.Fprintf(&b, "%-40s: %s\n", p.Name, p.Value)
	}
	if ci.Jstack != nil {
		b.WriteString("\n\n#Consumer jstack#\n")
		b.WriteString(*ci.Jstack)
	}
	return b.String()
}

// processQueueString is ProcessQueueInfo.toString.
func processQueueString(q adminclient.QueueProcess) string {
	return fmt.Sprintf("ProcessQueueInfo [commitOffset=%d, cachedMsgMinOffset=%d, cachedMsgMaxOffset=%d, cachedMsgCount=%d, "+
		"cachedMsgSizeInMiB=%d, transactionMsgMinOffset=%d, transactionMsgMaxOffset=%d, transactionMsgCount=%d, locked=%t, "+
		"tryUnlockTimes=%d, lastLockTimestamp=%s, droped=%t, lastPullTimestamp=%s, lastConsumeTimestamp=%s]",
		q.CommitOffset, q.CachedMsgMinOffset, q.CachedMsgMaxOffset, q.CachedMsgCount, q.CachedMsgSizeInMiB,
		q.TransactionMsgMinOffset, q.TransactionMsgMaxOffset, q.TransactionMsgCount, q.Locked, q.TryUnlockTimes,
		compactMillis(q.LastLockTimestamp), q.Droped, compactMillis(q.LastPullTimestamp), compactMillis(q.LastConsumeTimestamp))
}

// compactMillis is UtilAll.timeMillisToHumanString: local time as
// yyyyMMddHHmmssSSS.
func compactMillis(ms int64) string {
	t := time.UnixMilli(ms)
	return t.Format("20060102150405") + fmt.Sprintf("%03d", t.Nanosecond()/int(time.Millisecond))
}

// writeFileMkdirs is MixAll.string2FileNotSafe: the file's directories
// made, the file written whole.
func writeFileMkdirs(path, s string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(s), 0o644)
}
