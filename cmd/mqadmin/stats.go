package main

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// brokerConsumeStats prints every group's queues on one broker whose lag
// is at least -l, from GET_BROKER_CONSUME_STATS, groups in the broker's
// order, queues sorted, and the broker's total lag.
func brokerConsumeStats(a *admin, o *options, args []string) error {
	broker := o.Req("b", "brokerAddr", "Broker address")
	timeout := o.Int64("t", "timeoutMillis", 50000, "request timeout Millis")
	level := o.Int64("l", "level", 0, "threshold of print diff")
	order := o.String("o", "order", "order topic")
	if err := a.parse(o, args); err != nil {
		return err
	}
	if o.Given("t") {
		a.Timeout = clampTimeout(*timeout)
	}
	l, err := a.BrokerConsumeStats(strings.TrimSpace(*broker), javaBool(*order), *timeout)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out, "%-64s  %-64s  %-32s  %-4s  %-20s  %-20s  %-20s  %s\n",
		"#Topic", "#Group", "#Broker Name", "#QID", "#Broker Offset", "#Consumer Offset", "#Diff", "#LastTime")
	for _, g := range l.Groups {
		for _, cs := range g.Stats {
			for _, q := range cs.Queues {
				diff := q.BrokerOffset - q.ConsumerOffset
				if diff < *level || q.LastTimestamp <= 0 {
					continue
				}
				fmt.Fprintf(a.out, "%-64s  %-64s  %-32s  %-4d  %-20d  %-20d  %-20d  %s\n",
					frontAtLeast(q.Topic, 64), g.Group, frontAtLeast(q.BrokerName, 32), q.QueueID,
					q.BrokerOffset, q.ConsumerOffset, diff, javaDate(q.LastTimestamp))
			}
		}
	}
	fmt.Fprintf(a.out, "\nDiff Total: %d\n", l.TotalDiff)
	return nil
}

// clampTimeout bounds a timeout given in milliseconds to 1 ms .. 10 min.
func clampTimeout(ms int64) time.Duration {
	switch {
	case ms < 1:
		ms = 1
	case ms > 600000:
		ms = 600000
	}
	return time.Duration(ms) * time.Millisecond
}

// statsAll prints, per topic (retry and DLQ topics left out) and group
// consuming it, the group's lag, the topic's in and the group's out rate
// over the last minute and their counts over the last day, from the
// masters' VIEW_BROKER_STATS_DATA; topics and groups sorted (Apache: the
// name server's and broker's HashSet orders).
func statsAll(a *admin, o *options, args []string) error {
	active := o.Bool("a", "activeTopic", "print active topic only")
	only := o.String("t", "topic", "print select topic only")
	if err := a.parse(o, args); err != nil {
		return err
	}
	topics, err := a.topicNames()
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out, "%-64s  %-64s %12s %11s %11s %14s %14s\n",
		"#Topic", "#Consumer Group", "#Accumulation", "#InTPS", "#OutTPS", "#InMsg24Hour", "#OutMsg24Hour")
	for _, t := range topics {
		if strings.HasPrefix(t, "%RETRY%") || strings.HasPrefix(t, "%DLQ%") || *only != "" && t != *only {
			continue
		}
		_ = a.topicStats(t, *active) // Apache skips a topic it cannot read
	}
	return nil
}

func (a *admin) topicStats(topic string, active bool) error {
	r, err := a.Route(topic)
	if err != nil {
		return err
	}
	var groups []string
	for _, bd := range r.SortedBrokers() {
		if addr := bd.SelectAddr(); addr != "" {
			if groups, err = a.ConsumedBy(addr, topic); err != nil {
				return err
			}
			break
		}
	}
	sort.Strings(groups) // Apache: a HashSet's order
	masters := r.SortedBrokers()
	sum := func(name, key string) (float64, int64) {
		var tps float64
		var n int64
		for _, bd := range masters {
			addr := bd.BrokerAddrs["0"]
			if addr == "" {
				continue
			}
			if d, err := a.BrokerStats(addr, name, key); err == nil { // Apache skips a broker without the stat
				tps += d.Minute.TPS
				n += d.Sum24h()
			}
		}
		return tps, n
	}
	inTPS, in24 := sum("TOPIC_PUT_NUMS", topic)
	if len(groups) == 0 {
		if !active || in24 > 0 {
			fmt.Fprintf(a.out, "%-64s  %-64s %12d %11.2f %11s %14d %14s\n", frontAtLeast(topic, 64), "", 0, inTPS, "", in24, "NO_CONSUMER")
		}
		return nil
	}
	for _, g := range groups {
		outTPS, out24 := sum("GROUP_GET_NUMS", topic+"@"+g)
		var lag int64
		if cs, err := a.GroupConsumeStats(g, topic); err == nil {
			lag = max(cs.DiffTotal(), 0)
		}
		if !active || in24 > 0 || out24 > 0 {
			fmt.Fprintf(a.out, "%-64s  %-64s %12d %11.2f %11.2f %14d %14d\n",
				frontAtLeast(topic, 64), frontAtLeast(g, 64), lag, inTPS, outTPS, in24, out24)
		}
	}
	return nil
}

// javaDate is UtilAll.formatDate(new Date(ms), "yyyy-MM-dd HH:mm:ss").
func javaDate(ms int64) string { return time.UnixMilli(ms).Format("2006-01-02 15:04:05") }
