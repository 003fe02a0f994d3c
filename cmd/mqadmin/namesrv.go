package main

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/rocketgo/rocketgo/remoting"
)

// Name-server codes remoting does not name (RequestCode).
const (
	codeWipeWritePermOfBroker int32 = 205
	codeAddWritePermOfBroker  int32 = 327
)

// nsList is Apache's "-n" split on ';' untrimmed but for the whole
// (servers.trim().split(";")), or the client's list without -n.
func (a *admin) nsList() []string {
	if !a.opts.Given("n") {
		return a.NameServers
	}
	var out []string
	for _, s := range strings.Split(strings.TrimSpace(a.opts.lookup("n").value), ";") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// javaList is a Java List's toString.
func javaList(l []string) string { return "[" + strings.Join(l, ", ") + "]" }

func getNamesrvConfig(a *admin, o *options, args []string) error {
	if err := a.parse(o, args); err != nil {
		return err
	}
	for _, ns := range a.nsList() { // Apache: a HashMap by address; sorted here
		resp, err := a.Call(ns, remoting.GetNamesrvConfig, nil, nil)
		if err != nil {
			return err
		}
		printConfig(a, ns, resp.Body)
	}
	return nil
}

func updateNamesrvConfig(a *admin, o *options, args []string) error {
	key := o.Req("k", "key", "config key")
	value := o.Req("v", "value", "config value")
	if err := a.parse(o, args); err != nil {
		return err
	}
	k, v, err := configPair(*key, *value)
	if err != nil {
		return err
	}
	body := []byte(k + "=" + v + "\n") // MixAll.properties2String
	list := a.nsList()
	if len(list) == 0 {
		return fmt.Errorf("no name server address: -n or NAMESRV_ADDR")
	}
	for _, ns := range list {
		if _, err := a.Call(ns, remoting.UpdateNamesrvConfig, nil, body); err != nil {
			return err
		}
	}
	shown := ""
	if a.opts.Given("n") {
		shown = javaList(list)
	}
	fmt.Fprintf(a.out, "update name server config success!%s\n%s : %s\n", shown, k, v)
	return nil
}

func wipeWritePerm(a *admin, o *options, args []string) error {
	return writePerm(a, o, args, codeWipeWritePermOfBroker, "wipe", "wipeTopicCount")
}

func addWritePerm(a *admin, o *options, args []string) error {
	return writePerm(a, o, args, codeAddWritePermOfBroker, "add", "addTopicCount")
}

// writePerm asks each name server to take the broker's write permission
// off its topics (drain it) or give it back, and prints how many topics
// changed; a failure on one name server is printed and the next asked.
func writePerm(a *admin, o *options, args []string, code int32, verb, countField string) error {
	broker := o.Req("b", "brokerName", "broker name")
	if err := a.parse(o, args); err != nil {
		return err
	}
	name := strings.TrimSpace(*broker)
	for _, ns := range a.NameServers {
		resp, err := a.Call(ns, code, map[string]string{"brokerName": name}, nil)
		var n int64
		if err == nil {
			s, _ := resp.Lookup(countField)
			n, err = strconv.ParseInt(s, 10, 32)
		}
		if err != nil {
			fmt.Fprintf(a.out, "%s write perm of broker[%s] in name server[%s] Failed\n", verb, name, ns)
			fmt.Fprintf(a.errOut, "%v\n", err) // Apache: the stack trace
			continue
		}
		fmt.Fprintf(a.out, "%s write perm of broker[%s] in name server[%s] OK, %d\n", verb, name, ns, n)
	}
	return nil
}

// orderTopicNamespace is NamesrvUtil.NAMESPACE_ORDER_TOPIC_CONFIG.
const orderTopicNamespace = "ORDER_TOPIC_CONFIG"

func updateKvConfig(a *admin, o *options, args []string) error {
	ns := o.Req("s", "namespace", "set the namespace")
	key := o.Req("k", "key", "set the key name")
	value := o.Req("v", "value", "set the key value")
	if err := a.parse(o, args); err != nil {
		return err
	}
	if err := a.EachNamesrv(remoting.PutKVConfig, map[string]string{"namespace": strings.TrimSpace(*ns),
		"key": strings.TrimSpace(*key), "value": strings.TrimSpace(*value)}); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "create or update kv config to namespace success.\n")
	return nil
}

func deleteKvConfig(a *admin, o *options, args []string) error {
	ns := o.Req("s", "namespace", "set the namespace")
	key := o.Req("k", "key", "set the key name")
	if err := a.parse(o, args); err != nil {
		return err
	}
	if err := a.EachNamesrv(remoting.DeleteKVConfig, map[string]string{"namespace": strings.TrimSpace(*ns),
		"key": strings.TrimSpace(*key)}); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "delete kv config from namespace success.\n")
	return nil
}

func updateOrderConf(a *admin, o *options, args []string) error {
	topic := o.Req("t", "topic", "topic name")
	conf := o.String("v", "orderConf", "set order conf [eg. brokerName1:num;brokerName2:num]")
	method := o.Req("m", "method", "option type [eg. put|get|delete")
	if err := a.parse(o, args); err != nil {
		return err
	}
	t := strings.TrimSpace(*topic)
	switch strings.TrimSpace(*method) {
	case "get":
		resp, err := a.CallNamesrv(remoting.GetKVConfig, map[string]string{"namespace": orderTopicNamespace, "key": t})
		if err != nil {
			return err
		}
		fmt.Fprintf(a.out, "get orderConf success. topic=[%s], orderConf=[%s] ", t, resp.Str("value"))
	case "put":
		v := strings.TrimSpace(*conf)
		if v == "" {
			return errors.New("please set orderConf with option -v")
		}
		if err := a.putOrderConf(t, v); err != nil {
			return err
		}
		fmt.Fprintf(a.out, "update orderConf success. topic=[%s], orderConf=[%s]", t, v)
	case "delete":
		if err := a.EachNamesrv(remoting.DeleteKVConfig, map[string]string{"namespace": orderTopicNamespace, "key": t}); err != nil {
			return err
		}
		fmt.Fprintf(a.out, "delete orderConf success. topic=[%s]", t)
	default:
		a.usage()
	}
	return nil
}

// printConfig prints a server's configuration as Apache's
// GetNamesrvConfigCommand and GetControllerConfigSubCommand do: a banner
// with its address, then key=value lines (sorted here; Apache: a
// Properties' hash order).
func printConfig(a *admin, addr string, body []byte) {
	fmt.Fprintf(a.out, "============%s============\n", addr)
	props := parseProperties(string(body))
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(a.out, "%-50s=  %s\n", k, props[k])
	}
}

// configPair is the trimmed -k and -v of a config update, refused when
// they would not make one properties line.
func configPair(key, value string) (string, string, error) {
	k, v := strings.TrimSpace(key), strings.TrimSpace(value)
	if k == "" || strings.ContainsAny(k, "=\n") || strings.Contains(v, "\n") {
		return "", "", fmt.Errorf("-k %q -v %q: a key (no '=' or newline) and a one-line value are required", k, v)
	}
	return k, v, nil
}
