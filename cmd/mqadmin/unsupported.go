package main

// Apache 5.5 commands whose requests a rocketgo broker answers with
// REQUEST_CODE_NOT_SUPPORTED — broker containers (addBroker, removeBroker),
// the timer engine switch and the RocksDB commands: the Go tool sends them
// as Apache's does, so that a broker serving them answers, and prints what
// Apache's prints before the refusal; the refusal is the error.

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/remoting"
)

func addBroker(a *admin, o *options, args []string) error {
	container := o.Req("c", "brokerContainerAddr", "Broker container address")
	config := o.Req("b", "brokerConfigPath", "Broker config path")
	if err := a.parse(o, args); err != nil {
		return err
	}
	addr := strings.TrimSpace(*container)
	if _, err := a.Call(addr, remoting.AddBroker, map[string]string{"configPath": strings.TrimSpace(*config)}, nil); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "add broker to %s success\n", addr)
	return nil
}

func removeBroker(a *admin, o *options, args []string) error {
	container := o.Req("c", "brokerContainerAddr", "Broker container address")
	identity := o.Req("b", "brokerIdentity", "Information to identify a broker: clusterName:brokerName:brokerId(dLedgerId for dLedger)")
	if err := a.parse(o, args); err != nil {
		return err
	}
	addr := strings.TrimSpace(*container)
	parts := strings.Split(strings.TrimSpace(*identity), ":")
	if len(parts) < 3 {
		return fmt.Errorf("-b %q: clusterName:brokerName:brokerId", *identity)
	}
	id, err := strconv.ParseInt(strings.TrimSpace(parts[2]), 10, 64)
	if err != nil {
		return fmt.Errorf("-b: broker id %q is not a number", parts[2])
	}
	if id < 0 {
		fmt.Fprint(a.out, "brokerId can't be negative\n")
		return nil
	}
	ext := map[string]string{"brokerClusterName": strings.TrimSpace(parts[0]), "brokerName": strings.TrimSpace(parts[1]),
		"brokerId": strconv.FormatInt(id, 10)}
	if _, err := a.Call(addr, remoting.RemoveBroker, ext, nil); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "remove broker from %s success\n", addr)
	return nil
}

func switchTimerEngine(a *admin, o *options, args []string) error {
	broker := o.String("b", "brokerAddr", "update which broker")
	cluster := o.String("c", "clusterName", "update which cluster")
	o.Group(true, "b", "c")
	engine := o.Req("e", "engineType", "R/F, R for rocksdb timeline engine, F for file time wheel engine")
	if err := a.parse(o, args); err != nil {
		return err
	}
	e := strings.TrimSpace(*engine)
	if e != "R" && e != "F" {
		fmt.Fprint(a.out, "switchTimerEngine engineType must be R or F\n")
		return nil
	}
	name := "FILE_TIME_WHEEL"
	if e == "R" {
		name = "ROCKSDB_TIMELINE"
	}
	ext := map[string]string{"E_T": e} // MessageConst.TIMER_ENGINE_TYPE
	if o.Given("b") {
		addr := strings.TrimSpace(*broker)
		if _, err := a.Call(addr, remoting.SwitchTimerEngine, ext, nil); err != nil {
			return err
		}
		fmt.Fprintf(a.out, "switchTimerEngine to %s success, %s\n", name, addr)
		return nil
	}
	bs, err := a.clusterBrokers(*cluster)
	if err != nil {
		return err
	}
	for _, addr := range addrsOf(bs, false) {
		if _, err := a.Call(addr, remoting.SwitchTimerEngine, ext, nil); err != nil {
			fmt.Fprintf(a.errOut, "%v\n", err) // Apache prints the trace and goes on
			continue
		}
		fmt.Fprintf(a.out, "switchTimerEngine to %s success, %s\n", name, addr)
	}
	return nil
}

func checkRocksdbCqWriteProgress(a *admin, o *options, args []string) error {
	cluster := o.Req("c", "cluster", "cluster name")
	o.Req("n", "nameserverAddr", "nameserverAddr")
	topic := o.String("t", "topic", "topic name")
	from := o.String("cf", "checkFrom", "check from time")
	if err := a.parse(o, args); err != nil {
		return err
	}
	since := time.Now().Add(-30 * 24 * time.Hour).UnixMilli() // Apache: the last 30 days
	if o.Given("cf") {
		n, err := strconv.ParseInt(strings.TrimSpace(*from), 10, 64)
		if err != nil {
			return fmt.Errorf("-cf: %q is not a number", *from)
		}
		since = n
	}
	masters, err := a.everyMaster(*cluster)
	if err != nil || masters == nil {
		return err
	}
	// Apache stops at the first refusal
	ext := map[string]string{"topic": strings.TrimSpace(*topic), "checkStoreTime": strconv.FormatInt(since, 10)}
	for _, m := range masters {
		n, addr := m.name, m.addr
		resp, err := a.Call(addr, remoting.CheckRocksdbCqWriteProgress, ext, nil)
		if err != nil {
			return err
		}
		var r struct {
			CheckResult *string `json:"checkResult"`
			CheckStatus int     `json:"checkStatus"`
		}
		if err := json.Unmarshal(resp.Body, &r); err != nil {
			return fmt.Errorf("%s: check result: %w", addr, err)
		}
		if r.CheckStatus == 3 { // CHECK_ERROR
			fmt.Fprint(a.out, n+" check error, please check log... errInfo: "+javaString(r.CheckResult))
		} else {
			fmt.Fprint(a.out, n+" check doing, please wait and get the result from log... \n")
		}
	}
	return nil
}

// namedMaster is a broker group's name and its master's address.
type namedMaster struct{ name, addr string }

// everyMaster is what Apache's RocksDB commands ask: the master of every
// broker group the name servers know, of any cluster, by name (Apache:
// its table's order). Nil, after Apache's message, when cluster is not
// one of the name servers' clusters.
func (a *admin) everyMaster(cluster string) ([]namedMaster, error) {
	ci, err := a.ClusterInfo()
	if err != nil {
		return nil, err
	}
	if _, ok := ci.ClusterAddrTable[strings.TrimSpace(cluster)]; !ok {
		fmt.Fprint(a.out, "clusterAddrTable is empty")
		return nil, nil
	}
	out := make([]namedMaster, 0, len(ci.BrokerAddrTable))
	for _, n := range slices.Sorted(maps.Keys(ci.BrokerAddrTable)) {
		out = append(out, namedMaster{n, ci.BrokerAddrTable[n].BrokerAddrs["0"]})
	}
	return out, nil
}

// rocksDBConfigTypes are ExportRocksDBConfigToJsonRequestHeader.ConfigType's names.
var rocksDBConfigTypes = []string{"topics", "subscriptionGroups", "consumerOffsets"}

func rocksDBConfigToJSON(a *admin, o *options, args []string) error {
	configType := o.String("t", "configType", "Name of kv config, e.g. topics/subscriptionGroups/consumerOffsets. "+
		"Required in local mode and default all in rpc mode.")
	o.String("p", "configPath", "[local mode] Absolute path to the metadata config directory")
	o.String("e", "exportFile", "[local mode] Absolute file path for exporting, auto backup existing file, not directory. "+
		"If exportFile is provided, will export Json file and ignore [-j].")
	o.String("j", "jsonEnable", "[local mode] Json format enable, Default: true. If exportFile is provided, will export Json file and ignore [-j].")
	o.String("n", "nameserverAddr", "[rpc mode] nameserverAddr. If nameserverAddr and clusterName are provided, will ignore [-p, -e, -j, -b] args")
	cluster := o.String("c", "cluster", "[rpc mode] Cluster name. If nameserverAddr and clusterName are provided, will ignore [-p, -e, -j, -b] args")
	broker := o.String("b", "brokerAddr", "[rpc mode] Broker address. If brokerAddr is provided, will ignore [-p, -e, -j] args")
	if err := a.parse(o, args); err != nil {
		return err
	}
	// the request's configType: the names given, known ones only, each
	// followed by ";" (ConfigType.toString); all three by default
	types := rocksDBConfigTypes
	if o.Given("t") {
		types = nil
		for _, t := range strings.Split(strings.TrimSpace(*configType), ";") {
			if t = strings.TrimSpace(t); t == "" {
				continue
			}
			found := false
			for _, k := range rocksDBConfigTypes {
				if strings.EqualFold(k, t) {
					types, found = append(types, k), true
				}
			}
			if !found {
				fmt.Fprint(a.out, "Invalid configType: "+strings.TrimSpace(*configType)+" please input topics/subscriptionGroups/consumerOffsets \n")
				return nil
			}
		}
	}
	ext := map[string]string{"configType": strings.Join(types, ";") + ";"}
	switch {
	case o.Given("n"):
		fmt.Fprint(a.out, "Use [rpc mode] call all brokers in cluster to export to json file \n")
		if !o.Given("c") {
			fmt.Fprint(a.out, "rpc mode Invalid args, please input cluster\n")
			return errors.New("-c cluster is required with -n")
		}
		masters, err := a.everyMaster(*cluster)
		if err != nil || masters == nil {
			return err
		}
		var failed error
		for _, m := range masters {
			if _, err := a.Call(m.addr, remoting.ExportRocksDBConfigToJSON, ext, nil); err != nil {
				fmt.Fprint(a.out, m.name)
				failed = errors.Join(failed, err)
			}
		}
		fmt.Fprint(a.out, "broker export done.")
		return failed
	case o.Given("b"):
		fmt.Fprint(a.out, "Use [rpc mode] call broker to export to json file \n")
		addr := strings.TrimSpace(*broker)
		_, err := a.Call(addr, remoting.ExportRocksDBConfigToJSON, ext, nil)
		if err != nil {
			fmt.Fprint(a.out, addr+" export error")
		}
		fmt.Fprint(a.out, "broker export done.")
		return err
	case o.Given("p"):
		fmt.Fprint(a.out, "Use [local mode] load rocksdb to print or export file \n")
		return errors.New("-p (local mode: read a broker's RocksDB metadata files) is not implemented by this mqadmin; " +
			"use -b or -n -c, or Apache's tool")
	}
	fmt.Fprint(a.out, rocksDBConfigToJSONDesc+"\n")
	return nil
}

const rocksDBConfigToJSONDesc = "Convert RocksDB kv config (topics/subscriptionGroups/consumerOffsets) to json. [rpc mode] Use [-n, -c, -b, -t] " +
	"to send Request to broker ( version >= 5.3.2 ) or [local mode] use [-p, -t, -j, -e] to load RocksDB. " +
	"If -e is provided, tools will export json file instead of std print"
