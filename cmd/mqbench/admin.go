package main

// Control-plane requests (not measured): route lookup, topic creation, queue
// max offsets. They go through remoting.Client and the full codec.

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/remoting"
)

// target is one queue of one broker.
type target struct {
	addr       string
	brokerName string
	queueID    int32
}

type routeData struct {
	BrokerDatas []struct {
		BrokerName  string            `json:"brokerName"`
		BrokerAddrs map[string]string `json:"brokerAddrs"`
	} `json:"brokerDatas"`
	QueueDatas []struct {
		BrokerName     string `json:"brokerName"`
		ReadQueueNums  int32  `json:"readQueueNums"`
		WriteQueueNums int32  `json:"writeQueueNums"`
		Perm           int32  `json:"perm"`
	} `json:"queueDatas"`
}

type admin struct {
	cl      *remoting.Client
	timeout time.Duration
}

func newAdmin() *admin {
	return &admin{cl: remoting.NewClient(zerolog.Nop()), timeout: 5 * time.Second}
}

func (a *admin) close() { _ = a.cl.Close() }

func (a *admin) invoke(addr string, code int32, ext map[string]string) (*remoting.Command, error) {
	ctx, cancel := context.WithTimeout(context.Background(), a.timeout)
	defer cancel()
	return a.cl.Invoke(ctx, addr, remoting.NewRequest(code, ext, nil))
}

// firstAddr takes the first of Apache's "a;b" name-server list.
func firstAddr(list string) string {
	if i := strings.IndexByte(list, ';'); i >= 0 {
		return list[:i]
	}
	return list
}

// route asks the name server for topic's route (GET_ROUTEINFO_BY_TOPIC 105).
func (a *admin) route(ns, topic string) (*routeData, error) {
	resp, err := a.invoke(firstAddr(ns), remoting.GetRouteInfoByTopic, map[string]string{"topic": topic})
	if err != nil {
		return nil, err
	}
	if resp.Code != remoting.Success {
		return nil, fmt.Errorf("route of %s: code %d %s", topic, resp.Code, resp.Remark)
	}
	var rd routeData
	if err := json.Unmarshal(resp.Body, &rd); err != nil {
		return nil, fmt.Errorf("route of %s: %w (%.200s)", topic, err, resp.Body)
	}
	return &rd, nil
}

// targets lists the master queues of a route: write queues for producers,
// read queues for consumers.
func (rd *routeData) targets(write bool) []target {
	masters := map[string]string{}
	for _, bd := range rd.BrokerDatas {
		if addr := bd.BrokerAddrs["0"]; addr != "" {
			masters[bd.BrokerName] = addr
		}
	}
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

// brokers lists master address → broker name of a route.
func (rd *routeData) brokers() map[string]string {
	out := map[string]string{}
	for _, bd := range rd.BrokerDatas {
		if addr := bd.BrokerAddrs["0"]; addr != "" {
			out[addr] = bd.BrokerName
		}
	}
	return out
}

// createTopic sends UPDATE_AND_CREATE_TOPIC (17) to a broker.
func (a *admin) createTopic(broker, topic string, queues int) error {
	q := strconv.Itoa(queues)
	resp, err := a.invoke(broker, remoting.UpdateAndCreateTopic, map[string]string{
		"topic": topic, "defaultTopic": "TBW102", "readQueueNums": q, "writeQueueNums": q,
		"perm": "6", "topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false",
	})
	if err != nil {
		return err
	}
	if resp.Code != remoting.Success {
		return fmt.Errorf("create topic %s on %s: code %d %s", topic, broker, resp.Code, resp.Remark)
	}
	return nil
}

// maxOffset asks a broker for a queue's max offset (GET_MAX_OFFSET 30).
func (a *admin) maxOffset(t target, topic string) (int64, error) {
	resp, err := a.invoke(t.addr, remoting.GetMaxOffset, map[string]string{
		"topic": topic, "queueId": strconv.Itoa(int(t.queueID))})
	if err != nil {
		return 0, err
	}
	if resp.Code != remoting.Success {
		return 0, fmt.Errorf("max offset %s/%d: code %d %s", topic, t.queueID, resp.Code, resp.Remark)
	}
	return resp.Int64("offset")
}

// resolve returns the queues to use. With --create-topic the topic is created
// on every broker (--broker, or the masters routed for TBW102) and those
// queues are used directly; otherwise the topic's route is looked up, or
// with --broker alone the first --queues queues of that broker are used.
func resolve(a *admin, o *options, write bool) ([]target, error) {
	brokers := map[string]string{}
	if o.broker != "" {
		brokers[o.broker] = o.brokerName
	}
	if o.createTopic {
		if len(brokers) == 0 {
			if o.namesrv == "" {
				return nil, fmt.Errorf("-create-topic needs -n or -broker")
			}
			rd, err := a.route(o.namesrv, "TBW102")
			if err != nil {
				return nil, fmt.Errorf("find brokers to create %s on: %w", o.topic, err)
			}
			brokers = rd.brokers()
		}
		var out []target
		for addr, name := range brokers {
			if err := a.createTopic(addr, o.topic, o.queues); err != nil {
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
	rd, err := a.route(o.namesrv, o.topic)
	if err != nil {
		return nil, err
	}
	ts := rd.targets(write)
	if len(ts) == 0 {
		return nil, fmt.Errorf("route of %s has no usable queues", o.topic)
	}
	return ts, nil
}
