package compattest

// The soak's workload (official Go client) and its accounting: every
// acknowledged send is recorded (id, queue, queue offset, uniq key); every
// successful consumption is counted per group; at the end the store is read
// back queue by queue with raw pulls.

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

type soakKind uint8

const (
	kindPlain soakKind = iota
	kindBatch
	kindDelay
	kindTimer
	kindOrder
)

var soakKindNames = [...]string{"plain", "batch", "delay", "timer", "order"}

type soakAck struct {
	id     string
	kind   soakKind
	topic  string
	tag    string
	queue  int
	offset int64 // queue offset in topic (delay/timer: in the staging topic, not checked)
	uniq   string
	sentAt time.Time
	delay  time.Duration // delay/timer: earliest delivery after sentAt
}

// Send rates (messages per second), modest so that SYNC_FLUSH on a shared
// 2-core machine keeps up and ten minutes stay well inside memory and disk.
const (
	soakPlainProducers = 3
	soakPlainRate      = 40
	soakBatchRate      = 4 // batches of soakBatchSize
	soakBatchSize      = 10
	soakDelayRate      = 4
	soakOrderRate      = 40
	soakOrderKeys      = 16
	soakRetryEvery     = 50 // 1 in 50 tMain messages answered RetryLater once
	soakFloodMsgs      = 64
	soakFloodBody      = 16 << 10
)

type soakLoad struct {
	s *soak

	ackMu sync.Mutex
	acks  []soakAck

	sendErrs atomic.Int64
	retried  atomic.Int64

	main, tagA, delay, order *soakSink

	prods     []*producerHandle
	consumers []*consumerHandle
}

func newSoakLoad(s *soak) *soakLoad {
	return &soakLoad{s: s, main: newSoakSink(), tagA: newSoakSink(), delay: newSoakSink(), order: newSoakSink()}
}

func (l *soakLoad) ack(a soakAck) {
	l.ackMu.Lock()
	l.acks = append(l.acks, a)
	l.ackMu.Unlock()
}

func (l *soakLoad) ackedCount() int {
	l.ackMu.Lock()
	defer l.ackMu.Unlock()
	return len(l.acks)
}

func (l *soakLoad) snapshot() []soakAck {
	l.ackMu.Lock()
	defer l.ackMu.Unlock()
	return append([]soakAck(nil), l.acks...)
}

func (l *soakLoad) consumedCount() int {
	return l.main.distinct() + l.delay.distinct() + l.order.distinct()
}

// ---------------------------------------------------------------------------
// set-up

func (s *soak) createTopics() {
	t := s.t
	createTopic(t, s.c, s.tMain, admin.WithReadQueueNums(8), admin.WithWriteQueueNums(8))
	createTopic(t, s.c, s.tDelay, admin.WithReadQueueNums(4), admin.WithWriteQueueNums(4))
	createTopic(t, s.c, s.tOrder, admin.WithReadQueueNums(4), admin.WithWriteQueueNums(4))
	createTopic(t, s.c, s.tFlood, admin.WithReadQueueNums(1), admin.WithWriteQueueNums(1))
	createRetryTopic(t, s.c, s.gMain)
	// topics.json is written by a 1 s ticker: a kill before it would lose the
	// topics themselves (crash_test.go waits the same way).
	if !waitFor(t, 10*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(s.c.dir, "store", "config", "topics.json"))
		for _, tp := range []string{s.tMain, s.tDelay, s.tOrder, s.tFlood, "%RETRY%" + s.gMain} {
			if !strings.Contains(string(b), tp) {
				return false
			}
		}
		return true
	}) {
		t.Fatal("soak topics not persisted to config/topics.json within 10 s")
	}
}

// prefillFlood stores the 16 KiB messages the pipelined pulls read (so each
// pull answer is large), and notes one commit log offset for sendbacks.
func (s *soak) prefillFlood() {
	t := s.t
	p := newProducer(t, s.c)
	body := strings.Repeat("f", soakFloodBody)
	for i := 0; i < soakFloodMsgs; i++ {
		m := primitive.NewMessage(s.tFlood, []byte(body))
		m.WithTag("TagF")
		p.mustSend(t, m)
	}
	p.shutdown()
	// Acknowledged is not yet dispatched: wait for the consume queue.
	if !waitFor(t, 10*time.Second, func() bool {
		n, err := getMaxOffset(s.c.brokerAddr, s.tFlood, 0)
		return err == nil && n >= soakFloodMsgs
	}) {
		t.Fatalf("the %d prefilled flood messages are not in %s queue 0 within 10 s", soakFloodMsgs, s.tFlood)
	}
	resp, err := rawInvoke(s.c.brokerAddr, soakPull(s.tFlood, "soak_setup", 0, 0, "*"), 5*time.Second)
	if err != nil || resp.Code != 0 {
		t.Fatalf("pull of the prefilled flood topic: %v %v", err, resp)
	}
	msgs := primitive.DecodeMessage(resp.Body)
	if len(msgs) == 0 {
		t.Fatalf("pull of the prefilled flood topic returned no message: %s", resp)
	}
	s.floodPhy = msgs[0].CommitLogOffset
}

// soakPull is PULL_MESSAGE with the subscription in the request (sysFlag 4),
// no suspension, no offset commit.
func soakPull(topic, group string, queueID int, offset int64, sub string) *rawCmd {
	return javaRequest(11, map[string]string{
		"consumerGroup": group, "topic": topic, "queueId": strconv.Itoa(queueID),
		"queueOffset": strconv.FormatInt(offset, 10), "maxMsgNums": "32", "sysFlag": "4", "commitOffset": "0",
		"suspendTimeoutMillis": "0", "subscription": sub, "subVersion": strconv.FormatInt(time.Now().UnixMilli(), 10),
		"expressionType": "TAG",
	}, nil)
}

// ---------------------------------------------------------------------------
// producers

type pacer struct {
	every time.Duration
	next  time.Time
}

// wait paces a loop at a fixed rate without bursts after a stall.
func (p *pacer) wait(ctx context.Context) bool {
	now := time.Now()
	if p.next.Before(now) {
		p.next = now
	}
	d := p.next.Sub(now)
	p.next = p.next.Add(p.every)
	if d <= 0 {
		return ctx.Err() == nil
	}
	return sleepCtx(ctx, d)
}

func perSecond(n int) time.Duration { return time.Second / time.Duration(n) }

func (l *soakLoad) newProducer(opts ...producer.Option) *producerHandle {
	p := newProducer(l.s.t, l.s.c, append([]producer.Option{producer.WithRetry(0), producer.WithSendMsgTimeout(3 * time.Second)}, opts...)...)
	l.prods = append(l.prods, p)
	return p
}

// failed counts an unacknowledged send and backs off briefly so a loop does
// not spin while the broker is down.
func (l *soakLoad) failed(ctx context.Context) {
	l.sendErrs.Add(1)
	sleepCtx(ctx, 100*time.Millisecond)
}

func (l *soakLoad) startProducers(ctx context.Context, wg *sync.WaitGroup) {
	goLoop := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	for w := 0; w < soakPlainProducers; w++ {
		p := l.newProducer()
		goLoop(func() { l.plainLoop(ctx, p, w) })
	}
	pb := l.newProducer()
	goLoop(func() { l.batchLoop(ctx, pb) })
	pd := l.newProducer()
	goLoop(func() { l.delayLoop(ctx, pd) })
	po := l.newProducer(producer.WithQueueSelector(producer.NewHashQueueSelector()))
	goLoop(func() { l.orderLoop(ctx, po) })
}

func soakTag(i int) string {
	if i%2 == 0 {
		return "TagA"
	}
	return "TagB"
}

// plainLoop: single sync sends with a key and a tag.
func (l *soakLoad) plainLoop(ctx context.Context, p *producerHandle, w int) {
	pc := pacer{every: perSecond(soakPlainRate)}
	for i := 0; pc.wait(ctx); i++ {
		id := fmt.Sprintf("p%d-%d", w, i)
		tag := soakTag(i)
		m := newMsg(l.s.tMain, id, tag)
		m.WithKeys([]string{id})
		sent := time.Now()
		r, err := p.sendSync(ctx, m)
		if err != nil || r.Status != primitive.SendOK {
			l.failed(ctx)
			continue
		}
		l.ack(soakAck{id: id, kind: kindPlain, topic: l.s.tMain, tag: tag, queue: r.MessageQueue.QueueId,
			offset: r.QueueOffset, uniq: r.MsgID, sentAt: sent})
	}
}

// batchLoop: SEND_BATCH_MESSAGE of soakBatchSize messages; the answer's
// queue offset is the first message's, the others follow it.
func (l *soakLoad) batchLoop(ctx context.Context, p *producerHandle) {
	pc := pacer{every: perSecond(soakBatchRate)}
	for i := 0; pc.wait(ctx); i++ {
		msgs := make([]*primitive.Message, soakBatchSize)
		ids := make([]string, soakBatchSize)
		for j := range msgs {
			ids[j] = fmt.Sprintf("b%d-%d", i, j)
			msgs[j] = newMsg(l.s.tMain, ids[j], soakTag(j))
			msgs[j].WithKeys([]string{ids[j]})
		}
		sent := time.Now()
		r, err := p.sendSync(ctx, msgs...)
		if err != nil || r.Status != primitive.SendOK {
			l.failed(ctx)
			continue
		}
		for j, id := range ids {
			l.ack(soakAck{id: id, kind: kindBatch, topic: l.s.tMain, tag: soakTag(j), queue: r.MessageQueue.QueueId,
				offset: r.QueueOffset + int64(j), sentAt: sent})
		}
	}
}

// delayLoop alternates delay levels (1 s each, level 18 = 4 s: shortDelays)
// with timer messages (TIMER_DELAY_SEC and TIMER_DELIVER_MS, 1–3 s).
func (l *soakLoad) delayLoop(ctx context.Context, p *producerHandle) {
	pc := pacer{every: perSecond(soakDelayRate)}
	for i := 0; pc.wait(ctx); i++ {
		id := fmt.Sprintf("d%d", i)
		m := newMsg(l.s.tDelay, id, "TagD")
		m.WithKeys([]string{id})
		kind, delay := kindDelay, time.Second
		sent := time.Now()
		switch i % 3 {
		case 0:
			level := 1 + (i/3)%18
			m.WithDelayTimeLevel(level)
			if level == 18 {
				delay = 4 * time.Second
			}
		case 1:
			kind, delay = kindTimer, time.Duration(1+i%3)*time.Second
			m.WithProperty("TIMER_DELAY_SEC", strconv.Itoa(int(delay/time.Second)))
		case 2:
			kind, delay = kindTimer, time.Duration(1+i%3)*time.Second
			m.WithProperty("TIMER_DELIVER_MS", strconv.FormatInt(sent.Add(delay).UnixMilli(), 10))
		}
		r, err := p.sendSync(ctx, m)
		if err != nil || r.Status != primitive.SendOK {
			l.failed(ctx)
			continue
		}
		l.ack(soakAck{id: id, kind: kind, topic: l.s.tDelay, tag: "TagD", queue: r.MessageQueue.QueueId,
			offset: r.QueueOffset, uniq: r.MsgID, sentAt: sent, delay: delay})
	}
}

// orderLoop: one sender for all keys, so each key's sequence numbers are in
// send order, and the hash selector keeps a key on one queue.
func (l *soakLoad) orderLoop(ctx context.Context, p *producerHandle) {
	pc := pacer{every: perSecond(soakOrderRate)}
	for i := 0; pc.wait(ctx); i++ {
		key, seq := fmt.Sprintf("k%d", i%soakOrderKeys), i/soakOrderKeys
		id := fmt.Sprintf("o%s-%d", key, seq)
		m := newMsg(l.s.tOrder, id, "TagO")
		m.WithKeys([]string{id})
		m.WithShardingKey(key)
		m.WithProperty("seq", strconv.Itoa(seq))
		sent := time.Now()
		r, err := p.sendSync(ctx, m)
		if err != nil || r.Status != primitive.SendOK {
			l.failed(ctx)
			continue
		}
		l.ack(soakAck{id: id, kind: kindOrder, topic: l.s.tOrder, tag: "TagO", queue: r.MessageQueue.QueueId,
			offset: r.QueueOffset, uniq: r.MsgID, sentAt: sent})
	}
}

func (l *soakLoad) stopProducers() {
	for _, p := range l.prods {
		p.shutdown()
	}
}

// ---------------------------------------------------------------------------
// consumers

// soakSink counts successful consumptions per id (and keeps the first time).
type soakSink struct {
	mu     sync.Mutex
	count  map[string]int32
	first  map[string]time.Time
	wrong  []string       // deliveries this group must not see
	lastSq map[string]int // orderly: key -> last first-delivered seq
	broken []string       // orderly: order violations
}

func newSoakSink() *soakSink {
	return &soakSink{count: map[string]int32{}, first: map[string]time.Time{}, lastSq: map[string]int{}}
}

func (k *soakSink) record(m *primitive.MessageExt, now time.Time) (firstTime bool) {
	id := m.GetProperty(idProp)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.count[id]++
	if k.count[id] == 1 {
		k.first[id] = now
		return true
	}
	return false
}

func (k *soakSink) distinct() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.count)
}

func (k *soakSink) has(id string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.count[id] > 0
}

func (k *soakSink) firstAt(id string) (time.Time, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	at, ok := k.first[id]
	return at, ok
}

func retryOnce(id string) bool {
	h := fnv.New32a()
	h.Write([]byte(id))
	return h.Sum32()%soakRetryEvery == 0
}

func (l *soakLoad) startConsumers() {
	s := l.s
	t := s.t
	// Two instances share tMain's queues; 1 in 50 messages is answered
	// RetryLater on its first delivery and counts only when it comes back
	// from %RETRY% (CONSUMER_SEND_MSG_BACK under kill -9).
	mainFn := func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		now := time.Now()
		for _, m := range msgs {
			if m.ReconsumeTimes == 0 && retryOnce(m.GetProperty(idProp)) {
				l.retried.Add(1)
				return consumer.ConsumeRetryLater, nil
			}
		}
		for _, m := range msgs {
			l.main.record(m, now)
		}
		return consumer.ConsumeSuccess, nil
	}
	for i := 0; i < 2; i++ {
		l.consumers = append(l.consumers, startConsumerFn(t, s.c, s.gMain, s.tMain, tagAll, mainFn))
	}
	tagAFn := func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		now := time.Now()
		for _, m := range msgs {
			if m.GetTags() != "TagA" {
				l.tagA.mu.Lock()
				l.tagA.wrong = append(l.tagA.wrong, fmt.Sprintf("%s (tag %q)", m.GetProperty(idProp), m.GetTags()))
				l.tagA.mu.Unlock()
				continue
			}
			l.tagA.record(m, now)
		}
		return consumer.ConsumeSuccess, nil
	}
	l.consumers = append(l.consumers, startConsumerFn(t, s.c, s.gTagA, s.tMain,
		consumer.MessageSelector{Type: consumer.TAG, Expression: "TagA"}, tagAFn))
	delayFn := func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		now := time.Now()
		for _, m := range msgs {
			l.delay.record(m, now)
		}
		return consumer.ConsumeSuccess, nil
	}
	l.consumers = append(l.consumers, startConsumerFn(t, s.c, s.gDelay, s.tDelay, tagAll, delayFn))
	// Orderly: the first deliveries of each key must come in send order
	// (a redelivery after a kill may repeat earlier ones, which is allowed).
	orderFn := func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		now := time.Now()
		for _, m := range msgs {
			if !l.order.record(m, now) {
				continue
			}
			key := m.GetShardingKey()
			seq, _ := strconv.Atoi(m.GetProperty("seq"))
			l.order.mu.Lock()
			if last, ok := l.order.lastSq[key]; ok && seq <= last {
				l.order.broken = append(l.order.broken, fmt.Sprintf("key %s: seq %d first delivered after seq %d (queue %d offset %d)",
					key, seq, last, m.Queue.QueueId, m.QueueOffset))
			}
			l.order.lastSq[key] = max(l.order.lastSq[key], seq)
			l.order.mu.Unlock()
		}
		return consumer.ConsumeSuccess, nil
	}
	l.consumers = append(l.consumers, startConsumerFn(t, s.c, s.gOrder, s.tOrder, tagAll, orderFn, consumer.WithConsumerOrder(true)))
}

func (l *soakLoad) stopConsumers() {
	for _, c := range l.consumers {
		c.shutdown()
	}
}

// missingConsumed lists acknowledged ids their group has not consumed yet.
func (l *soakLoad) missingConsumed(acks []soakAck) (miss []soakAck, tagAMiss []soakAck) {
	for _, a := range acks {
		var sink *soakSink
		switch a.kind {
		case kindPlain, kindBatch:
			sink = l.main
			if a.tag == "TagA" && !l.tagA.has(a.id) {
				tagAMiss = append(tagAMiss, a)
			}
		case kindDelay, kindTimer:
			sink = l.delay
		case kindOrder:
			sink = l.order
		}
		if !sink.has(a.id) {
			miss = append(miss, a)
		}
	}
	return miss, tagAMiss
}

// waitConsumed polls until every acknowledged message was consumed by its
// groups, or timeout.
func (l *soakLoad) waitConsumed(timeout time.Duration) {
	acks := l.snapshot()
	waitFor(l.s.t, timeout, func() bool {
		m, a := l.missingConsumed(acks)
		return len(m) == 0 && len(a) == 0
	})
}

type consumeCheck struct {
	consumed int
	note     string
	failures []string
}

func (l *soakLoad) checkConsumed() consumeCheck {
	acks := l.snapshot()
	miss, tagAMiss := l.missingConsumed(acks)
	var r consumeCheck
	r.consumed = len(acks) - len(miss)
	var tagA int
	for _, a := range acks {
		if (a.kind == kindPlain || a.kind == kindBatch) && a.tag == "TagA" {
			tagA++
		}
	}
	l.order.mu.Lock()
	broken := append([]string(nil), l.order.broken...)
	l.order.mu.Unlock()
	l.tagA.mu.Lock()
	wrong := append([]string(nil), l.tagA.wrong...)
	l.tagA.mu.Unlock()

	// Delayed and timer messages: never before their time.
	var early []string
	for _, a := range acks {
		if a.kind != kindDelay && a.kind != kindTimer {
			continue
		}
		if at, ok := l.delay.firstAt(a.id); ok && at.Before(a.sentAt.Add(a.delay-100*time.Millisecond)) {
			early = append(early, fmt.Sprintf("%s (%s %s) delivered %s after its send", a.id, soakKindNames[a.kind], a.delay, at.Sub(a.sentAt)))
		}
	}
	r.note = fmt.Sprintf("by their group at least once; TagA group %d/%d, retried once %d, order violations %d, early %d",
		tagA-len(tagAMiss), tagA, l.retried.Load(), len(broken), len(early))

	if len(miss) > 0 {
		r.failures = append(r.failures, fmt.Sprintf("%d of %d acknowledged messages never consumed by their group; e.g.\n%s",
			len(miss), len(acks), l.describeAcks(miss)))
	}
	if len(tagAMiss) > 0 {
		r.failures = append(r.failures, fmt.Sprintf("%d of %d acknowledged TagA messages never consumed by the TagA group; e.g.\n%s",
			len(tagAMiss), tagA, l.describeAcks(tagAMiss)))
	}
	if len(wrong) > 0 {
		r.failures = append(r.failures, fmt.Sprintf("the TagA group got %d messages of another tag, e.g. %s", len(wrong), strings.Join(examples(wrong), ", ")))
	}
	if len(broken) > 0 {
		r.failures = append(r.failures, fmt.Sprintf("orderly consumer: %d order violations, e.g.\n%s", len(broken), strings.Join(examples(broken), "\n")))
	}
	if len(early) > 0 {
		r.failures = append(r.failures, fmt.Sprintf("%d delay/timer messages delivered before their time, e.g.\n%s", len(early), strings.Join(examples(early), "\n")))
	}
	return r
}

func examples(xs []string) []string {
	if len(xs) > 10 {
		return xs[:10]
	}
	return xs
}

// describeAcks names up to 10 messages with where they were acknowledged and
// what the broker's consumer offset for their group says now.
func (l *soakLoad) describeAcks(as []soakAck) string {
	s := l.s
	var lines []string
	for i, a := range as {
		if i == 10 {
			break
		}
		group := map[soakKind]string{kindPlain: s.gMain, kindBatch: s.gMain, kindDelay: s.gDelay, kindTimer: s.gDelay, kindOrder: s.gOrder}[a.kind]
		line := fmt.Sprintf("  %s %s topic %s queue %d offset %d sent %s",
			soakKindNames[a.kind], a.id, a.topic, a.queue, a.offset, a.sentAt.Format("15:04:05.000"))
		if a.kind != kindDelay && a.kind != kindTimer {
			if code, off, err := queryConsumerOffset(s.c.brokerAddr, group, a.topic, a.queue); err == nil {
				line += fmt.Sprintf("; group offset now %d (code %d)", off, code)
			}
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// ---------------------------------------------------------------------------
// the store, read back

type storeCheck struct {
	acked, recovered, lost, misplaced, undelivered, unverified int
	kinds                                                      string
	unchecked                                                  string // why the store could not be read
	lostExamples, misplacedExamples, undeliveredExamples       []string
}

// verifyStore reads every queue holding acknowledged plain, batch and order
// messages with raw pulls and checks each at its acknowledged offset; what is
// not there is searched by key (QUERY_MESSAGE). Delay and timer messages must
// be found by key in their real topic.
func (l *soakLoad) verifyStore() storeCheck {
	s := l.s
	acks := l.snapshot()
	var r storeCheck
	r.acked = len(acks)
	var perKind [len(soakKindNames)]int
	for _, a := range acks {
		perKind[a.kind]++
	}
	var parts []string
	for k, n := range perKind {
		parts = append(parts, fmt.Sprintf("%s %d", soakKindNames[k], n))
	}
	r.kinds = strings.Join(parts, ", ")

	if p := s.broker.Load(); p == nil || p.exited() {
		r.unchecked = "the broker is not running"
		return r
	}
	cc := &checkConn{addr: s.c.brokerAddr}
	defer cc.close()

	type qkey struct {
		topic string
		queue int
	}
	byQueue := map[qkey][]soakAck{}
	var scheduled []soakAck
	for _, a := range acks {
		if a.kind == kindDelay || a.kind == kindTimer {
			scheduled = append(scheduled, a)
			continue
		}
		k := qkey{a.topic, a.queue}
		byQueue[k] = append(byQueue[k], a)
	}
	keys := make([]qkey, 0, len(byQueue))
	for k := range byQueue {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].topic < keys[j].topic || keys[i].topic == keys[j].topic && keys[i].queue < keys[j].queue
	})
	lookups := 0
	for _, k := range keys {
		as := byQueue[k]
		lo, hi := as[0].offset, as[0].offset
		for _, a := range as {
			lo, hi = min(lo, a.offset), max(hi, a.offset)
		}
		stored, scanErr := scanQueue(cc, k.topic, k.queue, lo, hi+1)
		for _, a := range as {
			if got, ok := stored[a.offset]; ok && got == a.id {
				r.recovered++
				continue
			}
			where := "not searched by key (more than 500 missing)"
			if lookups++; lookups <= 500 {
				where = findByKey(cc, a)
			}
			desc := fmt.Sprintf("  %s %s topic %s queue %d offset %d sent %s: at that offset %q; %s",
				soakKindNames[a.kind], a.id, a.topic, a.queue, a.offset, a.sentAt.Format("15:04:05.000"),
				stored[a.offset], where)
			if scanErr != nil {
				desc += "; reading the queue: " + scanErr.Error()
			}
			switch {
			case cc.dead():
				r.unverified++
			case strings.HasPrefix(where, "found"):
				r.recovered++
				r.misplaced++
				if len(r.misplacedExamples) < 10 {
					r.misplacedExamples = append(r.misplacedExamples, desc)
				}
			default:
				r.lost++
				if len(r.lostExamples) < 10 {
					r.lostExamples = append(r.lostExamples, desc)
				}
			}
		}
	}
	end := time.Now().UnixMilli() + 1000
	for _, a := range scheduled {
		res, err := cc.query(a.topic, a.id, end, false)
		if err == nil && res.code == 0 && hasID(res.records, a.id) {
			r.recovered++
			continue
		}
		// Not in its topic: still staged, or gone?
		staging := map[soakKind]string{kindDelay: "SCHEDULE_TOPIC_XXXX", kindTimer: "rmq_sys_wheel_timer"}[a.kind]
		st, serr := cc.query(staging, a.uniq, end, true)
		desc := fmt.Sprintf("  %s %s (%s) acknowledged in %s queue %d offset %d, sent %s: not in %s (%s)",
			soakKindNames[a.kind], a.id, a.delay, staging, a.queue, a.offset, a.sentAt.Format("15:04:05.000"), a.topic, answer(res, err))
		switch {
		case cc.dead():
			r.unverified++
		case serr == nil && st.code == 0 && len(st.records) > 0:
			r.recovered++
			r.undelivered++
			if len(r.undeliveredExamples) < 10 {
				r.undeliveredExamples = append(r.undeliveredExamples, desc+"; still in "+staging)
			}
		default:
			r.lost++
			if len(r.lostExamples) < 10 {
				r.lostExamples = append(r.lostExamples, desc+"; nor in "+staging+" ("+answer(st, serr)+")")
			}
		}
	}
	if r.unverified > 0 {
		r.unchecked = fmt.Sprintf("the broker stopped answering during the check (%v); %d messages not verified", cc.last, r.unverified)
	}
	return r
}

// checkConn is the final check's connection to the broker. A request without
// an answer closes it (the next one dials again); after three such failures
// in a row the broker counts as gone and every request fails at once, so a
// hung broker cannot make the check wait 5 s per message.
type checkConn struct {
	addr  string
	conn  net.Conn
	fails int
	last  error
}

var errCheckGone = errors.New("broker gone: three requests in a row without an answer")

func (c *checkConn) dead() bool { return c.fails >= 3 }

func (c *checkConn) close() {
	if c.conn != nil {
		c.conn.Close()
	}
}

func (c *checkConn) do(f func(net.Conn) error) error {
	if c.dead() {
		return errCheckGone
	}
	if c.conn == nil {
		conn, err := net.DialTimeout("tcp", c.addr, 5*time.Second)
		if err != nil {
			c.fails++
			c.last = err
			return err
		}
		c.conn = conn
	}
	if err := f(c.conn); err != nil {
		c.conn.Close()
		c.conn = nil
		c.fails++
		c.last = err
		return err
	}
	c.fails = 0
	return nil
}

func (c *checkConn) query(topic, key string, end int64, uniqKey bool) (*queryResult, error) {
	var res *queryResult
	err := c.do(func(conn net.Conn) (err error) {
		res, err = queryMessageOn(conn, topic, key, 32, 0, end, uniqKey)
		return err
	})
	return res, err
}

func answer(r *queryResult, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case r.code != 0:
		return fmt.Sprintf("code %d %q", r.code, r.remark)
	default:
		return fmt.Sprintf("%d records", len(r.records))
	}
}

func hasID(ms []*primitive.MessageExt, id string) bool {
	for _, m := range ms {
		if m.GetProperty(idProp) == id && string(m.Body) == "body-"+id {
			return true
		}
	}
	return false
}

// findByKey looks a message up by its key (the id) and says where it is.
func findByKey(cc *checkConn, a soakAck) string {
	res, err := cc.query(a.topic, a.id, time.Now().UnixMilli()+1000, false)
	if err != nil || res.code != 0 {
		return "not found by key (" + answer(res, err) + ")"
	}
	for _, m := range res.records {
		if m.GetProperty(idProp) == a.id && string(m.Body) == "body-"+a.id {
			return fmt.Sprintf("found by key at queue %d offset %d", m.Queue.QueueId, m.QueueOffset)
		}
	}
	return fmt.Sprintf("not found by key (%d other records)", len(res.records))
}

// scanQueue pulls [from, to) of one queue and returns offset -> id. Bodies
// must read "body-<id>"; a record whose body does not match is returned as
// "corrupt:<id>".
func scanQueue(cc *checkConn, topic string, queue int, from, to int64) (map[int64]string, error) {
	out := map[int64]string{}
	for off := from; off < to; {
		var resp *rawCmd
		err := cc.do(func(conn net.Conn) (err error) {
			resp, err = invokeOn(conn, soakPull(topic, "soak_verify", queue, off, "*"), 10*time.Second)
			return err
		})
		if err != nil {
			return out, fmt.Errorf("pull %s/%d at %d: %w", topic, queue, off, err)
		}
		if resp.Code != 0 {
			return out, fmt.Errorf("pull %s/%d at %d: code %d %q (nextBeginOffset %s)", topic, queue, off, resp.Code, resp.Remark, resp.ExtFields["nextBeginOffset"])
		}
		msgs := primitive.DecodeMessage(resp.Body)
		if len(msgs) == 0 {
			return out, fmt.Errorf("pull %s/%d at %d: success with no message", topic, queue, off)
		}
		for _, m := range msgs {
			id := m.GetProperty(idProp)
			if string(m.Body) != "body-"+id {
				id = "corrupt:" + id
			}
			out[m.QueueOffset] = id
		}
		next, err := strconv.ParseInt(resp.ExtFields["nextBeginOffset"], 10, 64)
		if err != nil || next <= off {
			next = msgs[len(msgs)-1].QueueOffset + 1
		}
		off = next
	}
	return out, nil
}
