package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rocketgo/rocketgo/internal/adminclient"
	"github.com/rocketgo/rocketgo/remoting"
)

// storedGroup is a SubscriptionGroupConfig as a broker answers it.
type storedGroup struct {
	subGroup
	SubscriptionDataSet []struct {
		Topic      string `json:"topic"`
		ExpType    string `json:"expressionType"`
		Expression string `json:"expression"`
		Version    int64  `json:"version"`
	} `json:"subscriptionDataSet"`
}

// getConsumerConfig prints the group's SubscriptionGroupConfig on each
// broker group that has it, field by field in the class's declaration
// order, broker groups sorted by name (Apache: the HashMap's order).
func getConsumerConfig(a *admin, o *options, args []string) error {
	group := o.Req("g", "groupName", "subscription group name")
	if err := a.parse(o, args); err != nil {
		return err
	}
	g := strings.TrimSpace(*group)
	ci, err := a.ClusterInfo()
	if err != nil {
		return err
	}
	names := slices.Sorted(maps.Keys(ci.BrokerAddrTable))
	for _, n := range names {
		bd := ci.BrokerAddrTable[n]
		addr := bd.SelectAddr()
		resp, err := a.Call(addr, remoting.GetAllSubscriptionGroupConfig, nil, nil)
		if err != nil {
			return err
		}
		var w struct {
			Table map[string]storedGroup `json:"subscriptionGroupTable"`
		}
		if err := json.Unmarshal(remoting.QuoteIntKeys(resp.Body), &w); err != nil {
			return fmt.Errorf("%s: subscription groups: %w", addr, err)
		}
		sg, ok := w.Table[g]
		if !ok {
			continue
		}
		cluster, found := clusterOfBroker(ci, n)
		if !found {
			cluster = "null"
		}
		fmt.Fprintf(a.out, "=============================%s:%s=============================\n", cluster, n)
		sets := ""
		if sg.SubscriptionDataSet != nil {
			parts := make([]string, len(sg.SubscriptionDataSet))
			for i, s := range sg.SubscriptionDataSet {
				parts[i] = fmt.Sprintf("SimpleSubscriptionData{topic=%s, expressionType=%s, expression=%s, version=%d}", s.Topic, s.ExpType, s.Expression, s.Version)
			}
			sets = "[" + strings.Join(parts, ", ") + "]"
		}
		attrs := ""
		if sg.Attributes != nil {
			attrs = attrsString(sg.Attributes)
		}
		for _, f := range []struct{ name, value string }{
			{"groupName", sg.GroupName},
			{"consumeEnable", fmt.Sprint(sg.ConsumeEnable)},
			{"consumeFromMinEnable", fmt.Sprint(sg.ConsumeFromMinEnable)},
			{"consumeBroadcastEnable", fmt.Sprint(sg.ConsumeBroadcastEnable)},
			{"consumeMessageOrderly", fmt.Sprint(sg.ConsumeMessageOrderly)},
			{"retryQueueNums", fmt.Sprint(sg.RetryQueueNums)},
			{"retryMaxTimes", fmt.Sprint(sg.RetryMaxTimes)},
			{"groupRetryPolicy", sg.GroupRetryPolicy.String()},
			{"brokerId", fmt.Sprint(sg.BrokerID)},
			{"whichBrokerWhenConsumeSlowly", fmt.Sprint(sg.WhichBrokerWhenConsumeSlowly)},
			{"notifyConsumerIdsChangedEnable", fmt.Sprint(sg.NotifyConsumerIdsChangedEnable)},
			{"groupSysFlag", fmt.Sprint(sg.GroupSysFlag)},
			{"consumeTimeoutMinute", fmt.Sprint(sg.ConsumeTimeoutMinute)},
			{"subscriptionDataSet", sets},
			{"attributes", attrs},
		} {
			fmt.Fprintf(a.out, "%-40s=  %s\n", f.name, f.value)
		}
	}
	return nil
}

func cleanExpiredCQ(a *admin, o *options, args []string) error {
	return cleanOnBrokers(a, o, args, remoting.CleanExpiredConsumeQueue, "clustername")
}

func cleanUnusedTopic(a *admin, o *options, args []string) error {
	return cleanOnBrokers(a, o, args, remoting.CleanUnusedTopic, "cluster name")
}

// cleanOnBrokers sends code to the broker of -b, or to every broker (slaves
// too) of -c's cluster or of every cluster, and prints "success" when the
// last one answered SUCCESS, else "false" (without a newline, as Apache).
func cleanOnBrokers(a *admin, o *options, args []string, code int32, clusterDesc string) error {
	broker := o.String("b", "brokerAddr", "Broker address")
	cluster := o.String("c", "cluster", clusterDesc)
	if err := a.parse(o, args); err != nil {
		return err
	}
	var addrs []string
	if o.Given("b") {
		addrs = []string{strings.TrimSpace(*broker)}
	} else {
		ci, err := a.ClusterInfo()
		if err != nil {
			return err
		}
		clusters := []string{strings.TrimSpace(*cluster)}
		if clusters[0] == "" {
			clusters = clusters[:0]
			for c := range ci.ClusterAddrTable {
				clusters = append(clusters, c)
			}
			sort.Strings(clusters)
		}
		for _, c := range clusters {
			addrs = append(addrs, clusterAddrs(ci, c)...)
		}
	}
	ok := false
	for _, addr := range addrs {
		if _, err := a.Call(addr, code, nil, nil); err != nil {
			if o.Given("b") {
				return err
			}
			// Apache: a refusal ends the walk and prints false
			fmt.Fprintf(a.errOut, "%v\n", err)
			ok = false
			break
		}
		ok = true
	}
	if ok {
		fmt.Fprint(a.out, "success")
	} else {
		fmt.Fprint(a.out, "false")
	}
	return nil
}

// clusterAddrs is ClusterInfo.retrieveAllAddrByCluster: every address of
// the cluster's brokers, masters and slaves, sorted.
func clusterAddrs(ci *adminclient.ClusterInfo, cluster string) []string {
	var out []string
	for _, n := range ci.ClusterAddrTable[cluster] {
		for _, addr := range ci.BrokerAddrTable[n].BrokerAddrs {
			out = append(out, addr)
		}
	}
	sort.Strings(out)
	return out
}

func deleteExpiredCommitLog(a *admin, o *options, args []string) error {
	o.String("n", "namesrvAddr", "Name server address") // Apache's command redeclares it
	return cleanOnBrokers(a, o, args, remoting.DeleteExpiredCommitLog, "clustername")
}

// resetMasterFlushOffset tells the slave of -b the master flush offset to
// truncate to (RESET_MASTER_FLUSH_OFFSET; a controller sends it too). Both
// options are needed, though Apache's tool declares neither required.
func resetMasterFlushOffset(a *admin, o *options, args []string) error {
	broker := o.String("b", "brokerAddr", "which broker to reset")
	offset := o.String("o", "offset", "the offset to reset at")
	if err := a.parse(o, args); err != nil {
		return err
	}
	if !o.Given("b") || !o.Given("o") {
		return errors.New("-b broker address and -o offset are required")
	}
	off, err := strconv.ParseInt(strings.TrimSpace(*offset), 10, 64)
	if err != nil {
		return fmt.Errorf("-o: %q is not a 64-bit integer", *offset)
	}
	if _, err := a.Call(strings.TrimSpace(*broker), remoting.ResetMasterFlushOffset,
		map[string]string{"masterFlushOffset": strconv.FormatInt(off, 10)}, nil); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "reset master flush offset to %d success\n", off)
	return nil
}
