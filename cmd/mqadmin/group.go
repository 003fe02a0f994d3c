package main

import (
	"errors"
	"flag"
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

func updateSubGroup(a *admin, fs *flag.FlagSet, args []string) error {
	broker := fs.String("b", "", "create subscription group to which broker")
	cluster := fs.String("c", "", "create subscription group to which cluster")
	group := fs.String("g", "", "consumer group name")
	consume := fs.String("s", "", "consume enable")
	fromMin := fs.String("m", "", "from min offset")
	broadcast := fs.String("d", "", "broadcast")
	orderly := fs.String("o", "", "consume message orderly")
	retryQueues := fs.String("q", "", "retry queue nums")
	retryMax := fs.String("r", "", "retry max times")
	policy := fs.String("p", "", "the json string of retry policy")
	brokerID := fs.String("i", "", "consumer from which broker id")
	slowly := fs.String("w", "", "which broker id when consume slowly")
	notify := fs.String("a", "", "notify consumerId changed")
	attrs := fs.String("attributes", "", "attribute(+a=b,+c=d,-e)")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	g := &subGroup{GroupName: strings.TrimSpace(*group), ConsumeEnable: true, RetryQueueNums: 1, RetryMaxTimes: 16,
		GroupRetryPolicy: retryPolicy{Type: "CUSTOMIZED"}, WhichBrokerWhenConsumeSlowly: 1,
		NotifyConsumerIdsChangedEnable: true, ConsumeTimeoutMinute: 15, Attributes: map[string]string{}}
	if g.GroupName == "" {
		return errors.New("-g consumer group is required")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	boolOpt := func(name, v string, dst *bool) {
		if set[name] {
			*dst = javaBool(v)
		}
	}
	boolOpt("s", *consume, &g.ConsumeEnable)
	boolOpt("m", *fromMin, &g.ConsumeFromMinEnable)
	boolOpt("d", *broadcast, &g.ConsumeBroadcastEnable)
	boolOpt("o", *orderly, &g.ConsumeMessageOrderly)
	boolOpt("a", *notify, &g.NotifyConsumerIdsChangedEnable)
	intOpt := func(name, v string, bits int) int64 {
		if !set[name] || err != nil {
			return 0
		}
		n, e := strconv.ParseInt(strings.TrimSpace(v), 10, bits)
		if e != nil {
			err = fmt.Errorf("-%s %q: not a number", name, v)
		}
		return n
	}
	if set["q"] {
		g.RetryQueueNums = int32(intOpt("q", *retryQueues, 32))
	}
	if set["r"] {
		g.RetryMaxTimes = int32(intOpt("r", *retryMax, 32))
	}
	if set["i"] {
		g.BrokerID = intOpt("i", *brokerID, 64)
	}
	if set["w"] {
		g.WhichBrokerWhenConsumeSlowly = intOpt("w", *slowly, 64)
	}
	if err != nil {
		return err
	}
	if set["p"] {
		if err := json.Unmarshal([]byte(strings.TrimSpace(*policy)), &g.GroupRetryPolicy); err != nil {
			return fmt.Errorf("-p retry policy: %w", err)
		}
	}
	if set["attributes"] {
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
		fs.Usage()
		return nil
	}
	fmt.Fprintf(a.out, "%s", g)
	return nil
}

func deleteSubGroup(a *admin, fs *flag.FlagSet, args []string) error {
	broker := fs.String("b", "", "delete subscription group from which broker")
	cluster := fs.String("c", "", "delete subscription group from which cluster")
	group := fs.String("g", "", "subscription group name")
	clean := fs.String("r", "", "remove offset")
	if err := a.parse(fs, args); err != nil {
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
		fs.Usage()
	}
	return nil
}
