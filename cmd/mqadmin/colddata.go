package main

import (
	"fmt"
	"strings"
	"time"

	jsoniter "github.com/json-iterator/go"

	"github.com/rocketgo/rocketgo/remoting"
)

// The cold-data flow control commands (a group's threshold of bytes read
// from disk rather than the page cache) and the commit log's read-ahead
// advice, on the broker of -b or on every broker (slaves too where Apache
// asks them) of -c's cluster.

// eachBroker calls fn with the broker of -b, or with each master of -c's
// cluster and its slaves (CommandUtil.fetchMasterAndSlaveDistinguish), each
// with the banner Apache prints before it; false when neither was given.
func (a *admin) eachBroker(o *options, broker, cluster string, slaves bool, fn func(banner, addr string) error) (bool, error) {
	switch {
	case o.Given("b"):
		addr := strings.TrimSpace(broker)
		return true, fn(fmt.Sprintf("============%s============\n", addr), addr)
	case o.Given("c"):
		bs, err := a.clusterBrokers(cluster)
		if err != nil {
			return true, err
		}
		for _, b := range bs {
			if b.Master == "" {
				continue
			}
			if err := fn(fmt.Sprintf("============Master: %s============\n", b.Master), b.Master); err != nil {
				return true, err
			}
			if !slaves {
				continue
			}
			for _, s := range b.Slaves {
				if err := fn(fmt.Sprintf("============My Master: %s=====Slave: %s============\n", b.Master, s), s); err != nil {
					return true, err
				}
			}
		}
		return true, nil
	}
	return false, nil
}

func getColdDataFlowCtrInfo(a *admin, o *options, args []string) error {
	broker := o.String("b", "brokerAddr", "get from which broker")
	cluster := o.String("c", "clusterName", "get from which cluster")
	if err := a.parse(o, args); err != nil {
		return err
	}
	_, err := a.eachBroker(o, *broker, *cluster, true, func(banner, addr string) error {
		fmt.Fprint(a.out, " "+banner)
		resp, err := a.Call(addr, remoting.GetColdDataFlowCtrInfo, nil, nil)
		if err != nil {
			return err
		}
		if len(resp.Body) == 0 {
			fmt.Fprintf(a.out, "Broker[%s] has no cold ctr table !\n", addr)
			return nil
		}
		info, err := coldCtrJSON(resp.Body)
		if err != nil {
			return fmt.Errorf("%s: cold data flow control info: %w", addr, err)
		}
		var b strings.Builder
		info.write(&b, 0)
		fmt.Fprintf(a.out, "%s\n", b.String())
		return nil
	})
	return err
}

// coldCtrJSON is the broker's cold-data table as Apache's tool prints it:
// parsed into fastjson2 JSONObjects (insertion-ordered), each runtime
// entry's two times turned into local "yyyy-MM-dd HH:mm:ss" text put last,
// printed pretty.
func coldCtrJSON(body []byte) (fjMap, error) {
	v, err := orderedJSON(body)
	if err != nil {
		return nil, err
	}
	root, ok := v.(fjMap)
	if !ok {
		return nil, fmt.Errorf("not an object")
	}
	for i, f := range root {
		if f.name != "runtimeTable" {
			continue
		}
		rt, ok := f.val.(fjMap)
		if !ok {
			return nil, fmt.Errorf("runtimeTable is not an object")
		}
		for j, e := range rt {
			entry, ok := e.val.(fjMap)
			if !ok {
				return nil, fmt.Errorf("runtimeTable %s is not an object", e.name)
			}
			for _, t := range []struct{ from, to string }{{"lastColdReadTimeMills", "lastColdReadTimeFormat"}, {"createTimeMills", "createTimeFormat"}} {
				var ms int64
				for _, x := range entry {
					if x.name == t.from {
						if _, err := fmt.Sscan(string(x.val.(fjRaw)), &ms); err != nil {
							return nil, fmt.Errorf("%s %s: %w", e.name, t.from, err)
						}
					}
				}
				entry = append(entry, fjField{t.to, fjString(time.UnixMilli(ms).Format("2006-01-02 15:04:05"))})
				kept := entry[:0]
				for _, x := range entry {
					if x.name != t.from {
						kept = append(kept, x)
					}
				}
				entry = kept
			}
			rt[j].val = entry
		}
		root[i].val = rt
	}
	return root, nil
}

// orderedJSON is JSON text as fastjson2 parses it into a JSONObject:
// objects keep their members' order, arrays are lists.
func orderedJSON(b []byte) (fjValue, error) {
	b = []byte(strings.TrimSpace(string(b)))
	if len(b) == 0 {
		return nil, fmt.Errorf("empty JSON")
	}
	switch b[0] {
	case '{':
		fs, err := rawFields(b)
		if err != nil {
			return nil, err
		}
		out := fjMap{}
		for _, f := range fs {
			var k string
			if err := json.Unmarshal(f.Key, &k); err != nil {
				return nil, err
			}
			if string(f.Val) == "null" {
				continue
			}
			v, err := orderedJSON(f.Val)
			if err != nil {
				return nil, err
			}
			out = append(out, fjField{k, v})
		}
		return out, nil
	case '[':
		var items []jsoniter.RawMessage
		if err := json.Unmarshal(b, &items); err != nil {
			return nil, err
		}
		out := fjSet{}
		for _, it := range items {
			v, err := orderedJSON(it)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, err
		}
		return fjString(s), nil
	}
	return fjRaw(b), nil
}

func updateColdDataFlowCtrGroupConfig(a *admin, o *options, args []string) error {
	broker := o.String("b", "brokerAddr", "update which broker")
	cluster := o.String("c", "clusterName", "update which cluster")
	group := o.Req("g", "consumerGroup", "specific consumerGroup")
	threshold := o.Req("v", "threshold", "cold read threshold value")
	if err := a.parse(o, args); err != nil {
		return err
	}
	g, v := strings.TrimSpace(*group), strings.TrimSpace(*threshold)
	if strings.ContainsAny(g+v, "\n\r") {
		return fmt.Errorf("-g and -v: no line breaks")
	}
	body := []byte(g + "=" + v + "\n") // MixAll.properties2String
	return a.eachMaster(o, *broker, *cluster, func(addr string) error {
		if _, err := a.Call(addr, remoting.UpdateColdDataFlowCtrConfig, nil, body); err != nil {
			return err
		}
		fmt.Fprintf(a.out, "updateColdDataFlowCtrGroupConfig success, %s\n", addr)
		return nil
	})
}

func removeColdDataFlowCtrGroupConfig(a *admin, o *options, args []string) error {
	broker := o.String("b", "brokerAddr", "update which broker")
	cluster := o.String("c", "clusterName", "update which cluster")
	group := o.Req("g", "consumerGroup", "the consumer group will remove from the config")
	if err := a.parse(o, args); err != nil {
		return err
	}
	g := strings.TrimSpace(*group)
	return a.eachMaster(o, *broker, *cluster, func(addr string) error {
		if g != "" { // Apache sends nothing for an empty group, and says success
			if _, err := a.Call(addr, remoting.RemoveColdDataFlowCtrConfig, nil, []byte(g)); err != nil {
				return err
			}
		}
		fmt.Fprintf(a.out, "remove broker cold read threshold success, %s\n", addr)
		return nil
	})
}

// eachMaster calls fn with the broker of -b (its failure fails the
// command) or with each master of -c's cluster (a failure is printed and
// the next master asked, as Apache's); the usage when neither is given.
func (a *admin) eachMaster(o *options, broker, cluster string, fn func(addr string) error) error {
	switch {
	case o.Given("b"):
		return fn(strings.TrimSpace(broker))
	case o.Given("c"):
		bs, err := a.clusterBrokers(cluster)
		if err != nil {
			return err
		}
		for _, addr := range addrsOf(bs, false) {
			if err := fn(addr); err != nil {
				fmt.Fprintf(a.errOut, "%v\n", err)
			}
		}
		return nil
	}
	a.usage()
	return nil
}

func setCommitLogReadAheadMode(a *admin, o *options, args []string) error {
	broker := o.String("b", "brokerAddr", "set which broker")
	cluster := o.String("c", "clusterName", "set which cluster")
	mode := o.Req("m", "commitLogReadAheadMode", "set the CommitLog read ahead mode; 0 is default, 1 random read")
	if err := a.parse(o, args); err != nil {
		return err
	}
	m := strings.TrimSpace(*mode)
	if m != "0" && m != "1" {
		fmt.Fprint(a.out, "set the read mode error; 0 is default, 1 random read\n")
		return nil
	}
	_, err := a.eachBroker(o, *broker, *cluster, true, func(banner, addr string) error {
		fmt.Fprint(a.out, " "+banner)
		resp, err := a.Call(addr, remoting.SetCommitLogReadMode, map[string]string{"READ_AHEAD_MODE": m}, nil)
		if err != nil {
			return err
		}
		remark := resp.Remark
		if remark == "" {
			remark = "null"
		}
		fmt.Fprintf(a.out, "commitLog set readAhead mode rstStr%s\n", remark)
		return nil
	})
	return err
}
