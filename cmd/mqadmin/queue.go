package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rocketgo/rocketgo/internal/adminclient"
	"github.com/rocketgo/rocketgo/message"
)

// queryCq prints count entries of one consume queue from -i, asked of the
// broker of -b or else of the first broker of the topic's route, and with
// -g the group's subscription and filter, as Apache's queryCq.
func queryCq(a *admin, o *options, args []string) error {
	topic := o.Req("t", "topic", "topic name")
	queue := o.Req("q", "queue", "queue num, ie. 1")
	index := o.Req("i", "index", "start queue index.")
	count := o.String("c", "count", "how many.")
	broker := o.String("b", "broker", "broker addr.")
	group := o.String("g", "consumer", "consumer group.")
	if err := a.parse(o, args); err != nil {
		return err
	}
	t := strings.TrimSpace(*topic)
	qid, err := strconv.ParseInt(strings.TrimSpace(*queue), 10, 32)
	if err != nil {
		return fmt.Errorf("-q: %q is not a 32-bit integer", *queue)
	}
	from, err := strconv.ParseInt(strings.TrimSpace(*index), 10, 64)
	if err != nil {
		return fmt.Errorf("-i: %q is not a 64-bit integer", *index)
	}
	n := int64(10)
	if o.Given("c") {
		if n, err = strconv.ParseInt(strings.TrimSpace(*count), 10, 32); err != nil {
			return fmt.Errorf("-c: %q is not a 32-bit integer", *count)
		}
	}
	addr := strings.TrimSpace(*broker)
	if addr == "" {
		r, err := a.Route(t)
		if err != nil {
			return err
		}
		if len(r.BrokerDatas) == 0 {
			return errors.New("no topic route data") // Apache: "No topic route data!"
		}
		// Apache: the master of the route's first broker
		if addr = r.BrokerDatas[0].BrokerAddrs["0"]; addr == "" {
			return fmt.Errorf("broker %s of the route has no master", r.BrokerDatas[0].BrokerName)
		}
	}
	cq, err := a.QueryConsumeQueue(addr, t, int32(qid), from, int32(n), strings.TrimSpace(*group))
	if err != nil {
		return err
	}
	const line = "======================================\n"
	if cq.SubscriptionData != nil {
		fmt.Fprintf(a.out, "Subscription data: \n%s\n", subscriptionJSON(cq.SubscriptionData))
		fmt.Fprint(a.out, line)
	}
	if cq.FilterData != nil {
		fmt.Fprintf(a.out, "Filter data: \n%s\n", *cq.FilterData)
		fmt.Fprint(a.out, line)
	}
	fmt.Fprintf(a.out, "Queue data: \nmax: %d, min: %d\n", cq.MaxQueueIndex, cq.MinQueueIndex)
	fmt.Fprint(a.out, line)
	for i, d := range cq.QueueData {
		fmt.Fprintf(a.out, "idx: %d\nConsumeQueueData{physicOffset=%d, physicSize=%d, tagsCode=%d, extendDataJson='%s', bitMap='%s', eval=%t, msg='%s'}\n%s",
			from+int64(i), d.PhysicOffset, d.PhysicSize, d.TagsCode, javaString(d.ExtendDataJSON), javaString(d.BitMap), d.Eval, javaString(d.Msg), line)
	}
	return nil
}

// javaString is a Java String in a concatenation: "null" for none.
func javaString(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// subscriptionJSON is fastjson2's JSON.toJSONString(subscriptionData,
// PrettyFormat), as Apache's queryCq prints it: fields by name, null ones
// left out, the tag and code sets in the order of the HashSets the tool
// decoded, an item a line.
func subscriptionJSON(s *adminclient.SubscriptionData) string {
	tags := append([]string(nil), s.TagsSet...)
	message.HashMapOrder(tags, 16, message.JavaHash)
	codes := append([]int32(nil), s.CodeSet...)
	message.HashMapOrder(codes, 16, func(c int32) int32 { return c })
	tagList, codeList := fjSet{}, fjSet{}
	for _, t := range tags {
		tagList = append(tagList, fjString(t))
	}
	for _, c := range codes {
		codeList = append(codeList, fjInt(c))
	}
	expType := "TAG" // the field's initial value in Apache's class
	if s.ExpressionType != nil {
		expType = *s.ExpressionType
	}
	o := fjObject{{"classFilterMode", fjRaw(strconv.FormatBool(s.ClassFilterMode))}, {"codeSet", codeList},
		{"expressionType", fjString(expType)}}
	if s.SubString != nil {
		o = append(o, fjField{"subString", fjString(*s.SubString)})
	}
	o = append(o, fjField{"subVersion", fjRaw(strconv.FormatInt(s.SubVersion, 10))}, fjField{"tagsSet", tagList})
	if s.Topic != nil {
		o = append(o, fjField{"topic", fjString(*s.Topic)})
	}
	var b strings.Builder
	o.write(&b, 0)
	return b.String()
}
