package broker

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker/send"
	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/broker/tx"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/remoting/remotingtest"
	"github.com/rocketgo/rocketgo/store"
)

// txBroker is testBroker with topic T (4 queues).
func txBroker(t *testing.T, dir string, edit func(*Config)) (*Broker, func()) {
	t.Helper()
	b, stop := testBroker(t, dir, edit)
	if _, ok := b.Topics.Get("T"); !ok {
		putTopic(t, b, "T", 4, message.PermRead|message.PermWrite)
	}
	return b, stop
}

// prepare sends a half message of group PG to T/q as the clients do
// (TRAN_MSG=true, PGROUP, the PREPARED sysFlag) and returns the result.
func prepare(t *testing.T, b *Broker, q int32, body string, extra ...string) send.Result {
	t.Helper()
	r := sendReq("T", props(append([]string{"TRAN_MSG", "true", "PGROUP", "PG", "WAIT", "true"}, extra...)...), body)
	r.QueueID = q
	r.SysFlag = message.TransactionPrep
	var res send.Result
	if err := b.Sends.Send(r, &res, nil); err != nil {
		t.Fatal(err)
	}
	res.MsgID = bytes.Clone(res.MsgID)
	res.TransactionID = string(bytes.Clone([]byte(res.TransactionID)))
	return res
}

// endTx runs one END_TRANSACTION on the calling goroutine and returns
// what it answered.
func endTx(t *testing.T, b *Broker, r tx.EndRequest) error {
	t.Helper()
	var got error
	answered := make(chan struct{})
	b.Transactions.Serve(&r, func(err error) { got = err; close(answered) })
	select {
	case <-answered:
	case <-time.After(10 * time.Second):
		t.Fatal("END_TRANSACTION not answered")
	}
	return got
}

// endReq is the END_TRANSACTION a client sends after a prepared send.
func endReq(t *testing.T, res send.Result, state int32) tx.EndRequest {
	t.Helper()
	_, off, err := message.DecodeOffsetMsgID(string(res.MsgID))
	if err != nil {
		t.Fatal(err)
	}
	return tx.EndRequest{ProducerGroup: "PG", TranStateTableOffset: res.QueueOffset, CommitLogOffset: off,
		CommitOrRollback: state, MsgID: res.TransactionID, TransactionID: res.TransactionID, Remote: "10.0.0.1:5"}
}

// A prepared send is stored as Apache's parseHalfMessageInner stores it,
// and its answer carries what the clients need for END_TRANSACTION.
func TestPreparedSend(t *testing.T) {
	b, _ := txBroker(t, t.TempDir(), nil)
	// TRAN_PREPARED_QUEUE_OFFSET is the check service's own: a producer's
	// claim is stripped.
	res := prepare(t, b, 2, "half", "UNIQ_KEY", "U1", "TRAN_PREPARED_QUEUE_OFFSET", "7")
	halves := waitRecords(t, b, message.TransHalfTopic, 0, 1)
	h := halves[0]
	_, off, err := message.DecodeOffsetMsgID(string(res.MsgID))
	if err != nil || off != h.PhysicalOffset {
		t.Fatalf("msgId %s decodes to %d (%v), half message at %d", res.MsgID, off, err, h.PhysicalOffset)
	}
	if res.QueueOffset != 0 || res.QueueID != 2 || res.TransactionID != "U1" {
		t.Fatalf("answer: queueOffset %d queueId %d transactionId %q", res.QueueOffset, res.QueueID, res.TransactionID)
	}
	want := map[string]string{"REAL_TOPIC": "T", "REAL_QID": "2", "__transactionId__": "U1", "TRAN_MSG": "true", "PGROUP": "PG"}
	got := message.ParseProperties(h.Properties)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("half property %s = %q, want %q (%v)", k, got[k], v, got)
		}
	}
	if _, ok := got["TRAN_PREPARED_QUEUE_OFFSET"]; ok {
		t.Errorf("the producer's TRAN_PREPARED_QUEUE_OFFSET was kept: %v", got)
	}
	if message.TransactionType(h.SysFlag) != message.TransactionNot || string(h.Body) != "half" {
		t.Errorf("half sysFlag %#x body %q", h.SysFlag, h.Body)
	}
	if n := b.Store.MaxOffset("T", 2); n != 0 {
		t.Errorf("the half message is visible in T: %d entries", n)
	}

	// PREPARED without TRAN_MSG: Apache stores a PREPARED record in T,
	// without a consume queue entry; nothing enters the half queue.
	r := sendReq("T", props("PGROUP", "PG"), "x")
	r.SysFlag = message.TransactionPrep
	if err := b.Sends.Send(r, &send.Result{}, nil); err != nil {
		t.Fatal(err)
	}
	if n := b.Store.MaxOffset(message.TransHalfTopic, 0); n != 1 {
		t.Errorf("half queue holds %d, want 1", n)
	}
}

func TestPreparedSendRejected(t *testing.T) {
	b, _ := txBroker(t, t.TempDir(), func(c *Config) { c.RejectTransactionMessage = true })
	r := sendReq("T", props("TRAN_MSG", "true", "PGROUP", "PG"), "x")
	r.SysFlag = message.TransactionPrep
	err := b.Sends.Send(r, &send.Result{}, nil)
	remotingtest.WantRefusal(t, err, remoting.NoPermission, "the broker[127.0.0.1] sending transaction message is forbidden")
	if b.Store.MaxPhyOffset() != 0 {
		t.Fatal("a refused prepared send was stored")
	}
}

// Commit stores the half message in its real queue as Apache's
// EndTransactionProcessor does, then the op record; rollback only the op
// record.
func TestEndTransactionCommitRollback(t *testing.T) {
	b, _ := txBroker(t, t.TempDir(), nil)
	c := prepare(t, b, 1, "commit-me", "TAGS", "tg")
	r := prepare(t, b, 1, "roll-me")
	waitRecords(t, b, message.TransHalfTopic, 0, 2)
	if err := endTx(t, b, endReq(t, c, message.TransactionCommit)); err != nil {
		t.Fatal(err)
	}
	if err := endTx(t, b, endReq(t, r, message.TransactionRollbk)); err != nil {
		t.Fatal(err)
	}
	got := waitRecords(t, b, "T", 1, 1)
	_, halfOff, _ := message.DecodeOffsetMsgID(string(c.MsgID))
	m := got[0]
	if string(m.Body) != "commit-me" || message.TransactionType(m.SysFlag) != message.TransactionCommit ||
		m.PreparedTransactionOffset != halfOff {
		t.Fatalf("committed: body %q sysFlag %#x preparedTransactionOffset %d (half at %d)", m.Body, m.SysFlag,
			m.PreparedTransactionOffset, halfOff)
	}
	if p := message.ParseProperties(m.Properties); p["TAGS"] != "tg" || p["PGROUP"] != "PG" || p["UNIQ_KEY"] == "" {
		t.Fatalf("committed properties %v", p)
	}
	ops := waitRecords(t, b, message.TransOpHalfTopic, 0, 2)
	for i, want := range []string{"0", "1"} {
		if string(ops[i].Body) != want || message.Property(ops[i].Properties, "TAGS") != "d" {
			t.Errorf("op %d: body %q tags %q", i, ops[i].Body, message.Property(ops[i].Properties, "TAGS"))
		}
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { return b.Store.DispatchedPhyOffset() == b.Store.MaxPhyOffset() })
	if n := b.Store.MaxOffset("T", 1); n != 1 {
		t.Fatalf("T/1 holds %d messages after a commit and a rollback", n)
	}
	wantTx(t, b, "T", 0, 1, 1)
	in := map[stats.TopicType]int64{}
	b.Stats.RangeIn(func(k stats.TopicType, f *stats.InFlow) bool { in[k] = f.Msgs.Load(); return true })
	if in[stats.TopicType{Topic: message.TransHalfTopic, Type: stats.MessageTransaction}] != 2 || len(in) != 1 { // the prepared sends, as Apache
		t.Errorf("in: %v", in)
	}
}

// wantTx waits for topic's transaction counts (TxStats) and that the
// commits' latencies were observed: an end is counted on its worker after
// its op record is written, which the test may see first.
func wantTx(t *testing.T, b *Broker, topic string, half, commits, rollbacks int64) {
	t.Helper()
	var got string
	ok := waitFor(t, 5*time.Second, func() bool {
		n, match := 0, false
		got = ""
		b.Tx.RangeTopics(func(tp string, f *stats.TxFlow) bool {
			n++
			_, observed, _ := f.Finish.Read()
			match = tp == topic && f.Half.Load() == half && f.Commits.Load() == commits &&
				f.Rollbacks.Load() == rollbacks && observed == uint64(commits)
			got += fmt.Sprintf("%s: half %d commits %d rollbacks %d latencies %d; ", tp, f.Half.Load(),
				f.Commits.Load(), f.Rollbacks.Load(), observed)
			return true
		})
		return n == 1 && match
	})
	if !ok {
		t.Errorf("transaction counts %s want %s only: half %d commits %d rollbacks %d", got, topic, half, commits, rollbacks)
	}
}

// Every hostile END_TRANSACTION is refused with Apache's code and remark
// and stores nothing: offsets outside the log, inside a record, at a record
// of another topic, at a record forged inside a message body, another
// group's half message, offsets that disagree.
func TestEndTransactionHostile(t *testing.T) {
	b, _ := txBroker(t, t.TempDir(), nil)
	res := prepare(t, b, 0, "half")
	waitRecords(t, b, message.TransHalfTopic, 0, 1)
	good := endReq(t, res, message.TransactionCommit)

	// A message of T whose body is a well-formed half record of group PG.
	forged, err := message.AppendRecord(nil, &message.Record{Topic: message.TransHalfTopic, QueueOffset: 0,
		PhysicalOffset: 0, Body: []byte("forged"), BornHost: b.StoreHost, StoreHost: b.StoreHost,
		Properties: props("PGROUP", "PG", "REAL_TOPIC", "T", "REAL_QID", "0")})
	if err != nil {
		t.Fatal(err)
	}
	var plain send.Result
	if err := b.Sends.Send(sendReq("T", "", string(forged)), &plain, nil); err != nil {
		t.Fatal(err)
	}
	waitRecords(t, b, "T", 0, 1)
	_, plainOff, _ := message.DecodeOffsetMsgID(string(plain.MsgID))
	rec, err := b.Store.MessageAt(plainOff)
	if err != nil {
		t.Fatal(err)
	}
	forgedOff := plainOff + int64(bytes.Index(rec, forged))
	end := b.Store.MaxPhyOffset()

	const notFound = "Find prepared transaction message failed"
	for _, tc := range []struct {
		name   string
		edit   func(*tx.EndRequest)
		code   int32
		remark string
	}{
		{"negative offset", func(r *tx.EndRequest) { r.CommitLogOffset = -1 }, remoting.SystemError, notFound},
		{"past the end", func(r *tx.EndRequest) { r.CommitLogOffset = end }, remoting.SystemError, notFound},
		{"far past the end", func(r *tx.EndRequest) { r.CommitLogOffset = 1 << 62 }, remoting.SystemError, notFound},
		{"inside the record", func(r *tx.EndRequest) { r.CommitLogOffset += 4 }, remoting.SystemError, notFound},
		{"one byte in", func(r *tx.EndRequest) { r.CommitLogOffset++ }, remoting.SystemError, notFound},
		{"another topic's record", func(r *tx.EndRequest) { r.CommitLogOffset = plainOff }, remoting.SystemError, notFound},
		{"record forged in a body", func(r *tx.EndRequest) { r.CommitLogOffset = forgedOff; r.TranStateTableOffset = 0 },
			remoting.SystemError, notFound},
		{"another group", func(r *tx.EndRequest) { r.ProducerGroup = "OTHER" }, remoting.SystemError, "The producer group wrong"},
		{"empty group", func(r *tx.EndRequest) { r.ProducerGroup = "" }, remoting.SystemError, "The producer group wrong"},
		{"queue offset", func(r *tx.EndRequest) { r.TranStateTableOffset = 7 }, remoting.SystemError,
			"The transaction state table offset wrong"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := good
			tc.edit(&r)
			remotingtest.WantRefusal(t, endTx(t, b, r), tc.code, tc.remark)
		})
	}
	if n := b.Store.MaxOffset("T", 0); n != 1 {
		t.Fatalf("T/0 holds %d messages: a hostile END_TRANSACTION committed", n)
	}
	if n := b.Store.MaxOffset(message.TransOpHalfTopic, 0); n != 0 {
		t.Fatalf("%d op records written by hostile requests", n)
	}
	// The real one still commits.
	if err := endTx(t, b, good); err != nil {
		t.Fatal(err)
	}
	waitRecords(t, b, "T", 0, 2)
}

// The pending state is never answered; a full queue is SYSTEM_BUSY.
func TestEndTransactionQueue(t *testing.T) {
	b, _ := txBroker(t, t.TempDir(), func(c *Config) { c.EndTransactionPoolQueueCapacity = 1 })
	called := false
	queued, err := b.Transactions.EndTransaction(&tx.EndRequest{CommitOrRollback: message.TransactionNot}, func(error) { called = true })
	if queued || err != nil || called {
		t.Fatalf("pending state: queued %t err %v answered %t", queued, err, called)
	}
	r := &tx.EndRequest{CommitOrRollback: message.TransactionCommit}
	if queued, err := b.Transactions.EndTransaction(r, nil); !queued || err != nil {
		t.Fatalf("first: queued %t err %v", queued, err)
	}
	_, err = b.Transactions.EndTransaction(r, nil)
	remotingtest.WantRefusal(t, err, remoting.SystemBusy, "[OVERLOAD]system busy, start flow control for a while")
}

// A producer's own END_TRANSACTION after CHECK_IMMUNITY_TIME_IN_SECONDS is
// ILLEGAL_OPERATION (5.x); the answer to a check is not.
func TestEndTransactionImmunity(t *testing.T) {
	b, _ := txBroker(t, t.TempDir(), nil)
	r := sendReq("T", props("TRAN_MSG", "true", "PGROUP", "PG", "CHECK_IMMUNITY_TIME_IN_SECONDS", "1"), "x")
	r.SysFlag = message.TransactionPrep
	r.BornTimestamp = time.Now().Add(-5 * time.Second).UnixMilli()
	var res send.Result
	if err := b.Sends.Send(r, &res, nil); err != nil {
		t.Fatal(err)
	}
	waitRecords(t, b, message.TransHalfTopic, 0, 1)
	req := endReq(t, res, message.TransactionCommit)
	err := endTx(t, b, req)
	var rf *remoting.Refusal
	if !errors.As(err, &rf) || rf.Code != remoting.IllegalOperation || !errors.Is(err, tx.ErrCheckImmunity) {
		t.Fatalf("late commit: %v", err)
	}
	req.FromTransactionCheck = true
	if err := endTx(t, b, req); err != nil {
		t.Fatal(err)
	}
}

// With SYNC_FLUSH a commit is answered through the flush completion, after
// the op record (the wait covers both records), and a flush failure is
// still SUCCESS, as Apache's sendFinalMessage answers FLUSH_DISK_TIMEOUT.
func TestEndTransactionSyncFlush(t *testing.T) {
	b, _ := txBroker(t, t.TempDir(), func(c *Config) { c.Store.FlushDiskType = store.SyncFlush })
	res := prepare(t, b, 0, "sync")
	waitRecords(t, b, message.TransHalfTopic, 0, 1)
	var waitedFor int64
	var flushed func(error)
	b.wait = func(end int64, _ store.Durability, done func(error)) { waitedFor, flushed = end, done }
	answered := make(chan error, 1)
	r := endReq(t, res, message.TransactionCommit)
	b.Transactions.Serve(&r, func(err error) { answered <- err })
	select {
	case err := <-answered:
		t.Fatalf("answered before the flush: %v", err)
	default:
	}
	if flushed == nil || waitedFor != b.Store.MaxPhyOffset() {
		t.Fatalf("waits for %d, the log ends at %d (commit and op record)", waitedFor, b.Store.MaxPhyOffset())
	}
	flushed(errors.New("flush timed out"))
	if err := <-answered; err != nil {
		t.Fatalf("answer after a flush time-out: %v", err)
	}
}

// BenchmarkEndTransactionCommit is one worker's cost of a commit: read and
// check the half message, store the committed message and the op record.
func BenchmarkEndTransactionCommit(b *testing.B) {
	t := &testing.T{} // testBroker's cleanup never runs on it: stop does
	br, stop := txBroker(t, b.TempDir(), func(c *Config) { c.Store.MappedFileSizeCommitLog = 256 << 20 })
	b.Cleanup(stop)
	reqs := make([]tx.EndRequest, b.N)
	for i := range reqs {
		r := sendReq("T", props("TRAN_MSG", "true", "PGROUP", "PG", "TAGS", "tg", "KEYS", "k"+strconv.Itoa(i)), "0123456789abcdef")
		r.SysFlag = message.TransactionPrep
		var res send.Result
		if err := br.Sends.Send(r, &res, nil); err != nil {
			b.Fatal(err)
		}
		_, off, _ := message.DecodeOffsetMsgID(string(res.MsgID))
		reqs[i] = tx.EndRequest{ProducerGroup: "PG", TranStateTableOffset: res.QueueOffset, CommitLogOffset: off,
			CommitOrRollback: message.TransactionCommit}
	}
	for br.Store.DispatchedPhyOffset() < br.Store.MaxPhyOffset() {
		time.Sleep(time.Millisecond) // the dispatcher indexes the half messages
	}
	done := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		br.Transactions.Serve(&reqs[i], done)
	}
}

// Two transactions whose messages share a UNIQ_KEY (one message object
// sent twice by an application) but not a body both commit; a send the
// client retried (the same message stored twice) commits once.
func TestEndTransactionSameUniqKey(t *testing.T) {
	b, _ := txBroker(t, t.TempDir(), nil)
	a := prepare(t, b, 0, "first", "UNIQ_KEY", "SAME")
	c := prepare(t, b, 0, "second", "UNIQ_KEY", "SAME")
	d := prepare(t, b, 0, "second", "UNIQ_KEY", "SAME") // the retry of c
	waitRecords(t, b, message.TransHalfTopic, 0, 3)
	for _, res := range []send.Result{a, c, d} {
		if err := endTx(t, b, endReq(t, res, message.TransactionCommit)); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { return b.Store.DispatchedPhyOffset() == b.Store.MaxPhyOffset() })
	got := storedRecords(t, b, "T", 0)
	if len(got) != 2 || string(got[0].Body) != "first" || string(got[1].Body) != "second" {
		t.Fatalf("T/0 holds %d messages, want first and second once each", len(got))
	}
}

// The transaction keys: Apache's defaults, and values the services cannot
// work with refused at start.
func TestTransactionConfig(t *testing.T) {
	d := DefaultConfig()
	if d.TransactionTimeOut != 6000 || d.TransactionCheckMax != 15 || d.TransactionCheckInterval != 30000 ||
		d.TransactionOpMsgMaxSize != 4096 || d.TransactionOpBatchInterval != 3000 || d.RejectTransactionMessage ||
		d.EndTransactionPoolQueueCapacity != 100000 || d.EndTransactionThreadPoolNums < 12 {
		t.Fatalf("defaults %+v", d)
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"check interval 0", func(c *Config) { c.TransactionCheckInterval = 0 }},
		{"negative time-out", func(c *Config) { c.TransactionTimeOut = -1 }},
		{"negative check max", func(c *Config) { c.TransactionCheckMax = -1 }},
		{"no workers", func(c *Config) { c.EndTransactionThreadPoolNums = 0 }},
		{"no queue", func(c *Config) { c.EndTransactionPoolQueueCapacity = 0 }},
	} {
		c := DefaultConfig()
		c.BrokerName, c.BrokerIP1 = "b", "127.0.0.1"
		tc.edit(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}
