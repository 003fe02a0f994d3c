package compattest

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// TestProxyProducers: the Go v5 SDK's producer (TLS) through mqproxy to a
// rocketgo broker — normal, FIFO, delay and transactional (commit, rollback
// and an orphan the broker checks, relayed to the SDK's checker over the
// telemetry stream) — read back by the 4.x Remoting Go client.
func TestProxyProducers(t *testing.T) {
	for _, kind := range proxyTargets(t) {
		t.Run(kind, func(t *testing.T) { testProxyProducers(t, kind) })
	}
}

func testProxyProducers(t *testing.T, kind string) {
	c := startTxBroker(t, kind, "proxy-prod-"+kind+"-"+proxyImpl()).c
	pp := startProxy(t, c, "")
	topicN, topicF, topicD, topicT := uniq("PXN"), uniq("PXF"), uniq("PXD"), uniq("PXT")
	createTopic(t, c, topicN)
	createTypedTopic(t, c, topicF, "FIFO")
	createTypedTopic(t, c, topicD, "DELAY")
	createTypedTopic(t, c, topicT, "TRANSACTION")

	var checkMu sync.Mutex
	checked := map[string]int{}
	checker := &rmq.TransactionChecker{Check: func(m *rmq.MessageView) rmq.TransactionResolution {
		id := m.GetProperties()[idProp]
		checkMu.Lock()
		checked[id]++
		checkMu.Unlock()
		if id == "t-orphan-commit" {
			return rmq.COMMIT
		}
		return rmq.ROLLBACK
	}}
	p := newV5Producer(t, pp, rmq.WithTopics(topicN, topicF, topicD, topicT), rmq.WithTransactionChecker(checker))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	msg := func(topic, id string) *rmq.Message {
		m := &rmq.Message{Topic: topic, Body: []byte("body-" + id)}
		m.AddProperty(idProp, id)
		return m
	}
	receipts := map[string]*rmq.SendReceipt{}
	send := func(id string, m *rmq.Message) {
		t.Helper()
		rs, err := p.Send(ctx, m)
		if err != nil || len(rs) != 1 {
			t.Fatalf("v5 send %s: %v (%d receipts)", id, err, len(rs))
		}
		receipts[id] = rs[0]
	}
	var want []string
	for i := 0; i < 5; i++ {
		id := "n-" + strconv.Itoa(i)
		m := msg(topicN, id)
		m.SetTag("TA")
		m.SetKeys("k1", "k2")
		send(id, m)
		want = append(want, id)
	}
	for i := 0; i < 6; i++ {
		id := "f-" + strconv.Itoa(i)
		m := msg(topicF, id)
		m.SetMessageGroup("group-1")
		send(id, m)
		want = append(want, id)
	}
	delaySent := time.Now()
	dm := msg(topicD, "d-0")
	dm.SetDelayTimestamp(delaySent.Add(3 * time.Second))
	send("d-0", dm)
	want = append(want, "d-0")

	txSend := func(id string) rmq.Transaction {
		t.Helper()
		tx := p.BeginTransaction()
		rs, err := p.SendWithTransaction(ctx, msg(topicT, id), tx)
		if err != nil || len(rs) != 1 || rs[0].TransactionId == "" {
			t.Fatalf("v5 transactional send %s: %v %+v", id, err, rs)
		}
		return tx
	}
	if err := txSend("t-commit").Commit(); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if err := txSend("t-rollback").RollBack(); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	txSend("t-orphan-commit")   // left open: the broker checks, the checker commits
	txSend("t-orphan-rollback") // left open: the broker checks, the checker rolls back
	want = append(want, "t-commit", "t-orphan-commit")

	if proxyImpl() == "local" {
		// The proxy heartbeats the transactional group (the topic) to the
		// broker; in local mode on its in-process connection, whose peer is
		// the proxy's own gRPC address: no TCP connection, no ephemeral port.
		resp, err := rawInvoke(c.brokerAddr, javaRequest(204, map[string]string{"producerGroup": topicT}, nil), 5*time.Second)
		if err != nil || resp.Code != 0 {
			t.Fatalf("GET_PRODUCER_CONNECTION_LIST %s: %v %+v", topicT, err, resp)
		}
		var body struct {
			ConnectionSet []struct {
				ClientAddr string `json:"clientAddr"`
			} `json:"connectionSet"`
		}
		if err := json.Unmarshal(resp.Body, &body); err != nil || len(body.ConnectionSet) != 1 ||
			body.ConnectionSet[0].ClientAddr != pp.addr {
			t.Errorf("local proxy's producer connection %s (%v), want one at %s", resp.Body, err, pp.addr)
		}
	}

	col := newCollector("v4")
	for _, topic := range []string{topicN, topicF, topicD, topicT} {
		startConsumer(t, c, uniq("CG"), topic, "*", col)
	}
	waitAll(t, col, want, 45*time.Second, "messages sent through the proxy")

	n0 := col.get("n-0")[0]
	if n0.Tags != "TA" || n0.Keys != "k1 k2" || string(n0.Body) != "body-n-0" {
		t.Errorf("n-0 arrived as tags=%q keys=%q body=%q", n0.Tags, n0.Keys, n0.Body)
	}
	if n0.MsgID != receipts["n-0"].MessageID {
		t.Errorf("n-0 message id: consumer %q, SDK receipt %q", n0.MsgID, receipts["n-0"].MessageID)
	}
	if n0.Props["PGROUP"] != topicN {
		t.Errorf("n-0 PGROUP %q, want the topic %q (Apache's proxy uses the topic as producer group)", n0.Props["PGROUP"], topicN)
	}
	q := -1
	var last int64 = -1
	for i := 0; i < 6; i++ {
		r := col.get("f-" + strconv.Itoa(i))[0]
		if q >= 0 && r.QueueID != q {
			t.Errorf("FIFO f-%d in queue %d, earlier ones in %d", i, r.QueueID, q)
		}
		if r.QueueOffset <= last {
			t.Errorf("FIFO f-%d at offset %d after %d", i, r.QueueOffset, last)
		}
		if r.Props["__SHARDINGKEY"] != "group-1" {
			t.Errorf("FIFO f-%d __SHARDINGKEY %q", i, r.Props["__SHARDINGKEY"])
		}
		q, last = r.QueueID, r.QueueOffset
	}
	if d := col.get("d-0")[0].At.Sub(delaySent); d < 2500*time.Millisecond {
		t.Errorf("delay message arrived after %s, want ~3s", d)
	}
	checkMu.Lock()
	if checked["t-orphan-commit"] == 0 || checked["t-orphan-rollback"] == 0 {
		t.Errorf("the SDK's checker did not see both orphans (checks: %v)", checked)
	}
	if checked["t-commit"]+checked["t-rollback"] != 0 {
		t.Errorf("ended transactions were checked (checks: %v)", checked)
	}
	checkMu.Unlock()
	for _, id := range []string{"t-rollback", "t-orphan-rollback"} {
		if len(col.get(id)) != 0 {
			t.Errorf("rolled back message %s delivered", id)
		}
	}
}

// TestProxyHostile: names, resources and sizes a client should not send get
// Apache's v2 codes (or gRPC's RESOURCE_EXHAUSTED past the inbound limit),
// plaintext and TLS served on the same port, and the proxy stays up.
func TestProxyHostile(t *testing.T) {
	c := sharedCluster(t)
	pp := startProxy(t, c, `,"grpcMaxInboundMessageSize":1048576`)
	topic := uniq("PH")
	createTopic(t, c, topic)
	for _, useTLS := range []bool{false, true} {
		cl := rawGRPC(t, pp, useTLS)
		ctx, cancel := clientCtx(uniq("raw"))
		defer cancel()
		ep := &v2.Endpoints{Scheme: v2.AddressScheme_IPv4, Addresses: []*v2.Address{{Host: "127.0.0.1", Port: 1}}}
		route := func(name string) v2.Code {
			r, err := cl.QueryRoute(ctx, &v2.QueryRouteRequest{Topic: &v2.Resource{Name: name}, Endpoints: ep})
			if err != nil {
				t.Fatalf("QueryRoute(%q) tls=%v: %v", name, useTLS, err)
			}
			return r.GetStatus().GetCode()
		}
		cases := []struct {
			name string
			got  v2.Code
			want v2.Code
		}{
			{"existing topic", route(topic), v2.Code_OK},
			{"unknown topic", route(uniq("nope")), v2.Code_TOPIC_NOT_FOUND},
			{"illegal characters", route("bad topic!"), v2.Code_ILLEGAL_TOPIC},
			{"too long", route(strings.Repeat("x", 200)), v2.Code_ILLEGAL_TOPIC},
			{"system topic", route("RMQ_SYS_TRANS_HALF_TOPIC"), v2.Code_ILLEGAL_TOPIC},
		}
		r, err := cl.SendMessage(ctx, &v2.SendMessageRequest{})
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name string
			got  v2.Code
			want v2.Code
		}{"send nothing", r.GetStatus().GetCode(), v2.Code_MESSAGE_CORRUPTED})
		r, err = cl.SendMessage(ctx, &v2.SendMessageRequest{Messages: []*v2.Message{{Topic: &v2.Resource{Name: topic},
			SystemProperties: &v2.SystemProperties{MessageId: "x", MessageType: v2.MessageType_NORMAL}}}})
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name string
			got  v2.Code
			want v2.Code
		}{"empty body", r.GetStatus().GetCode(), v2.Code(41302)})
		r, err = cl.SendMessage(ctx, &v2.SendMessageRequest{Messages: []*v2.Message{{Topic: &v2.Resource{Name: topic},
			Body: []byte("b"), UserProperties: map[string]string{"UNIQ_KEY": "x"},
			SystemProperties: &v2.SystemProperties{MessageId: "x", MessageType: v2.MessageType_NORMAL}}}})
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name string
			got  v2.Code
			want v2.Code
		}{"system property", r.GetStatus().GetCode(), v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY})
		group1 := "g1"
		r, err = cl.SendMessage(ctx, &v2.SendMessageRequest{Messages: []*v2.Message{{Topic: &v2.Resource{Name: topic},
			Body: []byte("b"), SystemProperties: &v2.SystemProperties{MessageId: uniq("fifo"), MessageType: v2.MessageType_FIFO,
				MessageGroup: &group1}}}})
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name string
			got  v2.Code
			want v2.Code
		}{"FIFO message to a NORMAL topic", r.GetStatus().GetCode(), v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE})
		h, err := cl.Heartbeat(ctx, &v2.HeartbeatRequest{})
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name string
			got  v2.Code
			want v2.Code
		}{"heartbeat without settings", h.GetStatus().GetCode(), v2.Code_UNRECOGNIZED_CLIENT_TYPE})
		e, err := cl.EndTransaction(ctx, &v2.EndTransactionRequest{Topic: &v2.Resource{Name: topic}, TransactionId: "nope",
			Resolution: v2.TransactionResolution_COMMIT})
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name string
			got  v2.Code
			want v2.Code
		}{"end unknown transaction", e.GetStatus().GetCode(), v2.Code_INTERNAL_SERVER_ERROR})
		group := &v2.Resource{Name: uniq("HG")}
		ack, err := cl.AckMessage(ctx, &v2.AckMessageRequest{Group: group, Topic: &v2.Resource{Name: topic},
			Entries: []*v2.AckMessageEntry{{MessageId: "x", ReceiptHandle: "not a handle"}}})
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name string
			got  v2.Code
			want v2.Code
		}{"ack with a bad receipt handle", ack.GetStatus().GetCode(), v2.Code_INTERNAL_SERVER_ERROR})
		ack, err = cl.AckMessage(ctx, &v2.AckMessageRequest{Group: group, Topic: &v2.Resource{Name: topic},
			Entries: []*v2.AckMessageEntry{{MessageId: "x", ReceiptHandle: "0 1000 1000 0 0 nobroker 0 7 100"}}})
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name string
			got  v2.Code
			want v2.Code
		}{"ack with an expired receipt handle", ack.GetStatus().GetCode(), v2.Code_INVALID_RECEIPT_HANDLE})
		ch, err := cl.ChangeInvisibleDuration(ctx, &v2.ChangeInvisibleDurationRequest{Group: group, Topic: &v2.Resource{Name: topic},
			ReceiptHandle: "1 2 3", MessageId: "x", InvisibleDuration: durationpb.New(time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name string
			got  v2.Code
			want v2.Code
		}{"change invisible with a bad receipt handle", ch.GetStatus().GetCode(), v2.Code_INTERNAL_SERVER_ERROR})
		qa, err := cl.QueryAssignment(ctx, &v2.QueryAssignmentRequest{Topic: &v2.Resource{Name: topic},
			Group: &v2.Resource{Name: "bad group!"}, Endpoints: ep})
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name string
			got  v2.Code
			want v2.Code
		}{"assignment for an illegal group", qa.GetStatus().GetCode(), v2.Code_ILLEGAL_CONSUMER_GROUP})
		for _, tc := range cases {
			if tc.got != tc.want {
				t.Errorf("tls=%v %s: code %v, want %v", useTLS, tc.name, tc.got, tc.want)
			}
		}
		_, err = cl.SendMessage(ctx, &v2.SendMessageRequest{Messages: []*v2.Message{{Topic: &v2.Resource{Name: topic},
			Body: make([]byte, 2<<20), SystemProperties: &v2.SystemProperties{MessageId: "x"}}}})
		// grpc-go refuses with RESOURCE_EXHAUSTED, grpc-java (Apache's
		// proxy) resets the stream (CANCELLED): refused either way.
		if c := status.Code(err); c != grpccodes.ResourceExhausted && c != grpccodes.Canceled {
			t.Errorf("tls=%v 2 MiB request past grpcMaxInboundMessageSize: %v, want RESOURCE_EXHAUSTED (CANCELLED from Apache)", useTLS, err)
		}
	}
	// Still serving after all of it.
	cl := rawGRPC(t, pp, true)
	ctx, cancel := clientCtx(uniq("raw"))
	defer cancel()
	r, err := cl.QueryRoute(ctx, &v2.QueryRouteRequest{Topic: &v2.Resource{Name: topic}})
	if err != nil || r.GetStatus().GetCode() != v2.Code_OK || len(r.GetMessageQueues()) == 0 {
		t.Fatalf("proxy after hostile input: %v %v", err, r)
	}
}

// TestProxyRestartTransactionCheck: a half message sent through the proxy,
// the proxy restarted before the broker checks it: the restarted proxy
// registers the transactional producer group again from the SDK's settings
// (which the SDK resends when a heartbeat answers UNRECOGNIZED_CLIENT_TYPE),
// relays the broker's check, and the checker's commit delivers the message.
// ~30 s: runs with ROCKETGO_JAVA=1 (make test-java).
func TestProxyRestartTransactionCheck(t *testing.T) {
	if os.Getenv("ROCKETGO_JAVA") == "" {
		t.Skip("slow (~30 s, the SDK's heartbeat period): runs with ROCKETGO_JAVA=1 (make test-java)")
	}
	for _, kind := range proxyTargets(t) {
		t.Run(kind, func(t *testing.T) {
			c := startTxBroker(t, kind, "proxy-txr-"+kind).c
			topic := uniq("PTR")
			createTypedTopic(t, c, topic, "TRANSACTION")
			pp := startProxy(t, c, "")
			var checks atomic.Int32
			p := newV5Producer(t, pp, rmq.WithTopics(topic), rmq.WithTransactionChecker(&rmq.TransactionChecker{
				Check: func(*rmq.MessageView) rmq.TransactionResolution { checks.Add(1); return rmq.COMMIT }}))
			m := &rmq.Message{Topic: topic, Body: []byte("orphan")}
			m.AddProperty(idProp, "orphan")
			if _, err := p.SendWithTransaction(context.Background(), m, p.BeginTransaction()); err != nil {
				t.Fatalf("half message: %v", err)
			}
			pp.restart(t)
			col := newCollector("v4")
			startConsumer(t, c, uniq("CG"), topic, "*", col)
			waitAll(t, col, []string{"orphan"}, 90*time.Second, "half message checked through the restarted proxy")
			if checks.Load() == 0 {
				t.Error("delivered without a check")
			}
		})
	}
}
