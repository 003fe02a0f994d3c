package processor

import (
	"github.com/rocketgo/rocketgo/broker/admin"
	"github.com/rocketgo/rocketgo/remoting"
)

// uniqueKeyQueryFlag is MixAll.UNIQUE_MSG_QUERY_FLAG: an extField saying
// the key is a UNIQ_KEY (the client's message id); maxNum is then the
// store's defaultQueryMaxNum.
const uniqueKeyQueryFlag = "_UNIQUE_KEY_QUERY"

func (p *brokerProcs) registerQuery(t remoting.Table) {
	t[remoting.QueryMessage] = p.queryMessage
}

// queryMessage is QueryMessageProcessor.queryMessage: the records indexed
// under topic#key stored within [beginTimestamp, endTimestamp], as the
// concatenated stored records, or QUERY_NOT_FOUND.
func (p *brokerProcs) queryMessage(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	topic, err := req.RequireStr("topic")
	if err != nil {
		return p.fail(req, err)
	}
	key, err := req.RequireStr("key")
	if err != nil {
		return p.fail(req, err)
	}
	maxNum, err := req.Int32("maxNum")
	if err != nil {
		return p.fail(req, err)
	}
	begin, err := req.Int64("beginTimestamp")
	if err != nil {
		return p.fail(req, err)
	}
	end, err := req.Int64("endTimestamp")
	if err != nil {
		return p.fail(req, err)
	}
	res, err := p.reads.QueryMessage(admin.QueryMessageRequest{Topic: topic, Key: key, MaxNum: maxNum, Begin: begin, End: end,
		UniqKey: req.Str(uniqueKeyQueryFlag) == "true"})
	resp := remoting.NewResponse(req, remoting.Success, "")
	if err != nil {
		resp = p.fail(req, err) // QUERY_NOT_FOUND, with the index values below
	} else {
		resp.Body = res.Body
	}
	resp.SetInt64("indexLastUpdateTimestamp", res.IndexLastUpdateTimestamp)
	resp.SetInt64("indexLastUpdatePhyoffset", res.IndexLastUpdatePhyoffset)
	return resp
}
