package processor

import (
	"testing"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
)

// lockClients is the Clients service as far as the lock handlers use it:
// it records the requests and grants every queue but the second.
type lockClients struct {
	Clients // the rest: a handler calling it panics the test
	locks   []tables.LockBatchRequest
	unlocks []tables.LockBatchRequest
}

func (f *lockClients) LockBatch(r tables.LockBatchRequest) []tables.MessageQueue {
	f.locks = append(f.locks, r)
	var got []tables.MessageQueue
	for i, q := range r.Queues {
		if i != 1 {
			got = append(got, q)
		}
	}
	return got
}

func (f *lockClients) UnlockBatch(r tables.LockBatchRequest) { f.unlocks = append(f.unlocks, r) }

// The lock handlers alone, against a fake of the one service they use:
// the body decoded into the service's request (with the caller's
// connection), the answer encoded as Apache's LockBatchResponseBody, and
// a body that is not JSON refused before the service is called.
func TestLockHandlersDecodeCallEncode(t *testing.T) {
	f := &lockClients{}
	p := &brokerProcs{clients: f, log: testutil.Logger()}
	c := &remoting.Conn{ID: 7, Remote: "10.0.0.1:5"}
	body := `{"consumerGroup":"G","clientId":"C1","onlyThisBroker":true,"mqSet":[` +
		`{"topic":"T","brokerName":"b","queueId":0},{"topic":"T","brokerName":"b","queueId":1},` +
		`{"topic":"T","brokerName":"b","queueId":2}]}`

	resp := p.lockBatch(c, remoting.NewRequest(remoting.LockBatchMQ, nil, []byte(body)))
	if resp.Code != remoting.Success {
		t.Fatalf("lock: code %d %q", resp.Code, resp.Remark)
	}
	want := `{"lockOKMQSet":[{"topic":"T","brokerName":"b","queueId":0},{"topic":"T","brokerName":"b","queueId":2}]}`
	if string(resp.Body) != want {
		t.Fatalf("lock body\n got %s\nwant %s", resp.Body, want)
	}
	if len(f.locks) != 1 {
		t.Fatalf("LockBatch called %d times", len(f.locks))
	}
	r := f.locks[0]
	if r.Group != "G" || r.ClientID != "C1" || r.ConnID != 7 || len(r.Queues) != 3 || r.Queues[2].QueueID != 2 || r.Now.IsZero() {
		t.Fatalf("lock request %+v", r)
	}

	resp = p.unlockBatch(c, remoting.NewRequest(remoting.UnlockBatchMQ, nil, []byte(body)))
	if resp.Code != remoting.Success || len(f.unlocks) != 1 || f.unlocks[0].Group != "G" || len(f.unlocks[0].Queues) != 3 {
		t.Fatalf("unlock: code %d, requests %+v", resp.Code, f.unlocks)
	}

	for _, h := range []remoting.HandlerFunc{p.lockBatch, p.unlockBatch} {
		resp = h(c, remoting.NewRequest(remoting.LockBatchMQ, nil, []byte(`{"mqSet":[{`)))
		if resp.Code != remoting.SystemError {
			t.Fatalf("bad body: code %d, want %d", resp.Code, remoting.SystemError)
		}
	}
	if len(f.locks) != 1 || len(f.unlocks) != 1 {
		t.Fatalf("a bad body reached the service: %d locks, %d unlocks", len(f.locks), len(f.unlocks))
	}
}
