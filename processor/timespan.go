package processor

import (
	"fmt"
	"time"

	"github.com/rocketgo/rocketgo/broker"
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
	MessageQueue        broker.MessageQueue `json:"messageQueue"`
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
	topic, err := req.RequireStr("topic")
	if err != nil {
		return p.fail(req, err)
	}
	group, err := req.RequireStr("group")
	if err != nil {
		return p.fail(req, err)
	}
	spans, err := p.b.ConsumeTimeSpan(topic, group)
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
