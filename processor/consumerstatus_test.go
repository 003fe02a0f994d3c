package processor

import (
	"net"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
)

// fakeConsumer is a consumer on a raw connection: it registers with a
// heartbeat and answers GET_CONSUMER_STATUS_FROM_CLIENT with answer's
// result (nil: never answers).
func fakeConsumer(t *testing.T, addr, clientID, group, topic string, answer func(req *remoting.Command) *remoting.Command) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	hb := remoting.NewRequest(remoting.HeartBeat, nil, heartbeatBody(clientID, group, "PG_status", topic))
	hb.Opaque = 1
	if _, err := nc.Write(remoting.AppendFrame(nil, hb)); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			req, err := remoting.ReadFrame(nc)
			if err != nil {
				return
			}
			if req.Flag&remoting.FlagResponse != 0 || req.Code != remoting.GetConsumerStatusFromClient {
				continue
			}
			if resp := answer(req); resp != nil {
				resp.Opaque, resp.Flag = req.Opaque, remoting.FlagResponse
				if _, err := nc.Write(remoting.AppendFrame(nil, resp)); err != nil {
					return
				}
			}
		}
	}()
}

// INVOKE_BROKER_TO_GET_CONSUMER_STATUS: every member is asked at once; the
// answer lists those that answered a table, in Apache's HashMap order, and
// comes within the timeout however the others behave (silent, garbage,
// refusal).
func TestConsumerStatus(t *testing.T) {
	old := consumerStatusTimeout
	consumerStatusTimeout = 500 * time.Millisecond
	t.Cleanup(func() { consumerStatusTimeout = old })
	b, cl := serveBroker(t, nil, nil)
	f := &adminFixture{t: t, b: b, cl: cl}
	const topic, group = "StatusTopic", "CG_status"
	f.refused("no member", f.do(remoting.InvokeBrokerToGetConsumerStatus, map[string]string{"topic": topic, "group": group}, nil),
		remoting.SystemError, "No Any Consumer online in the consumer group: [CG_status]")

	asked := make(chan map[string]string, 8)
	table := func(req *remoting.Command) *remoting.Command {
		asked <- req.FieldMap()
		// Go client's order and field order; the broker re-places them.
		return remoting.NewRequest(0, nil, []byte(`{"messageQueueTable":{{"topic":"StatusTopic","brokerName":"b","queueId":1}:7,`+
			`{"topic":"StatusTopic","brokerName":"b","queueId":0}:5}}`))
	}
	fakeConsumer(t, b.Config().Addr(), "10.0.0.1@good", group, topic, table)
	fakeConsumer(t, b.Config().Addr(), "10.0.0.2@silent", group, topic, func(*remoting.Command) *remoting.Command { return nil })
	fakeConsumer(t, b.Config().Addr(), "10.0.0.3@garbage", group, topic, func(*remoting.Command) *remoting.Command {
		return remoting.NewRequest(0, nil, []byte(`{"messageQueueTable":{{"topic":`))
	})
	fakeConsumer(t, b.Config().Addr(), "10.0.0.4@refuses", group, topic, func(*remoting.Command) *remoting.Command {
		return remoting.NewRequest(remoting.SystemError, nil, nil)
	})
	testutil.WaitFor(t, 5*time.Second, func() bool { return len(b.Clients.ConsumerIDs(group)) == 4 })

	began := time.Now()
	body := f.ok("status", f.do(remoting.InvokeBrokerToGetConsumerStatus, map[string]string{"topic": topic, "group": group}, nil))
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("answered after %v: the members are not asked at once", d)
	}
	want := `{"consumerTable":{"10.0.0.1@good":{{"brokerName":"b","queueId":0,"topic":"StatusTopic"}:5,` +
		`{"brokerName":"b","queueId":1,"topic":"StatusTopic"}:7}},"messageQueueTable":{}}`
	if string(body) != want {
		t.Fatalf("status = %s\nwant    %s", body, want)
	}
	if got := <-asked; got["topic"] != topic || got["group"] != group {
		t.Fatalf("client asked with %v", got)
	}

	// clientAddr names one client: only it is asked.
	body = f.ok("status of one", f.do(remoting.InvokeBrokerToGetConsumerStatus,
		map[string]string{"topic": topic, "group": group, "clientAddr": "10.0.0.4@refuses"}, nil))
	if string(body) != `{"consumerTable":{},"messageQueueTable":{}}` {
		t.Fatalf("status of a refusing client = %s", body)
	}
	if len(asked) != 0 {
		t.Fatalf("a client not named was asked: %v", <-asked)
	}
}
