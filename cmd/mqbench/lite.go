package main

// Lite topics (Apache 5.5, RIP-83) over Remoting, as the proxy drives a
// broker for the 5.x SDKs:
//   - produce -lite N: every message names the next of the lite topics
//     lite0 .. lite<N-1> (__LITE_TOPIC), round robin across connections,
//     so -count N sends one message to each (the broker makes each lite
//     topic's queue on its first message); -create-topic makes -t a LITE
//     parent topic.
//   - lite-consume -lite N: -c clients (one connection each) subscribe with
//     LITE_SUBSCRIPTION_CTL to a share of the lite topics (client i takes
//     those with index = i mod c), then each loops POP_LITE_MESSAGE (up to
//     32, across its lite topics) and ACK_MESSAGE per message with its lite
//     topic, all acks of a batch in flight at once. The pop role's latency
//     is the pop round trip; its count the messages acked.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/internal/adminclient"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// liteSeq numbers lite messages process-wide: message k goes to lite topic
// k mod -lite.
var liteSeq atomic.Uint64

// liteName is the i-th lite topic's name.
func liteName(i int) string { return "lite" + strconv.Itoa(i) }

// appendLiteProp appends the __LITE_TOPIC property of the next lite topic.
func appendLiteProp(dst []byte, n int) []byte {
	dst = append(dst, message.PropLiteTopic...)
	dst = append(dst, 1, 'l', 'i', 't', 'e')
	dst = strconv.AppendUint(dst, (liteSeq.Add(1)-1)%uint64(n), 10)
	return append(dst, 2)
}

// liteTopicAttrs is the attribute string that makes -t a LITE parent.
const liteTopicAttrs = "+message.type=LITE"

// liteSubChunk is how many lite topic names one LITE_SUBSCRIPTION_CTL
// carries.
const liteSubChunk = 10000

// Pop parameters: a batch, the time a popped message stays invisible (long
// enough that none comes back during a run), the long poll when nothing is
// ready.
const (
	litePopMax       = 32
	litePopInvisible = 5 * time.Minute
	litePopPoll      = time.Second
)

type liteClient struct {
	id, addr, brokerName string
	o                    *options
	rc                   *remoting.Client
	st                   *stats
	lites                []string
}

func runLiteConsume(o *options, a *adminclient.Client, out io.Writer, stop <-chan struct{}) ([]summary, error) {
	if o.lite < 1 {
		return nil, errors.New("lite-consume needs -lite N")
	}
	targets, err := resolve(a, o, false)
	if err != nil {
		return nil, err
	}
	addr, name := targets[0].addr, targets[0].brokerName
	for _, t := range targets {
		if t.addr != addr {
			return nil, fmt.Errorf("lite-consume: %s is on more than one broker; give -broker", o.topic)
		}
	}
	if name == "" {
		if name, err = brokerNameOf(a, addr); err != nil {
			return nil, err
		}
	}
	if err := createLiteGroup(a, addr, o.group, o.topic); err != nil {
		return nil, err
	}
	describe(out, o, targets)
	pop := &role{name: "pop"}
	clients := make([]*liteClient, o.conns)
	for i := range clients {
		c := &liteClient{id: fmt.Sprintf("mqbench-%d-%d", os.Getpid(), i), addr: addr, brokerName: name, o: o,
			rc: remoting.NewClient(zerolog.Nop()), st: pop.newStats()}
		defer c.rc.Close()
		for k := i; k < o.lite; k += o.conns {
			c.lites = append(c.lites, liteName(k))
		}
		clients[i] = c
	}
	t0 := time.Now()
	for _, c := range clients {
		if err := c.subscribe(); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(out, "# subscribed %d clients to %d lite topics in %d ms\n", len(clients), o.lite, time.Since(t0).Milliseconds())
	var total atomic.Int64
	done := make(chan struct{})
	var doneOnce sync.Once
	return measured(o, out, stop, done, pop, func(runStop <-chan struct{}) error {
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-runStop; cancel() }()
		errs := make([]error, len(clients))
		var wg sync.WaitGroup
		for i, c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = c.run(ctx, func(n int) {
					if o.count > 0 && total.Add(int64(n)) >= o.count {
						doneOnce.Do(func() { close(done) })
					}
				})
			}()
		}
		wg.Wait()
		cancel()
		return errors.Join(errs...)
	})
}

// brokerNameOf finds the broker name of addr in the cluster table.
func brokerNameOf(a *adminclient.Client, addr string) (string, error) {
	ci, err := a.ClusterInfo()
	if err != nil {
		return "", err
	}
	return ci.BrokerNameOf(addr)
}

// createLiteGroup makes group a lite group bound to topic
// (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP with +lite.bind.topic).
func createLiteGroup(a *adminclient.Client, addr, group, topic string) error {
	body := `{"groupName":` + strconv.Quote(group) + `,"consumeEnable":true,"consumeFromMinEnable":true,` +
		`"consumeBroadcastEnable":true,"retryQueueNums":1,"retryMaxTimes":16,"brokerId":0,` +
		`"whichBrokerWhenConsumeSlowly":1,"notifyConsumerIdsChangedEnable":true,` +
		`"attributes":{"+lite.bind.topic":` + strconv.Quote(topic) + `}}`
	if _, err := a.Call(addr, remoting.UpdateAndCreateSubscription, map[string]string{}, []byte(body)); err != nil {
		return fmt.Errorf("create lite group %s: %w", group, err)
	}
	return nil
}

func (c *liteClient) call(ctx context.Context, req *remoting.Command, wait time.Duration) (*remoting.Command, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	return c.rc.Invoke(ctx, c.addr, req)
}

// subscribe adds the client's lite topics with PARTIAL_ADD, liteSubChunk
// names a request.
func (c *liteClient) subscribe() error {
	for i := 0; i < len(c.lites); i += liteSubChunk {
		names := c.lites[i:min(i+liteSubChunk, len(c.lites))]
		var b strings.Builder
		b.WriteString(`{"subscriptionSet":[{"action":"PARTIAL_ADD","clientId":`)
		b.WriteString(strconv.Quote(c.id))
		b.WriteString(`,"group":` + strconv.Quote(c.o.group) + `,"topic":` + strconv.Quote(c.o.topic) + `,"liteTopicSet":[`)
		for j, n := range names {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(n))
		}
		b.WriteString(`],"version":1}]}`)
		resp, err := c.call(context.Background(), remoting.NewRequest(remoting.LiteSubscriptionCtl, map[string]string{}, []byte(b.String())), 30*time.Second)
		if err != nil {
			return fmt.Errorf("subscribe %s: %w", c.id, err)
		}
		if resp.Code != remoting.Success {
			return fmt.Errorf("subscribe %s: code %d %s", c.id, resp.Code, resp.Remark)
		}
	}
	return nil
}

// run pops and acks until ctx ends; got is told each batch's size.
func (c *liteClient) run(ctx context.Context, got func(int)) error {
	for ctx.Err() == nil {
		t0 := nanotime()
		req := remoting.NewRequest(remoting.PopLiteMessage, nil, nil)
		req.Set("clientId", c.id)
		req.Set("consumerGroup", c.o.group)
		req.Set("topic", c.o.topic)
		req.SetInt64("maxMsgNum", litePopMax)
		req.SetInt64("invisibleTime", litePopInvisible.Milliseconds())
		req.SetInt64("pollTime", litePopPoll.Milliseconds())
		req.SetInt64("bornTime", time.Now().UnixMilli())
		resp, err := c.call(ctx, req, litePopPoll+c.o.timeout)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("pop lite %s: %w", c.id, err)
		}
		switch resp.Code {
		case remoting.Success:
		case remoting.PollingTimeout, remoting.PullNotFound:
			continue
		case remoting.PollingFull, remoting.SystemBusy:
			c.st.fail(resp.Code)
			time.Sleep(10 * time.Millisecond)
			continue
		default:
			return fmt.Errorf("pop lite %s: code %d %s", c.id, resp.Code, resp.Remark)
		}
		lat := nanotime() - t0
		acks, bytes, err := c.acks(resp)
		if err != nil {
			return err
		}
		var wg sync.WaitGroup
		var failed atomic.Int64
		for _, a := range acks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := c.call(context.Background(), a, c.o.timeout)
				if err != nil || r.Code != remoting.Success {
					failed.Add(1)
					code := int32(-1)
					if r != nil {
						code = r.Code
					}
					c.st.fail(code)
				}
			}()
		}
		wg.Wait()
		n := int64(len(acks)) - failed.Load()
		c.st.add(n, bytes, lat)
		got(int(n))
	}
	return nil
}

// acks builds an ACK_MESSAGE per message of a POP_LITE_MESSAGE answer: the
// handle names the message's lite topic queue offset
// (INNER_MULTI_QUEUE_OFFSET), and the header its lite topic.
func (c *liteClient) acks(resp *remoting.Command) ([]*remoting.Command, int64, error) {
	popTime, err1 := resp.Int64("popTime")
	invisible, err2 := resp.Int64("invisibleTime")
	reviveQid, err3 := resp.Int32("reviveQid")
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, 0, fmt.Errorf("pop lite answer header: %w", err)
	}
	var out []*remoting.Command
	var bytes int64
	for b := resp.Body; len(b) > 0; {
		v, rest, err := message.DecodeRecordView(b)
		if err != nil {
			return nil, 0, fmt.Errorf("pop lite answer body: %w", err)
		}
		b = rest
		props := string(v.Properties)
		offs := message.Property(props, message.PropInnerMultiQueueOffset)
		off, err := strconv.ParseInt(offs, 10, 64)
		if err != nil {
			return nil, 0, fmt.Errorf("pop lite message without one lite queue offset (%q)", offs)
		}
		handle := message.AppendExtraInfo(nil, 0, popTime, invisible, reviveQid, c.o.topic, c.brokerName, 0, off)
		a := remoting.NewRequest(remoting.AckMessage, nil, nil)
		(&remoting.AckMessageRequestHeader{ConsumerGroup: c.o.group, Topic: c.o.topic, QueueID: 0,
			ExtraInfo: string(handle), Offset: off, BrokerName: c.brokerName}).Encode(a)
		a.Set("liteTopic", message.Property(props, message.PropLiteTopic))
		out = append(out, a)
		bytes += int64(len(v.Body))
	}
	return out, bytes, nil
}
