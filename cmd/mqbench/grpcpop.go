package main

import (
	"github.com/rocketgo/rocketgo/internal/adminclient"

	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	v2 "github.com/rocketgo/rocketgo/apis/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/rocketgo/rocketgo/remoting"
)

// grpc-pop: -c simple consumers through a gRPC proxy (rocketgo's mqproxy
// or Apache's), each run as the 5.x SDKs' SimpleConsumer runs in a process
// of its own: its own connection and client id; at start QueryRoute for
// the topic, a Telemetry stream that sends the client's Settings
// (SIMPLE_CONSUMER, the group, the topic with filter "*") and waits for the
// proxy's answer (Apache's proxy refuses a receive from a client whose
// settings it does not hold), and a Heartbeat, then one every 10 s; then a
// loop of ReceiveMessage (16 messages at most, invisible 30 s, long polling
// 5 s, the call's deadline that plus the SDKs' 3 s request timeout, the
// queues of the route taken round robin as the SDKs' load balancer takes
// them) and one AckMessage with every message of the receive. The pop
// role counts the messages acknowledged and times each ReceiveMessage
// call, empty long polls included; it ends after -count messages acked, or
// after -d (with -count, when -d is given too). With -n the group is
// created first on the brokers of the topic's route.
//
//	mqbench grpc-pop -proxy 127.0.0.1:8081 -n 127.0.0.1:9876 -t BenchTopic -g BenchGroup -c 1000 -count 100000 -d 600s

// What each receive asks for, as the SDKs' examples do: a batch of 16 and
// an invisible time long enough that no message comes back during a run.
const (
	popRecvBatch      = 16
	popInvisible      = 30 * time.Second
	popAwait          = 5 * time.Second  // the SDKs' awaitDuration: the long poll
	popRequestTimeout = 3 * time.Second  // the SDKs' default request timeout
	popHeartbeat      = 10 * time.Second // the SDKs' heartbeat period
	popStartWorkers   = 32               // consumers starting at once
	popMaxRPCFailures = 30               // transport failures in a row that end a consumer (~3 s)
)

type popConsumer struct {
	i      int
	id     string
	o      *options
	cc     *grpc.ClientConn
	cl     v2.MessagingServiceClient
	md     metadata.MD
	queues []*v2.MessageQueue
	next   int
	tel    v2.MessagingService_TelemetryClient
	cancel context.CancelFunc // ends the telemetry stream and the heartbeats
	hbDone chan struct{}
	st     *stats
}

// popCounts are the run's totals beside the role's: what the summary's
// messages and errors do not say.
type popCounts struct {
	receives, empty, acked, ackFailed, hbFailed atomic.Int64

	mu    sync.Mutex
	kinds []string           // in the order first seen
	errs  map[string]*popErr // by kind ("receive", "ack TOO_MANY_REQUESTS"...)
}

type popErr struct {
	n     int64
	first string
}

// noteErr counts a failure of its kind and keeps the first one's text.
func (p *popCounts) noteErr(kind string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.errs == nil {
		p.errs = map[string]*popErr{}
	}
	e := p.errs[kind]
	if e == nil {
		e = &popErr{first: err.Error()}
		p.errs[kind] = e
		p.kinds = append(p.kinds, kind)
	}
	e.n++
}

func runGRPCPop(o *options, a *adminclient.Client, out io.Writer, stop <-chan struct{}) ([]summary, error) {
	if o.proxy == "" {
		return nil, errors.New("grpc-pop needs -proxy host:port")
	}
	if o.createTopic {
		if _, err := resolve(a, o, true); err != nil {
			return nil, err
		}
	}
	if o.namesrv != "" {
		if err := createPopGroup(a, o); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(out, "# mqbench grpc-pop proxy=%s tls=%v topic=%s group=%s consumers=%d batch=%d invisible=%s await=%s count=%d duration=%s\n",
		o.proxy, o.tls, o.topic, o.group, o.conns, popRecvBatch, popInvisible, popAwait, o.count, o.duration)
	creds := proxyCreds(o)
	pop := &role{name: "pop"}
	var pc popCounts
	t0 := time.Now()
	cons, err := startPopConsumers(o, creds, pop, &pc)
	defer stopPopConsumers(cons)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "# started %d consumers in %d ms\n", len(cons), time.Since(t0).Milliseconds())
	done := make(chan struct{})
	var doneOnce sync.Once
	if o.count > 0 && o.durationSet {
		t := time.AfterFunc(o.duration, func() { doneOnce.Do(func() { close(done) }) })
		defer t.Stop()
	}
	sums, err := measured(o, out, stop, done, pop, func(runStop <-chan struct{}) error {
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-runStop; cancel() }()
		errs := make([]error, len(cons))
		var wg sync.WaitGroup
		for i, c := range cons {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = c.run(ctx, &pc, func(n int64) {
					if pc.acked.Add(n) >= o.count && o.count > 0 {
						doneOnce.Do(func() { close(done) })
					}
				})
				if errs[i] != nil {
					cancel() // a consumer that cannot reach the proxy ends the run
				}
			}()
		}
		wg.Wait()
		cancel()
		return errors.Join(errs...)
	})
	fmt.Fprintf(out, "POP consumers=%d receives=%d empty=%d acked=%d ack_failed=%d heartbeat_failed=%d\n",
		len(cons), pc.receives.Load(), pc.empty.Load(), pc.acked.Load(), pc.ackFailed.Load(), pc.hbFailed.Load())
	pc.mu.Lock()
	for _, k := range pc.kinds {
		fmt.Fprintf(out, "# errors %s: %d, the first: %s\n", k, pc.errs[k].n, pc.errs[k].first)
	}
	pc.mu.Unlock()
	return sums, err
}

// createPopGroup creates -g (a plain subscription group, as mqadmin
// updateSubGroup does) on every master broker of -t's route.
func createPopGroup(a *adminclient.Client, o *options) error {
	rd, err := a.Route(o.topic)
	if err != nil {
		return fmt.Errorf("route of %s, to create group %s: %w", o.topic, o.group, err)
	}
	body := `{"groupName":` + strconv.Quote(o.group) + `,"consumeEnable":true,"consumeFromMinEnable":true,` +
		`"consumeBroadcastEnable":true,"retryQueueNums":1,"retryMaxTimes":16,"brokerId":0,` +
		`"whichBrokerWhenConsumeSlowly":1,"notifyConsumerIdsChangedEnable":true}`
	for _, addr := range rd.Masters() {
		if _, err := a.Call(addr, remoting.UpdateAndCreateSubscription, map[string]string{}, []byte(body)); err != nil {
			return fmt.Errorf("create group %s on %s: %w", o.group, addr, err)
		}
	}
	return nil
}

// startPopConsumers starts -c consumers, popStartWorkers at a time; the
// consumers started so far come back with the first failure.
func startPopConsumers(o *options, creds credentials.TransportCredentials, pop *role, pc *popCounts) ([]*popConsumer, error) {
	cons := make([]*popConsumer, o.conns)
	errs := make([]error, o.conns)
	next := atomic.Int64{}
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range min(popStartWorkers, o.conns) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= o.conns {
					return
				}
				cons[i], errs[i] = newPopConsumer(o, i, creds, pop.newStats(), pc)
				if errs[i] != nil {
					failed.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	var started []*popConsumer
	for _, c := range cons {
		if c != nil {
			started = append(started, c)
		}
	}
	return started, errors.Join(errs...)
}

// proxyEndpoints is the address the consumers reach the proxy at, as the
// SDKs put it in a QueryRoute (in cluster mode the route's brokers have it).
func proxyEndpoints(addr string) *v2.Endpoints {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil
	}
	p, _ := strconv.Atoi(port)
	scheme := v2.AddressScheme_DOMAIN_NAME
	if ip, err := netip.ParseAddr(host); err == nil {
		scheme = v2.AddressScheme_IPv4
		if ip.Is6() {
			scheme = v2.AddressScheme_IPv6
		}
	}
	return &v2.Endpoints{Scheme: scheme, Addresses: []*v2.Address{{Host: host, Port: int32(p)}}}
}

// newPopConsumer connects consumer i and does what an SDK's start does:
// the route, the settings (answered), a first heartbeat. A consumer that
// fails part way is closed here.
func newPopConsumer(o *options, i int, creds credentials.TransportCredentials, st *stats, pc *popCounts) (c *popConsumer, err error) {
	cc, err := grpc.NewClient(o.proxy, grpc.WithTransportCredentials(creds))
	if err != nil {
		return nil, fmt.Errorf("dial proxy %s: %w", o.proxy, err)
	}
	id := fmt.Sprintf("mqbench-pop@%d@%d", os.Getpid(), i)
	c = &popConsumer{i: i, id: id, o: o, cc: cc, cl: v2.NewMessagingServiceClient(cc), st: st,
		// The headers Apache's proxy reads into its context: the client id
		// keys the settings; the language must name one of its LanguageCodes.
		md: metadata.Pairs("x-mq-client-id", id, "x-mq-language", "GO", "x-mq-protocol", "v2")}
	defer func() {
		if err != nil {
			c.close()
			c = nil
		}
	}()
	group, topic := &v2.Resource{Name: o.group}, &v2.Resource{Name: o.topic}

	ctx, cancel := c.callCtx(context.Background(), o.timeout)
	rr, err := c.cl.QueryRoute(ctx, &v2.QueryRouteRequest{Topic: topic, Endpoints: proxyEndpoints(o.proxy)})
	cancel()
	if err != nil {
		return c, fmt.Errorf("consumer %d: query route: %w", i, err)
	}
	if rr.GetStatus().GetCode() != v2.Code_OK {
		return c, fmt.Errorf("consumer %d: query route: %s %s", i, rr.GetStatus().GetCode(), rr.GetStatus().GetMessage())
	}
	for _, q := range rr.GetMessageQueues() {
		// The SDKs receive from the readable queues of master brokers.
		if p := q.GetPermission(); (p == v2.Permission_READ || p == v2.Permission_READ_WRITE) && q.GetBroker().GetId() == 0 {
			c.queues = append(c.queues, q)
		}
	}
	if len(c.queues) == 0 {
		return c, fmt.Errorf("consumer %d: route of %s has no readable queue", i, o.topic)
	}
	c.next = i // consumers start on different queues, as their SDKs' random start

	tctx, tcancel := context.WithCancel(metadata.NewOutgoingContext(context.Background(), c.md))
	c.cancel = tcancel
	if c.tel, err = c.cl.Telemetry(tctx); err != nil {
		return c, fmt.Errorf("consumer %d: telemetry: %w", i, err)
	}
	ct := v2.ClientType_SIMPLE_CONSUMER
	settings := &v2.Settings{
		ClientType:     &ct,
		AccessPoint:    proxyEndpoints(o.proxy),
		RequestTimeout: durationpb.New(popRequestTimeout),
		PubSub: &v2.Settings_Subscription{Subscription: &v2.Subscription{
			Group: group,
			Subscriptions: []*v2.SubscriptionEntry{{Topic: topic,
				Expression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"}}},
			LongPollingTimeout: durationpb.New(popAwait),
		}},
		UserAgent: &v2.UA{Language: v2.Language_GOLANG, Version: "mqbench", Platform: "linux"},
	}
	if err := c.tel.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: settings}}); err != nil {
		return c, fmt.Errorf("consumer %d: send settings: %w", i, err)
	}
	answered := make(chan error, 1)
	go c.readTelemetry(answered)
	select {
	case err := <-answered:
		if err != nil {
			return c, fmt.Errorf("consumer %d: settings: %w", i, err)
		}
	case <-time.After(o.timeout):
		return c, fmt.Errorf("consumer %d: settings not answered within %s", i, o.timeout)
	}
	if err := c.heartbeat(); err != nil {
		return c, fmt.Errorf("consumer %d: heartbeat: %w", i, err)
	}
	c.hbDone = make(chan struct{})
	go func() {
		defer close(c.hbDone)
		t := time.NewTicker(popHeartbeat)
		defer t.Stop()
		for {
			select {
			case <-tctx.Done():
				return
			case <-t.C:
				if err := c.heartbeat(); err != nil {
					pc.hbFailed.Add(1)
					pc.noteErr("heartbeat", err)
				}
			}
		}
	}()
	return c, nil
}

// readTelemetry reads the stream until it ends; the first answer carrying
// settings (or a refusal, or the stream's end) goes to answered. Later
// commands (a thread stack request, a verify) are read and dropped.
func (c *popConsumer) readTelemetry(answered chan<- error) {
	first := true
	for {
		cmd, err := c.tel.Recv()
		if err != nil {
			if first {
				answered <- err
			}
			return
		}
		if !first {
			continue
		}
		switch {
		case cmd.GetStatus() != nil && cmd.GetStatus().GetCode() != v2.Code_OK:
			answered <- fmt.Errorf("%s %s", cmd.GetStatus().GetCode(), cmd.GetStatus().GetMessage())
			first = false
		case cmd.GetSettings() != nil:
			answered <- nil
			first = false
		}
	}
}

func (c *popConsumer) callCtx(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(metadata.NewOutgoingContext(parent, c.md), d)
}

func (c *popConsumer) heartbeat() error {
	ctx, cancel := c.callCtx(context.Background(), popRequestTimeout)
	defer cancel()
	r, err := c.cl.Heartbeat(ctx, &v2.HeartbeatRequest{Group: &v2.Resource{Name: c.o.group}, ClientType: v2.ClientType_SIMPLE_CONSUMER})
	if err != nil {
		return err
	}
	if r.GetStatus().GetCode() != v2.Code_OK {
		return fmt.Errorf("%s %s", r.GetStatus().GetCode(), r.GetStatus().GetMessage())
	}
	return nil
}

// run receives and acks until ctx ends; acked is told how many messages
// each ack acknowledged. It fails only when the proxy stays unreachable.
func (c *popConsumer) run(ctx context.Context, pc *popCounts, acked func(int64)) error {
	rpcFailures := 0
	for ctx.Err() == nil {
		msgs, lat, st, err := c.receive(ctx)
		code := st.GetCode()
		if ctx.Err() != nil {
			return nil // cut short by the run's end: not a receive
		}
		switch {
		case err != nil:
			c.st.fail(-1)
			pc.noteErr("receive", err)
			if rpcFailures++; rpcFailures >= popMaxRPCFailures {
				return fmt.Errorf("consumer %d: %d receives failed in a row: %w", c.i, rpcFailures, err)
			}
			sleepCtx(ctx, 100*time.Millisecond)
			continue
		case code == v2.Code_MESSAGE_NOT_FOUND:
			rpcFailures = 0
			pc.receives.Add(1)
			pc.empty.Add(1)
			c.st.add(0, 0, lat)
			continue
		case code != v2.Code_OK:
			// Refused (TOO_MANY_REQUESTS, a bad request...): an SDK
			// returns it to the application, which tries again.
			rpcFailures = 0
			pc.receives.Add(1)
			c.st.fail(int32(code))
			pc.noteErr("receive "+code.String(), errors.New(st.GetMessage()))
			sleepCtx(ctx, 100*time.Millisecond)
			continue
		}
		rpcFailures = 0
		pc.receives.Add(1)
		n, bytes := c.ack(msgs, pc)
		c.st.add(n, bytes, lat)
		acked(n)
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// receive is one ReceiveMessage call on the next queue: its messages, its
// round trip (to the stream's end, as an SDK's receive returns), the
// status the proxy answered.
func (c *popConsumer) receive(ctx context.Context) ([]*v2.Message, int64, *v2.Status, error) {
	q := c.queues[c.next%len(c.queues)]
	c.next++
	inv := durationpb.New(popInvisible)
	req := &v2.ReceiveMessageRequest{
		Group:              &v2.Resource{Name: c.o.group},
		MessageQueue:       q,
		FilterExpression:   &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"},
		BatchSize:          popRecvBatch,
		InvisibleDuration:  inv,
		AutoRenew:          false,
		LongPollingTimeout: durationpb.New(popAwait),
	}
	cctx, cancel := c.callCtx(ctx, popAwait+popRequestTimeout)
	defer cancel()
	t0 := nanotime()
	stream, err := c.cl.ReceiveMessage(cctx, req)
	if err != nil {
		return nil, 0, nil, err
	}
	// An answer without a status is not a receive.
	st := &v2.Status{Code: v2.Code_INTERNAL_SERVER_ERROR, Message: "no status in the answer"}
	var msgs []*v2.Message
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, nil, err
		}
		switch x := r.GetContent().(type) {
		case *v2.ReceiveMessageResponse_Status:
			st = x.Status
		case *v2.ReceiveMessageResponse_Message:
			msgs = append(msgs, x.Message)
		}
	}
	return msgs, nanotime() - t0, st, nil
}

// ack acknowledges msgs in one AckMessage call; it returns the messages
// acknowledged and their body bytes. Not cut short by the run's end: a
// message received is acked.
func (c *popConsumer) ack(msgs []*v2.Message, pc *popCounts) (int64, int64) {
	if len(msgs) == 0 {
		return 0, 0
	}
	req := &v2.AckMessageRequest{Group: &v2.Resource{Name: c.o.group}, Topic: &v2.Resource{Name: c.o.topic}}
	sizes := map[string]int64{}
	for _, m := range msgs {
		sp := m.GetSystemProperties()
		req.Entries = append(req.Entries, &v2.AckMessageEntry{MessageId: sp.GetMessageId(), ReceiptHandle: sp.GetReceiptHandle()})
		sizes[sp.GetReceiptHandle()] = int64(len(m.GetBody()))
	}
	ctx, cancel := c.callCtx(context.Background(), popRequestTimeout)
	defer cancel()
	r, err := c.cl.AckMessage(ctx, req)
	if err != nil {
		pc.ackFailed.Add(int64(len(msgs)))
		c.st.fail(-1)
		pc.noteErr("ack", err)
		return 0, 0
	}
	if r.GetStatus().GetCode() == v2.Code_OK {
		var bytes int64
		for _, b := range sizes {
			bytes += b
		}
		return int64(len(msgs)), bytes
	}
	// Some refused (MULTIPLE_RESULTS) or all: the entries say which.
	var n, bytes int64
	for _, e := range r.GetEntries() {
		if e.GetStatus().GetCode() == v2.Code_OK {
			n++
			bytes += sizes[e.GetReceiptHandle()]
			continue
		}
		c.st.fail(int32(e.GetStatus().GetCode()))
		pc.noteErr("ack "+e.GetStatus().GetCode().String(), errors.New(e.GetStatus().GetMessage()))
	}
	if len(r.GetEntries()) == 0 {
		c.st.fail(int32(r.GetStatus().GetCode()))
		pc.noteErr("ack "+r.GetStatus().GetCode().String(), errors.New(r.GetStatus().GetMessage()))
	}
	pc.ackFailed.Add(int64(len(msgs)) - n)
	return n, bytes
}

// close ends what newPopConsumer opened: the SDKs tell the proxy on
// shutdown (NotifyClientTermination), then the stream and the connection
// go.
func (c *popConsumer) close() {
	if c.hbDone != nil {
		ctx, cancel := c.callCtx(context.Background(), popRequestTimeout)
		_, _ = c.cl.NotifyClientTermination(ctx, &v2.NotifyClientTerminationRequest{Group: &v2.Resource{Name: c.o.group}})
		cancel()
	}
	if c.tel != nil {
		_ = c.tel.CloseSend()
	}
	if c.cancel != nil {
		c.cancel()
	}
	if c.hbDone != nil {
		<-c.hbDone
	}
	_ = c.cc.Close()
}

// stopPopConsumers closes the consumers, popStartWorkers at a time.
func stopPopConsumers(cons []*popConsumer) {
	ch := make(chan *popConsumer)
	var wg sync.WaitGroup
	for range min(popStartWorkers, len(cons)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range ch {
				c.close()
			}
		}()
	}
	for _, c := range cons {
		ch <- c
	}
	close(ch)
	wg.Wait()
}
