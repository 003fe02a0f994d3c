package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/internal/adminclient"
	"github.com/rocketgo/rocketgo/remoting"
)

func resetOffsetByTime(a *admin, o *options, args []string) error {
	group := o.Req("g", "group", "set the consumer group")
	topic := o.Req("t", "topic", "set the topic")
	stamp := o.Req("s", "timestamp", "set the timestamp[now|currentTimeMillis|yyyy-MM-dd#HH:mm:ss:SSS]")
	force := o.String("f", "force", "set the force rollback by timestamp switch[true|false]. Deprecated.")
	o.Bool("c", "cplus", "reset c++ client offset. Deprecated.")
	broker := o.String("b", "broker", "broker addr")
	queue := o.Int32("q", "queue", -1, "queue id")
	offset := o.String("o", "offset", "Expect queue offset, not support old version broker")
	o.String("c", "cluster", "Cluster name or lmq parent topic, lmq is used to find the route.")
	if err := a.parse(o, args); err != nil {
		return err
	}
	g, t, s := strings.TrimSpace(*group), strings.TrimSpace(*topic), strings.TrimSpace(*stamp)
	if g == "" || t == "" || s == "" {
		return errors.New("-g group, -t topic and -s timestamp are required")
	}
	ms, err := parseResetTime(s, time.Now())
	if err != nil {
		return err
	}
	if *broker != "" && *queue >= 0 {
		return a.resetQueueOffset(*broker, g, t, int(*queue), s, ms, *offset)
	}
	isForce := true
	if o.Given("f") {
		isForce = javaBool(*force)
	}
	r, err := a.Route(t)
	if err != nil {
		return err
	}
	all, notOnline, err := a.resetByBrokers(r, g, t, ms, isForce)
	if err != nil {
		return err
	}
	if notOnline { // Apache falls back to its old command: offsets rewritten by the tool
		return a.resetOffsetOld(r, g, t, ms, isForce, s)
	}
	fmt.Fprintf(a.out, "start reset consumer offset by specified, group[%s], topic[%s], force[%t], timestamp(string)[%s], timestamp(long)[%d]\n",
		g, t, isForce, s, ms)
	fmt.Fprintf(a.out, "%-40s  %-40s  %-40s\n", "#brokerName", "#queueId", "#offset")
	for _, q := range all { // Apache: a HashMap's order
		fmt.Fprintf(a.out, "%-40s  %-40d  %-40d\n", atMost(q.BrokerName, 32), q.QueueID, q.Offset)
	}
	return nil
}

// resetQueueOffset is resetOffsetByTime -b -q: one queue of one broker
// (its name unknown to the tool: Apache leaves it out) moved to -o, or to
// the offset found for ms; the group's committed offset is written, then
// the broker told (and its consumers with it).
func (a *admin) resetQueueOffset(addr, group, topic string, queue int, stamp string, ms int64, offset string) error {
	fmt.Fprintf(a.out, "start reset consumer offset by specified, group[%s], topic[%s], queueId[%d], broker[%s], timestamp(string)[%s], timestamp(long)[%d]\n",
		group, topic, queue, addr, stamp, ms)
	mq := adminclient.MessageQueue{Topic: topic, QueueID: queue}
	var target int64
	var err error
	if offset != "" {
		if target, err = strconv.ParseInt(strings.TrimSpace(offset), 10, 64); err != nil {
			return fmt.Errorf("-o %q: not a number", offset)
		}
	} else if target, err = a.SearchOffset(strings.TrimSpace(addr), mq, ms); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "reset consumer offset to %d\n", target)
	if target <= 0 { // Apache resets only to a positive offset
		return nil
	}
	addr = strings.TrimSpace(addr)
	if err := a.UpdateConsumerOffset(addr, group, mq, target); err != nil {
		return err
	}
	_, err = a.ResetOffset(addr, topic, group, 0, false, queue, target)
	return err
}

// rollback is one queue's line of a reset the tool makes itself
// (RollbackStats).
type rollback struct {
	mq                                    adminclient.MessageQueue
	broker, consumer, timestamp, rollback int64
}

// resetOffsetOld is ResetOffsetByTimeOldCommand: rollbackOld, printed.
func (a *admin) resetOffsetOld(r *adminclient.Route, group, topic string, ms int64, force bool, stamp string) error {
	rows, err := a.rollbackOld(r, group, topic, ms, force)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out, "reset consumer offset by specified consumerGroup[%s], topic[%s], force[%t], timestamp(string)[%s], timestamp(long)[%d]\n",
		group, topic, force, stamp, ms)
	a.printRollback(rows, "#resetOffset")
	return nil
}

func (a *admin) printRollback(rows []rollback, last string) {
	fmt.Fprintf(a.out, "%-20s  %-20s  %-20s  %-20s  %-20s  %-20s\n", "#brokerName", "#queueId", "#brokerOffset", "#consumerOffset", "#timestampOffset", last)
	for _, r := range rows {
		fmt.Fprintf(a.out, "%-20s  %-20d  %-20d  %-20d  %-20d  %-20d\n", atMost(r.mq.BrokerName, 32), r.mq.QueueID, r.broker, r.consumer, r.timestamp, r.rollback)
	}
}

// rollbackOld is resetOffsetByTimestampOld: for each broker, the group's
// queues of topic (or, never consumed, all the topic's read queues from
// their min offset) moved to the offset found for ms (-1: the max) —
// unless not forced and that is ahead of the consumer.
func (a *admin) rollbackOld(r *adminclient.Route, group, topic string, ms int64, force bool) ([]rollback, error) {
	readQueues := map[string]int32{}
	for _, q := range r.QueueDatas {
		readQueues[q.BrokerName] = q.ReadQueueNums
	}
	var rows []rollback
	for _, bd := range r.BrokerDatas {
		addr := bd.SelectAddr()
		if addr == "" {
			continue
		}
		cs, err := a.ConsumeStats(addr, group, "")
		if err != nil {
			return nil, err
		}
		var queues []adminclient.OffsetWrapper
		for _, q := range cs.Queues {
			if q.Topic == topic {
				queues = append(queues, q)
			}
		}
		if len(queues) == 0 {
			st, err := a.TopicStats(addr, topic)
			if err != nil {
				return nil, err
			}
			byQueue := map[int]adminclient.TopicOffset{}
			for _, o := range st {
				byQueue[o.QueueID] = o
			}
			for i := 0; i < int(readQueues[bd.BrokerName]); i++ {
				o, ok := byQueue[i]
				if !ok {
					return nil, fmt.Errorf("%s: no stats for queue %d of %s", addr, i, topic)
				}
				queues = append(queues, adminclient.OffsetWrapper{MessageQueue: adminclient.MessageQueue{Topic: topic, BrokerName: bd.BrokerName, QueueID: i},
					BrokerOffset: o.MaxOffset, ConsumerOffset: o.MinOffset})
			}
		}
		for _, q := range queues {
			var target int64
			if ms == -1 {
				target, err = a.MaxOffset(addr, q.Topic, q.QueueID)
			} else {
				target, err = a.SearchOffset(addr, q.MessageQueue, ms)
			}
			if err != nil {
				return nil, err
			}
			row := rollback{mq: q.MessageQueue, broker: q.BrokerOffset, consumer: q.ConsumerOffset, timestamp: target, rollback: q.ConsumerOffset}
			if force || target <= q.ConsumerOffset {
				row.rollback = target
				if err := a.UpdateConsumerOffset(addr, group, q.MessageQueue, target); err != nil {
					return nil, err
				}
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// resetByBrokers asks each broker of the route to reset the group's
// offsets of topic to ms (INVOKE_BROKER_TO_RESET_OFFSET); notOnline when a
// broker answers that the group has no consumer online.
func (a *admin) resetByBrokers(r *adminclient.Route, group, topic string, ms int64, force bool) (all []adminclient.QueueOffset, notOnline bool, err error) {
	for _, bd := range r.BrokerDatas {
		addr := bd.SelectAddr()
		if addr == "" {
			continue
		}
		qs, err := a.ResetOffset(addr, topic, group, ms, force, -1, -1)
		var ce *adminclient.CodeError
		if errors.As(err, &ce) && ce.Code == remoting.ConsumerNotOnline {
			return nil, true, nil
		}
		if err != nil {
			return nil, false, err
		}
		all = append(all, qs...)
	}
	return all, false, nil
}

func skipAccumulatedMessage(a *admin, o *options, args []string) error {
	group := o.Req("g", "group", "set the consumer group")
	topic := o.Req("t", "topic", "set the topic")
	force := o.String("f", "force", "set the force rollback by timestamp switch[true|false]")
	o.String("c", "cluster", "Cluster name or lmq parent topic, lmq is used to find the route.")
	if err := a.parse(o, args); err != nil {
		return err
	}
	g, t := strings.TrimSpace(*group), strings.TrimSpace(*topic)
	isForce := true
	if o.Given("f") {
		isForce = javaBool(*force)
	}
	r, err := a.Route(t)
	if err != nil {
		return err
	}
	all, notOnline, err := a.resetByBrokers(r, g, t, -1, isForce)
	if err != nil {
		return err
	}
	if notOnline {
		rows, err := a.rollbackOld(r, g, t, -1, isForce)
		if err != nil {
			return err
		}
		a.printRollback(rows, "#rollbackOffset")
		return nil
	}
	fmt.Fprintf(a.out, "%-40s  %-40s  %-40s\n", "#brokerName", "#queueId", "#offset")
	for _, q := range all { // Apache: a HashMap's order
		fmt.Fprintf(a.out, "%-40s  %-40d  %-40d\n", atMost(q.BrokerName, 32), q.QueueID, q.Offset)
	}
	return nil
}

// cloneGroupOffset writes the source group's committed offsets, queue by
// queue (of every topic it consumes), as the destination group's, on the
// brokers of the topic's route.
func cloneGroupOffset(a *admin, o *options, args []string) error {
	src := o.Req("s", "srcGroup", "set source consumer group")
	dst := o.Req("d", "destGroup", "set destination consumer group")
	topic := o.Req("t", "topic", "set the topic")
	o.String("o", "offline", "the group or the topic is offline")
	if err := a.parse(o, args); err != nil {
		return err
	}
	s, d, t := strings.TrimSpace(*src), strings.TrimSpace(*dst), strings.TrimSpace(*topic)
	cs, err := a.GroupConsumeStats(s, "")
	if err != nil {
		return err
	}
	if len(cs.Queues) > 0 {
		r, err := a.Route(t)
		if err != nil {
			return err
		}
		for _, q := range cs.Queues {
			addr := ""
			for _, bd := range r.BrokerDatas {
				if bd.BrokerName == q.BrokerName {
					addr = bd.SelectAddr()
					break
				}
			}
			if addr == "" {
				return fmt.Errorf("broker %s of %s is not in the route of %s", q.BrokerName, q.Topic, t)
			}
			if q.ConsumerOffset >= 0 {
				if err := a.UpdateConsumerOffset(addr, d, q.MessageQueue, q.ConsumerOffset); err != nil {
					return err
				}
			}
		}
	}
	fmt.Fprintf(a.out, "clone group offset success. srcGroup[%s], destGroup=[%s], topic[%s]", s, d, t)
	return nil
}

// parseResetTime reads -s as Apache: "now", epoch milliseconds, or local
// time "yyyy-MM-dd#HH:mm:ss:SSS".
func parseResetTime(s string, now time.Time) (int64, error) {
	if s == "now" {
		return now.UnixMilli(), nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ms, nil
	}
	bad := fmt.Errorf("-s %q: not now, milliseconds or yyyy-MM-dd#HH:mm:ss:SSS", s)
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return 0, bad
	}
	t, err := time.ParseInLocation("2006-01-02#15:04:05", s[:i], time.Local)
	millis, err2 := strconv.Atoi(s[i+1:])
	if err != nil || err2 != nil || len(s)-i-1 != 3 {
		return 0, bad
	}
	return t.UnixMilli() + int64(millis), nil
}
