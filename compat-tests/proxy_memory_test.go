package compattest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
)

// TestProxyMemoryFlood: 200 SendMessage calls of 4 MB each at once, over
// 20 connections, while the official Go v5 SDK keeps sending small
// messages. The proxy's peak resident memory (VmHWM) stays within 400 MB
// of its start (the budget is 66 MiB here), every flood call is answered
// (OK, or refused busy: RESOURCE_EXHAUSTED before it is read,
// TOO_MANY_REQUESTS after; never a hang), and the SDK's sends go through
// during the flood and after it.
func TestProxyMemoryFlood(t *testing.T) {
	if proxyImpl() != "rocketgo" {
		t.Skip("measures mqproxy's own memory")
	}
	c := sharedCluster(t)
	requirePop(t, c)
	pp := startProxy(t, c, `,"grpcMaxInFlightRequestBytes":69206016`)
	topic := uniq("PM")
	createTopic(t, c, topic)
	p := newV5Producer(t, pp, rmq.WithTopics(topic))
	if _, err := p.Send(context.Background(), &rmq.Message{Topic: topic, Body: []byte("warm")}); err != nil {
		t.Fatalf("v5 send before the flood: %v", err)
	}
	st, _ := procStatus(pp.p.cmd.Process.Pid)
	base := st["VmHWM"] / 1024

	const conns, calls, body = 20, 200, 4 << 20
	cls := make([]v2.MessagingServiceClient, conns)
	for i := range cls {
		cls[i] = rawGRPC(t, pp, false)
	}
	payload := make([]byte, body)
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[string]int{}
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := clientCtx(uniq("flood"))
			defer cancel()
			ctx, cancel2 := context.WithTimeout(ctx, 30*time.Second)
			defer cancel2()
			r, err := cls[i%conns].SendMessage(ctx, &v2.SendMessageRequest{Messages: []*v2.Message{{Topic: &v2.Resource{Name: topic},
				Body: payload, SystemProperties: &v2.SystemProperties{MessageId: uniq("m"), MessageType: v2.MessageType_NORMAL}}}})
			k := r.GetStatus().GetCode().String()
			if err != nil {
				k = "error: " + err.Error()
			}
			mu.Lock()
			codes[k]++
			mu.Unlock()
		}()
	}
	// The SDK keeps sending while the flood is in flight: a send that
	// finds the budget taken is refused (the SDK retries it), never hangs.
	var sdkOK, sdkBusy int
	var sdkErr error
	for range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err := p.Send(ctx, &rmq.Message{Topic: topic, Body: []byte("during")})
		cancel()
		switch {
		case err == nil:
			sdkOK++
		case strings.Contains(err.Error(), "ResourceExhausted"):
			sdkBusy++
		default:
			sdkErr = err
		}
		time.Sleep(50 * time.Millisecond)
	}
	wg.Wait()
	if sdkErr != nil || sdkOK == 0 {
		t.Errorf("v5 sends during the flood: %d sent, %d refused busy, error %v", sdkOK, sdkBusy, sdkErr)
	}
	st, _ = procStatus(pp.p.cmd.Process.Pid)
	peak := st["VmHWM"] / 1024
	t.Logf("flood of %d x 4 MB: VmHWM %d MB before, %d MB after; answers %v; SDK during it: %d sent, %d refused busy",
		calls, base, peak, codes, sdkOK, sdkBusy)
	for k := range codes {
		if k != v2.Code_OK.String() && k != v2.Code_TOO_MANY_REQUESTS.String() && !strings.Contains(k, "ResourceExhausted") {
			t.Errorf("flood answers %v: want only OK, TOO_MANY_REQUESTS and RESOURCE_EXHAUSTED", codes)
			break
		}
	}
	if bound := base + 400; peak > bound {
		t.Errorf("mqproxy VmHWM %d MB under the flood, bound %d MB (%d before)", peak, bound, base)
	}
	if pp.p.exited() {
		t.Fatal("mqproxy exited under the flood")
	}
	proxySDKRoundTrip(t, pp, topic)
}
