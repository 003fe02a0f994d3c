package main

import (
	"fmt"
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
