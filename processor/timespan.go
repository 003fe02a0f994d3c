package processor

import (
	"fmt"
	"time"

	"github.com/rocketgo/rocketgo/broker/admin"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/remoting"
)

// queueTimeSpan is QueueTimeSpan as fastjson writes it: the getters'
// formatted times included.
type queueTimeSpan struct {
	ConsumeTimeStamp    int64               `json:"consumeTimeStamp"`
	ConsumeTimeStampStr string              `json:"consumeTimeStampStr"`
	DelayTime           int64               `json:"delayTime"`
	MaxTimeStamp        int64               `json:"maxTimeStamp"`
	MaxTimeStampStr     string              `json:"maxTimeStampStr"`
	MessageQueue        tables.MessageQueue `json:"messageQueue"`
	MinTimeStamp        int64               `json:"minTimeStamp"`
	MinTimeStampStr     string              `json:"minTimeStampStr"`
}

// javaDate is UtilAll.formatDate(new Date(ms), "yyyy-MM-dd#HH:mm:ss:SSS"),
// in the broker's time zone as Java's.
func javaDate(ms int64) string {
	t := time.UnixMilli(ms)
	// Go's layouts take fractions only after '.' or ',': the milliseconds
	// are appended.
	return t.Format("2006-01-02#15:04:05:") + fmt.Sprintf("%03d", t.Nanosecond()/1e6)
}

// consumeTimeSpan is QUERY_CONSUME_TIME_SPAN: QueryConsumeTimeSpanBody.
func (p *brokerProcs) consumeTimeSpan(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	topic, group, err := topicAndGroup(req)
	if err != nil {
		return p.fail(req, err)
	}
	spans, err := p.reads.ConsumeTimeSpan(topic, group)
	if err != nil {
		return p.fail(req, err)
	}
	out := make([]queueTimeSpan, len(spans))
	for i, s := range spans {
		out[i] = queueTimeSpan{ConsumeTimeStamp: s.ConsumeTime, ConsumeTimeStampStr: javaDate(s.ConsumeTime),
			DelayTime: s.Lag, MaxTimeStamp: s.MaxTime, MaxTimeStampStr: javaDate(s.MaxTime), MessageQueue: s.Queue,
			MinTimeStamp: s.MinTime, MinTimeStampStr: javaDate(s.MinTime)}
	}
	return p.okJSON(req, struct {
		ConsumeTimeSpanSet []queueTimeSpan `json:"consumeTimeSpanSet"`
	}{out})
}

// consumeQueueData is ConsumeQueueData as fastjson writes it (null fields
// left out; no consume queue extension here, so eval is false).
type consumeQueueData struct {
	Eval         bool  `json:"eval"`
	PhysicOffset int64 `json:"physicOffset"`
	PhysicSize   int32 `json:"physicSize"`
	TagsCode     int64 `json:"tagsCode"`
}

// queryConsumeQueue is QUERY_CONSUME_QUEUE (mqadmin queryCq):
// QueryConsumeQueueResponseBody, or SUCCESS with Apache's remark and no body
// when index is outside the queue.
func (p *brokerProcs) queryConsumeQueue(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	h, err := parseQueueHeader(req)
	if err != nil {
		return p.fail(req, err)
	}
	index, err := req.Int64("index")
	if err != nil {
		return p.fail(req, err)
	}
	count, err := req.Int64("count")
	if err != nil {
		return p.fail(req, err)
	}
	v, err := p.reads.QueryConsumeQueue(h.topic, h.queueID, index, int(min(max(count, 0), admin.MaxQueryCQEntries)))
	if err != nil {
		return p.fail(req, err)
	}
	if v.Entries == nil {
		return remoting.NewResponse(req, remoting.Success, fmt.Sprintf("Index %d of %d@%s is not exist!", index, h.queueID, h.topic))
	}
	body := struct {
		FilterData       *string            `json:"filterData,omitempty"`
		MaxQueueIndex    int64              `json:"maxQueueIndex"`
		MinQueueIndex    int64              `json:"minQueueIndex"`
		QueueData        []consumeQueueData `json:"queueData"`
		SubscriptionData *subscriptionData  `json:"subscriptionData,omitempty"`
	}{MaxQueueIndex: v.Max, MinQueueIndex: v.Min, QueueData: make([]consumeQueueData, len(v.Entries))}
	for i, e := range v.Entries {
		body.QueueData[i] = consumeQueueData{PhysicOffset: e.PhyOffset, PhysicSize: e.Size, TagsCode: e.TagsCode}
	}
	if group, ok := req.Lookup("consumerGroup"); ok {
		filter := group + "@" + h.topic + " is not online!"
		if s, _ := p.clients.Subscription(group, h.topic); s != nil {
			sd := toSubscriptionData(s)
			body.SubscriptionData, filter = &sd, "null" // a tag filter has no ConsumerFilterData
		}
		body.FilterData = &filter
	}
	return p.okJSON(req, body)
}
