package main

// Control-plane requests (not measured): route lookup, topic creation, queue
// max offsets, through internal/adminclient.

import (
	"fmt"
	"sort"

	"github.com/rocketgo/rocketgo/internal/adminclient"
)

// target is one queue of one broker.
type target struct {
	addr       string
	brokerName string
	queueID    int32
}

// newAdmin returns the control-plane client for o's name servers.
func newAdmin(o *options) *adminclient.Client {
	return adminclient.New(adminclient.ParseNameServers(o.namesrv))
}

// routeTargets lists the master queues of a route: write queues for
// producers, read queues for consumers.
func routeTargets(rd *adminclient.Route, write bool) []target {
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
			out = append(out, target{addr: addr, brokerName: qd.BrokerName, queueID: q})
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
func resolve(a *adminclient.Client, o *options, write bool) ([]target, error) {
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
				return nil, fmt.Errorf("find brokers to create %s on: %w", o.topic, err)
			}
			for name, addr := range rd.Masters() {
				brokers[addr] = name
			}
		}
		var out []target
		for addr, name := range brokers {
			if err := a.CreateTopic(addr, adminclient.TopicConfig{Name: o.topic, Read: o.queues, Write: o.queues, Perm: 6}); err != nil {
				return nil, err
			}
			for q := 0; q < o.queues; q++ {
				out = append(out, target{addr: addr, brokerName: name, queueID: int32(q)})
			}
		}
		return out, nil
	}
	if o.broker != "" {
		var out []target
		for q := 0; q < o.queues; q++ {
			out = append(out, target{addr: o.broker, brokerName: o.brokerName, queueID: int32(q)})
		}
		return out, nil
	}
	if o.namesrv == "" {
		return nil, fmt.Errorf("need -n (name server) or -broker")
	}
	rd, err := a.Route(o.topic)
	if err != nil {
		return nil, err
	}
	ts := routeTargets(rd, write)
	if len(ts) == 0 {
		return nil, fmt.Errorf("route of %s has no usable queues", o.topic)
	}
	return ts, nil
}
