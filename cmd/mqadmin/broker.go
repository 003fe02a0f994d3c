package main

import (
	"flag"
	"fmt"
	"sort"
	"strings"

	"github.com/rocketgo/rocketgo/remoting"
)

func getBrokerConfig(a *admin, fs *flag.FlagSet, args []string) error {
	broker := fs.String("b", "", "get which broker")
	cluster := fs.String("c", "", "get which cluster")
	if err := a.parse(fs, args); err != nil {
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
