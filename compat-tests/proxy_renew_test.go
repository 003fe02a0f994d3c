package compattest

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"
)

// TestProxyAutoRenew: receipt handles of messages received with auto_renew
// (what the 5.x push consumers ask for) are renewed by the proxy while the
// client holds them, as Apache's DefaultReceiptHandleManager: with a 3 s
// invisible time renewed 2 s ahead, another consumer of the group sees
// nothing for 7 s; the holder acks one message with the handle it was
// given (the proxy uses the renewed one); when the holder terminates, the
// message it still held comes back after invisibleTimeMillisWhenClear (1 s),
// on its second delivery, and the acked one never does. Driven with the
// SDK's generated stubs (the Go v5.1.2 SDK has no push consumer; the Java
// SDK's push consumer goes through the same path in TestJavaGRPC).
func TestProxyAutoRenew(t *testing.T) {
	c := startTxBroker(t, "rocketgo", "proxy-renew-"+proxyImpl()).c
	requirePop(t, c)
	topic, group := uniq("PR"), uniq("RCG")
	createTopic(t, c, topic)
	pp := startProxy(t, c, `,"defaultInvisibleTimeMills":3000,"renewAheadTimeMillis":2000,"renewSchedulePeriodMillis":200`)
	p4 := newProducer(t, c)
	p4.mustSend(t, newMsg(topic, "r-0", "TA"))
	p4.mustSend(t, newMsg(topic, "r-1", "TA"))
	cl := rawGRPC(t, pp, false)

	// The holder: a push consumer's settings on its telemetry stream, so the
	// proxy knows it online, then receives with auto_renew.
	holder := uniq("holder")
	telCtx, telCancel := context.WithCancel(metadata.AppendToOutgoingContext(context.Background(),
		"x-mq-client-id", holder, "x-mq-language", "GOLANG", "x-mq-protocol", "v2", "x-mq-client-version", "5.1.2"))
	defer telCancel()
	tel, err := cl.Telemetry(telCtx)
	if err != nil {
		t.Fatalf("telemetry: %v", err)
	}
	if err := tel.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: &v2.Settings{
		ClientType:     v2.ClientType_PUSH_CONSUMER.Enum(),
		RequestTimeout: durationpb.New(3 * time.Second),
		PubSub: &v2.Settings_Subscription{Subscription: &v2.Subscription{Group: &v2.Resource{Name: group},
			Subscriptions: []*v2.SubscriptionEntry{{Topic: &v2.Resource{Name: topic},
				Expression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"}}}}},
	}}}); err != nil {
		t.Fatalf("send settings: %v", err)
	}
	if _, err := tel.Recv(); err != nil {
		t.Fatalf("settings answer: %v", err)
	}

	held := map[string]*v2.Message{}
	for deadline := time.Now().Add(20 * time.Second); len(held) < 2 && time.Now().Before(deadline); {
		for _, m := range rawReceive(t, cl, holder, group, topic, true) {
			held[m.GetSystemProperties().GetMessageId()] = m
		}
	}
	if len(held) != 2 {
		t.Fatalf("holder received %d messages, want 2", len(held))
	}
	receivedAt := time.Now()
	ids := map[string]string{} // compat id -> message id
	for mid, m := range held {
		ids[m.GetUserProperties()[idProp]] = mid
	}

	other := uniq("other")
	for time.Since(receivedAt) < 7*time.Second {
		if ms := rawReceive(t, cl, other, group, topic, false); len(ms) > 0 {
			t.Fatalf("%d held messages visible again %s after the receive (3 s invisible, renewed): %s",
				len(ms), time.Since(receivedAt).Round(time.Millisecond), ms[0].GetUserProperties()[idProp])
		}
	}

	ctx, cancel := clientCtx(holder)
	ack, err := cl.AckMessage(ctx, &v2.AckMessageRequest{Group: &v2.Resource{Name: group}, Topic: &v2.Resource{Name: topic},
		Entries: []*v2.AckMessageEntry{{MessageId: ids["r-0"], ReceiptHandle: held[ids["r-0"]].GetSystemProperties().GetReceiptHandle()}}})
	cancel()
	if err != nil || ack.GetStatus().GetCode() != v2.Code_OK {
		t.Fatalf("ack r-0 with the original handle after renewals: %v %v", err, ack.GetStatus())
	}

	ctx, cancel = clientCtx(holder)
	if _, err := cl.NotifyClientTermination(ctx, &v2.NotifyClientTerminationRequest{Group: &v2.Resource{Name: group}}); err != nil {
		t.Fatalf("notify termination: %v", err)
	}
	cancel()
	telCancel()
	gone := time.Now()
	var back []*v2.Message
	for time.Since(gone) < 15*time.Second && len(back) == 0 {
		back = rawReceive(t, cl, other, group, topic, false)
	}
	if len(back) != 1 || back[0].GetUserProperties()[idProp] != "r-1" {
		t.Fatalf("after the holder left: got %d messages %v, want r-1 alone", len(back), back)
	}
	if a := back[0].GetSystemProperties().GetDeliveryAttempt(); a != 2 {
		t.Errorf("r-1 came back with delivery attempt %d, want 2", a)
	}
	t.Logf("r-1 back %s after the holder terminated", time.Since(gone).Round(time.Millisecond))
	if ms := rawReceive(t, cl, other, group, topic, false); len(ms) > 0 {
		t.Fatalf("acked r-0 (or r-1 again) delivered: %s", ms[0].GetUserProperties()[idProp])
	}
}

// rawReceive is one ReceiveMessage (batch 2, a 5 s long poll) for client id.
func rawReceive(t *testing.T, cl v2.MessagingServiceClient, id, group, topic string, autoRenew bool) []*v2.Message {
	t.Helper()
	ctx, cancel := clientCtx(id) // 10 s: the proxy long-polls 8.5 s at most
	defer cancel()
	ctx, cancel2 := context.WithTimeout(ctx, 6500*time.Millisecond)
	defer cancel2()
	st, err := cl.ReceiveMessage(ctx, &v2.ReceiveMessageRequest{
		Group:             &v2.Resource{Name: group},
		MessageQueue:      &v2.MessageQueue{Topic: &v2.Resource{Name: topic}, Broker: &v2.Broker{Name: "any"}},
		FilterExpression:  &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"},
		BatchSize:         2,
		InvisibleDuration: durationpb.New(10 * time.Second),
		AutoRenew:         autoRenew,
	})
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	var out []*v2.Message
	for {
		r, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("receive stream: %v", err)
		}
		if s := r.GetStatus(); s != nil && s.GetCode() != v2.Code_OK && s.GetCode() != v2.Code_MESSAGE_NOT_FOUND {
			t.Fatalf("receive status %v", s)
		}
		if m := r.GetMessage(); m != nil {
			out = append(out, m)
		}
	}
}
