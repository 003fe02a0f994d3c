package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/internal/adminclient"
	"github.com/rocketgo/rocketgo/message"
)

// traceView is the part of a TraceView queryMsgTraceById prints.
type traceView struct {
	typ, group, clientHost, status string
	timestamp                      int64
	cost                           int64
}

// The separators of a trace message's body (TraceConstants).
const (
	traceContentSplitor = "\x01"
	traceFieldSplitor   = "\x02"
)

// decodeTraces is TraceView.decodeFromTraceTransData: the Pub and SubAfter
// (and other) contexts of one trace message's body whose message is key.
func decodeTraces(key, body, clientHost string) ([]traceView, error) {
	var out []traceView
	for _, ctx := range javaSplit(body, traceFieldSplitor) {
		line := javaSplit(ctx, traceContentSplitor)
		if len(line) == 0 {
			continue
		}
		need := map[string]int{"Pub": 12, "SubBefore": 8, "SubAfter": 6, "EndTransaction": 13, "Recall": 7}[line[0]]
		if need == 0 {
			continue
		}
		if len(line) < need {
			return nil, fmt.Errorf("trace %s: %d fields, want %d", line[0], len(line), need)
		}
		// TraceContext's defaults: now, no group, a success
		tv := traceView{typ: line[0], clientHost: clientHost, status: "failed", timestamp: time.Now().UnixMilli()}
		var msgID string
		var err error
		num := func(s string) int64 {
			n, e := strconv.ParseInt(s, 10, 64)
			if e != nil && err == nil {
				err = fmt.Errorf("trace %s: %q is not a number", line[0], s)
			}
			return n
		}
		success := true
		switch line[0] {
		case "Pub":
			tv.timestamp, tv.group, msgID, tv.cost = num(line[1]), line[3], line[5], num(line[10])
			switch {
			case len(line) == 13:
				success = javaBool(line[12])
			case len(line) >= 14:
				success = javaBool(line[13])
			}
		case "SubBefore":
			tv.timestamp, tv.group, msgID = num(line[1]), line[3], line[5]
		case "SubAfter":
			msgID, tv.cost, success = line[2], num(line[3]), javaBool(line[4])
			if len(line) >= 9 {
				tv.timestamp, tv.group = num(line[7]), line[8]
			}
		case "EndTransaction", "Recall":
			tv.timestamp, tv.group, msgID = num(line[1]), line[3], line[5]
			if line[0] == "Recall" {
				success = javaBool(line[6])
			}
		}
		if err != nil {
			return nil, err
		}
		if msgID != key {
			continue
		}
		if success {
			tv.status = "success"
		}
		out = append(out, tv)
	}
	return out, nil
}

func queryMsgTraceByID(a *admin, o *options, args []string) error {
	id := o.Req("i", "msgId", "Message Id")
	topic := o.StringDef("t", "traceTopic", "RMQ_SYS_TRACE_TOPIC", "The name value of message trace topic")
	begin := o.Int64("b", "beginTimestamp", 0, "Begin timestamp(ms). default:0, eg:1676730526212")
	end := o.Int64("e", "endTimestamp", adminclient.MaxTime, "End timestamp(ms). default:Long.MAX_VALUE, eg:1676730526212")
	maxNum := o.Int32("c", "maxNum", 64, "The maximum number of messages returned by the query, default:64")
	if err := a.parse(o, args); err != nil {
		return err
	}
	key := strings.TrimSpace(*id)
	ms, err := a.QueryAll(strings.TrimSpace(*topic), key, int(*maxNum), *begin, *end, false)
	if err != nil {
		return err
	}
	var views []traceView
	for _, m := range ms {
		tv, err := decodeTraces(key, string(m.Body), m.BornHost.Addr().String())
		if err != nil {
			return err
		}
		views = append(views, tv...)
	}
	date := func(ms int64) string { return time.UnixMilli(ms).Format("2006-01-02 15:04:05") }
	row := "%-10s %-20s %-20s %-20s %-10s %-10s\n"
	subs := map[string][]traceView{}
	var groups []string
	for _, v := range views {
		switch v.typ {
		case "Pub":
			fmt.Fprintf(a.out, row, "#Type", "#ProducerGroup", "#ClientHost", "#SendTime", "#CostTimes", "#Status")
			fmt.Fprintf(a.out, row, "Pub", v.group, v.clientHost, date(v.timestamp), strconv.FormatInt(v.cost, 10)+"ms", v.status)
			fmt.Fprintf(a.out, "\n")
		case "SubAfter":
			if _, ok := subs[v.group]; !ok {
				groups = append(groups, v.group)
			}
			subs[v.group] = append(subs[v.group], v)
		}
	}
	message.HashMapOrder(groups, 16, message.JavaHash) // Apache: a HashMap by group
	for _, g := range groups {
		fmt.Fprintf(a.out, row, "#Type", "#ConsumerGroup", "#ClientHost", "#ConsumerTime", "#CostTimes", "#Status")
		for _, v := range subs[g] {
			fmt.Fprintf(a.out, row, "Sub", v.group, v.clientHost, date(v.timestamp), strconv.FormatInt(v.cost, 10)+"ms", v.status)
		}
		fmt.Fprintf(a.out, "\n")
	}
	return nil
}
