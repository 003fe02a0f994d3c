package compattest

// Helpers around the unmodified official Go client.

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

const idProp = "compat_id" // user property carrying our own message id

var nameSeq atomic.Int64

// uniq returns a name unique in this run (valid for topics and groups).
func uniq(prefix string) string {
	return fmt.Sprintf("%s_%d_%d_%d", prefix, os.Getpid(), time.Now().UnixNano()%1_000_000_000, nameSeq.Add(1))
}

func resolver(c *cluster) primitive.NsResolver {
	return primitive.NewPassthroughResolver([]string{c.nsAddr})
}

func newAdmin(t *testing.T, c *cluster) admin.Admin {
	t.Helper()
	a, err := admin.NewAdmin(admin.WithResolver(resolver(c)))
	if err != nil {
		t.Fatalf("admin.NewAdmin: %v", err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// createTopic creates topic on the broker with the admin API and polls the
// namesrv (raw 105) until the route shows wantQueues write queues.
func createTopic(t *testing.T, c *cluster, topic string, opts ...admin.OptionCreate) *routeData {
	t.Helper()
	a := newAdmin(t, c)
	all := append([]admin.OptionCreate{admin.WithTopicCreate(topic), admin.WithBrokerAddrCreate(c.brokerAddr)}, opts...)
	if err := a.CreateTopic(context.Background(), all...); err != nil {
		t.Fatalf("admin.CreateTopic(%s) on %s: %v", topic, c.brokerAddr, err)
	}
	return waitRoute(t, c, topic, 0)
}

// waitRoute polls GET_ROUTEINFO_BY_TOPIC until the topic routes to the broker
// (and, if wantWrite > 0, has that many write queues).
func waitRoute(t *testing.T, c *cluster, topic string, wantWrite int) *routeData {
	t.Helper()
	var (
		rd   *routeData
		last string
	)
	ok := waitFor(t, 10*time.Second, func() bool {
		code, r, remark, err := queryRoute(c.nsAddr, topic)
		switch {
		case err != nil:
			last = err.Error()
		case code != 0:
			last = fmt.Sprintf("code %d remark %q", code, remark)
		case !r.hasBroker(c.brokerAddr):
			last = "route without broker " + c.brokerAddr + ": " + r.raw
		case wantWrite > 0 && r.writeQueues() != wantWrite:
			last = fmt.Sprintf("write queues %d, want %d: %s", r.writeQueues(), wantWrite, r.raw)
		default:
			rd = r
			return true
		}
		return false
	})
	if !ok {
		t.Fatalf("namesrv GET_ROUTEINFO_BY_TOPIC(105) for %q never became valid: %s", topic, last)
	}
	return rd
}

// waitPerm polls topic's route for up to 30 s until its first queue has
// perm (4: read-only, 6: read and write); false and the last route seen
// when it never does.
func waitPerm(t *testing.T, c *cluster, topic string, perm int) (bool, string) {
	t.Helper()
	var last string
	ok := waitFor(t, 30*time.Second, func() bool {
		_, r, _, err := queryRoute(c.nsAddr, topic)
		if err != nil || r == nil || len(r.queues) == 0 {
			return false
		}
		last = r.raw
		return r.queues[0].Perm == perm
	})
	return ok, last
}

func newProducer(t *testing.T, c *cluster, opts ...producer.Option) *producerHandle {
	t.Helper()
	group := uniq("PG")
	all := append([]producer.Option{
		producer.WithNsResolver(resolver(c)),
		producer.WithGroupName(group),
		producer.WithInstanceName(uniq("prod")),
		producer.WithRetry(2),
		producer.WithSendMsgTimeout(5 * time.Second),
	}, opts...)
	p, err := rocketmq.NewProducer(all...)
	if err != nil {
		t.Fatalf("NewDefaultProducer: %v", err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("producer.Start: %v", err)
	}
	h := &producerHandle{p: p}
	t.Cleanup(h.shutdown)
	return h
}

type producerHandle struct {
	p    rocketmq.Producer
	once sync.Once
}

func (h *producerHandle) shutdown() { h.once.Do(func() { _ = h.p.Shutdown() }) }

func (h *producerHandle) sendSync(ctx context.Context, msgs ...*primitive.Message) (*primitive.SendResult, error) {
	return h.p.SendSync(ctx, msgs...)
}

func (h *producerHandle) sendAsync(ctx context.Context, f func(context.Context, *primitive.SendResult, error), msgs ...*primitive.Message) error {
	return h.p.SendAsync(ctx, f, msgs...)
}

func (h *producerHandle) sendOneWay(ctx context.Context, msgs ...*primitive.Message) error {
	return h.p.SendOneWay(ctx, msgs...)
}

// mustSend sends one message synchronously and checks SendOK.
func (h *producerHandle) mustSend(t *testing.T, m *primitive.Message) *primitive.SendResult {
	t.Helper()
	r, err := h.sendSync(context.Background(), m)
	if err != nil {
		t.Fatalf("SendSync(topic=%s, %s=%s): %v", m.Topic, idProp, m.GetProperty(idProp), err)
	}
	if r.Status != primitive.SendOK {
		t.Fatalf("SendSync(topic=%s): status %d, want SendOK: %s", m.Topic, r.Status, r)
	}
	return r
}

func newMsg(topic, id, tag string) *primitive.Message {
	m := primitive.NewMessage(topic, []byte("body-"+id))
	m.WithProperty(idProp, id)
	if tag != "" {
		m.WithTag(tag)
	}
	return m
}

// ---------------------------------------------------------------------------
// consumer side

type received struct {
	ID          string
	Topic       string
	Body        []byte
	Tags        string
	Keys        string
	Props       map[string]string
	MsgID       string
	OffsetMsgID string
	QueueID     int
	QueueOffset int64
	StoreHost   string
	Reconsume   int32
	At          time.Time
	Consumer    string
}

// collector records every delivered message keyed by its compat_id property.
type collector struct {
	name     string
	mu       sync.Mutex
	byID     map[string][]received
	total    int
	inflight atomic.Int32
	calls    atomic.Int64
}

func newCollector(name string) *collector {
	return &collector{name: name, byID: map[string][]received{}}
}

func (c *collector) handle(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
	c.inflight.Add(1)
	defer c.inflight.Add(-1)
	c.calls.Add(1)
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range msgs {
		r := received{
			ID: m.GetProperty(idProp), Topic: m.Topic, Body: append([]byte(nil), m.Body...),
			Tags: m.GetTags(), Keys: m.GetKeys(), Props: m.GetProperties(),
			MsgID: m.MsgId, OffsetMsgID: m.OffsetMsgId, StoreHost: m.StoreHost,
			QueueOffset: m.QueueOffset, Reconsume: m.ReconsumeTimes, At: now, Consumer: c.name,
		}
		if m.Queue != nil {
			r.QueueID = m.Queue.QueueId
		}
		c.byID[r.ID] = append(c.byID[r.ID], r)
		c.total++
	}
	return consumer.ConsumeSuccess, nil
}

func (c *collector) deliveries() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

func (c *collector) distinct() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byID)
}

// has reports whether every id was delivered at least once.
func (c *collector) has(ids []string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		if len(c.byID[id]) == 0 {
			return false
		}
	}
	return true
}

func (c *collector) get(id string) []received {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]received(nil), c.byID[id]...)
}

func (c *collector) missing(ids []string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, id := range ids {
		if len(c.byID[id]) == 0 {
			out = append(out, id)
		}
	}
	return out
}

// ids returns the set of delivered ids matching a prefix.
func (c *collector) idsWithPrefix(prefix string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for id := range c.byID {
		if strings.HasPrefix(id, prefix) {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// queuesFor returns queue ids of deliveries whose id has the prefix.
func (c *collector) queuesFor(prefix string) map[int]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	qs := map[int]int{}
	for id, rs := range c.byID {
		if !strings.HasPrefix(id, prefix) {
			continue
		}
		for _, r := range rs {
			qs[r.QueueID]++
		}
	}
	return qs
}

type pushConsumer interface {
	Start() error
	Shutdown() error
	Subscribe(topic string, selector consumer.MessageSelector, f func(context.Context, ...*primitive.MessageExt) (consumer.ConsumeResult, error)) error
	GetOffsetDiffMap() map[string]int64
}

type consumerHandle struct {
	pc       pushConsumer
	group    string
	instance string
	col      *collector
	once     sync.Once
}

func (h *consumerHandle) shutdown() { h.once.Do(func() { _ = h.pc.Shutdown() }) }

// startConsumer creates, subscribes and starts a clustering push consumer
// reading from the first offset.
func startConsumer(t *testing.T, c *cluster, group, topic, expr string, col *collector, opts ...consumer.Option) *consumerHandle {
	t.Helper()
	h := startConsumerFn(t, c, group, topic, consumer.MessageSelector{Type: consumer.TAG, Expression: expr}, col.handle, opts...)
	h.col = col
	return h
}

// waitAll waits until col has every id, failing with the missing ones.
func waitAll(t *testing.T, col *collector, ids []string, timeout time.Duration, what string) {
	t.Helper()
	if !waitFor(t, timeout, func() bool { return col.has(ids) }) {
		miss := col.missing(ids)
		show := miss
		if len(show) > 10 {
			show = show[:10]
		}
		t.Fatalf("%s: %d of %d messages not delivered within %s (e.g. %v); deliveries so far=%d",
			what, len(miss), len(ids), timeout, show, col.deliveries())
	}
}
