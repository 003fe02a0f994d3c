package remoting

// The custom headers of the pop request family, field for field as Apache
// 5.3.3's PopMessageRequestHeader, PopMessageResponseHeader,
// AckMessageRequestHeader, ChangeInvisibleTimeRequestHeader/ResponseHeader,
// PeekMessageRequestHeader, NotificationRequestHeader/ResponseHeader and
// PollingInfoRequestHeader/ResponseHeader name them (the extFields keys are
// the Java field names). BATCH_ACK_MESSAGE has no custom header: its
// BatchAckMessageRequestBody travels as the JSON body.
//
// Decode reads a received command (a broker decoding a request, a client or
// proxy decoding a response); a field Apache marks @CFNotNull is required
// and reported with ErrMissingField / ErrBadField, the way the other
// handlers' parsers do. Encode writes the fields the way the Java client
// does: every non-null field, booleans as "true"/"false". The request
// headers all extend TopicQueueRequestHeader (RpcRequestHeader), whose
// "bname" (broker name) the 5.x client and proxy may set; it is kept.

import (
	"fmt"
	"strconv"
)

// PopMessageRequestHeader is POP_MESSAGE's request header. QueueID -1 asks
// the broker to pick among all readable queues; InitMode is the
// ConsumeInitMode (0 LAST, 1 MIN) used when the group has no offset yet.
type PopMessageRequestHeader struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32
	MaxMsgNums    int32
	InvisibleTime int64 // ms
	PollTime      int64 // ms the broker may hold the request
	BornTime      int64 // client clock, ms
	InitMode      int32
	ExpType       string // TAG or SQL92; "" = none
	Exp           string
	Order         bool
	AttemptID     string
	BrokerName    string // bname
}

// Decode reads the header from c.
func (h *PopMessageRequestHeader) Decode(c *Command) (err error) {
	if h.ConsumerGroup, err = c.RequireStr("consumerGroup"); err != nil {
		return err
	}
	if h.Topic, err = c.RequireStr("topic"); err != nil {
		return err
	}
	if h.QueueID, err = c.Int32("queueId"); err != nil {
		return err
	}
	if h.MaxMsgNums, err = c.Int32("maxMsgNums"); err != nil {
		return err
	}
	if h.InvisibleTime, err = c.Int64("invisibleTime"); err != nil {
		return err
	}
	if h.PollTime, err = c.Int64("pollTime"); err != nil {
		return err
	}
	if h.BornTime, err = c.Int64("bornTime"); err != nil {
		return err
	}
	if h.InitMode, err = c.Int32("initMode"); err != nil {
		return err
	}
	h.ExpType = c.Str("expType")
	h.Exp = c.Str("exp")
	h.Order = c.Bool("order")
	h.AttemptID = c.Str("attemptId")
	h.BrokerName = c.Str("bname")
	return nil
}

// Encode writes the header into c.
func (h *PopMessageRequestHeader) Encode(c *Command) {
	c.Set("consumerGroup", h.ConsumerGroup)
	c.Set("topic", h.Topic)
	c.SetInt64("queueId", int64(h.QueueID))
	c.SetInt64("maxMsgNums", int64(h.MaxMsgNums))
	c.SetInt64("invisibleTime", h.InvisibleTime)
	c.SetInt64("pollTime", h.PollTime)
	c.SetInt64("bornTime", h.BornTime)
	c.SetInt64("initMode", int64(h.InitMode))
	setOpt(c, "expType", h.ExpType)
	setOpt(c, "exp", h.Exp)
	c.Set("order", strconv.FormatBool(h.Order))
	setOpt(c, "attemptId", h.AttemptID)
	setOpt(c, "bname", h.BrokerName)
}

// PopMessageResponseHeader is POP_MESSAGE's response header. The three
// *Info strings are ExtraInfoUtil's per-queue summaries (start offsets,
// the offsets of the popped messages, FIFO consume counts), ";"-joined.
type PopMessageResponseHeader struct {
	PopTime         int64
	InvisibleTime   int64
	ReviveQid       int32
	RestNum         int64
	StartOffsetInfo string
	MsgOffsetInfo   string
	OrderCountInfo  string
}

// Decode reads the header from c.
func (h *PopMessageResponseHeader) Decode(c *Command) (err error) {
	if h.PopTime, err = c.Int64("popTime"); err != nil {
		return err
	}
	if h.InvisibleTime, err = c.Int64("invisibleTime"); err != nil {
		return err
	}
	if h.ReviveQid, err = c.Int32("reviveQid"); err != nil {
		return err
	}
	if h.RestNum, err = c.Int64("restNum"); err != nil {
		return err
	}
	h.StartOffsetInfo = c.Str("startOffsetInfo")
	h.MsgOffsetInfo = c.Str("msgOffsetInfo")
	h.OrderCountInfo = c.Str("orderCountInfo")
	return nil
}

// Encode writes the header into c.
func (h *PopMessageResponseHeader) Encode(c *Command) {
	c.SetInt64("popTime", h.PopTime)
	c.SetInt64("invisibleTime", h.InvisibleTime)
	c.SetInt64("reviveQid", int64(h.ReviveQid))
	c.SetInt64("restNum", h.RestNum)
	setOpt(c, "startOffsetInfo", h.StartOffsetInfo)
	setOpt(c, "msgOffsetInfo", h.MsgOffsetInfo)
	setOpt(c, "orderCountInfo", h.OrderCountInfo)
}

// AckMessageRequestHeader is ACK_MESSAGE's request header: ExtraInfo is the
// message's POP_CK property as the client received it, Offset its queue
// offset.
type AckMessageRequestHeader struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32
	ExtraInfo     string
	Offset        int64
	BrokerName    string // bname
}

// Decode reads the header from c.
func (h *AckMessageRequestHeader) Decode(c *Command) (err error) {
	if h.ConsumerGroup, err = c.RequireStr("consumerGroup"); err != nil {
		return err
	}
	if h.Topic, err = c.RequireStr("topic"); err != nil {
		return err
	}
	if h.QueueID, err = c.Int32("queueId"); err != nil {
		return err
	}
	if h.ExtraInfo, err = c.RequireStr("extraInfo"); err != nil {
		return err
	}
	if h.Offset, err = c.Int64("offset"); err != nil {
		return err
	}
	h.BrokerName = c.Str("bname")
	return nil
}

// Encode writes the header into c.
func (h *AckMessageRequestHeader) Encode(c *Command) {
	c.Set("consumerGroup", h.ConsumerGroup)
	c.Set("topic", h.Topic)
	c.SetInt64("queueId", int64(h.QueueID))
	c.Set("extraInfo", h.ExtraInfo)
	c.SetInt64("offset", h.Offset)
	setOpt(c, "bname", h.BrokerName)
}

// ChangeInvisibleTimeRequestHeader is CHANGE_MESSAGE_INVISIBLETIME's
// request header: the message named as by an ack, and its new invisible
// time counted from now.
type ChangeInvisibleTimeRequestHeader struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32
	ExtraInfo     string
	Offset        int64
	InvisibleTime int64  // ms
	BrokerName    string // bname
}

// Decode reads the header from c.
func (h *ChangeInvisibleTimeRequestHeader) Decode(c *Command) (err error) {
	if h.ConsumerGroup, err = c.RequireStr("consumerGroup"); err != nil {
		return err
	}
	if h.Topic, err = c.RequireStr("topic"); err != nil {
		return err
	}
	if h.QueueID, err = c.Int32("queueId"); err != nil {
		return err
	}
	if h.ExtraInfo, err = c.RequireStr("extraInfo"); err != nil {
		return err
	}
	if h.Offset, err = c.Int64("offset"); err != nil {
		return err
	}
	if h.InvisibleTime, err = c.Int64("invisibleTime"); err != nil {
		return err
	}
	h.BrokerName = c.Str("bname")
	return nil
}

// Encode writes the header into c.
func (h *ChangeInvisibleTimeRequestHeader) Encode(c *Command) {
	c.Set("consumerGroup", h.ConsumerGroup)
	c.Set("topic", h.Topic)
	c.SetInt64("queueId", int64(h.QueueID))
	c.Set("extraInfo", h.ExtraInfo)
	c.SetInt64("offset", h.Offset)
	c.SetInt64("invisibleTime", h.InvisibleTime)
	setOpt(c, "bname", h.BrokerName)
}

// ChangeInvisibleTimeResponseHeader is CHANGE_MESSAGE_INVISIBLETIME's
// response header: the new checkpoint's pop time, invisible time and revive
// queue, from which the client builds the message's new handle.
type ChangeInvisibleTimeResponseHeader struct {
	PopTime       int64
	InvisibleTime int64
	ReviveQid     int32
}

// Decode reads the header from c.
func (h *ChangeInvisibleTimeResponseHeader) Decode(c *Command) (err error) {
	if h.PopTime, err = c.Int64("popTime"); err != nil {
		return err
	}
	if h.InvisibleTime, err = c.Int64("invisibleTime"); err != nil {
		return err
	}
	h.ReviveQid, err = c.Int32("reviveQid")
	return err
}

// Encode writes the header into c.
func (h *ChangeInvisibleTimeResponseHeader) Encode(c *Command) {
	c.SetInt64("popTime", h.PopTime)
	c.SetInt64("invisibleTime", h.InvisibleTime)
	c.SetInt64("reviveQid", int64(h.ReviveQid))
}

// PeekMessageRequestHeader is PEEK_MESSAGE's request header.
type PeekMessageRequestHeader struct {
	Topic         string
	QueueID       int32
	MaxMsgNums    int32
	ConsumerGroup string
	BrokerName    string // bname
}

// Decode reads the header from c.
func (h *PeekMessageRequestHeader) Decode(c *Command) (err error) {
	if h.Topic, err = c.RequireStr("topic"); err != nil {
		return err
	}
	if h.QueueID, err = c.Int32("queueId"); err != nil {
		return err
	}
	if h.MaxMsgNums, err = c.Int32("maxMsgNums"); err != nil {
		return err
	}
	if h.ConsumerGroup, err = c.RequireStr("consumerGroup"); err != nil {
		return err
	}
	h.BrokerName = c.Str("bname")
	return nil
}

// Encode writes the header into c.
func (h *PeekMessageRequestHeader) Encode(c *Command) {
	c.Set("topic", h.Topic)
	c.SetInt64("queueId", int64(h.QueueID))
	c.SetInt64("maxMsgNums", int64(h.MaxMsgNums))
	c.Set("consumerGroup", h.ConsumerGroup)
	setOpt(c, "bname", h.BrokerName)
}

// NotificationRequestHeader is NOTIFICATION's request header: "tell me,
// within PollTime, whether the queue (or any, QueueID -1) has a message for
// the group".
type NotificationRequestHeader struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32
	PollTime      int64
	BornTime      int64
	Order         bool
	AttemptID     string
	BrokerName    string // bname
}

// Decode reads the header from c.
func (h *NotificationRequestHeader) Decode(c *Command) (err error) {
	if h.ConsumerGroup, err = c.RequireStr("consumerGroup"); err != nil {
		return err
	}
	if h.Topic, err = c.RequireStr("topic"); err != nil {
		return err
	}
	if h.QueueID, err = c.Int32("queueId"); err != nil {
		return err
	}
	if h.PollTime, err = c.Int64("pollTime"); err != nil {
		return err
	}
	if h.BornTime, err = c.Int64("bornTime"); err != nil {
		return err
	}
	h.Order = c.Bool("order")
	h.AttemptID = c.Str("attemptId")
	h.BrokerName = c.Str("bname")
	return nil
}

// Encode writes the header into c.
func (h *NotificationRequestHeader) Encode(c *Command) {
	c.Set("consumerGroup", h.ConsumerGroup)
	c.Set("topic", h.Topic)
	c.SetInt64("queueId", int64(h.QueueID))
	c.SetInt64("pollTime", h.PollTime)
	c.SetInt64("bornTime", h.BornTime)
	c.Set("order", strconv.FormatBool(h.Order))
	setOpt(c, "attemptId", h.AttemptID)
	setOpt(c, "bname", h.BrokerName)
}

// NotificationResponseHeader is NOTIFICATION's response header.
type NotificationResponseHeader struct {
	HasMsg      bool
	PollingFull bool
}

// Decode reads the header from c; hasMsg is @CFNotNull.
func (h *NotificationResponseHeader) Decode(c *Command) error {
	if _, ok := c.Lookup("hasMsg"); !ok {
		return fmt.Errorf("%w: hasMsg", ErrMissingField)
	}
	h.HasMsg = c.Bool("hasMsg")
	h.PollingFull = c.Bool("pollingFull")
	return nil
}

// Encode writes the header into c.
func (h *NotificationResponseHeader) Encode(c *Command) {
	c.Set("hasMsg", strconv.FormatBool(h.HasMsg))
	c.Set("pollingFull", strconv.FormatBool(h.PollingFull))
}

// PollingInfoRequestHeader is POLLING_INFO's request header.
type PollingInfoRequestHeader struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32
	BrokerName    string // bname
}

// Decode reads the header from c.
func (h *PollingInfoRequestHeader) Decode(c *Command) (err error) {
	if h.ConsumerGroup, err = c.RequireStr("consumerGroup"); err != nil {
		return err
	}
	if h.Topic, err = c.RequireStr("topic"); err != nil {
		return err
	}
	if h.QueueID, err = c.Int32("queueId"); err != nil {
		return err
	}
	h.BrokerName = c.Str("bname")
	return nil
}

// Encode writes the header into c.
func (h *PollingInfoRequestHeader) Encode(c *Command) {
	c.Set("consumerGroup", h.ConsumerGroup)
	c.Set("topic", h.Topic)
	c.SetInt64("queueId", int64(h.QueueID))
	setOpt(c, "bname", h.BrokerName)
}

// PollingInfoResponseHeader is POLLING_INFO's response header: how many
// pops are parked on the queue for the group.
type PollingInfoResponseHeader struct {
	PollingNum int32
}

// Decode reads the header from c.
func (h *PollingInfoResponseHeader) Decode(c *Command) (err error) {
	h.PollingNum, err = c.Int32("pollingNum")
	return err
}

// Encode writes the header into c.
func (h *PollingInfoResponseHeader) Encode(c *Command) {
	c.SetInt64("pollingNum", int64(h.PollingNum))
}

// setOpt writes an optional (nullable in Java) field only when it is set,
// as fastjson omits nulls.
func setOpt(c *Command, key, v string) {
	if v != "" {
		c.Set(key, v)
	}
}
