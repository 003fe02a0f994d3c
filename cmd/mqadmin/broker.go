package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rocketgo/rocketgo/remoting"
)

func getBrokerConfig(a *admin, o *options, args []string) error {
	broker := o.String("b", "brokerAddr", "get which broker")
	cluster := o.String("c", "clusterName", "get which cluster")
	o.Group(true, "b", "c")
	if err := a.parse(o, args); err != nil {
		return err
	}
	switch {
	case *broker != "":
		addr := strings.TrimSpace(*broker)
		return a.printBrokerConfig(fmt.Sprintf("============%s============\n", addr), addr)
	case *cluster != "":
		bs, err := a.clusterBrokers(*cluster)
		if err != nil {
			return err
		}
		for _, b := range bs {
			if b.Master == "" {
				continue // Apache skips a broker group without a master, slaves included
			}
			if err := a.printBrokerConfig(fmt.Sprintf("============Master: %s============\n", b.Master), b.Master); err != nil {
				return err
			}
			for _, s := range b.Slaves {
				if err := a.printBrokerConfig(fmt.Sprintf("============My Master: %s=====Slave: %s============\n", b.Master, s), s); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// printBrokerConfig is GetBrokerConfigCommand.getAndPrint, keys sorted.
func (a *admin) printBrokerConfig(prefix, addr string) error {
	fmt.Fprint(a.out, prefix)
	resp, err := a.Call(addr, remoting.GetBrokerConfig, nil, nil)
	if err != nil {
		return err
	}
	props := parseProperties(string(resp.Body))
	if len(props) == 0 {
		fmt.Fprintf(a.out, "Broker[%s] has no config property!\n", addr)
		return nil
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(a.out, "%-50s=  %s\n", k, props[k])
	}
	fmt.Fprintf(a.out, "\n")
	return nil
}

// parseProperties reads the "key=value" lines of MixAll.properties2String
// (what GET_BROKER_CONFIG answers; values are not escaped there).
func parseProperties(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			out[k] = v
		}
	}
	return out
}

func updateBrokerConfig(a *admin, o *options, args []string) error {
	broker := o.String("b", "brokerAddr", "update which broker")
	cluster := o.String("c", "clusterName", "update which cluster")
	o.String("a", "updateAllBroker", "update all brokers include slave") // Apache checks its presence
	key := o.Req("k", "key", "config key")
	value := o.Req("v", "value", "config value")
	if err := a.parse(o, args); err != nil {
		return err
	}
	k, v := strings.TrimSpace(*key), strings.TrimSpace(*value)
	if k == "" || strings.ContainsAny(k, "=\n") || strings.Contains(v, "\n") {
		return fmt.Errorf("-k %q -v %q: a key (no '=' or newline) and a one-line value are required", k, v)
	}
	body := []byte(k + "=" + v + "\n") // MixAll.properties2String
	switch {
	case *broker != "":
		addr := strings.TrimSpace(*broker)
		if _, err := a.Call(addr, remoting.UpdateBrokerConfig, nil, body); err != nil {
			return err
		}
		fmt.Fprintf(a.out, "update broker config success, %s\n", addr)
	case *cluster != "":
		bs, err := a.clusterBrokers(*cluster)
		if err != nil {
			return err
		}
		for _, addr := range addrsOf(bs, o.Given("a")) {
			if _, err := a.Call(addr, remoting.UpdateBrokerConfig, nil, body); err != nil {
				fmt.Fprintf(a.errOut, "%v\n", err) // Apache goes on with the next broker
				continue
			}
			fmt.Fprintf(a.out, "update broker config success, %s\n", addr)
		}
	default:
		a.usage()
	}
	return nil
}

// brokerConfig is GET_BROKER_CONFIG's properties.
func (a *admin) brokerConfig(addr string) (map[string]string, error) {
	resp, err := a.Call(addr, remoting.GetBrokerConfig, nil, nil)
	if err != nil {
		return nil, err
	}
	return parseProperties(string(resp.Body)), nil
}
