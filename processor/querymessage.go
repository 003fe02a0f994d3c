package processor

import (
	"github.com/rocketgo/rocketgo/remoting"
)

// uniqueKeyQueryFlag is MixAll.UNIQUE_MSG_QUERY_FLAG: an extField saying
// the key is a UNIQ_KEY (the client's message id); maxNum is then the
// store's defaultQueryMaxNum.
const uniqueKeyQueryFlag = "_UNIQUE_KEY_QUERY"

func (p *brokerProcs) registerQuery(t Table) {
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
	if req.Str(uniqueKeyQueryFlag) == "true" {
		maxNum = int32(p.b.Config().Store.DefaultQueryMaxNum)
	}
	res := p.b.Store.QueryMessage(nil, topic, key, int(maxNum), begin, end)
	if res.Count == 0 {
		resp := remoting.NewResponse(req, remoting.QueryNotFound, "can not find message, maybe time range not correct")
		resp.SetInt64("indexLastUpdateTimestamp", res.IndexLastUpdateTimestamp)
		resp.SetInt64("indexLastUpdatePhyoffset", res.IndexLastUpdatePhyoffset)
		return resp
	}
	resp := remoting.NewResponse(req, remoting.Success, "")
	resp.SetInt64("indexLastUpdateTimestamp", res.IndexLastUpdateTimestamp)
	resp.SetInt64("indexLastUpdatePhyoffset", res.IndexLastUpdatePhyoffset)
	resp.Body = res.Body
	return resp
}
