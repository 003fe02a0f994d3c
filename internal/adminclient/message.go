package adminclient

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// Message is a stored message as a client decodes it (MessageClientExt).
type Message struct {
	message.Record
	// Props are the properties in the order they were stored, later
	// duplicates overwriting in place (Java's HashMap.put); a pull adds
	// MIN_OFFSET and MAX_OFFSET at the end.
	Props []Property
	// StoreSize is the record's length; BrokerName is set by a pull.
	StoreSize  int
	BrokerName string
}

// Property is one name and value.
type Property struct{ Name, Value string }

// Prop returns the value of name, ok false when absent.
func (m *Message) Prop(name string) (string, bool) {
	for _, p := range m.Props {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}

func (m *Message) put(name, value string) {
	for i := range m.Props {
		if m.Props[i].Name == name {
			m.Props[i].Value = value
			return
		}
	}
	m.Props = append(m.Props, Property{name, value})
}

// OffsetMsgID is the broker's message id: store host and commit-log offset.
func (m *Message) OffsetMsgID() string {
	return message.OffsetMsgID(m.StoreHost, m.PhysicalOffset)
}

// MsgID is MessageClientExt.getMsgId: the producer's UNIQ_KEY, else the
// offset message id.
func (m *Message) MsgID() string {
	if v, ok := m.Prop(message.PropUniqClientMessageID); ok {
		return v
	}
	return m.OffsetMsgID()
}

// decodeMessages decodes a body of stored records (pull, query, view).
func decodeMessages(b []byte) ([]*Message, error) {
	var out []*Message
	for len(b) > 0 {
		m, rest, err := DecodeMessage(b)
		if err != nil {
			return out, fmt.Errorf("message %d: %w", len(out), err)
		}
		out = append(out, m)
		b = rest
	}
	return out, nil
}

// DecodeMessage decodes the stored record (the commit log's layout) at the
// head of b, its body copied, and returns the rest of b.
func DecodeMessage(b []byte) (*Message, []byte, error) {
	r, rest, err := message.DecodeRecord(b)
	if err != nil {
		return nil, b, err
	}
	r.Body = append([]byte(nil), r.Body...)
	m := &Message{Record: r, StoreSize: len(b) - len(rest)}
	for _, chunk := range strings.Split(r.Properties, string(rune(message.PropertySeparator))) {
		k, v, ok := strings.Cut(chunk, string(rune(message.NameValueSeparator)))
		if ok && k != "" && v != "" { // Java skips a chunk without both
			m.put(k, v)
		}
	}
	return m, rest, nil
}

// ViewMessage is VIEW_MESSAGE_BY_ID: the record at a commit-log offset.
func (c *Client) ViewMessage(addr string, phyOffset int64) (*Message, error) {
	resp, err := c.Call(addr, remoting.ViewMessageByID, map[string]string{"offset": strconv.FormatInt(phyOffset, 10)}, nil)
	if err != nil {
		return nil, err
	}
	ms, err := decodeMessages(resp.Body)
	if err != nil || len(ms) == 0 {
		return nil, fmt.Errorf("%s: view message: %v (%d records)", addr, err, len(ms))
	}
	return ms[0], nil
}

// QueryMessage is QUERY_MESSAGE: the messages of topic indexed under key
// (a message key, or with uniq the producer's UNIQ_KEY) stored between
// begin and end, at most maxNum.
func (c *Client) QueryMessage(addr, topic, key string, maxNum int, begin, end int64, uniq bool) ([]*Message, error) {
	ext := map[string]string{"topic": topic, "key": key, "maxNum": strconv.Itoa(maxNum),
		"beginTimestamp": strconv.FormatInt(begin, 10), "endTimestamp": strconv.FormatInt(end, 10)}
	if uniq {
		ext["_UNIQUE_KEY_QUERY"] = "true"
	}
	resp, err := c.Call(addr, remoting.QueryMessage, ext, nil)
	if err != nil {
		return nil, err
	}
	return decodeMessages(resp.Body)
}

// QueryAll is MQAdminImpl.queryMessage: QueryMessage on every broker of
// topic's route, keeping the messages of topic whose keys (or UNIQ_KEY)
// hold key.
func (c *Client) QueryAll(topic, key string, maxNum int, begin, end int64, uniq bool) ([]*Message, error) {
	r, err := c.Route(topic)
	if err != nil {
		return nil, err
	}
	var out []*Message
	for _, bd := range r.SortedBrokers() {
		addr := bd.SelectAddr()
		if addr == "" {
			continue
		}
		ms, err := c.QueryMessage(addr, topic, key, maxNum, begin, end, uniq)
		if err != nil {
			continue // Apache logs a broker's failure and keeps the others' answers
		}
		for _, m := range ms {
			if uniq {
				if m.MsgID() == key {
					out = append(out, m)
				}
				continue
			}
			keys, ok := m.Prop(message.PropKeys)
			if !ok || m.Topic != topic {
				continue
			}
			for _, k := range strings.Split(keys, " ") {
				if k == key {
					out = append(out, m)
					break
				}
			}
		}
	}
	return out, nil
}

// PullOne pulls the message at offset of one queue (DefaultMQPullConsumer's
// pull of one message, as the tools' consumer group); nil when there is
// none there.
func (c *Client) PullOne(addr string, mq MessageQueue, offset int64) (*Message, error) {
	resp, err := c.Invoke(addr, remoting.PullMessage, map[string]string{
		"consumerGroup": "TOOLS_CONSUMER", "topic": mq.Topic, "queueId": strconv.Itoa(mq.QueueID),
		"queueOffset": strconv.FormatInt(offset, 10), "maxMsgNums": "1", "sysFlag": "4", "commitOffset": "0",
		"suspendTimeoutMillis": "0", "subscription": "*", "subVersion": "0", "expressionType": "TAG",
		"bname": mq.BrokerName}, nil)
	if err != nil {
		return nil, err
	}
	switch resp.Code {
	case remoting.Success:
	case remoting.PullNotFound, remoting.PullRetryImmediately, remoting.PullOffsetMoved:
		return nil, nil
	default:
		return nil, &CodeError{Addr: addr, Code: resp.Code, Remark: resp.Remark}
	}
	ms, err := decodeMessages(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: pull: %w", addr, err)
	}
	if len(ms) == 0 {
		return nil, nil
	}
	m := ms[0]
	m.put(message.PropMinOffset, resp.Str("minOffset"))
	m.put(message.PropMaxOffset, resp.Str("maxOffset"))
	return m, nil
}

// ConsumedBy is QUERY_TOPIC_CONSUME_BY_WHO: the groups that consume topic.
func (c *Client) ConsumedBy(addr, topic string) ([]string, error) {
	resp, err := c.Call(addr, remoting.QueryTopicConsumeByWho, map[string]string{"topic": topic}, nil)
	if err != nil {
		return nil, err
	}
	var gl struct {
		GroupList []string `json:"groupList"`
	}
	if err := json.Unmarshal(resp.Body, &gl); err != nil {
		return nil, fmt.Errorf("%s: groups of %s: %w", addr, topic, err)
	}
	return gl.GroupList, nil
}

// MaxTime is Java's Long.MAX_VALUE, the open end of a time range.
const MaxTime = math.MaxInt64
