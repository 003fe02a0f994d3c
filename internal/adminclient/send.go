package adminclient

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// SendResult is what a send answered (SendResult).
type SendResult struct {
	Status      string // SEND_OK, FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT, SLAVE_NOT_AVAILABLE
	MsgID       string // the UNIQ_KEY the client gave the message
	OffsetMsgID string
	Queue       MessageQueue
	QueueOffset int64
}

// OutMessage is a message to send (Message(topic, tags, keys, body)).
type OutMessage struct {
	Topic, Tags, Keys string
	Body              []byte
}

var uniqIDs = message.NewUniqIDGen(netip.AddrFrom4([4]byte{127, 0, 0, 1}), os.Getpid(), rand.Int32())

// Send sends m as DefaultMQProducer.send from producerGroup: to queue
// queueID of brokerName when queueID >= 0, else to a write queue of the
// topic's route picked at random (Apache: round robin from a random start).
func (c *Client) Send(producerGroup string, m OutMessage, brokerName string, queueID int) (*SendResult, error) {
	r, err := c.Route(m.Topic)
	if err != nil {
		return nil, err
	}
	return c.SendRoute(r, producerGroup, m, brokerName, queueID)
}

// SendRoute is Send with the topic's route already known (a producer's
// cache of it).
func (c *Client) SendRoute(r *Route, producerGroup string, m OutMessage, brokerName string, queueID int) (*SendResult, error) {
	type target struct {
		name string
		q    int
	}
	var targets []target
	if queueID >= 0 {
		targets = append(targets, target{brokerName, queueID})
	} else {
		for _, qd := range r.QueueDatas {
			if qd.Perm&2 == 0 { // PermName.isWriteable
				continue
			}
			for q := 0; q < int(qd.WriteQueueNums) && q < 1<<16; q++ {
				targets = append(targets, target{qd.BrokerName, q})
			}
		}
		if len(targets) == 0 {
			return nil, fmt.Errorf("no writable queue in the route of %s", m.Topic)
		}
	}
	t := targets[rand.IntN(len(targets))]
	addr := r.Masters()[t.name]
	if addr == "" {
		return nil, fmt.Errorf("the broker[%s] does not exist", t.name)
	}
	id := uniqIDs.Next(time.Now())
	var props strings.Builder
	prop := func(k, v string) {
		props.WriteString(k)
		props.WriteByte(message.NameValueSeparator)
		props.WriteString(v)
		props.WriteByte(message.PropertySeparator)
	}
	if m.Tags != "" {
		prop(message.PropTags, m.Tags)
	}
	if m.Keys != "" {
		prop(message.PropKeys, m.Keys)
	}
	prop(message.PropWaitStoreMsgOK, "true")
	prop(message.PropUniqClientMessageID, id)
	ps := strings.TrimSuffix(props.String(), string(rune(message.PropertySeparator)))
	// SendMessageRequestHeaderV2's one-letter names
	ext := map[string]string{"a": producerGroup, "b": m.Topic, "c": "TBW102", "d": "4", "e": strconv.Itoa(t.q),
		"f": "0", "g": strconv.FormatInt(time.Now().UnixMilli(), 10), "h": "0", "i": ps, "j": "0", "k": "false",
		"m": "false", "n": t.name}
	resp, err := c.Invoke(addr, remoting.SendMessageV2, ext, m.Body)
	if err != nil {
		return nil, err
	}
	status := ""
	switch resp.Code {
	case remoting.Success:
		status = "SEND_OK"
	case remoting.FlushDiskTimeout:
		status = "FLUSH_DISK_TIMEOUT"
	case remoting.FlushSlaveTimeout:
		status = "FLUSH_SLAVE_TIMEOUT"
	case remoting.SlaveNotAvailable:
		status = "SLAVE_NOT_AVAILABLE"
	default:
		return nil, &CodeError{Addr: addr, Code: resp.Code, Remark: resp.Remark}
	}
	qid, err := strconv.Atoi(resp.Str("queueId"))
	if err != nil {
		return nil, fmt.Errorf("%s: send: queueId %q", addr, resp.Str("queueId"))
	}
	off, _ := strconv.ParseInt(resp.Str("queueOffset"), 10, 64)
	return &SendResult{Status: status, MsgID: id, OffsetMsgID: resp.Str("msgId"),
		Queue: MessageQueue{Topic: m.Topic, BrokerName: t.name, QueueID: qid}, QueueOffset: off}, nil
}

// PullResult is one pull's answer (PullResult).
type PullResult struct {
	Status          string // FOUND, NO_NEW_MSG, NO_MATCHED_MSG, OFFSET_ILLEGAL
	NextBeginOffset int64
	MinOffset       int64
	MaxOffset       int64
	Msgs            []*Message
}

// Pull pulls up to maxNums messages of mq from offset as group (the tools'
// DefaultMQPullConsumer, no suspension) whose tags match subExpr ("*",
// "TagA || TagB"), each message with MIN_OFFSET and MAX_OFFSET set as the
// client's processPullResult; the broker filters by tag hash, the client
// again by tag.
func (c *Client) Pull(addr, group string, mq MessageQueue, offset int64, maxNums int, subExpr string) (*PullResult, error) {
	if subExpr == "" {
		subExpr = "*"
	}
	resp, err := c.Invoke(addr, remoting.PullMessage, map[string]string{
		"consumerGroup": group, "topic": mq.Topic, "queueId": strconv.Itoa(mq.QueueID),
		"queueOffset": strconv.FormatInt(offset, 10), "maxMsgNums": strconv.Itoa(maxNums), "sysFlag": "4", "commitOffset": "0",
		"suspendTimeoutMillis": "0", "subscription": subExpr, "subVersion": "0", "expressionType": "TAG",
		"bname": mq.BrokerName}, nil)
	if err != nil {
		return nil, err
	}
	pr := &PullResult{}
	switch resp.Code {
	case remoting.Success:
		pr.Status = "FOUND"
	case remoting.PullNotFound:
		pr.Status = "NO_NEW_MSG"
	case remoting.PullRetryImmediately:
		pr.Status = "NO_MATCHED_MSG"
	case remoting.PullOffsetMoved:
		pr.Status = "OFFSET_ILLEGAL"
	default:
		return nil, &CodeError{Addr: addr, Code: resp.Code, Remark: resp.Remark}
	}
	for _, f := range []struct {
		name string
		dst  *int64
	}{{"nextBeginOffset", &pr.NextBeginOffset}, {"minOffset", &pr.MinOffset}, {"maxOffset", &pr.MaxOffset}} {
		if *f.dst, err = strconv.ParseInt(resp.Str(f.name), 10, 64); err != nil {
			return nil, fmt.Errorf("%s: pull: %s %q", addr, f.name, resp.Str(f.name))
		}
	}
	if pr.Status != "FOUND" {
		return pr, nil
	}
	all, err := decodeMessages(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: pull: %w", addr, err)
	}
	tags := subscribedTags(subExpr)
	for _, m := range all {
		if t, ok := m.Prop(message.PropTags); tags == nil || ok && tags[t] {
			pr.Msgs = append(pr.Msgs, m)
		}
	}
	for _, m := range pr.Msgs {
		m.put(message.PropMinOffset, resp.Str("minOffset"))
		m.put(message.PropMaxOffset, resp.Str("maxOffset"))
		m.BrokerName = mq.BrokerName
	}
	return pr, nil
}

// subscribedTags is FilterAPI.buildSubscriptionData's tag set: nil for
// "*" or "" (every message).
func subscribedTags(expr string) map[string]bool {
	expr = strings.TrimSpace(expr)
	if expr == "" || expr == "*" {
		return nil
	}
	out := map[string]bool{}
	for _, t := range strings.Split(expr, "||") {
		if t = strings.TrimSpace(t); t != "" {
			out[t] = true
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
