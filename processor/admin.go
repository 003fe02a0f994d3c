package processor

// mqadmin's broker requests: runtime info, topic and consume statistics,
// client connections, broker config, offset reset, topic config lookups.

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	jsoniter "github.com/json-iterator/go"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/remoting"
)

// brokerVersionDesc names remoting.ServerVersion as mqadmin prints it.
const brokerVersionDesc = "V4_9_8"

// admin serves the mqadmin codes. rc and stats are owned here because they
// only exist for these requests.
type admin struct {
	p      *brokerProcs
	rc     *broker.RuntimeConfig
	stats  *broker.RuntimeStats
	bootAt time.Time
}

func (p *brokerProcs) registerAdmin(t Table) {
	a := &admin{p: p, rc: broker.NewRuntimeConfig(*p.b.Config()), stats: broker.NewRuntimeStats(p.b.Store), bootAt: time.Now()}
	t[remoting.GetBrokerRuntimeInfo] = a.runtimeInfo
	t[remoting.GetTopicStatsInfo] = a.topicStats
	t[remoting.GetConsumeStats] = a.consumeStats
	t[remoting.GetConsumerConnectionList] = a.consumerConnections
	t[remoting.GetProducerConnectionList] = a.producerConnections
	t[remoting.QueryTopicConsumeByWho] = a.topicConsumeByWho
	t[remoting.QueryTopicsByConsumer] = a.topicsByConsumer
	t[remoting.GetTopicConfig] = a.topicConfig
	t[remoting.GetBrokerConfig] = a.brokerConfig
	t[remoting.UpdateBrokerConfig] = a.updateBrokerConfig
	t[remoting.InvokeBrokerToResetOffset] = a.resetOffset
	t[remoting.ViewMessageByID] = a.viewMessage
}

// appendMQKey appends a MessageQueue the way fastjson writes it as a map key:
// {"brokerName":"b","queueId":0,"topic":"t"}.
func appendMQKey(dst []byte, brokerName, topic string, queueID int32) []byte {
	dst = append(dst, `{"brokerName":`...)
	dst = remoting.AppendJSONString(dst, brokerName)
	dst = append(dst, `,"queueId":`...)
	dst = strconv.AppendInt(dst, int64(queueID), 10)
	dst = append(dst, `,"topic":`...)
	dst = remoting.AppendJSONString(dst, topic)
	return append(dst, '}')
}

func okBody(req *remoting.Command, body []byte) *remoting.Command {
	resp := remoting.NewResponse(req, remoting.Success, "")
	resp.Body = body
	return resp
}

func (a *admin) runtimeInfo(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	st := a.p.b.Store
	total, sinceStart, tps := a.stats.Sample(st)
	earliest := int64(-1)
	for t, qs := range st.Topics() {
		for _, q := range qs {
			if ts, err := st.EarliestMessageTime(t, q); err == nil && (earliest < 0 || ts < earliest) {
				earliest = ts
			}
		}
	}
	tpsText := strconv.FormatFloat(tps, 'f', 2, 64)
	tps3 := tpsText + " " + tpsText + " " + tpsText
	ratio := st.CommitLogDiskRatio()
	table := map[string]string{
		"brokerActive":                             "true",
		"brokerVersionDesc":                        brokerVersionDesc,
		"brokerVersion":                            strconv.Itoa(int(remoting.ServerVersion)),
		"msgPutTotalYesterdayMorning":              strconv.FormatInt(total-sinceStart, 10),
		"msgPutTotalTodayMorning":                  strconv.FormatInt(total-sinceStart, 10),
		"msgPutTotalTodayNow":                      strconv.FormatInt(total, 10),
		"msgGetTotalYesterdayMorning":              "0",
		"msgGetTotalTodayMorning":                  "0",
		"msgGetTotalTodayNow":                      "0",
		"dispatchBehindBytes":                      strconv.FormatInt(st.MaxPhyOffset()-st.DispatchedPhyOffset(), 10),
		"pageCacheLockTimeMills":                   "0",
		"earliestMessageTimeStamp":                 strconv.FormatInt(earliest, 10),
		"startAcceptSendRequestTimeStamp":          "0",
		"timerReadBehind":                          "0",
		"timerOffsetBehind":                        "0",
		"timerCongestNum":                          "0",
		"timerEnqueueTps":                          "0.0",
		"timerDequeueTps":                          "0.0",
		"remainTransientStoreBufferNumbs":          "0",
		"remainHowManyDataToFlush":                 "0 B",
		"commitLogDiskRatio":                       strconv.FormatFloat(ratio, 'f', -1, 64),
		"commitLogMaxOffset":                       strconv.FormatInt(st.MaxPhyOffset(), 10),
		"commitLogMinOffset":                       strconv.FormatInt(st.MinPhyOffset(), 10),
		"bootTimestamp":                            strconv.FormatInt(a.bootAt.UnixMilli(), 10),
		"runtime":                                  runtimeText(time.Since(a.bootAt)),
		"putTps":                                   tps3,
		"getFoundTps":                              "0.0 0.0 0.0",
		"getMissTps":                               "0.0 0.0 0.0",
		"getTransferredTps":                        "0.0 0.0 0.0",
		"getTransferedTps":                         "0.0 0.0 0.0", // 4.9 tools' spelling
		"getTotalTps":                              "0.0 0.0 0.0",
		"sendThreadPoolQueueSize":                  "0",
		"sendThreadPoolQueueCapacity":              "10000",
		"pullThreadPoolQueueSize":                  "0",
		"pullThreadPoolQueueCapacity":              "100000",
		"litePullThreadPoolQueueSize":              "0",
		"queryThreadPoolQueueSize":                 "0",
		"sendThreadPoolQueueHeadWaitTimeMills":     "0",
		"pullThreadPoolQueueHeadWaitTimeMills":     "0",
		"queryThreadPoolQueueHeadWaitTimeMills":    "0",
		"litePullThreadPoolQueueHeadWaitTimeMills": "0",
		"EndTransactionQueueSize":                  "0",
	}
	body, err := jsoniter.Marshal(struct {
		Table map[string]string `json:"table"`
	}{table})
	if err != nil {
		return a.p.fail(req, err)
	}
	return okBody(req, body)
}

// runtimeText is Apache's "[ 0 days, 0 hours, 1 minutes, 5 seconds ]".
func runtimeText(d time.Duration) string {
	s := int64(d.Seconds())
	return fmt.Sprintf("[ %d days, %d hours, %d minutes, %d seconds ]", s/86400, s%86400/3600, s%3600/60, s%60)
}

func (a *admin) topicStats(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	topic, err := req.RequireStr("topic")
	if err != nil {
		return a.p.fail(req, err)
	}
	tc, ok := a.p.b.Topics.Get(topic)
	if !ok {
		return remoting.NewResponse(req, remoting.TopicNotExist, "topic["+topic+"] not exist")
	}
	st := a.p.b.Store
	name := a.p.b.Config().BrokerName
	// Every queue id the topic has (Apache: the larger count); bounded by
	// maxTopicQueueNums, which every topic in the table keeps. ~110 bytes and
	// the two names per queue: sized once.
	body := append(make([]byte, 0, 64+int(tc.QueueNums())*(110+len(name)+len(topic))), `{"offsetTable":{`...)
	for q := int32(0); q < tc.QueueNums(); q++ {
		if q > 0 {
			body = append(body, ',')
		}
		lo, hi := st.MinOffset(topic, q), st.MaxOffset(topic, q)
		var last int64
		if hi > 0 {
			last, _ = st.StoreTimeAt(topic, q, hi-1)
		}
		body = appendMQKey(body, name, topic, q)
		body = append(body, `:{"lastUpdateTimestamp":`...)
		body = strconv.AppendInt(body, last, 10)
		body = append(body, `,"maxOffset":`...)
		body = strconv.AppendInt(body, hi, 10)
		body = append(body, `,"minOffset":`...)
		body = strconv.AppendInt(body, lo, 10)
		body = append(body, '}')
	}
	// Apache 5.x adds the topic's put TPS; rocketgo keeps no per-topic rate.
	body = append(body, `},"topicPutTps":0.0}`...)
	return okBody(req, body)
}

// consumeStatsTopics is Apache's getTopicsForCollectingConsumeStats. A topic
// listed twice is collected once (Apache's answer is a map keyed by queue).
func (a *admin) consumeStatsTopics(req *remoting.Command, group string) []string {
	if list := req.Str("topicList"); list != "" {
		var out []string
		seen := map[string]bool{}
		for _, t := range strings.Split(list, ";") {
			if t != "" && !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
		return out
	}
	var topics []string
	if t := req.Str("topic"); t != "" {
		topics = []string{t}
	} else {
		topics = a.p.b.Offsets.TopicsOf(group)
	}
	state, online := a.p.b.Clients.ConsumerGroup(group)
	if !online || len(state.Subscriptions) == 0 {
		return topics
	}
	out := topics[:0]
	for _, t := range topics {
		if _, ok := state.Subscriptions[t]; ok {
			out = append(out, t)
		}
	}
	return out
}

func (a *admin) consumeStats(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	group, err := req.RequireStr("consumerGroup")
	if err != nil {
		return a.p.fail(req, err)
	}
	st := a.p.b.Store
	name := a.p.b.Config().BrokerName
	body := append(make([]byte, 0, 512), `{"consumeTps":0.0,"offsetTable":{`...)
	first := true
	for _, topic := range a.consumeStatsTopics(req, group) {
		tc, ok := a.p.b.Topics.Get(topic)
		if !ok {
			continue
		}
		for q := int32(0); q < tc.ReadQueueNums; q++ {
			brokerOff := max(st.MaxOffset(topic, q), 0)
			consumerOff, ok := a.p.b.Offsets.Query(group, topic, q)
			if !ok || consumerOff < 0 {
				consumerOff = 0
			}
			var last int64
			if consumerOff > 0 {
				last, _ = st.StoreTimeAt(topic, q, consumerOff-1)
			}
			if !first {
				body = append(body, ',')
			}
			first = false
			body = appendMQKey(body, name, topic, q)
			body = append(body, `:{"brokerOffset":`...)
			body = strconv.AppendInt(body, brokerOff, 10)
			body = append(body, `,"consumerOffset":`...)
			body = strconv.AppendInt(body, consumerOff, 10)
			body = append(body, `,"lastTimestamp":`...)
			body = strconv.AppendInt(body, last, 10)
			body = append(body, `,"pullOffset":`...)
			body = strconv.AppendInt(body, consumerOff, 10)
			body = append(body, '}')
		}
	}
	body = append(body, "}}"...)
	return okBody(req, body)
}

// subscriptionData is Apache's SubscriptionData as fastjson writes it.
type subscriptionData struct {
	ClassFilterMode bool     `json:"classFilterMode"`
	CodeSet         []int32  `json:"codeSet"`
	ExpressionType  string   `json:"expressionType"`
	SubString       string   `json:"subString"`
	SubVersion      int64    `json:"subVersion"`
	TagsSet         []string `json:"tagsSet"`
	Topic           string   `json:"topic"`
}

func toSubscriptionData(s *broker.Subscription) subscriptionData {
	d := subscriptionData{CodeSet: []int32{}, TagsSet: []string{}, ExpressionType: s.ExpressionType,
		SubString: s.SubString, SubVersion: s.SubVersion, Topic: s.Topic}
	if d.ExpressionType == "" {
		d.ExpressionType = "TAG"
	}
	d.TagsSet = append(d.TagsSet, s.Tags...)
	for c := range s.Codes {
		d.CodeSet = append(d.CodeSet, int32(c))
	}
	sort.Slice(d.CodeSet, func(i, j int) bool { return d.CodeSet[i] < d.CodeSet[j] })
	return d
}

func (a *admin) consumerConnections(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	group, err := req.RequireStr("consumerGroup")
	if err != nil {
		return a.p.fail(req, err)
	}
	state, ok := a.p.b.Clients.ConsumerGroup(group)
	if !ok {
		return remoting.NewResponse(req, remoting.ConsumerNotOnline, "the consumer group["+group+"] not online")
	}
	subs := make(map[string]subscriptionData, len(state.Subscriptions))
	for t, s := range state.Subscriptions {
		subs[t] = toSubscriptionData(s)
	}
	body, err := jsoniter.Marshal(struct {
		ConnectionSet     []broker.Connection         `json:"connectionSet"`
		ConsumeFromWhere  string                      `json:"consumeFromWhere"`
		ConsumeType       string                      `json:"consumeType"`
		MessageModel      string                      `json:"messageModel"`
		SubscriptionTable map[string]subscriptionData `json:"subscriptionTable"`
	}{state.Connections, state.Info.ConsumeFromWhere, state.Info.ConsumeType, state.Info.MessageModel, subs})
	if err != nil {
		return a.p.fail(req, err)
	}
	return okBody(req, body)
}

func (a *admin) producerConnections(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	group, err := req.RequireStr("producerGroup")
	if err != nil {
		return a.p.fail(req, err)
	}
	conns := a.p.b.Clients.ProducerConnections(group)
	if len(conns) == 0 {
		return remoting.NewResponse(req, remoting.SystemError, "the producer group["+group+"] not exist")
	}
	body, err := jsoniter.Marshal(struct {
		ConnectionSet []broker.Connection `json:"connectionSet"`
	}{conns})
	if err != nil {
		return a.p.fail(req, err)
	}
	return okBody(req, body)
}

func (a *admin) topicConsumeByWho(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	topic, err := req.RequireStr("topic")
	if err != nil {
		return a.p.fail(req, err)
	}
	set := map[string]struct{}{}
	for _, g := range a.p.b.Clients.GroupsSubscribing(topic) {
		set[g] = struct{}{}
	}
	for _, g := range a.p.b.Offsets.Groups(topic) {
		set[g] = struct{}{}
	}
	return a.groupList(req, set)
}

func (a *admin) groupList(req *remoting.Command, set map[string]struct{}) *remoting.Command {
	list := make([]string, 0, len(set))
	for g := range set {
		list = append(list, g)
	}
	sort.Strings(list)
	body, err := jsoniter.Marshal(struct {
		GroupList []string `json:"groupList"`
	}{list})
	if err != nil {
		return a.p.fail(req, err)
	}
	return okBody(req, body)
}

func (a *admin) topicsByConsumer(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	group, err := req.RequireStr("group")
	if err != nil {
		return a.p.fail(req, err)
	}
	body, err := jsoniter.Marshal(struct {
		BrokerAddr string   `json:"brokerAddr"`
		TopicList  []string `json:"topicList"`
	}{a.p.b.Config().BrokerIP1 + ":" + strconv.Itoa(a.p.b.Config().ListenPort), nonNil(a.p.b.Offsets.TopicsOf(group))})
	if err != nil {
		return a.p.fail(req, err)
	}
	return okBody(req, body)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (a *admin) topicConfig(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	topic, err := req.RequireStr("topic")
	if err != nil {
		return a.p.fail(req, err)
	}
	tc, ok := a.p.b.Topics.Get(topic)
	if !ok {
		return remoting.NewResponse(req, remoting.TopicNotExist, "No topic in this broker. topic: "+topic)
	}
	body, err := jsoniter.Marshal(tc)
	if err != nil {
		return a.p.fail(req, err)
	}
	return okBody(req, body)
}

func (a *admin) brokerConfig(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	body, version := a.rc.Properties()
	v, err := jsoniter.Marshal(version)
	if err != nil {
		return a.p.fail(req, err)
	}
	resp := okBody(req, body)
	resp.Set("version", string(v))
	return resp
}

func (a *admin) updateBrokerConfig(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	if len(req.Body) == 0 {
		return remoting.NewResponse(req, remoting.SystemError, "string2Properties error")
	}
	if err := a.rc.Update(req.Body); err != nil {
		if errors.Is(err, broker.ErrConfigBlackListed) {
			return a.p.fail(req, err)
		}
		return remoting.NewResponse(req, remoting.SystemError, err.Error())
	}
	a.p.log.Info().Str("remote", c.Remote).Str("body", string(req.Body)).Msg("broker config updated")
	return remoting.NewResponse(req, remoting.Success, "")
}

// resetOffset is INVOKE_BROKER_TO_RESET_OFFSET: compute each queue's offset
// for the timestamp, tell every consumer of the group (RESET_CONSUMER_CLIENT_OFFSET,
// one-way) and answer with the same table, as Apache's Broker2Client.resetOffset.
func (a *admin) resetOffset(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	topic, err := req.RequireStr("topic")
	if err != nil {
		return a.p.fail(req, err)
	}
	group, err := req.RequireStr("group")
	if err != nil {
		return a.p.fail(req, err)
	}
	ts, err := req.Int64("timestamp")
	if err != nil {
		return a.p.fail(req, err)
	}
	force := req.Bool("isForce")
	tc, ok := a.p.b.Topics.Get(topic)
	if !ok {
		return remoting.NewResponse(req, remoting.TopicNotExist,
			"[reset-offset] reset offset failed, no topic in this broker. topic="+topic)
	}
	st := a.p.b.Store
	name := a.p.b.Config().BrokerName
	body := append(make([]byte, 0, 256), `{"offsetTable":{`...)
	for q := int32(0); q < tc.WriteQueueNums; q++ {
		consumerOff, ok := a.p.b.Offsets.Query(group, topic, q)
		if !ok {
			return remoting.NewResponse(req, remoting.SystemError, fmt.Sprintf("THe consumer group <%s> not exist", group))
		}
		var off int64
		if ts == -1 {
			off = st.MaxOffset(topic, q)
		} else {
			off = st.OffsetByTime(topic, q, ts)
		}
		off = max(off, 0)
		if !force && off >= consumerOff {
			off = consumerOff
		}
		if q > 0 {
			body = append(body, ',')
		}
		body = appendMQKey(body, name, topic, q)
		body = append(body, ':')
		body = strconv.AppendInt(body, off, 10)
	}
	body = append(body, "}}"...)
	conns := a.p.b.Clients.ConsumerConns(group)
	if len(conns) == 0 {
		return remoting.NewResponse(req, remoting.ConsumerNotOnline, fmt.Sprintf(
			"Consumer not online, so can not reset offset, Group: %s Topic: %s Timestamp: %d", group, topic, ts))
	}
	for _, c := range conns {
		notice := remoting.NewRequest(remoting.ResetConsumerClientOffset, map[string]string{
			"topic": topic, "group": group, "timestamp": strconv.FormatInt(ts, 10), "isForce": strconv.FormatBool(force),
		}, body)
		if err := c.Send(notice); err != nil {
			a.p.log.Warn().Err(err).Str("consumerGroup", group).Str("remote", c.Remote).Msg("reset offset notice")
		}
	}
	a.p.log.Info().Str("topic", topic).Str("consumerGroup", group).Int64("timestamp", ts).Msg("consumer offsets reset")
	return okBody(req, body)
}

// viewMessage is VIEW_MESSAGE_BY_ID: the stored record at the commit-log
// offset taken from an offset message id.
func (a *admin) viewMessage(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	off, err := req.Int64("offset")
	if err != nil {
		return a.p.fail(req, err)
	}
	rec, err := a.p.b.Store.MessageAt(off)
	if err != nil {
		return remoting.NewResponse(req, remoting.SystemError, "can not find message by the offset, "+strconv.FormatInt(off, 10))
	}
	return okBody(req, rec)
}
