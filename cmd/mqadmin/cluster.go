package main

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/internal/adminclient"
)

func clusterList(a *admin, o *options, args []string) error {
	more := o.Bool("m", "moreStats", "Print more stats")
	interval := o.Int32("i", "interval", 0, "specify intervals numbers, it is in seconds")
	only := o.String("c", "clusterName", "which cluster")
	if err := a.parse(o, args); err != nil {
		return err
	}
	if *interval != 0 {
		return fmt.Errorf("-i (repeat every %d s) is not implemented by this mqadmin", *interval)
	}
	ci, err := a.ClusterInfo()
	if err != nil {
		return err
	}
	var clusters []string
	if c := strings.TrimSpace(*only); c != "" {
		clusters = []string{c}
	} else {
		for c := range ci.ClusterAddrTable {
			clusters = append(clusters, c)
		}
		sort.Strings(clusters) // Apache: the HashMap's order
	}
	if *more {
		fmt.Fprintf(a.out, "%-16s  %-32s %14s %14s %14s %14s\n", "#Cluster Name", "#Broker Name", "#InTotalYest", "#OutTotalYest", "#InTotalToday", "#OutTotalToday")
	} else {
		fmt.Fprintf(a.out, "%-22s  %-22s  %-4s  %-22s %-16s  %16s  %30s  %-22s  %-11s  %-12s  %-8s  %-10s\n",
			"#Cluster Name", "#Broker Name", "#BID", "#Addr", "#Version", "#InTPS(LOAD)", "#OutTPS(LOAD)",
			"#Timer(Progress)", "#PCWait(ms)", "#Hour", "#SPACE", "#ACTIVATED")
	}
	for _, c := range clusters {
		names := append([]string(nil), ci.ClusterAddrTable[c]...)
		sort.Strings(names)
		for _, n := range names {
			bd, ok := ci.BrokerAddrTable[n]
			if !ok {
				continue
			}
			for _, id := range bd.IDs() {
				addr := bd.BrokerAddrs[strconv.FormatInt(id, 10)]
				kv, err := a.RuntimeInfo(addr)
				if err != nil {
					// Apache prints the stack trace and the row with its defaults.
					fmt.Fprintf(a.errOut, "%v\n", err)
				}
				if *more {
					fmt.Fprintln(a.out, clusterMoreRow(c, n, kv))
				} else {
					fmt.Fprintln(a.out, clusterRow(c, n, id, addr, kv, err == nil, time.Now()))
				}
			}
		}
	}
	return nil
}

// clusterRow is one line of ClusterListSubCommand.printClusterBaseInfo.
// ok is false when the runtime info could not be fetched (all defaults).
func clusterRow(cluster, name string, id int64, addr string, kv map[string]string, ok bool, now time.Time) string {
	var in, out float64
	var version, sendQ, pullQ, ackQ, sendW, pullW, ackW, pcWait, earliest, ratio string
	var readBehind, offsetBehind, congest int64
	var enqTps, deqTps float32
	active := false
	if ok {
		get := func(k string) string { // Java's Map.get printed by %s: "null" when absent
			if v, ok := kv[k]; ok {
				return v
			}
			return "null"
		}
		orN := func(k string) string {
			if v, ok := kv[k]; ok {
				return v
			}
			return "N"
		}
		active = javaBool(kv["brokerActive"])
		sendQ, pullQ, ackQ = get("sendThreadPoolQueueSize"), get("pullThreadPoolQueueSize"), orN("ackThreadPoolQueueSize")
		sendW, pullW, ackW = get("sendThreadPoolQueueHeadWaitTimeMills"), get("pullThreadPoolQueueHeadWaitTimeMills"), orN("ackThreadPoolQueueHeadWaitTimeMills")
		pcWait, earliest, ratio = get("pageCacheLockTimeMills"), kv["earliestMessageTimeStamp"], kv["commitLogDiskRatio"]
		readBehind, offsetBehind, congest, enqTps, deqTps = timerStats(kv)
		version = get("brokerVersionDesc")
		in, out = firstFloat(kv["putTps"]), firstFloat(kv["getTransferredTps"])
	}
	hour, space := 0.0, 0.0
	if earliest != "" {
		if ms, err := strconv.ParseInt(earliest, 10, 64); err == nil {
			hour = float64(now.UnixMilli()-ms) / 1000.0 / 60.0 / 60.0
		}
	}
	if ratio != "" {
		space, _ = strconv.ParseFloat(ratio, 64)
	}
	return fmt.Sprintf("%-22s  %-22s  %-4d  %-22s %-16s  %16s  %30s  %-22s  %11s  %-12s  %-8s  %10t",
		cluster, name, id, addr, version,
		fmt.Sprintf("%9.2f(%s,%sms)", in, sendQ, sendW),
		fmt.Sprintf("%9.2f(%s,%sms|%s,%sms)", out, pullQ, pullW, ackQ, ackW),
		fmt.Sprintf("%d-%d(%.1fw, %.1f, %.1f)", readBehind, offsetBehind, float32(congest)/10000.0, enqTps, deqTps),
		pcWait, fmt.Sprintf("%2.2f", hour), fmt.Sprintf("%.4f", space), active)
}

// timerStats parses the timer keys in Apache's order, stopping at the first
// that does not parse (Apache's try block: the earlier ones stay set).
func timerStats(kv map[string]string) (readBehind, offsetBehind, congest int64, enq, deq float32) {
	ints := []*int64{&readBehind, &offsetBehind, &congest}
	for i, k := range []string{"timerReadBehind", "timerOffsetBehind", "timerCongestNum"} {
		v, err := strconv.ParseInt(kv[k], 10, 64)
		if err != nil {
			return
		}
		*ints[i] = v
	}
	floats := []*float32{&enq, &deq}
	for i, k := range []string{"timerEnqueueTps", "timerDequeueTps"} {
		v, err := strconv.ParseFloat(strings.TrimSpace(kv[k]), 32)
		if err != nil {
			return
		}
		*floats[i] = float32(v)
	}
	return
}

// firstFloat is the first space-separated number of a "1.0 2.0 3.0" TPS value.
func firstFloat(s string) float64 {
	f, _ := strconv.ParseFloat(strings.SplitN(strings.TrimSpace(s), " ", 2)[0], 64)
	return f
}

// clusterMoreRow is one line of printClusterMoreStats: yesterday's and
// today's message totals in and out.
func clusterMoreRow(cluster, name string, kv map[string]string) string {
	var inY, outY, inT, outT int64
	n := func(k string) (int64, bool) {
		v, err := strconv.ParseInt(kv[k], 10, 64)
		return v, err == nil
	}
	putY, ok1 := n("msgPutTotalYesterdayMorning")
	putM, ok2 := n("msgPutTotalTodayMorning")
	putN, ok3 := n("msgPutTotalTodayNow")
	getY, ok4 := n("msgGetTotalYesterdayMorning")
	getM, ok5 := n("msgGetTotalTodayMorning")
	getN, ok6 := n("msgGetTotalTodayNow")
	if ok1 && ok2 && ok3 && ok4 && ok5 && ok6 { // Apache: any failure leaves all four 0
		inY, outY, inT, outT = putM-putY, getM-getY, putN-putM, getN-getM
	}
	return fmt.Sprintf("%-16s  %-32s %14d %14d %14d %14d", cluster, name, inY, outY, inT, outT)
}

func brokerStatus(a *admin, o *options, args []string) error {
	broker := o.String("b", "brokerAddr", "Broker address")
	cluster := o.String("c", "clusterName", "which cluster")
	o.Group(true, "b", "c")
	if err := a.parse(o, args); err != nil {
		return err
	}
	switch {
	case *broker != "":
		return a.printRuntime(strings.TrimSpace(*broker), false)
	case *cluster != "":
		bs, err := a.clusterBrokers(*cluster)
		if err != nil {
			return err
		}
		for _, addr := range addrsOf(bs, true) {
			if err := a.printRuntime(addr, true); err != nil {
				fmt.Fprintf(a.errOut, "%v\n", err) // Apache goes on with the next broker
			}
		}
		return nil
	}
	return errors.New("one of -b (broker address) or -c (cluster) is required")
}

// printRuntime is BrokerStatusSubCommand.printBrokerRuntimeStats: the
// runtime KVTable sorted by key, prefixed by the address for a cluster.
func (a *admin) printRuntime(addr string, withAddr bool) error {
	kv, err := a.RuntimeInfo(addr)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if withAddr {
			fmt.Fprintf(a.out, "%-24s %-32s: %s\n", addr, k, kv[k])
		} else {
			fmt.Fprintf(a.out, "%-32s: %s\n", k, kv[k])
		}
	}
	return nil
}

// clusterRT sends -a messages of -s bytes to the topic named after each
// broker of each cluster (or of -c), prints the mean send time but the
// first's, and again every -i seconds, until stopped.
func clusterRT(a *admin, o *options, args []string) error {
	amount := o.Int64("a", "amount", 100, "message amount | default 100")
	size := o.Int64("s", "size", 128, "message size | default 128 Byte")
	only := o.String("c", "cluster", "cluster name | default display all cluster")
	tlog := o.String("p", "print log", "print as tlog | default false")
	room := o.StringDef("m", "machine room", "noname", "machine room name | default noname")
	interval := o.Int64("i", "interval", 10, "print interval | default 10 seconds")
	if err := a.parse(o, args); err != nil {
		return err
	}
	if *size < 0 || *size > 4<<20 {
		return fmt.Errorf("-s %d: a size from 0 to 4 MiB", *size)
	}
	ci, err := a.ClusterInfo()
	if err != nil {
		return err
	}
	var clusters []string
	if o.Given("c") {
		clusters = []string{strings.TrimSpace(*only)}
	} else {
		for c := range ci.ClusterAddrTable {
			clusters = append(clusters, c)
		}
		sort.Strings(clusters) // Apache: the HashMap's order
	}
	asTlog := javaBool(*tlog)
	if !asTlog {
		fmt.Fprintf(a.out, "%-24s  %-24s  %-4s  %-8s  %-8s\n", "#Cluster Name", "#Broker Name", "#RT", "#successCount", "#failCount")
	}
	body := []byte(strings.Repeat("a", int(*size)))
	group := strconv.FormatInt(time.Now().UnixMilli(), 10)
	routes := map[string]*adminclient.Route{}
	for {
		for _, c := range clusters {
			names, ok := ci.ClusterAddrTable[c]
			if !ok {
				fmt.Fprintf(a.out, "cluster [%s] not exist", c)
				break
			}
			for _, bn := range names {
				var elapsed time.Duration
				ok, failed := 0, 0
				for i := int64(0); i < *amount; i++ {
					start := time.Now()
					r, err := routes[bn], error(nil)
					if r == nil {
						if r, err = a.Route(bn); err == nil {
							routes[bn] = r
						}
					}
					if err == nil {
						_, err = a.SendRoute(r, group, adminclient.OutMessage{Topic: bn, Body: body}, "", -1)
					}
					if err != nil {
						failed++
					} else {
						ok++
					}
					if i != 0 { // Apache: whole milliseconds per send
						elapsed += time.Since(start).Truncate(time.Millisecond)
					}
				}
				rt := float64(elapsed.Milliseconds()) / float64(*amount-1) // NaN for one message, as Apache's
				if asTlog {
					fmt.Fprintf(a.out, "%s|%s|%s|%s|%.0f\n", time.Now().In(time.FixedZone("GMT+8", 8*3600)).Format("2006-01-02 15:04:05"),
						strings.TrimSpace(*room), c, bn, math.Floor(rt+0.5)) // BigDecimal's ROUND_HALF_UP
				} else {
					fmt.Fprintf(a.out, "%-24s  %-24s  %-8s  %-16d  %-16d\n", c, bn, fmt.Sprintf("%.2f", rt), ok, failed)
				}
			}
		}
		time.Sleep(time.Duration(max(*interval, 0)) * time.Second)
	}
}
