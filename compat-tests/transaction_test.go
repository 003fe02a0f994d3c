package compattest

// Transactional messages with the official Go client's
// TransactionProducer (v2.1.2): commit, rollback, unknown -> check-back ->
// commit or rollback, the producer replaced by another member of its group
// before the check, a broker restart (graceful and kill -9) between prepare
// and resolution, transactional and normal sends mixed on one topic. Every
// scenario runs against each target of ROCKETGO_TX_TARGETS (see
// transaction_harness_test.go): with "apache" the same assertions hold for
// Apache's broker.
//
// A local-transaction listener that throws is a Java scenario only
// (TransactionTest.java): the Go client has no exception path — a panic in
// ExecuteLocalTransaction is not recovered by SendMessageInTransaction and
// ends the process.

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

const (
	commitState   = primitive.CommitMessageState
	rollbackState = primitive.RollbackMessageState
	unknownState  = primitive.UnknowState
	// txHold is how long ExecuteLocalTransaction takes before it commits: a
	// broker that delivered the half message at prepare would show it to the
	// consumer inside this window (an "early" delivery).
	txHold = 200 * time.Millisecond
)

// txExpect is one transactional (or, with normal, plain) message: what the
// producer's listener answers and what the test expects.
type txExpect struct {
	scenario string
	exec     primitive.LocalTransactionState   // ExecuteLocalTransaction's answer
	answers  []primitive.LocalTransactionState // successive checks; the last repeats
	commit   bool                              // delivered in the end
	checks   int                               // checks the listener sees, exactly (-1: any)
	checker  string                            // instance every check must reach ("" any)
	normal   bool                              // a plain send, no transaction
	props    map[string]string                 // extra message properties
	notEarly time.Duration                     // no check before prepare + this
	more     []string                          // properties delivered beyond committedPropsDiff's
}

type txCheck struct {
	at time.Time
	by string
}

// txState is what the listeners of one target saw, by compat_id.
type txState struct {
	mu       sync.Mutex
	topic    string
	want     map[string]*txExpect
	prepared map[string]time.Time // ExecuteLocalTransaction entered: the half message is stored
	decided  map[string]time.Time // first commit or rollback answer
	checks   map[string][]txCheck
	gated    map[string]int  // checks answered UNKNOW while the scenario's gate was closed
	closed   map[string]bool // scenario -> gate closed
	wasGated map[string]bool // scenarios that had a gate: not in the latency figures
	problems []string        // wrong check messages
}

func newTxState(topic string) *txState {
	return &txState{topic: topic, want: map[string]*txExpect{}, prepared: map[string]time.Time{},
		decided: map[string]time.Time{}, checks: map[string][]txCheck{}, gated: map[string]int{}, closed: map[string]bool{},
		wasGated: map[string]bool{}}
}

func (s *txState) setGate(scenario string, closed bool) {
	s.mu.Lock()
	s.closed[scenario] = closed
	s.wasGated[scenario] = true
	s.mu.Unlock()
}

// txListener is the producer's TransactionListener; name is its instance.
type txListener struct {
	st   *txState
	name string
}

func (l *txListener) ExecuteLocalTransaction(m *primitive.Message) primitive.LocalTransactionState {
	id := m.GetProperty(idProp)
	l.st.mu.Lock()
	e := l.st.want[id]
	l.st.prepared[id] = time.Now()
	l.st.mu.Unlock()
	if e == nil {
		return rollbackState
	}
	if e.exec == commitState {
		time.Sleep(txHold)
	}
	if e.exec != unknownState {
		l.st.mu.Lock()
		l.st.decided[id] = time.Now()
		l.st.mu.Unlock()
	}
	return e.exec
}

func (l *txListener) CheckLocalTransaction(m *primitive.MessageExt) primitive.LocalTransactionState {
	id := m.GetProperty(idProp)
	now := time.Now()
	l.st.mu.Lock()
	defer l.st.mu.Unlock()
	e := l.st.want[id]
	if e == nil {
		l.st.problems = append(l.st.problems, fmt.Sprintf("check of a message this test did not send: topic %s props %v", m.Topic, m.GetProperties()))
		return unknownState
	}
	// Apache sends the half message back with its real topic restored.
	if m.Topic != l.st.topic || string(m.Body) != "tx-"+id || m.GetProperty(primitive.PropertyUniqueClientMessageIdKeyIndex) == "" {
		l.st.problems = append(l.st.problems, fmt.Sprintf("check of %s: topic %q body %q props %v", id, m.Topic, m.Body, m.GetProperties()))
	}
	if l.st.closed[e.scenario] {
		l.st.gated[id]++
		return unknownState
	}
	l.st.checks[id] = append(l.st.checks[id], txCheck{now, l.name})
	ans := e.exec // a transaction decided at once: the local truth
	if n := len(l.st.checks[id]); len(e.answers) > 0 {
		ans = e.answers[min(n, len(e.answers))-1]
	}
	if ans != unknownState {
		if _, ok := l.st.decided[id]; !ok {
			l.st.decided[id] = now
		}
	}
	return ans
}

// txRun is one target with its topic, consumer and listener state.
type txRun struct {
	b     *txBroker
	st    *txState
	col   *collector
	t     *testing.T // the target's test: owns the consumer
	group string
	cons  *consumerHandle
}

// restartConsumer replaces the consumer by a new member of its group (same
// collector). The restart scenarios stop the consumer before the broker goes
// down: a client's pull parked on the closed connection fails only at its own
// time-out, ~30 s later (Go v2.1.2 and Java 4.9.8, with either broker), which
// would only measure the client.
func (r *txRun) stopConsumer() { r.cons.shutdown() }

func (r *txRun) startConsumer() {
	r.cons = startConsumer(r.t, r.b.c, r.group, r.st.topic, "*", r.col)
}

func (r *txRun) producer(t *testing.T, group, instance string) (rocketmq.TransactionProducer, func()) {
	t.Helper()
	p, err := rocketmq.NewTransactionProducer(&txListener{st: r.st, name: instance},
		producer.WithNsResolver(resolver(r.b.c)),
		producer.WithGroupName(group),
		producer.WithInstanceName(instance),
		producer.WithRetry(2),
		producer.WithSendMsgTimeout(10*time.Second))
	if err != nil {
		t.Fatalf("NewTransactionProducer: %v", err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("TransactionProducer.Start: %v", err)
	}
	var once sync.Once
	stop := func() { once.Do(func() { _ = p.Shutdown() }) }
	t.Cleanup(stop)
	return p, stop
}

// send sends message id of a scenario in a transaction, registering e first.
func (r *txRun) send(t *testing.T, p rocketmq.TransactionProducer, id string, e txExpect) {
	t.Helper()
	r.st.mu.Lock()
	r.st.want[id] = &e
	r.st.mu.Unlock()
	m := primitive.NewMessage(r.st.topic, []byte("tx-"+id))
	m.WithProperty(idProp, id)
	m.WithKeys([]string{id})
	m.WithTag(e.scenario)
	for k, v := range e.props {
		m.WithProperty(k, v)
	}
	res, err := p.SendMessageInTransaction(context.Background(), m)
	if err != nil {
		t.Fatalf("SendMessageInTransaction(%s): %v", id, err)
	}
	if res.Status != primitive.SendOK || res.State != e.exec {
		t.Fatalf("SendMessageInTransaction(%s): status %d state %d, want SendOK and %d", id, res.Status, res.State, e.exec)
	}
}

// register makes the producer known to the broker: a first send fetches the
// route, the client's heartbeat follows (1 s after Start, then every 30 s),
// and only a registered producer can be checked. The warm-up message is
// rolled back at once and its checks are not counted: right after a kill -9
// restart Apache checked a message committed a second before (its op record
// not yet seen) and, answered COMMIT again, delivered it twice — an Apache
// race outside these scenarios.
func (r *txRun) register(t *testing.T, p rocketmq.TransactionProducer, group, instance string, others ...string) {
	t.Helper()
	r.send(t, p, "warm-"+instance, txExpect{scenario: "warm", exec: rollbackState, checks: -1})
	waitProducers(t, r.b, group, append([]string{instance}, others...)...)
}

// ids returns the ids of a scenario in order.
func (r *txRun) ids(scenario string) []string {
	r.st.mu.Lock()
	defer r.st.mu.Unlock()
	var out []string
	for id, e := range r.st.want {
		if e.scenario == scenario {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// waitResolved waits until every message of the scenario that must be
// delivered was, and every one was checked as often as expected.
func (r *txRun) waitResolved(t *testing.T, scenario string, timeout time.Duration) {
	t.Helper()
	ids := r.ids(scenario)
	var last string
	ok := waitFor(t, timeout, func() bool {
		r.st.mu.Lock()
		defer r.st.mu.Unlock()
		for _, id := range ids {
			e := r.st.want[id]
			if e.commit && len(r.col.get(id)) == 0 {
				last = id + " not delivered"
				return false
			}
			if got := len(r.st.checks[id]); got < e.checks {
				last = fmt.Sprintf("%s checked %d times, want %d", id, got, e.checks)
				return false
			}
		}
		return true
	})
	if !ok {
		t.Fatalf("%s: scenario %s not resolved within %s: %s", r.b.kind, scenario, timeout, last)
	}
}

const txWait = 60 * time.Second

func TestTransactions(t *testing.T) {
	// The client logs every UNKNOW or ROLLBACK from ExecuteLocalTransaction
	// at error level ("executeLocalTransaction but state unexpected"): here
	// they are the scenarios. TestMain's level comes back afterwards.
	rlog.SetLogLevel("fatal")
	t.Cleanup(func() { rlog.SetLogLevel("error") })
	for _, kind := range targetKinds(t, "ROCKETGO_TX_TARGETS") {
		t.Run(kind, func(t *testing.T) { runTransactions(t, kind) })
	}
}

func runTransactions(t *testing.T, kind string) {
	start := time.Now()
	b := startTxBroker(t, kind, "tx-go-"+kind)
	topic := uniq("TxTopic")
	createTopic(t, b.c, topic)
	r := &txRun{b: b, st: newTxState(topic), col: newCollector("tx"), t: t, group: uniq("CG_tx")}
	r.startConsumer()

	t.Run("commit", func(t *testing.T) {
		group, inst := uniq("PG_txc"), uniq("txc")
		p, _ := r.producer(t, group, inst)
		for i := 0; i < 3; i++ {
			r.send(t, p, fmt.Sprintf("commit-%d", i), txExpect{scenario: "commit", exec: commitState, commit: true})
		}
		r.waitResolved(t, "commit", txWait)
	})
	t.Run("rollback", func(t *testing.T) {
		group, inst := uniq("PG_txr"), uniq("txr")
		p, _ := r.producer(t, group, inst)
		for i := 0; i < 3; i++ {
			r.send(t, p, fmt.Sprintf("rollback-%d", i), txExpect{scenario: "rollback", exec: rollbackState})
		}
		// A committed sentinel from the same producer, after the rollbacks.
		r.send(t, p, "rollback-sentinel", txExpect{scenario: "rollback", exec: commitState, commit: true})
		r.waitResolved(t, "rollback", txWait)
	})
	t.Run("unknownThenCommit", func(t *testing.T) {
		group, inst := uniq("PG_txuc"), uniq("txuc")
		p, _ := r.producer(t, group, inst)
		r.register(t, p, group, inst)
		for i := 0; i < 2; i++ {
			r.send(t, p, fmt.Sprintf("ucommit-%d", i), txExpect{scenario: "ucommit", exec: unknownState,
				answers: []primitive.LocalTransactionState{commitState}, commit: true, checks: 1})
		}
		// Unknown at the first check too: checked again, then committed.
		r.send(t, p, "ucommit-twice", txExpect{scenario: "ucommit", exec: unknownState,
			answers: []primitive.LocalTransactionState{unknownState, commitState}, commit: true, checks: 2})
		r.waitResolved(t, "ucommit", txWait)
	})
	t.Run("unknownThenRollback", func(t *testing.T) {
		group, inst := uniq("PG_txur"), uniq("txur")
		p, _ := r.producer(t, group, inst)
		r.register(t, p, group, inst)
		for i := 0; i < 2; i++ {
			r.send(t, p, fmt.Sprintf("urollback-%d", i), txExpect{scenario: "urollback", exec: unknownState,
				answers: []primitive.LocalTransactionState{rollbackState}, checks: 1})
		}
		r.send(t, p, "urollback-twice", txExpect{scenario: "urollback", exec: unknownState,
			answers: []primitive.LocalTransactionState{unknownState, rollbackState}, checks: 2})
		r.waitResolved(t, "urollback", txWait)
	})
	t.Run("producerReplaced", func(t *testing.T) {
		// The first member prepares and leaves; the check must reach the
		// second member, started afterwards.
		group, first, second := uniq("PG_txrep"), uniq("txrep1"), uniq("txrep2")
		r.st.setGate("replaced", true)
		p1, stop1 := r.producer(t, group, first)
		r.send(t, p1, "replaced-commit", txExpect{scenario: "replaced", exec: unknownState,
			answers: []primitive.LocalTransactionState{commitState}, commit: true, checks: 1, checker: second})
		r.send(t, p1, "replaced-rollback", txExpect{scenario: "replaced", exec: unknownState,
			answers: []primitive.LocalTransactionState{rollbackState}, checks: 1, checker: second})
		stop1()
		p2, _ := r.producer(t, group, second)
		r.register(t, p2, group, second)
		r.st.setGate("replaced", false)
		r.waitResolved(t, "replaced", txWait)
	})
	t.Run("mixed", func(t *testing.T) {
		group, inst := uniq("PG_txmix"), uniq("txmix")
		p, _ := r.producer(t, group, inst)
		r.register(t, p, group, inst)
		plain := newProducer(t, b.c)
		for i := 0; i < 4; i++ {
			id := fmt.Sprintf("mixed-plain-%d", i)
			r.st.mu.Lock()
			r.st.want[id] = &txExpect{scenario: "mixed", normal: true, commit: true}
			r.st.mu.Unlock()
			m := primitive.NewMessage(topic, []byte("plain-"+id))
			m.WithProperty(idProp, id)
			plain.mustSend(t, m)
			switch i % 3 {
			case 0:
				r.send(t, p, fmt.Sprintf("mixed-commit-%d", i), txExpect{scenario: "mixed", exec: commitState, commit: true})
			case 1:
				r.send(t, p, fmt.Sprintf("mixed-rollback-%d", i), txExpect{scenario: "mixed", exec: rollbackState})
			case 2:
				r.send(t, p, fmt.Sprintf("mixed-unknown-%d", i), txExpect{scenario: "mixed", exec: unknownState,
					answers: []primitive.LocalTransactionState{commitState}, commit: true, checks: 1})
			}
		}
		r.waitResolved(t, "mixed", txWait)
	})
	t.Run("checkImmunity", func(t *testing.T) {
		// CHECK_IMMUNITY_TIME_IN_SECONDS: no check before it has passed,
		// then one. Meanwhile Apache re-appends the young message each run
		// with TRAN_PREPARED_QUEUE_OFFSET and WAIT=false, counting each in
		// TRANSACTION_CHECK_TIMES (4 here, timing-dependent: logged only),
		// and delivers those properties.
		group, inst := uniq("PG_txim"), uniq("txim")
		p, _ := r.producer(t, group, inst)
		r.register(t, p, group, inst)
		r.send(t, p, "immunity-0", txExpect{scenario: "immunity", exec: unknownState,
			answers: []primitive.LocalTransactionState{commitState}, commit: true, checks: 1,
			props: map[string]string{"CHECK_IMMUNITY_TIME_IN_SECONDS": "3"}, notEarly: 3 * time.Second,
			more: []string{"CHECK_IMMUNITY_TIME_IN_SECONDS", "TRAN_PREPARED_QUEUE_OFFSET", "WAIT"}})
		r.waitResolved(t, "immunity", txWait)
		if g := r.col.get("immunity-0"); len(g) > 0 {
			t.Logf("%s: immunity-0 delivered with TRANSACTION_CHECK_TIMES=%s TRAN_PREPARED_QUEUE_OFFSET=%s WAIT=%q", kind,
				g[0].Props["TRANSACTION_CHECK_TIMES"], g[0].Props["TRAN_PREPARED_QUEUE_OFFSET"], g[0].Props["WAIT"])
		}
	})
	for _, kill := range []bool{false, true} {
		name, scenario := "restartGraceful", "restart-term"
		if kill {
			name, scenario = "restartKill9", "restart-kill"
		}
		t.Run(name, func(t *testing.T) {
			// Prepared before the restart, resolved after it by checks only:
			// the broker's state lives in its store.
			group, before, after := uniq("PG_txrs"), uniq("txrs1"), uniq("txrs2")
			r.st.setGate(scenario, true)
			p1, stop1 := r.producer(t, group, before)
			for i := 0; i < 4; i++ {
				answer, commit := commitState, true
				if i%2 == 1 {
					answer, commit = rollbackState, false
				}
				r.send(t, p1, fmt.Sprintf("%s-%d", scenario, i), txExpect{scenario: scenario, exec: unknownState,
					answers: []primitive.LocalTransactionState{answer}, commit: commit, checks: 1})
			}
			stop1()
			r.stopConsumer()
			took := b.restart(t, kill)
			r.startConsumer()
			t.Logf("%s broker restarted (kill -9 %v) in %.1fs", kind, kill, took.Seconds())
			restarted := time.Now()
			p2, _ := r.producer(t, group, after)
			r.register(t, p2, group, after)
			registered := time.Now()
			r.st.setGate(scenario, false)
			r.waitResolved(t, scenario, 2*txWait)
			var lastCheck, lastDelivery time.Time
			for _, id := range r.ids(scenario) {
				r.st.mu.Lock()
				if cs := r.st.checks[id]; len(cs) > 0 && cs[0].at.After(lastCheck) {
					lastCheck = cs[0].at
				}
				r.st.mu.Unlock()
				if ds := r.col.get(id); len(ds) > 0 && ds[0].At.After(lastDelivery) {
					lastDelivery = ds[0].At
				}
			}
			t.Logf("%s: after the restart the next producer registered in %.1fs; from then, last first check %.1fs, last delivery %.1fs",
				kind, registered.Sub(restarted).Seconds(), lastCheck.Sub(registered).Seconds(), lastDelivery.Sub(registered).Seconds())
		})
	}
	if t.Failed() {
		return
	}
	// Absence is only seen by waiting: a few check intervals in which no
	// rolled-back message may appear and no resolved one be checked again.
	time.Sleep(4 * txIntervalMs * time.Millisecond)
	r.verify(t, start)
}

// verify checks every message against its expectation and reports the figures.
func (r *txRun) verify(t *testing.T, start time.Time) {
	t.Helper()
	r.st.mu.Lock()
	defer r.st.mu.Unlock()
	for _, p := range r.st.problems {
		t.Errorf("%s: %s", r.b.kind, p)
	}
	var (
		sent, delivered     int
		toDelivery, toCheck []time.Duration
	)
	ids := make([]string, 0, len(r.st.want))
	for id := range r.st.want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		e := r.st.want[id]
		got := r.col.get(id)
		positions := map[string]bool{}
		for _, g := range got {
			positions[fmt.Sprintf("%d/%d", g.QueueID, g.QueueOffset)] = true
			if g.Topic != r.st.topic {
				t.Errorf("%s: %s delivered with topic %q", r.b.kind, id, g.Topic)
			}
		}
		if !e.normal {
			sent++
		}
		// Apache's race, not rocketgo's (which writes the op record before
		// it answers and ends a transaction once): Apache 5.x writes the op
		// record of an END_TRANSACTION up to transactionOpBatchInterval later,
		// so a check run may ask about a message already answered, and it
		// stores a commit per COMMIT answer. Seen on a loaded machine with
		// Java 5.3.3. On the apache target such extra checks are reported,
		// with one more queue position each, not failed.
		extra := 0
		if n := len(r.st.checks[id]); r.b.kind == "apache" && e.checks >= 0 && n > e.checks {
			extra = n - e.checks
			t.Logf("apache race: %s checked %d more time(s) after it was answered, delivered at %d positions", id, extra, len(positions))
		}
		switch {
		case e.commit && (len(positions) < 1 || len(positions) > 1+extra):
			t.Errorf("%s: %s (committed) delivered at %d queue positions %v, want exactly one", r.b.kind, id, len(positions), positions)
		case !e.commit && len(got) > 0:
			t.Errorf("%s: %s (rolled back) delivered %d times", r.b.kind, id, len(got))
		}
		timed := !e.normal && !r.st.wasGated[e.scenario]
		if e.commit && !e.normal && len(got) > 0 {
			delivered++
			if diff := committedPropsDiff(got[0].Props, e.exec != commitState, e.more...); diff != "" {
				t.Errorf("%s: %s delivered with properties %v: %s", r.b.kind, id, got[0].Props, diff)
			}
			// The committed copy counts the checks that led to it (gated
			// scenarios and immunity re-appends count more: not compared).
			if n := len(r.st.checks[id]); timed && e.notEarly == 0 && n > 0 && extra == 0 &&
				got[0].Props["TRANSACTION_CHECK_TIMES"] != fmt.Sprint(n) {
				t.Errorf("%s: %s delivered with TRANSACTION_CHECK_TIMES=%q after %d checks", r.b.kind, id,
					got[0].Props["TRANSACTION_CHECK_TIMES"], n)
			}
			d, ok := r.st.decided[id]
			switch {
			case !ok:
				t.Errorf("%s: %s delivered but never committed by the producer", r.b.kind, id)
			case got[0].At.Before(d):
				t.Errorf("%s: %s delivered %s before the producer committed it", r.b.kind, id, d.Sub(got[0].At))
			case timed:
				toDelivery = append(toDelivery, got[0].At.Sub(d))
			}
		}
		if !e.normal && e.checks >= 0 && len(r.st.checks[id]) != e.checks+extra {
			t.Errorf("%s: %s checked %d times (%v), want %d", r.b.kind, id, len(r.st.checks[id]), r.st.checks[id], e.checks)
		}
		if cs := r.st.checks[id]; e.notEarly > 0 && len(cs) > 0 && cs[0].at.Sub(r.st.prepared[id]) < e.notEarly {
			t.Errorf("%s: %s first checked %s after the prepare, before its CHECK_IMMUNITY_TIME_IN_SECONDS (%s)",
				r.b.kind, id, cs[0].at.Sub(r.st.prepared[id]), e.notEarly)
		}
		for _, c := range r.st.checks[id] {
			if e.checker != "" && c.by != e.checker {
				t.Errorf("%s: %s checked by %s, want %s", r.b.kind, id, c.by, e.checker)
			}
		}
		if cs := r.st.checks[id]; timed && e.checks > 0 && e.notEarly == 0 && len(cs) > 0 && !r.st.prepared[id].IsZero() {
			toCheck = append(toCheck, cs[0].at.Sub(r.st.prepared[id]))
		}
	}
	report(t, start, sent, delivered, fmt.Sprintf("target=%s commit->delivery %s prepare->first check %s",
		r.b.kind, durStats(toDelivery), durStats(toCheck)))
}

// committedPropsDiff compares the properties of a delivered committed
// message with what Apache 5.5 delivers (measured with ROCKETGO_TX_TARGETS=
// apache): the half message's properties less REAL_TOPIC and REAL_QID
// (Apache clears them before it serialises the rest; 5.3.3 kept them),
// TRANSACTION_CHECK_TIMES when a check resolved it. The consumer side's own (CLUSTER, CONSUME_START_TIME,
// MIN_OFFSET, MAX_OFFSET) and Apache's MSG_REGION and TRACE_ON on every sent
// message (not a transaction matter; rocketgo stores neither) are left out.
func committedPropsDiff(props map[string]string, checked bool, more ...string) string {
	want := append([]string{"KEYS", "PGROUP", "TAGS", "TRAN_MSG", "UNIQ_KEY", "__transactionId__", idProp}, more...)
	if checked {
		want = append(want, "TRANSACTION_CHECK_TIMES")
	}
	ignore := map[string]bool{"CLUSTER": true, "CONSUME_START_TIME": true, "MIN_OFFSET": true, "MAX_OFFSET": true,
		"MSG_REGION": true, "TRACE_ON": true}
	var got []string
	for k := range props {
		if !ignore[k] {
			got = append(got, k)
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Sprintf("keys %v, want %v", got, want)
	}
	if props["TRAN_MSG"] != "true" || props["__transactionId__"] != props["UNIQ_KEY"] {
		return "TRAN_MSG not true or __transactionId__ != UNIQ_KEY"
	}
	return ""
}

// durStats renders min/avg/max in seconds.
func durStats(ds []time.Duration) string {
	if len(ds) == 0 {
		return "n=0"
	}
	lo, hi, sum := ds[0], ds[0], time.Duration(0)
	for _, d := range ds {
		lo, hi, sum = min(lo, d), max(hi, d), sum+d
	}
	return fmt.Sprintf("n=%d min/avg/max %.2f/%.2f/%.2fs", len(ds), lo.Seconds(), (sum / time.Duration(len(ds))).Seconds(), hi.Seconds())
}
