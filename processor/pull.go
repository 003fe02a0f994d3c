package processor

import (
	"strings"
	"sync"

	"github.com/rocketgo/rocketgo/broker/pull"
	"github.com/rocketgo/rocketgo/remoting"
)

func (p *brokerProcs) registerPull(t remoting.Table) {
	t[remoting.PullMessage] = p.pull
	t[remoting.LitePullMessage] = p.pull
}

// Pull sysFlag bits (PullSysFlag), for the tests' requests.
const (
	pullCommitOffset = pull.FlagCommitOffset
	pullSuspend      = pull.FlagSuspend
	pullSubscription = pull.FlagSubscription
)

// parsePullHeader decodes PullMessageRequestHeader: consumerGroup*, topic*,
// queueId*, queueOffset*, maxMsgNums*, sysFlag*, commitOffset,
// suspendTimeoutMillis, subscription, subVersion, expressionType,
// maxMsgBytes, liteTopic (5.5).
func parsePullHeader(c *remoting.Conn, req *remoting.Command) (r pull.Request, err error) {
	if r.Group, err = req.RequireStr("consumerGroup"); err != nil {
		return
	}
	if r.Topic, err = req.RequireStr("topic"); err != nil {
		return
	}
	if r.QueueID, err = req.Int32("queueId"); err != nil {
		return
	}
	if r.QueueOffset, err = req.Int64("queueOffset"); err != nil {
		return
	}
	if r.MaxMsgNums, err = req.Int32("maxMsgNums"); err != nil {
		return
	}
	if r.SysFlag, err = req.Int32("sysFlag"); err != nil {
		return
	}
	r.CommitOffset = req.OptInt64("commitOffset", 0)
	r.SuspendTimeoutMillis = req.OptInt64("suspendTimeoutMillis", 0)
	r.Subscription = req.Str("subscription")
	r.SubVersion = req.OptInt64("subVersion", 0)
	r.ExpressionType = req.Str("expressionType")
	r.MaxMsgBytes = req.OptInt64("maxMsgBytes", 0)
	if lite := req.Str("liteTopic"); strings.TrimSpace(lite) != "" { // Apache: isNotBlank
		r.LiteTopic = lite
	}
	if c != nil {
		r.Remote, r.ConnID = c.Remote, c.ID
	}
	return r, nil
}

// pull serves PULL_MESSAGE / LITE_PULL_MESSAGE: decode, Puller.Pull,
// encode. A pull the broker answers later (parked, or read by a cold-pull
// worker) is answered on the connection by Reply, from the broker's
// goroutine; the handler answers nothing now.
func (p *brokerProcs) pull(c *remoting.Conn, req *remoting.Command) *remoting.Command {
	r, err := parsePullHeader(c, req)
	if err != nil {
		return p.fail(req, err)
	}
	pc := pullCalls.Get().(*pullCall)
	pc.r, pc.p, pc.c, pc.req = r, p, c, req
	res, err := p.pulls.Pull(&pc.r, pc.later)
	pc.r, pc.p, pc.c, pc.req = pull.Request{}, nil, nil, nil
	pullCalls.Put(pc)
	if err == nil && res.Status == pull.Later {
		return nil
	}
	return p.pullResponse(req, res, err)
}

// pullCall is what one pull hands its Puller. Through an interface it
// escapes to the heap; pooled, a pull allocates nothing for it. The Puller
// keeps none of it once Pull returns: it calls later, if at all, before.
type pullCall struct {
	r     pull.Request
	p     *brokerProcs
	c     *remoting.Conn
	req   *remoting.Command
	later func() pull.Completion // pc.complete, bound once per pullCall
}

var pullCalls = sync.Pool{New: func() any {
	pc := new(pullCall)
	pc.later = pc.complete
	return pc
}}

func (pc *pullCall) complete() pull.Completion { return pc.p.pullLater(pc.c, pc.req) }

// pullLater is the completion of a pull answered later: what it needs of
// the request (which is recycled when the handler returns) is copied,
// Began included so that interceptors see the late answer.
func (p *brokerProcs) pullLater(c *remoting.Conn, req *remoting.Command) pull.Completion {
	head := &remoting.Command{Code: req.Code, Opaque: req.Opaque, Serialize: req.Serialize, Began: req.Began}
	return pull.Completion{
		Done: func(res pull.Result, err error) { c.Reply(p.pullResponse(head, res, err)) },
		Gone: c.Closed,
	}
}

// pullCodes are the response codes of the pull statuses
// (DefaultPullMessageResultHandler; remoting.md §6.5).
var pullCodes = [...]int32{
	pull.Found:         remoting.Success,
	pull.NoNewMsg:      remoting.PullNotFound,
	pull.NoMatchedMsg:  remoting.PullRetryImmediately,
	pull.OffsetIllegal: remoting.PullOffsetMoved,
}

// pullResponse encodes a pull's result: PullMessageResponseHeader and, when
// found, the records as stored, written straight from the mapped commit log
// (released once written).
func (p *brokerProcs) pullResponse(req *remoting.Command, res pull.Result, err error) *remoting.Command {
	if err != nil {
		return p.fail(req, err)
	}
	out := remoting.NewResponse(req, pullCodes[res.Status], "")
	out.SetInt64("nextBeginOffset", res.NextBeginOffset)
	out.SetInt64("minOffset", res.MinOffset)
	out.SetInt64("maxOffset", res.MaxOffset)
	out.SetInt64("suggestWhichBrokerId", res.SuggestWhichBrokerID)
	if res.Status == pull.Found {
		out.BodyVec = res.Vec
		out.ReleaseBody = res.Release
	}
	return out
}
