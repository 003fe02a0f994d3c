package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rocketgo/rocketgo/internal/adminclient"
	"github.com/rocketgo/rocketgo/message"
)

// timestampFormat is PrintMessageSubCommand.timestampFormat: milliseconds
// or local "yyyy-MM-dd#HH:mm:ss:SSS".
func timestampFormat(s string) (int64, error) {
	if s == "now" { // not a number, nor a date: Apache fails on it
		return 0, fmt.Errorf("%q: not milliseconds or yyyy-MM-dd#HH:mm:ss:SSS", s)
	}
	return parseResetTime(s, time.Now())
}

// bodyString is new String(body, charset) for the charsets a Go program
// has: UTF-8 (invalid bytes as U+FFFD, as Java) and ISO-8859-1.
func bodyString(b []byte, charset string) (string, error) {
	switch strings.ToUpper(charset) {
	case "UTF-8", "UTF8":
		if utf8.Valid(b) {
			return string(b), nil
		}
		return strings.ToValidUTF8(string(b), "\uFFFD"), nil
	case "ISO-8859-1", "LATIN1":
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c)
		}
		return string(r), nil
	}
	return "", fmt.Errorf("charset %s is not supported by this mqadmin (UTF-8, ISO-8859-1)", charset)
}

// pullRange pulls mq from lo to hi (exclusive), 32 at a time, calling fn
// with each result, until hi, an empty queue or fn says stop.
func (a *admin) pullRange(addr string, mq adminclient.MessageQueue, lo, hi int64, subExpr string, fn func(pr *adminclient.PullResult, next int64) (stop bool)) {
	for off := lo; off < hi; {
		pr, err := a.Pull(addr, toolsConsumerGroup, mq, off, 32, subExpr)
		if err != nil {
			fmt.Fprintf(a.errOut, "%v\n", err) // Apache: the stack trace
			return
		}
		if pr.NextBeginOffset <= off && pr.Status == "FOUND" {
			return // a broker that does not move on would loop
		}
		off = pr.NextBeginOffset
		if fn(pr, off) {
			return
		}
	}
}

func printMsg(a *admin, o *options, args []string) error {
	topic := o.Req("t", "topic", "topic name")
	charset := o.String("c", "charsetName ", "CharsetName(eg: UTF-8,GBK)")
	sub := o.String("s", "subExpression ", "Subscribe Expression(eg: TagA || TagB)")
	begin := o.String("b", "beginTimestamp ", "Begin timestamp[currentTimeMillis|yyyy-MM-dd#HH:mm:ss:SSS]")
	end := o.String("e", "endTimestamp ", "End timestamp[currentTimeMillis|yyyy-MM-dd#HH:mm:ss:SSS]")
	printBody := o.String("d", "printBody ", "print body")
	lmq := o.String("l", "lmqParentTopic", "Lmq parent topic, lmq is used to find the route.")
	if err := a.parse(o, args); err != nil {
		return err
	}
	t := strings.TrimSpace(*topic)
	cs := "UTF-8"
	if o.Given("c") {
		cs = strings.TrimSpace(*charset)
	}
	expr := "*"
	if o.Given("s") {
		expr = strings.TrimSpace(*sub)
	}
	withBody := !o.Given("d") || javaBool(*printBody)
	routeTopic := t
	if o.Given("l") {
		routeTopic = strings.TrimSpace(*lmq)
	}
	r, err := a.Route(routeTopic)
	if err != nil {
		return err
	}
	for _, mq := range subscribeQueues(r, t) {
		c := &consumer{a: a, topic: t, route: r}
		addr, lo, hi, err := c.rangeByTime(o, mq, *begin, *end)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.out, "minOffset=%d, maxOffset=%d, %s\n", lo, hi, mqString(mq))
		var perr error
		a.pullRange(addr, mq, lo, hi, expr, func(pr *adminclient.PullResult, next int64) bool {
			switch pr.Status {
			case "FOUND":
				perr = a.printMessages(pr.Msgs, cs, true, withBody)
				return perr != nil
			case "NO_MATCHED_MSG":
				fmt.Fprintf(a.out, "%s no matched msg. status=%s, offset=%d\n", mqString(mq), pr.Status, next)
				return false
			}
			fmt.Fprintf(a.out, "%s print msg finished. status=%s, offset=%d\n", mqString(mq), pr.Status, next)
			return true
		})
		if perr != nil {
			return perr
		}
		fmt.Fprintf(a.out, "--------------------------------------------------------\n")
	}
	return nil
}

// printMessages is PrintMessageByQueueCommand.printMessage.
func (a *admin) printMessages(ms []*adminclient.Message, charset string, printMsg, printBody bool) error {
	if !printMsg {
		return nil
	}
	for _, m := range ms {
		body := "NOT PRINT BODY"
		if printBody {
			var err error
			if body, err = bodyString(m.Body, charset); err != nil {
				return err
			}
		}
		fmt.Fprintf(a.out, "MSGID: %s %s BODY: %s\n", m.MsgID(), messageExtString(m), body)
	}
	return nil
}

func printMsgByQueue(a *admin, o *options, args []string) error {
	topic := o.Req("t", "topic", "topic name")
	broker := o.Req("a", "brokerName ", "broker name")
	queue := o.Req("i", "queueId ", "queue id")
	charset := o.String("c", "charsetName ", "CharsetName(eg: UTF-8,GBK)")
	sub := o.String("s", "subExpression ", "Subscribe Expression(eg: TagA || TagB)")
	begin := o.String("b", "beginTimestamp ", "Begin timestamp[currentTimeMillis|yyyy-MM-dd#HH:mm:ss:SSS]")
	end := o.String("e", "endTimestamp ", "End timestamp[currentTimeMillis|yyyy-MM-dd#HH:mm:ss:SSS]")
	pMsg := o.String("p", "print msg", "print msg. eg: true | false(default)")
	pBody := o.String("d", "printBody ", "print body. eg: true | false(default)")
	calc := o.String("f", "calculate", "calculate by tag. eg: true | false(default)")
	if err := a.parse(o, args); err != nil {
		return err
	}
	cs := "UTF-8"
	if o.Given("c") {
		cs = strings.TrimSpace(*charset)
	}
	printMsg, printBody, byTag := javaBool(*pMsg), javaBool(*pBody), javaBool(*calc)
	expr := "*"
	if o.Given("s") {
		expr = strings.TrimSpace(*sub)
	}
	t := strings.TrimSpace(*topic)
	q, err := strconv.ParseInt(strings.TrimSpace(*queue), 10, 32)
	if err != nil {
		return fmt.Errorf("-i: %q is not a 32-bit integer", *queue)
	}
	mq := adminclient.MessageQueue{Topic: t, BrokerName: strings.TrimSpace(*broker), QueueID: int(q)}
	r, err := a.Route(t)
	if err != nil {
		return err
	}
	c := &consumer{a: a, topic: t, route: r}
	addr, lo, hi, err := c.rangeByTime(o, mq, *begin, *end)
	if err != nil {
		return err
	}
	counts := map[string]int64{}
	var perr error
	a.pullRange(addr, mq, lo, hi, expr, func(pr *adminclient.PullResult, _ int64) bool {
		if pr.Status != "FOUND" {
			return true
		}
		if byTag {
			for _, m := range pr.Msgs {
				if tag, ok := m.Prop(message.PropTags); ok && strings.TrimSpace(tag) != "" {
					counts[tag]++
				}
			}
		}
		perr = a.printMessages(pr.Msgs, cs, printMsg, printBody)
		return perr != nil
	})
	if perr != nil {
		return perr
	}
	if byTag {
		tags := make([]string, 0, len(counts))
		for t := range counts {
			tags = append(tags, t)
		}
		// by count, descending; equal counts by tag (Apache: the HashMap's order)
		sort.Slice(tags, func(i, j int) bool {
			if counts[tags[i]] != counts[tags[j]] {
				return counts[tags[i]] > counts[tags[j]]
			}
			return tags[i] < tags[j]
		})
		for _, t := range tags {
			fmt.Fprintf(a.out, "Tag: %-30s Count: %d\n", t, counts[t])
		}
	}
	return nil
}

// rangeByTime is the queue's address and offsets [lo, hi), narrowed to the
// times of -b and -e when given (Apache's printMsg and printMsgByQueue).
func (c *consumer) rangeByTime(o *options, mq adminclient.MessageQueue, begin, end string) (addr string, lo, hi int64, err error) {
	if addr, lo, hi, err = c.bounds(mq, 0, 0); err != nil {
		return "", 0, 0, err
	}
	for _, b := range []struct {
		flag, value string
		dst         *int64
	}{{"b", begin, &lo}, {"e", end, &hi}} {
		if !o.Given(b.flag) {
			continue
		}
		ms, err := timestampFormat(strings.TrimSpace(b.value))
		if err != nil {
			return "", 0, 0, err
		}
		if *b.dst, err = c.a.SearchOffset(addr, mq, ms); err != nil {
			return "", 0, 0, err
		}
	}
	return addr, lo, hi, nil
}
