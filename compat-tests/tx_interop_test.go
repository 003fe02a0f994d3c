package compattest

// Transactional store interop: half messages written by one
// broker implementation are checked back and resolved by the other after it
// opens the same store directory. The official Go TransactionProducer
// (rocketmq-client-go v2.1.2) is the client; the Apache broker is the 5.3.3
// reference (compat-tests/reference/run.sh) on the same port, broker name and
// store. Apache -> Apache runs the same script, so every assertion here is
// one Apache itself passes.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

const (
	txHalfTopic  = "RMQ_SYS_TRANS_HALF_TOPIC"
	txOpTopic    = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
	txCheckGroup = "CID_RMQ_SYS_TRANS"

	// Both brokers' transaction keys (Apache BrokerConfig names): a half
	// message is checked 3 s after it was born (an answer at send has that
	// long to arrive), every 2 s (an answer to a check has that long before
	// the copy is checked again, and committed twice by Apache), at most 100
	// times (phase 1 may answer UNKNOW many times on a loaded machine before
	// the switch), and Apache writes its batched op records within 200 ms
	// rather than 3 s.
	txConf = `transactionTimeOut=3000
transactionCheckInterval=2000
transactionCheckMax=100
transactionOpBatchInterval=200
`
)

// The fate of a transactional message: resolved by the local transaction
// before the switch, or UNKNOW until the second broker checks it back.
const (
	txCommitNow      = "commit"
	txRollbackNow    = "rollback"
	txCommitLater    = "unknown-commit"
	txRollbackLater  = "unknown-rollback"
	txPhaseBefore    = 1 // the first broker runs
	txPhaseAfter     = 2 // the second broker runs
	txInteropUnknown = 12
	txInteropNow     = 3
	// Two more UNKNOW ones carry CHECK_IMMUNITY_TIME_IN_SECONDS: Apache
	// re-appends them with TRAN_PREPARED_QUEUE_OFFSET until then, and
	// checks them no earlier.
	txImmuneSeconds = 8
)

// txInteropCheck is one CHECK_TRANSACTION_STATE the producer answered.
type txInteropCheck struct {
	phase  int
	answer primitive.LocalTransactionState
	at     time.Time
}

// txInteropListener is the producers' local transaction: the plan says what each
// message (by compat_id) resolves to; before the switch checks answer UNKNOW.
type txInteropListener struct {
	mu     sync.Mutex
	plan   map[string]string
	checks map[string][]txInteropCheck
	phase  atomic.Int32
}

func (l *txInteropListener) ExecuteLocalTransaction(m *primitive.Message) primitive.LocalTransactionState {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch l.plan[m.GetProperty(idProp)] {
	case txCommitNow:
		return primitive.CommitMessageState
	case txRollbackNow:
		return primitive.RollbackMessageState
	}
	return primitive.UnknowState
}

func (l *txInteropListener) CheckLocalTransaction(m *primitive.MessageExt) primitive.LocalTransactionState {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := m.GetProperty(idProp)
	phase := int(l.phase.Load())
	answer := primitive.UnknowState
	if phase == txPhaseAfter {
		switch l.plan[id] {
		case txCommitLater, txCommitNow:
			answer = primitive.CommitMessageState
		case txRollbackLater, txRollbackNow:
			answer = primitive.RollbackMessageState
		}
	}
	l.checks[id] = append(l.checks[id], txInteropCheck{phase, answer, time.Now()})
	return answer
}

// resolvedIn counts per id the checks of phase answered commit or rollback.
func (l *txInteropListener) resolvedIn(phase int) map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for id, cs := range l.checks {
		for _, c := range cs {
			if c.phase == phase && c.answer != primitive.UnknowState {
				out[id]++
			}
		}
	}
	return out
}

func (l *txInteropListener) checksOf(id string) []txInteropCheck {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]txInteropCheck(nil), l.checks[id]...)
}

// txBrokerIdentity is one broker (name, ports, store directory, config)
// that either implementation runs in turn.
type txBrokerIdentity struct {
	c      *cluster // the rocketgo view; its dir holds store/ and the config
	apache *proc    // the running Apache broker, if any
	kind   string   // "rocketgo" or "apache": which one runs now
	script string
}

// start runs kind on the identity's port and store and waits until the name
// server routes TBW102 to it.
func (b *txBrokerIdentity) start(t *testing.T, kind string) {
	t.Helper()
	b.kind = kind
	if kind == "rocketgo" {
		if err := b.c.startBroker(); err != nil {
			t.Fatalf("rocketgo broker on the store: %v\n%s", err, tailFile(filepath.Join(b.c.dir, "broker.log"), 40))
		}
		return
	}
	// run.sh writes DIR/broker.properties (store DIR/store) and appends
	// DIR/broker.extra.properties: the same name and cluster as rocketgo's.
	extra := fmt.Sprintf("brokerName=%s\nbrokerClusterName=%s\n", b.c.brokerName, clusterName) + b.c.extraConf
	if err := os.WriteFile(filepath.Join(b.c.dir, "broker.extra.properties"), []byte(extra), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := startProc("apache-broker", b.script, []string{"broker", strconv.Itoa(b.c.brokerPort), b.c.nsAddr, b.c.dir, clusterName},
		filepath.Join(b.c.dir, "apache-broker.log"))
	if err != nil {
		t.Fatal(err)
	}
	b.apache = p
	if err := waitTCP(p, b.c.brokerAddr, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	if !waitFor(t, 60*time.Second, func() bool {
		code, rd, _, err := queryRoute(b.c.nsAddr, "TBW102")
		return err == nil && code == 0 && rd.hasBroker(b.c.brokerAddr)
	}) {
		t.Fatalf("Apache broker not routed within 60 s:\n%s", tailFile(p.logPath, 30))
	}
}

// stop ends the running broker, with SIGTERM or SIGKILL, and waits until the
// name server no longer routes to it (a stale route would let the next start
// look ready before it is).
func (b *txBrokerIdentity) stop(t *testing.T, kill bool) {
	t.Helper()
	p := b.apache
	if b.kind == "rocketgo" {
		p = b.c.broker
	}
	if p == nil {
		return
	}
	sig, grace := syscall.SIGTERM, time.Minute // Apache's shutdown takes more than the harness's 10 s
	if kill {
		sig = syscall.SIGKILL
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(grace):
		t.Fatalf("%s broker did not stop on %v within %s", b.kind, sig, grace)
	}
	p.logFile.Close()
	if !waitFor(t, 60*time.Second, func() bool {
		code, rd, _, err := queryRoute(b.c.nsAddr, "TBW102")
		return err == nil && (code != 0 || !rd.hasBroker(b.c.brokerAddr))
	}) {
		t.Fatalf("name server still routes TBW102 to the stopped %s broker", b.kind)
	}
}

// shutdown ends whatever still runs at the test's end: Apache with SIGKILL
// (its graceful shutdown takes more than 10 s, and nothing is checked after).
func (b *txBrokerIdentity) shutdown() {
	if b.apache != nil && !b.apache.exited() {
		_ = b.apache.cmd.Process.Kill()
		<-b.apache.done
		b.apache.logFile.Close()
	}
	if b.c.broker != nil {
		b.c.broker.stop()
	}
}

// logs returns the tails of the broker logs in the identity's directory
// (rocketgo's, Apache's console and its transaction log).
func (b *txBrokerIdentity) logs(n int) string {
	var s strings.Builder
	for _, f := range []string{"broker.log", "apache-broker.log", "logs/rocketmqlogs/broker.log", "logs/rocketmqlogs/transaction.log"} {
		p := filepath.Join(b.c.dir, f)
		if _, err := os.Stat(p); err == nil {
			fmt.Fprintf(&s, "----- tail of %s -----\n%s\n", p, tailFile(p, n))
		}
	}
	return s.String()
}

// startNamesrvOnly starts a rocketgo name server for brokers the test starts
// itself; the returned cluster has no broker yet (stop stops both).
// newTxBrokerIdentity starts a name server and returns the broker identity
// (name, port, store) that brokers of either kind take in turn; brokerName
// "" keeps the harness's. The running broker is stopped, and its log shown
// on failure, at cleanup.
func newTxBrokerIdentity(t *testing.T, name, conf, brokerName string) *txBrokerIdentity {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("reference", "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	c := startNamesrvOnly(t, name, conf)
	if brokerName != "" {
		c.brokerName = brokerName
	}
	b := &txBrokerIdentity{c: c, script: script}
	t.Cleanup(func() {
		b.shutdown()
		if t.Failed() {
			t.Logf("broker logs:\n%s", b.logs(40))
		}
	})
	return b
}

func startNamesrvOnly(t *testing.T, name, extraConf string) *cluster {
	t.Helper()
	c, err := startNamesrvConf(name, extraConf)
	if c != nil {
		t.Cleanup(c.stop)
	}
	if err != nil {
		t.Fatalf("name server of %s: %v", name, err)
	}
	return c
}

// opRecord is what an op record of RMQ_SYS_TRANS_OP_HALF_TOPIC says.
type opRecord struct {
	tags    string
	offsets []int64 // half queue offsets its body names
	body    string
}

// readOpQueue pulls the whole op queue 0 and returns its records.
func readOpQueue(addr string) ([]opRecord, error) {
	max, err := getMaxOffset(addr, txOpTopic, 0)
	if err != nil {
		return nil, err
	}
	group := "txinterop_op_reader"
	var out []opRecord
	for off := int64(0); off < max; {
		req := pullReq(txOpTopic, group, 0, off)
		req.ExtFields["sysFlag"] = "4" // FLAG_SUBSCRIPTION: no heartbeat of the group needed
		resp, err := rawInvoke(addr, req, 5*time.Second)
		if err != nil {
			return nil, err
		}
		if resp.Code != 0 {
			return nil, fmt.Errorf("pull %s offset %d: code %d remark %q", txOpTopic, off, resp.Code, resp.Remark)
		}
		msgs := primitive.DecodeMessage(resp.Body)
		if len(msgs) == 0 {
			return nil, fmt.Errorf("pull %s offset %d: no message decoded from %d bytes", txOpTopic, off, len(resp.Body))
		}
		for _, m := range msgs {
			r := opRecord{tags: m.GetTags(), body: string(m.Body)}
			for _, f := range strings.Split(string(m.Body), ",") {
				if f == "" {
					continue
				}
				v, err := strconv.ParseInt(f, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("op record body %q: %v", m.Body, err)
				}
				r.offsets = append(r.offsets, v)
			}
			out = append(out, r)
			off = m.QueueOffset + 1
		}
	}
	return out, nil
}

// sumMaxOffsets is the number of messages in a topic's queues.
func sumMaxOffsets(t *testing.T, addr, topic string, queues int) int64 {
	t.Helper()
	var n int64
	for q := 0; q < queues; q++ {
		v, err := getMaxOffset(addr, topic, q)
		if err != nil {
			t.Fatal(err)
		}
		n += v
	}
	return n
}

// txSysTopic is Apache 5.3.3's topics.json entry of the transaction system
// topics (TopicValidator / TransactionalMessageUtil: one queue, perm 6).
const txSysTopic = `{"attributes":{},"order":false,"perm":6,"readQueueNums":1,"topicFilterType":"SINGLE_TAG","topicName":"%s","topicSysFlag":0,"writeQueueNums":1}`

// checkTxConfig compares what a stopped broker left in config/ for the
// transaction check service with what Apache 5.3.3 writes: both system topics
// in topics.json, and CID_RMQ_SYS_TRANS's progress on queue 0 of each in
// consumerOffset.json (the other broker resumes from there). It returns the
// half queue's persisted offset.
func checkTxConfig(t *testing.T, dir, who string) int64 {
	t.Helper()
	var topics struct {
		TopicConfigTable map[string]json.RawMessage `json:"topicConfigTable"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "topics.json")); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &topics); err != nil {
		t.Fatalf("%s topics.json: %v\n%s", who, err, b)
	}
	for _, tp := range []string{txHalfTopic, txOpTopic} {
		var got, want any
		_ = json.Unmarshal(topics.TopicConfigTable[tp], &got)
		_ = json.Unmarshal([]byte(fmt.Sprintf(txSysTopic, tp)), &want)
		if g, w := fmt.Sprint(got), fmt.Sprint(want); g != w {
			t.Errorf("%s topics.json entry of %s:\n got %s\nwant %s", who, tp, topics.TopicConfigTable[tp], fmt.Sprintf(txSysTopic, tp))
		}
	}
	var offsets struct {
		OffsetTable map[string]map[string]int64 `json:"offsetTable"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "consumerOffset.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(fastjsonKeys.ReplaceAll(b, []byte(`$1"$2":`)), &offsets); err != nil {
		t.Fatalf("%s consumerOffset.json: %v\n%s", who, err, b)
	}
	for _, tp := range []string{txHalfTopic, txOpTopic} {
		qs, ok := offsets.OffsetTable[tp+"@"+txCheckGroup]
		if _, q0 := qs["0"]; !ok || len(qs) != 1 || !q0 {
			t.Errorf("%s consumerOffset.json: %s@%s = %v, want queue 0 only\n%s", who, tp, txCheckGroup, qs, b)
		}
	}
	return offsets.OffsetTable[txHalfTopic+"@"+txCheckGroup]["0"]
}

// txMsgIDs lists the plan's ids of one fate.
func txMsgIDs(plan map[string]string, fates ...string) []string {
	var ids []string
	for id, f := range plan {
		for _, w := range fates {
			if f == w {
				ids = append(ids, id)
			}
		}
	}
	sort.Strings(ids)
	return ids
}

// runTxInterop sends transactional messages through broker `first`, stops
// it (SIGKILL when kill) and opens the store with broker `second`, which
// must check back exactly the unresolved ones.
func runTxInterop(t *testing.T, name, first, second string, kill bool) {
	start := time.Now()
	b := newTxBrokerIdentity(t, name, txConf, "")
	c := b.c
	b.start(t, first)

	topic := "TxInterop"
	createTopic(t, c, topic, admin.WithReadQueueNums(4), admin.WithWriteQueueNums(4))
	waitRoute(t, c, topic, 4)

	l := &txInteropListener{plan: map[string]string{}, checks: map[string][]txInteropCheck{}}
	l.phase.Store(txPhaseBefore)
	for i := 0; i < txInteropUnknown; i++ {
		fate := txCommitLater
		if i%2 == 1 {
			fate = txRollbackLater
		}
		l.plan[fmt.Sprintf("tx-%02d", i)] = fate
	}
	for i := 0; i < txInteropNow; i++ {
		l.plan[fmt.Sprintf("now-c%d", i)] = txCommitNow
		l.plan[fmt.Sprintf("now-r%d", i)] = txRollbackNow
	}
	immune := map[string]bool{"tx-imm0": true, "tx-imm1": true}
	l.plan["tx-imm0"], l.plan["tx-imm1"] = txCommitLater, txRollbackLater
	group := uniq("PG_txinterop")
	newTxProducer := func(instance string) rocketmq.TransactionProducer {
		p, err := rocketmq.NewTransactionProducer(l,
			producer.WithNsResolver(resolver(c)),
			producer.WithGroupName(group),
			producer.WithInstanceName(instance),
			producer.WithRetry(2),
			producer.WithSendMsgTimeout(5*time.Second))
		if err != nil {
			t.Fatalf("NewTransactionProducer: %v", err)
		}
		if err := p.Start(); err != nil {
			t.Fatalf("TransactionProducer.Start: %v", err)
		}
		t.Cleanup(func() { _ = p.Shutdown() })
		return p
	}
	// The first member shares its client instance with a consumer (of its
	// own group, never looked at) whose start heartbeat tells the first
	// broker of the producer group, so checks reach it in phase 1.
	first1 := uniq("txprod")
	p1 := newTxProducer(first1)
	startConsumer(t, c, uniq("CG_txphase1"), topic, "*", newCollector("tx-phase1"), consumer.WithInstance(first1))

	ids := make([]string, 0, len(l.plan))
	for id := range l.plan {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	halfOffsetOf := map[string]int64{}
	sentAt := map[string]time.Time{}
	for _, id := range ids {
		m := primitive.NewMessage(topic, []byte("tx-body-"+id))
		m.WithProperty(idProp, id)
		m.WithProperty("fate", l.plan[id])
		m.WithTag("TagTx")
		m.WithKeys([]string{"txkey-" + id})
		if immune[id] {
			m.WithProperty("CHECK_IMMUNITY_TIME_IN_SECONDS", strconv.Itoa(txImmuneSeconds))
		}
		sentAt[id] = time.Now() // no later than the born timestamp the broker counts from
		r, err := p1.SendMessageInTransaction(context.Background(), m)
		if err != nil || r.Status != primitive.SendOK {
			t.Fatalf("SendMessageInTransaction(%s) on %s: %v %v", id, first, r, err)
		}
		halfOffsetOf[id] = r.QueueOffset
	}

	// Before the switch every unresolved one was checked back at least
	// once and answered UNKNOW: the store holds the first broker's re-put
	// copies (TRANSACTION_CHECK_TIMES) and its progress past the originals.
	unknown := txMsgIDs(l.plan, txCommitLater, txRollbackLater)
	if !waitFor(t, 60*time.Second, func() bool {
		for _, id := range unknown {
			if len(l.checksOf(id)) == 0 && !immune[id] {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("%s did not check back every unresolved message before the switch", first)
	}

	// Before the switch: the resolved ones have op records naming their half
	// offsets (Apache batches them: in memory until written), and only the
	// committed ones are in the real topic.
	resolvedNow := txMsgIDs(l.plan, txCommitNow, txRollbackNow)
	var ops []opRecord
	var lastErr error
	if !waitFor(t, 30*time.Second, func() bool {
		ops, lastErr = readOpQueue(c.brokerAddr)
		if lastErr != nil {
			return false
		}
		named := map[int64]bool{}
		for _, o := range ops {
			for _, v := range o.offsets {
				named[v] = true
			}
		}
		for _, id := range resolvedNow {
			if !named[halfOffsetOf[id]] {
				lastErr = fmt.Errorf("no op record names %s (half offset %d): %v", id, halfOffsetOf[id], ops)
				return false
			}
		}
		return true
	}) {
		t.Fatalf("%s: op records of the messages resolved at send: %v", first, lastErr)
	}
	bodies := make([]string, 0, len(ops))
	for _, o := range ops {
		bodies = append(bodies, strconv.Quote(o.body))
		if o.tags != "d" {
			t.Errorf("%s: op record tags %q, want Apache's REMOVE_TAG \"d\" (body %q)", first, o.tags, o.body)
		}
	}
	t.Logf("%s op records before the switch: %s", first, strings.Join(bodies, " "))
	if n := sumMaxOffsets(t, c.brokerAddr, topic, 4); n != txInteropNow {
		t.Fatalf("%s: %d messages in %s before the switch, want the %d committed at send", first, n, topic, txInteropNow)
	}

	// The first broker's check service has passed the resolved ones (the
	// first half offsets: ids sort "now-" before "tx-"), so it has progress
	// to persist and the second broker to resume from.
	var progress int64
	if !waitFor(t, 30*time.Second, func() bool {
		code, off, err := queryConsumerOffset(c.brokerAddr, txCheckGroup, txHalfTopic, 0)
		progress = off
		return err == nil && code == 0 && off >= int64(len(resolvedNow))
	}) {
		t.Fatalf("%s: %s's offset of %s is %d, never past the %d resolved at send", first, txCheckGroup, txHalfTopic, progress, len(resolvedNow))
	}

	b.stop(t, kill)
	if !kill {
		progress = checkTxConfig(t, filepath.Join(c.dir, "store", "config"), first)
	}
	l.phase.Store(txPhaseAfter)
	b.start(t, second)
	switched := time.Now()
	if code, off, err := queryConsumerOffset(c.brokerAddr, txCheckGroup, txHalfTopic, 0); !kill && (err != nil || code != 0 || off < progress) {
		t.Errorf("%s resumed %s's offset of %s at %d (code %d, %v), %s persisted %d", second, txCheckGroup, txHalfTopic, off, code, err, first, progress)
	}
	// A second member of the group, as after a producer restart, in one
	// client instance with the consumer: the Go client heartbeats only to
	// brokers of routes it holds, so the consumer's start heartbeat (its
	// route is fresh) tells the new broker of the producer group; the first
	// member's next heartbeat may be 30 s away.
	member := uniq("txmember")
	newTxProducer(member)
	col := newCollector("tx-" + name)
	var sysFlags sync.Map // compat_id -> the committed record's sysflag
	startConsumerFn(t, c, uniq("CG_txinterop"), topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"},
		func(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			for _, m := range msgs {
				sysFlags.Store(m.GetProperty(idProp), m.SysFlag)
			}
			return col.handle(ctx, msgs...)
		}, consumer.WithInstance(member))
	committed := txMsgIDs(l.plan, txCommitNow, txCommitLater)
	waitAll(t, col, committed, 90*time.Second, second+" after the switch")
	rollbackLater := txMsgIDs(l.plan, txRollbackLater)
	if !waitFor(t, 60*time.Second, func() bool { return len(l.resolvedIn(txPhaseAfter)) == len(unknown) }) {
		t.Fatalf("%s checked back and resolved %d of the %d unresolved messages: %v", second,
			len(l.resolvedIn(txPhaseAfter)), len(unknown), l.resolvedIn(txPhaseAfter))
	}
	resolvedAfter := time.Since(switched)
	// Settled: the check service's half offset passed every half record, so
	// nothing can be committed any more.
	if !waitFor(t, 60*time.Second, func() bool {
		max, err := getMaxOffset(c.brokerAddr, txHalfTopic, 0)
		if err != nil {
			return false
		}
		code, off, err := queryConsumerOffset(c.brokerAddr, txCheckGroup, txHalfTopic, 0)
		return err == nil && code == 0 && off == max
	}) {
		max, _ := getMaxOffset(c.brokerAddr, txHalfTopic, 0)
		code, off, err := queryConsumerOffset(c.brokerAddr, txCheckGroup, txHalfTopic, 0)
		t.Fatalf("%s: %s's offset of %s never reached its max offset %d: code %d offset %d %v",
			second, txCheckGroup, txHalfTopic, max, code, off, err)
	}

	// rocketgo as the second broker is held to once each, whoever wrote the
	// copies and however the first one stopped: it asks about a transaction
	// (PGROUP, UNIQ_KEY) once per run and ends it once (docs/transactions.md,
	// "Transactions"). Apache as the second broker commits again each
	// re-put copy whose check the producer answers: after kill -9 its check
	// progress on disk may predate the first broker's last re-put copies
	// (measured: 6-8 extra commits of 7), and even after a graceful stop a
	// check cycle cut short by shutdown leaves copies behind (measured in CI:
	// 3 extra commits of 7, Apache -> Apache). Its duplicates are counted,
	// not refused: they are the reference's behaviour, not this test's
	// subject.
	onceEach := second == "rocketgo"
	stored := sumMaxOffsets(t, c.brokerAddr, topic, 4)
	dups := stored - int64(len(committed))
	if onceEach && dups != 0 || dups < 0 {
		t.Errorf("%s: %d messages in %s, want the %d committed, once each", second, stored, topic, len(committed))
	}
	for _, id := range committed {
		rs := col.get(id)
		if len(rs) == 0 || onceEach && len(rs) != 1 {
			t.Errorf("%s delivered %d times", id, len(rs))
			continue
		}
		r := rs[0]
		// Apache's committed record: sysflag TRANSACTION_COMMIT_TYPE, the
		// half record's properties less REAL_TOPIC and REAL_QID (5.5's
		// EndTransactionProcessor clears them before it serialises the
		// rest), the check count only on the ones checked back.
		if flag, _ := sysFlags.Load(id); flag != int32(8) {
			t.Errorf("%s committed with sysflag %v, want 8 (TRANSACTION_COMMIT_TYPE)", id, flag)
		}
		want := map[string]string{"REAL_TOPIC": "", "REAL_QID": "", "TRAN_MSG": "true", "PGROUP": group,
			"__transactionId__": r.Props["UNIQ_KEY"]}
		for k, v := range want {
			if r.Props[k] != v {
				t.Errorf("%s committed with %s=%q, want %q (properties %v)", id, k, r.Props[k], v, r.Props)
			}
		}
		// Checked at least once by each broker (the copy the second broker
		// committed after kill -9 may come from the original record).
		minChecks := 2
		if kill || immune[id] { // an immune one may be first checked after the switch
			minChecks = 1
		}
		n, err := strconv.Atoi(r.Props["TRANSACTION_CHECK_TIMES"])
		if checked := l.plan[id] == txCommitLater; checked && (err != nil || n < minChecks) || !checked && err == nil {
			t.Errorf("%s (%s) committed with TRANSACTION_CHECK_TIMES=%q", id, l.plan[id], r.Props["TRANSACTION_CHECK_TIMES"])
		}
		if string(r.Body) != "tx-body-"+id || r.Tags != "TagTx" || r.Keys != "txkey-"+id || r.Props["fate"] != l.plan[id] {
			t.Errorf("%s delivered changed: body %q tags %q keys %q fate %q", id, r.Body, r.Tags, r.Keys, r.Props["fate"])
		}
	}
	for _, id := range txMsgIDs(l.plan, txRollbackNow, txRollbackLater) {
		if rs := col.get(id); len(rs) > 0 {
			t.Errorf("rolled back %s delivered %d times", id, len(rs))
		}
	}
	for _, id := range resolvedNow {
		if cs := l.checksOf(id); len(cs) > 0 {
			t.Errorf("%s, resolved at send on %s, was checked back %d times (phases %v)", id, first, len(cs), cs)
		}
	}
	for id := range immune {
		for _, c := range l.checksOf(id) {
			if early := sentAt[id].Add(txImmuneSeconds * time.Second).Sub(c.at); early > 0 {
				t.Errorf("%s (CHECK_IMMUNITY_TIME_IN_SECONDS=%d) checked back in phase %d, %s before its immunity ended",
					id, txImmuneSeconds, c.phase, early)
			}
		}
	}
	recheck := 0
	for id, n := range l.resolvedIn(txPhaseAfter) {
		if n > 1 {
			recheck += n - 1
			t.Logf("%s answered %d times on %s", id, n, second)
		}
	}
	report(t, start, len(l.plan), col.deliveries(), fmt.Sprintf("%s -> %s kill=%v: %d checked back and resolved (%d rollbacks) %.1fs after the switch, %d re-checks after an answer, %d duplicate commits (times from the second broker being routed)",
		first, second, kill, len(unknown), len(rollbackLater), resolvedAfter.Seconds(), recheck, dups))
}

// TestTxInterop runs the switch in each direction. Apache -> Apache is the
// proof of the test itself.
func TestTxInterop(t *testing.T) {
	requireApache(t)
	cases := []struct {
		name          string
		first, second string
		kill          bool
	}{
		{"apache-apache", "apache", "apache", false},
		{"apache-apache-kill9", "apache", "apache", true},
		{"rocketgo-apache", "rocketgo", "apache", false},
		{"apache-rocketgo", "apache", "rocketgo", false},
		{"rocketgo-apache-kill9", "rocketgo", "apache", true},
		{"apache-rocketgo-kill9", "apache", "rocketgo", true},
		// The same store reopened by rocketgo: the restart, for comparison.
		{"rocketgo-rocketgo", "rocketgo", "rocketgo", false},
		{"rocketgo-rocketgo-kill9", "rocketgo", "rocketgo", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // a store, ports and brokers of its own; mostly waiting for checks
			runTxInterop(t, "tx-"+tc.name, tc.first, tc.second, tc.kill)
		})
	}
}

// requireApache skips when the Apache reference cannot run here (the switch
// of TestApacheOpensRocketgoStore).
func requireApache(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("Apache interop needs %s (Java 17 + Maven) on PATH: %v", tool, err)
		}
	}
}
