package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rocketgo/rocketgo/remoting"
)

// subGroup is SubscriptionGroupConfig as updateSubGroup sends and prints it.
type subGroup struct {
	GroupName                      string            `json:"groupName"`
	ConsumeEnable                  bool              `json:"consumeEnable"`
	ConsumeFromMinEnable           bool              `json:"consumeFromMinEnable"`
	ConsumeBroadcastEnable         bool              `json:"consumeBroadcastEnable"`
	ConsumeMessageOrderly          bool              `json:"consumeMessageOrderly"`
	RetryQueueNums                 int32             `json:"retryQueueNums"`
	RetryMaxTimes                  int32             `json:"retryMaxTimes"`
	GroupRetryPolicy               retryPolicy       `json:"groupRetryPolicy"`
	BrokerID                       int64             `json:"brokerId"`
	WhichBrokerWhenConsumeSlowly   int64             `json:"whichBrokerWhenConsumeSlowly"`
	NotifyConsumerIdsChangedEnable bool              `json:"notifyConsumerIdsChangedEnable"`
	GroupSysFlag                   int32             `json:"groupSysFlag"`
	ConsumeTimeoutMinute           int32             `json:"consumeTimeoutMinute"`
	Attributes                     map[string]string `json:"attributes"`
}

// retryPolicy is GroupRetryPolicy (-p's JSON).
type retryPolicy struct {
	Type        string `json:"type"`
	Exponential *struct {
		Initial    int64 `json:"initial"`
		Max        int64 `json:"max"`
		Multiplier int64 `json:"multiplier"`
	} `json:"exponentialRetryPolicy,omitempty"`
	Customized *struct {
		Next []int64 `json:"next"`
	} `json:"customizedRetryPolicy,omitempty"`
}

// String is Guava's toStringHelper output of SubscriptionGroupConfig.
func (g *subGroup) String() string {
	return fmt.Sprintf("SubscriptionGroupConfig{groupName=%s, consumeEnable=%t, consumeFromMinEnable=%t, consumeBroadcastEnable=%t, "+
		"consumeMessageOrderly=%t, retryQueueNums=%d, retryMaxTimes=%d, groupRetryPolicy=%s, brokerId=%d, whichBrokerWhenConsumeSlowly=%d, "+
		"notifyConsumerIdsChangedEnable=%t, groupSysFlag=%d, consumeTimeoutMinute=%d, subscriptionDataSet=null, attributes=%s}",
		g.GroupName, g.ConsumeEnable, g.ConsumeFromMinEnable, g.ConsumeBroadcastEnable, g.ConsumeMessageOrderly, g.RetryQueueNums,
		g.RetryMaxTimes, g.GroupRetryPolicy, g.BrokerID, g.WhichBrokerWhenConsumeSlowly, g.NotifyConsumerIdsChangedEnable,
		g.GroupSysFlag, g.ConsumeTimeoutMinute, attrsString(g.Attributes))
}

func (p retryPolicy) String() string {
	exp, cust := "null", "null"
	if e := p.Exponential; e != nil {
		exp = fmt.Sprintf("ExponentialRetryPolicy{initial=%d, max=%d, multiplier=%d}", e.Initial, e.Max, e.Multiplier)
	}
	if c := p.Customized; c != nil {
		next := make([]string, len(c.Next))
		for i, n := range c.Next {
			next[i] = strconv.FormatInt(n, 10)
		}
		cust = fmt.Sprintf("CustomizedRetryPolicy{next=[%s]}", strings.Join(next, ", "))
	}
	return fmt.Sprintf("GroupRetryPolicy{type=%s, exponentialRetryPolicy=%s, customizedRetryPolicy=%s}", p.Type, exp, cust)
}

func updateSubGroup(a *admin, o *options, args []string) error {
	broker := o.String("b", "brokerAddr", "create subscription group to which broker")
	cluster := o.String("c", "clusterName", "create subscription group to which cluster")
	group := o.Req("g", "groupName", "consumer group name")
	consume := o.String("s", "consumeEnable", "consume enable")
	fromMin := o.String("m", "consumeFromMinEnable", "from min offset")
	broadcast := o.String("d", "consumeBroadcastEnable", "broadcast")
	orderly := o.String("o", "consumeMessageOrderly", "consume message orderly")
	retryQueues := o.String("q", "retryQueueNums", "retry queue nums")
	retryMax := o.String("r", "retryMaxTimes", "retry max times")
	policy := o.String("p", "groupRetryPolicy", "the json string of retry policy ( exp: "+
		`{"type":"EXPONENTIAL","exponentialRetryPolicy":{"initial":5000,"max":7200000,"multiplier":2}} `+
		`{"type":"CUSTOMIZED","customizedRetryPolicy":{"next":[1000,5000,10000]}} )`)
	brokerID := o.String("i", "brokerId", "consumer from which broker id")
	slowly := o.String("w", "whichBrokerWhenConsumeSlowly", "which broker id when consume slowly")
	notify := o.String("a", "notifyConsumerIdsChanged", "notify consumerId changed")
	attrs := o.String("", "attributes", "attribute(+a=b,+c=d,-e)")
	if err := a.parse(o, args); err != nil {
		return err
	}
	g := &subGroup{GroupName: strings.TrimSpace(*group), ConsumeEnable: true, RetryQueueNums: 1, RetryMaxTimes: 16,
		GroupRetryPolicy: retryPolicy{Type: "CUSTOMIZED"}, WhichBrokerWhenConsumeSlowly: 1,
		NotifyConsumerIdsChangedEnable: true, ConsumeTimeoutMinute: 15, Attributes: map[string]string{}}
	if g.GroupName == "" {
		return errors.New("-g consumer group is required")
	}
	var err error
	boolOpt := func(name, v string, dst *bool) {
		if o.Given(name) {
			*dst = javaBool(v)
		}
	}
	boolOpt("s", *consume, &g.ConsumeEnable)
	boolOpt("m", *fromMin, &g.ConsumeFromMinEnable)
	boolOpt("d", *broadcast, &g.ConsumeBroadcastEnable)
	boolOpt("o", *orderly, &g.ConsumeMessageOrderly)
	boolOpt("a", *notify, &g.NotifyConsumerIdsChangedEnable)
	intOpt := func(name, v string, bits int) int64 {
		if !o.Given(name) || err != nil {
			return 0
		}
		n, e := strconv.ParseInt(strings.TrimSpace(v), 10, bits)
		if e != nil {
			err = fmt.Errorf("-%s %q: not a number", name, v)
		}
		return n
	}
	if o.Given("q") {
		g.RetryQueueNums = int32(intOpt("q", *retryQueues, 32))
	}
	if o.Given("r") {
		g.RetryMaxTimes = int32(intOpt("r", *retryMax, 32))
	}
	if o.Given("i") {
		g.BrokerID = intOpt("i", *brokerID, 64)
	}
	if o.Given("w") {
		g.WhichBrokerWhenConsumeSlowly = intOpt("w", *slowly, 64)
	}
	if err != nil {
		return err
	}
	if o.Given("p") {
		if err := json.Unmarshal([]byte(strings.TrimSpace(*policy)), &g.GroupRetryPolicy); err != nil {
			return fmt.Errorf("-p retry policy: %w", err)
		}
	}
	if o.Given("attributes") {
		if g.Attributes, err = parseAttributes(strings.TrimSpace(*attrs)); err != nil {
			return err
		}
	}
	body, err := json.Marshal(g)
	if err != nil {
		return err
	}
	switch {
	case *broker != "":
		addr := strings.TrimSpace(*broker)
		if _, err := a.Call(addr, remoting.UpdateAndCreateSubscription, nil, body); err != nil {
			return err
		}
		fmt.Fprintf(a.out, "create subscription group to %s success.\n", addr)
	case *cluster != "":
		bs, err := a.clusterBrokers(*cluster)
		if err != nil {
			return err
		}
		for _, addr := range addrsOf(bs, false) {
			if _, err := a.Call(addr, remoting.UpdateAndCreateSubscription, nil, body); err != nil {
				fmt.Fprintf(a.errOut, "%v\n", err) // Apache goes on with the next master
				continue
			}
			fmt.Fprintf(a.out, "create subscription group to %s success.\n", addr)
		}
	default:
		a.usage()
		return nil
	}
	fmt.Fprintf(a.out, "%s", g)
	return nil
}

func deleteSubGroup(a *admin, o *options, args []string) error {
	broker := o.String("b", "brokerAddr", "delete subscription group from which broker")
	cluster := o.String("c", "clusterName", "delete subscription group from which cluster")
	group := o.Req("g", "groupName", "subscription group name")
	clean := o.String("r", "removeOffset", "remove offset")
	if err := a.parse(o, args); err != nil {
		return err
	}
	g := strings.TrimSpace(*group)
	if g == "" {
		return errors.New("-g consumer group is required")
	}
	ext := map[string]string{"groupName": g, "cleanOffset": strconv.FormatBool(javaBool(*clean))}
	switch {
	case *broker != "":
		addr := strings.TrimSpace(*broker)
		if _, err := a.Call(addr, remoting.DeleteSubscriptionGroup, ext, nil); err != nil {
			return err
		}
		fmt.Fprintf(a.out, "delete subscription group [%s] from broker [%s] success.\n", g, addr)
	case *cluster != "":
		c := strings.TrimSpace(*cluster)
		bs, err := a.clusterBrokers(c)
		if err != nil {
			return err
		}
		for _, addr := range addrsOf(bs, false) {
			if _, err := a.Call(addr, remoting.DeleteSubscriptionGroup, ext, nil); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "delete subscription group [%s] from broker [%s] in cluster [%s] success.\n", g, addr, c)
		}
		for _, t := range []string{"%RETRY%" + g, "%DLQ%" + g} {
			if err := a.removeTopic(bs, c, t); err != nil {
				fmt.Fprintf(a.errOut, "%v\n", err) // Apache prints the stack trace
				break
			}
		}
	default:
		a.usage()
	}
	return nil
}

// setConsumeMode sets how the group consumes the topic (PULL or POP, and
// with POP how many consumers share a queue) on the broker of -b or on
// each master of -c's cluster (SET_MESSAGE_REQUEST_MODE).
func setConsumeMode(a *admin, o *options, args []string) error {
	broker := o.String("b", "brokerAddr", "create subscription group to which broker")
	cluster := o.String("c", "clusterName", "create subscription group to which cluster")
	topic := o.Req("t", "topicName", "topic name")
	group := o.Req("g", "groupName", "consumer group name")
	mode := o.Req("m", "mode", "consume mode. PULL/POP")
	share := o.Int32("q", "popShareQueueNum", 0, "num of queue which share in pop mode")
	if err := a.parse(o, args); err != nil {
		return err
	}
	m := strings.TrimSpace(*mode)
	if m != "PULL" && m != "POP" { // MessageRequestMode.valueOf
		return fmt.Errorf("-m %q: no MessageRequestMode (PULL or POP)", m)
	}
	body, err := json.Marshal(struct {
		Topic            string `json:"topic"`
		ConsumerGroup    string `json:"consumerGroup"`
		Mode             string `json:"mode"`
		PopShareQueueNum int32  `json:"popShareQueueNum"`
	}{strings.TrimSpace(*topic), strings.TrimSpace(*group), m, *share})
	if err != nil {
		return err
	}
	done := func() {
		fmt.Fprintf(a.out, "topic[%s] group[%s] consume mode[%s] popShareQueueNum[%d]", strings.TrimSpace(*topic), strings.TrimSpace(*group), m, *share)
	}
	switch {
	case o.Given("b"):
		addr := strings.TrimSpace(*broker)
		if _, err := a.Call(addr, remoting.SetMessageRequestMode, nil, body); err != nil {
			return err
		}
		fmt.Fprintf(a.out, "set consume mode to %s success.\n", addr)
		done()
	case o.Given("c"):
		bs, err := a.clusterBrokers(*cluster)
		if err != nil {
			return err
		}
		for _, addr := range addrsOf(bs, false) {
			if _, err := a.Call(addr, remoting.SetMessageRequestMode, nil, body); err != nil {
				fmt.Fprintf(a.errOut, "%v\n", err) // Apache goes on with the next master
				continue
			}
			fmt.Fprintf(a.out, "set consume mode to %s success.\n", addr)
		}
		done()
	default:
		a.usage()
	}
	return nil
}
