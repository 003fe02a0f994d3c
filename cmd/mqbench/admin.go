package main

// Control-plane requests (not measured): route lookup, topic creation, queue
// max offsets, through internal/adminclient.

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/rocketgo/rocketgo/internal/adminclient"
)

// target is one queue of one topic on one broker.
type target struct {
	addr       string
	brokerName string
	topic      string
	queueID    int32
	group      string // consume: the pulling group; "" = -g
}

// newAdmin returns the control-plane client for o's name servers.
func newAdmin(o *options) *adminclient.Client {
	return adminclient.New(adminclient.ParseNameServers(o.namesrv))
}

// routeTargets lists the master queues of a route: write queues for
// producers, read queues for consumers.
func routeTargets(rd *adminclient.Route, topic string, write bool) []target {
	masters := rd.Masters()
	var out []target
	for _, qd := range rd.QueueDatas {
		addr := masters[qd.BrokerName]
		n, perm := qd.ReadQueueNums, int32(4)
		if write {
			n, perm = qd.WriteQueueNums, 2
		}
		if addr == "" || qd.Perm&perm == 0 {
			continue
		}
		for q := int32(0); q < n; q++ {
			out = append(out, target{addr: addr, brokerName: qd.BrokerName, topic: topic, queueID: q})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].brokerName != out[j].brokerName {
			return out[i].brokerName < out[j].brokerName
		}
		return out[i].queueID < out[j].queueID
	})
	return out
}

// maxOffset asks t's broker for its queue's max offset.
func maxOffset(a *adminclient.Client, t target, topic string) (int64, error) {
	return a.MaxOffset(t.addr, topic, int(t.queueID))
}

// resolve returns the queues to use. With --create-topic the topic is created
// on every broker (--broker, or the masters routed for TBW102) and those
// queues are used directly; otherwise the topic's route is looked up, or
// with --broker alone the first --queues queues of that broker are used.
//
// With -topics N > 1 the topics are <-t>_0 .. <-t>_<N-1>: the first is
// resolved as above (and every one created with --create-topic), the others
// are taken to have its brokers and queues. Targets are interleaved, topic
// fastest, so that a connection's consecutive requests go to different
// topics (round robin).
func resolve(a *adminclient.Client, o *options, write bool) ([]target, error) {
	names := topicNames(o.topic, o.topics)
	first, err := resolveTopic(a, o, names[0], write)
	if err != nil || len(names) == 1 {
		return first, err
	}
	if o.createTopic {
		brokers := map[string]bool{}
		for _, t := range first {
			brokers[t.addr] = true
		}
		for _, n := range names[1:] {
			for addr := range brokers {
				if err := a.CreateTopic(addr, adminclient.TopicConfig{Name: n, Read: o.queues, Write: o.queues, Perm: 6}); err != nil {
					return nil, err
				}
			}
		}
	}
	return spreadTopics(first, names), nil
}

// topicNames is [topic] for n <= 1, else topic_0 .. topic_<n-1>.
func topicNames(topic string, n int) []string {
	if n <= 1 {
		return []string{topic}
	}
	out := make([]string, n)
	for i := range out {
		out[i] = topic + "_" + strconv.Itoa(i)
	}
	return out
}

// spreadTopics repeats the queues of the first topic for every topic, the
// topic varying fastest.
func spreadTopics(first []target, names []string) []target {
	out := make([]target, 0, len(first)*len(names))
	for _, t := range first {
		for _, n := range names {
			t.topic = n
			out = append(out, t)
		}
	}
	return out
}

// resolveTopic resolves one topic as resolve describes.
func resolveTopic(a *adminclient.Client, o *options, topic string, write bool) ([]target, error) {
	brokers := map[string]string{}
	if o.broker != "" {
		brokers[o.broker] = o.brokerName
	}
	if o.createTopic {
		if len(brokers) == 0 {
			if o.namesrv == "" {
				return nil, fmt.Errorf("-create-topic needs -n or -broker")
			}
			rd, err := a.Route("TBW102")
			if err != nil {
				return nil, fmt.Errorf("find brokers to create %s on: %w", topic, err)
			}
			for name, addr := range rd.Masters() {
				brokers[addr] = name
			}
		}
		var out []target
		for addr, name := range brokers {
			tc := adminclient.TopicConfig{Name: topic, Read: o.queues, Write: o.queues, Perm: 6}
			if o.lite > 0 {
				tc.Attributes = liteTopicAttrs
			}
			if err := a.CreateTopic(addr, tc); err != nil {
				return nil, err
			}
			for q := 0; q < o.queues; q++ {
				out = append(out, target{addr: addr, brokerName: name, topic: topic, queueID: int32(q)})
			}
		}
		return out, nil
	}
	if o.broker != "" {
		var out []target
		for q := 0; q < o.queues; q++ {
			out = append(out, target{addr: o.broker, brokerName: o.brokerName, topic: topic, queueID: int32(q)})
		}
		return out, nil
	}
	if o.namesrv == "" {
		return nil, fmt.Errorf("need -n (name server) or -broker")
	}
	rd, err := a.Route(topic)
	if err != nil {
		return nil, err
	}
	ts := routeTargets(rd, topic, write)
	if len(ts) == 0 {
		return nil, fmt.Errorf("route of %s has no usable queues", topic)
	}
	return ts, nil
}
