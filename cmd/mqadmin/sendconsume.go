package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/internal/adminclient"
	"github.com/rocketgo/rocketgo/message"
)

func sendMessage(a *admin, o *options, args []string) error {
	topic := o.Req("t", "topic", "Topic name")
	body := o.Req("p", "body", "UTF-8 string format of the message body")
	keys := o.String("k", "key", "Message keys")
	tags := o.String("c", "tags", "Message tags")
	broker := o.String("b", "broker", "Send message to target broker")
	qid := o.String("i", "qid", "Send message to target queue")
	trace := o.String("m", "msgTraceEnable", "Message Trace Enable, Default: false")
	if err := a.parse(o, args); err != nil {
		return err
	}
	m := adminclient.OutMessage{Topic: strings.TrimSpace(*topic), Body: []byte(strings.TrimSpace(*body)),
		Tags: strings.TrimSpace(*tags), Keys: strings.TrimSpace(*keys)}
	queue := -1
	if o.Given("i") {
		if !o.Given("b") {
			fmt.Fprint(a.out, "Broker name must be set if the queue is chosen!")
			return nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(*qid), 10, 32)
		if err != nil {
			return fmt.Errorf("-i: %q is not a 32-bit integer", *qid)
		}
		queue = int(n)
	}
	if javaBool(*trace) {
		return errors.New("-m true (message trace) is not implemented by this mqadmin")
	}
	// Apache's producer group: the time in ms
	res, err := a.Send(strconv.FormatInt(time.Now().UnixMilli(), 10), m, strings.TrimSpace(*broker), queue)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out, "%-32s  %-4s  %-20s    %s\n", "#Broker Name", "#QID", "#Send Result", "#MsgId")
	fmt.Fprintf(a.out, "%-32s  %-4d  %-20s    %s\n", res.Queue.BrokerName, res.Queue.QueueID, res.Status, res.MsgID)
	return nil
}

// toolsConsumerGroup is MixAll.TOOLS_CONSUMER_GROUP.
const toolsConsumerGroup = "TOOLS_CONSUMER"

func consumeMessage(a *admin, o *options, args []string) error {
	topic := o.Req("t", "topic", "Topic name")
	broker := o.String("b", "brokerName", "Broker name")
	queue := o.String("i", "queueId", "Queue Id")
	offset := o.String("o", "offset", "Queue offset")
	group := o.String("g", "consumerGroup", "Consumer group name")
	begin := o.String("s", "beginTimestamp ", "Begin timestamp[currentTimeMillis|yyyy-MM-dd#HH:mm:ss:SSS]")
	end := o.String("e", "endTimestamp ", "End timestamp[currentTimeMillis|yyyy-MM-dd#HH:mm:ss:SSS]")
	count := o.String("c", "MessageNumber", "Number of message to be consumed")
	if err := a.parse(o, args); err != nil {
		return err
	}
	c := &consumer{a: a, topic: strings.TrimSpace(*topic), group: toolsConsumerGroup, count: 128}
	if o.Given("g") {
		c.group = strings.TrimSpace(*group)
	}
	var err error
	if o.Given("c") {
		if c.count, err = strconv.ParseInt(strings.TrimSpace(*count), 10, 64); err != nil {
			return fmt.Errorf("-c: %q is not a number", *count)
		}
		if c.count <= 0 {
			fmt.Fprint(a.out, "Please input a positive messageNumber!")
			return nil
		}
	}
	byQueue := false
	if o.Given("i") {
		if !o.Given("b") {
			fmt.Fprint(a.out, "Please set the brokerName before queueId!")
			return nil
		}
		byQueue = true
	}
	var from int64
	if o.Given("o") {
		if !byQueue {
			fmt.Fprint(a.out, "Please set queueId before offset!")
			return nil
		}
		if from, err = strconv.ParseInt(strings.TrimSpace(*offset), 10, 64); err != nil {
			return fmt.Errorf("-o: %q is not a number", *offset)
		}
	}
	now := time.Now()
	var tBegin, tEnd int64
	if o.Given("s") {
		if tBegin, err = parseResetTime(strings.TrimSpace(*begin), now); err != nil {
			return err
		}
		if tBegin > now.UnixMilli() {
			fmt.Fprint(a.out, "Please set the beginTimestamp before now!")
			return nil
		}
	}
	if o.Given("e") {
		if tEnd, err = parseResetTime(strings.TrimSpace(*end), now); err != nil {
			return err
		}
		if tEnd > now.UnixMilli() {
			fmt.Fprint(a.out, "Please set the endTimestamp before now!")
			return nil
		}
		if tBegin > tEnd {
			fmt.Fprint(a.out, "Please make sure that the beginTimestamp is less than or equal to the endTimestamp")
			return nil
		}
	}
	r, err := a.Route(c.topic)
	if err != nil {
		return err
	}
	c.route = r
	if byQueue {
		q, err := strconv.ParseInt(strings.TrimSpace(*queue), 10, 32)
		if err != nil {
			return fmt.Errorf("-i: %q is not a 32-bit integer", *queue)
		}
		return c.byCondition(adminclient.MessageQueue{Topic: c.topic, BrokerName: strings.TrimSpace(*broker), QueueID: int(q)}, from, tBegin, tEnd)
	}
	return c.all(tBegin, tEnd)
}

// consumer is ConsumeMessageCommand's pull consumer.
type consumer struct {
	a     *admin
	topic string
	group string
	count int64
	route *adminclient.Route
}

func (c *consumer) addr(mq adminclient.MessageQueue) (string, error) {
	for _, bd := range c.route.BrokerDatas {
		if bd.BrokerName == mq.BrokerName {
			if addr := bd.SelectAddr(); addr != "" {
				return addr, nil
			}
		}
	}
	return "", fmt.Errorf("the broker[%s] not exist", mq.BrokerName)
}

// bounds are the queue's min and max offsets, or those at the times.
func (c *consumer) bounds(mq adminclient.MessageQueue, tBegin, tEnd int64) (string, int64, int64, error) {
	addr, err := c.addr(mq)
	if err != nil {
		return "", 0, 0, err
	}
	lo, err := c.a.MinOffset(addr, mq.Topic, mq.QueueID)
	if err != nil {
		return "", 0, 0, err
	}
	hi, err := c.a.MaxOffset(addr, mq.Topic, mq.QueueID)
	if err != nil {
		return "", 0, 0, err
	}
	if tBegin > 0 {
		if lo, err = c.a.SearchOffset(addr, mq, tBegin); err != nil {
			return "", 0, 0, err
		}
	}
	if tEnd > 0 {
		if hi, err = c.a.SearchOffset(addr, mq, tEnd); err != nil {
			return "", 0, 0, err
		}
	}
	return addr, lo, hi, nil
}

// all is executeDefault: every readable queue, in the order of Apache's
// HashSet of them, until count messages are printed.
func (c *consumer) all(tBegin, tEnd int64) error {
	left := c.count
	for _, mq := range subscribeQueues(c.route, c.topic) {
		if left == 0 {
			return nil
		}
		addr, lo, hi, err := c.bounds(mq, tBegin, tEnd)
		if err != nil {
			return err
		}
		if hi-lo > left {
			fmt.Fprintf(c.a.out, "The older %d message of the %d queue will be provided\n", left, mq.QueueID)
			hi = lo + left - 1
			left = 0
		} else {
			left = left - (hi - lo) - 1
		}
		c.pullQueue(addr, mq, lo, hi)
	}
	return nil
}

// byCondition is executeByCondition: one queue from offset.
func (c *consumer) byCondition(mq adminclient.MessageQueue, offset, tBegin, tEnd int64) error {
	addr, lo, hi, err := c.bounds(mq, tBegin, tEnd)
	if err != nil {
		return err
	}
	if offset > hi {
		fmt.Fprintf(c.a.out, "%s no matched msg, offset=%d\n", mqString(mq), offset)
		return nil
	}
	lo = max(lo, offset)
	if hi-lo > c.count {
		fmt.Fprintf(c.a.out, "The oldler %d message will be provided\n", c.count)
		hi = lo + c.count - 1
	}
	c.pullQueue(addr, mq, lo, hi)
	return nil
}

// pullQueue is pullMessageByQueue: pulls from lo to hi, printing what it
// finds; a failed pull is printed and ends the queue.
func (c *consumer) pullQueue(addr string, mq adminclient.MessageQueue, lo, hi int64) {
	for off := lo; off <= hi; {
		pr, err := c.a.Pull(addr, c.group, mq, off, int(int32(hi-off+1)), "*") // Apache's (int) cast
		if err != nil {
			fmt.Fprintf(c.a.errOut, "%v\n", err) // Apache: the stack trace
			return
		}
		if pr.NextBeginOffset <= off && pr.Status == "FOUND" {
			return // a broker that does not move on would loop
		}
		off = pr.NextBeginOffset
		switch pr.Status {
		case "FOUND":
			fmt.Fprint(c.a.out, "Consume ok\n")
			for _, m := range pr.Msgs {
				fmt.Fprintf(c.a.out, "MSGID: %s %s BODY: %s\n", m.MsgID(), messageExtString(m), string(m.Body))
			}
		case "NO_MATCHED_MSG":
			fmt.Fprintf(c.a.out, "%s no matched msg. status=%s, offset=%d\n", mqString(mq), pr.Status, off)
		default:
			fmt.Fprintf(c.a.out, "%s print msg finished. status=%s, offset=%d\n", mqString(mq), pr.Status, off)
			return
		}
	}
}

// mqString is MessageQueue.toString.
func mqString(mq adminclient.MessageQueue) string {
	return fmt.Sprintf("MessageQueue [topic=%s, brokerName=%s, queueId=%d]", mq.Topic, mq.BrokerName, mq.QueueID)
}

// subscribeQueues is fetchSubscribeMessageQueues: a queue per read queue of
// each readable broker, in the order of the HashSet Apache returns them in.
func subscribeQueues(r *adminclient.Route, topic string) []adminclient.MessageQueue {
	var out []adminclient.MessageQueue
	for _, qd := range r.QueueDatas {
		if qd.Perm&permRead == 0 {
			continue
		}
		for q := 0; q < int(qd.ReadQueueNums) && q < 1<<16; q++ {
			out = append(out, adminclient.MessageQueue{Topic: topic, BrokerName: qd.BrokerName, QueueID: q})
		}
	}
	message.HashMapOrder(out, 16, func(mq adminclient.MessageQueue) int32 {
		h := int32(1)
		h = 31*h + message.JavaHash(mq.BrokerName)
		h = 31*h + int32(mq.QueueID)
		return 31*h + message.JavaHash(mq.Topic)
	})
	return out
}

// messageExtString is MessageExt.toString of a pulled message.
func messageExtString(m *adminclient.Message) string {
	body := make([]string, len(m.Body))
	for i, b := range m.Body {
		body[i] = strconv.Itoa(int(int8(b)))
	}
	return messageExtText(m, m.BrokerName, "["+strings.Join(body, ", ")+"]")
}

// messageExtText is MessageExt.toString with the broker name and the body
// (Arrays.toString of it, "null" for none) as given.
func messageExtText(m *adminclient.Message, brokerName, body string) string {
	txID := "null"
	if v, ok := m.Prop(message.PropTransactionPrepared); ok && javaBool(v) {
		txID, _ = m.Prop(message.PropUniqClientMessageID)
	}
	return fmt.Sprintf("MessageExt [brokerName=%s, queueId=%d, storeSize=%d, queueOffset=%d, sysFlag=%d, bornTimestamp=%d, "+
		"bornHost=/%s, storeTimestamp=%d, storeHost=/%s, msgId=%s, commitLogOffset=%d, bodyCRC=%d, reconsumeTimes=%d, "+
		"preparedTransactionOffset=%d, toString()=Message{topic='%s', flag=%d, properties=%s, body=%s, transactionId='%s'}]",
		brokerName, m.QueueID, m.StoreSize, m.QueueOffset, m.SysFlag, m.BornTimestamp, m.BornHost, m.StoreTimestamp,
		m.StoreHost, m.OffsetMsgID(), m.PhysicalOffset, m.BodyCRC, m.ReconsumeTimes, m.PreparedTransactionOffset,
		m.Topic, m.Flag, javaMapString(m.Props), body, txID)
}
