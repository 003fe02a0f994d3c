package pop

// PEEK_MESSAGE (Apache 5.x PeekMessageProcessor): the messages a pop would
// return next, from the topic and the group's pop retry topic, without a
// checkpoint or an offset moved. Runs on a broker goroutine like a pop.

import (
	"math/rand/v2"
	"time"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// Peek reads up to maxMsgNums messages for group and answers through done
// (later, from a broker goroutine); a refusal is returned at once.
func (p *Service) Peek(group, topic string, queueID, maxMsgNums int32, remote string, done func(Result)) error {
	tc, err := p.checkPeek(group, topic, queueID, remote)
	if err != nil {
		return err
	}
	cfg := p.d.Config()
	r := &Request{Group: group, Topic: topic, QueueID: queueID, MaxMsgNums: min(maxMsgNums, int32(cfg.MaxTransferCount))}
	readQueues := tc.ReadQueueNums
	if !p.d.Go(func() { done(p.peek(r, readQueues)) }) {
		return remoting.Refuse(remoting.ServiceNotAvailable, nil, "the broker is shutting down")
	}
	return nil
}

func (p *Service) peek(r *Request, readQueues int32) Result {
	cfg := p.d.Config()
	st := popState{r: r, peek: true, popTime: time.Now().UnixMilli(), brokerName: cfg.BrokerName,
		maxBytes: cfg.MaxTransferBytes}
	randomQ := rand.IntN(100)
	needRetry := randomQ < popFromRetryProbability
	retryTopic := message.PopRetryTopic(r.Topic, r.Group)
	if needRetry {
		p.popTopic(&st, retryTopic, true, nil, randomQ)
	}
	if r.QueueID < 0 {
		for i := int32(0); i < readQueues; i++ {
			p.popQueue(&st, r.Topic, (int32(randomQ)+i)%readQueues, false, nil)
		}
	} else {
		p.popQueue(&st, r.Topic, r.QueueID, false, nil)
	}
	if !needRetry && st.count < int(r.MaxMsgNums) {
		p.popTopic(&st, retryTopic, true, nil, randomQ)
	}
	res := Result{Status: NotFound, RestNum: st.rest}
	if st.count > 0 {
		rels := st.releases
		res.Status, res.Vec, res.Count = Found, st.vec, st.count
		res.Release = func() {
			for _, f := range rels {
				f()
			}
		}
	}
	return res
}
