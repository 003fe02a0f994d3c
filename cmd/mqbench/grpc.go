package main

import (
	"github.com/rocketgo/rocketgo/internal/adminclient"

	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	v2 "github.com/rocketgo/rocketgo/apis/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// grpc-produce: SendMessage through a gRPC proxy (rocketgo's mqproxy or
// Apache's), -c connections with -w calls in flight on each, one message
// per call, as the 5.x SDKs send. The proxy's own hop is what it measures
// next to produce against the broker.
//
//	mqbench grpc-produce -proxy 127.0.0.1:8081 [-tls] -t BenchTopic -c 4 -w 32 -s 1024 -d 30s

func runGRPCProduce(o *options, a *adminclient.Client, out io.Writer, stop <-chan struct{}) ([]summary, error) {
	if o.proxy == "" {
		return nil, errors.New("grpc-produce needs -proxy host:port")
	}
	if o.createTopic {
		if _, err := resolve(a, o, true); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(out, "# mqbench grpc-produce proxy=%s tls=%v topic=%s conns=%d window=%d size=%d count=%d duration=%s\n",
		o.proxy, o.tls, o.topic, o.conns, o.window, o.size, o.count, o.duration)
	creds := proxyCreds(o)
	clients := make([]v2.MessagingServiceClient, o.conns)
	for i := range clients {
		cc, err := grpc.NewClient(o.proxy, grpc.WithTransportCredentials(creds))
		if err != nil {
			return nil, fmt.Errorf("dial proxy %s: %w", o.proxy, err)
		}
		defer cc.Close()
		clients[i] = v2.NewMessagingServiceClient(cc)
	}
	send := &role{name: "send"}
	var firstErr atomic.Value
	sums, err := measured(o, out, stop, nil, send, func(runStop <-chan struct{}) error {
		sendGRPC(o, clients, send, runStop, &firstErr)
		return nil
	})
	if e, ok := firstErr.Load().(error); ok && e != nil {
		fmt.Fprintf(out, "# first rpc error: %v\n", e)
	}
	return sums, err
}

// sendGRPC sends from -w goroutines per client until runStop closes or
// -count messages are sent; the first RPC error goes to firstErr.
func sendGRPC(o *options, clients []v2.MessagingServiceClient, send *role, runStop <-chan struct{}, firstErr *atomic.Value) {
	body := make([]byte, o.size)
	var sent atomic.Int64
	var seq atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < o.conns; i++ {
		cl := clients[i]
		st := send.newStats()
		for w := 0; w < o.window; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := metadata.AppendToOutgoingContext(context.Background(), "x-mq-client-id",
					"mqbench-"+strconv.Itoa(i), "x-mq-language", "GOLANG", "x-mq-protocol", "v2")
				for {
					select {
					case <-runStop:
						return
					default:
					}
					if o.count > 0 && sent.Add(1) > o.count {
						return
					}
					id := "MQBENCH" + strconv.FormatInt(seq.Add(1), 16)
					req := &v2.SendMessageRequest{Messages: []*v2.Message{{
						Topic: &v2.Resource{Name: o.topic}, Body: body,
						SystemProperties: &v2.SystemProperties{MessageId: id, MessageType: v2.MessageType_NORMAL},
					}}}
					cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
					t0 := time.Now()
					resp, err := cl.SendMessage(cctx, req)
					lat := time.Since(t0).Nanoseconds()
					cancel()
					switch {
					case err != nil:
						st.fail(-1)
						firstErr.CompareAndSwap(nil, err)
					case resp.GetStatus().GetCode() != v2.Code_OK:
						st.fail(int32(resp.GetStatus().GetCode()))
					default:
						st.add(1, int64(len(body)), lat)
					}
				}
			}()
		}
	}
	wg.Wait()
}

// proxyCreds is what the gRPC modes dial the proxy with: plaintext, or
// with -tls a TLS that does not verify (proxies serve self-signed
// certificates).
func proxyCreds(o *options) credentials.TransportCredentials {
	if o.tls {
		return credentials.NewTLS(&tls.Config{InsecureSkipVerify: true})
	}
	return insecure.NewCredentials()
}
