package broker

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
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
func prepare(t *testing.T, b *Broker, q int32, body string, extra ...string) SendResult {
	t.Helper()
	r := sendReq("T", props(append([]string{"TRAN_MSG", "true", "PGROUP", "PG", "WAIT", "true"}, extra...)...), body)
	r.QueueID = q
	r.SysFlag = message.TransactionPrep
	var res SendResult
	if err := b.Send(r, &res, nil); err != nil {
		t.Fatal(err)
	}
	res.MsgID = bytes.Clone(res.MsgID)
	res.TransactionID = string(bytes.Clone([]byte(res.TransactionID)))
	return res
}

// endTx runs one END_TRANSACTION on the calling goroutine and returns
// what it answered.
func endTx(t *testing.T, b *Broker, r EndTransactionRequest) error {
	t.Helper()
	var got error
	answered := make(chan struct{})
	b.endTransaction(&endTxJob{r: r, done: func(err error) { got = err; close(answered) }})
	select {
	case <-answered:
	case <-time.After(10 * time.Second):
		t.Fatal("END_TRANSACTION not answered")
	}
	return got
}

// endReq is the END_TRANSACTION a client sends after a prepared send.
func endReq(t *testing.T, res SendResult, state int32) EndTransactionRequest {
	t.Helper()
	_, off, err := message.DecodeOffsetMsgID(string(res.MsgID))
	if err != nil {
		t.Fatal(err)
	}
	return EndTransactionRequest{ProducerGroup: "PG", TranStateTableOffset: res.QueueOffset, CommitLogOffset: off,
		CommitOrRollback: state, MsgID: res.TransactionID, TransactionID: res.TransactionID, Remote: "10.0.0.1:5"}
}

// A prepared send is stored as Apache's parseHalfMessageInner stores it,
// and its answer carries what the clients need for END_TRANSACTION.
func TestPreparedSend(t *testing.T) {
	b, _ := txBroker(t, t.TempDir(), nil)
	res := prepare(t, b, 2, "half", "UNIQ_KEY", "U1")
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
	if err := b.Send(r, &SendResult{}, nil); err != nil {
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
	err := b.Send(r, &SendResult{}, nil)
	wantRefusal(t, err, remoting.NoPermission, "the broker[127.0.0.1] sending transaction message is forbidden")
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
	var plain SendResult
	if err := b.Send(sendReq("T", "", string(forged)), &plain, nil); err != nil {
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
		edit   func(*EndTransactionRequest)
		code   int32
		remark string
	}{
		{"negative offset", func(r *EndTransactionRequest) { r.CommitLogOffset = -1 }, remoting.SystemError, notFound},
		{"past the end", func(r *EndTransactionRequest) { r.CommitLogOffset = end }, remoting.SystemError, notFound},
		{"far past the end", func(r *EndTransactionRequest) { r.CommitLogOffset = 1 << 62 }, remoting.SystemError, notFound},
		{"inside the record", func(r *EndTransactionRequest) { r.CommitLogOffset += 4 }, remoting.SystemError, notFound},
		{"one byte in", func(r *EndTransactionRequest) { r.CommitLogOffset++ }, remoting.SystemError, notFound},
		{"another topic's record", func(r *EndTransactionRequest) { r.CommitLogOffset = plainOff }, remoting.SystemError, notFound},
		{"record forged in a body", func(r *EndTransactionRequest) { r.CommitLogOffset = forgedOff; r.TranStateTableOffset = 0 },
			remoting.SystemError, notFound},
		{"another group", func(r *EndTransactionRequest) { r.ProducerGroup = "OTHER" }, remoting.SystemError, "The producer group wrong"},
		{"empty group", func(r *EndTransactionRequest) { r.ProducerGroup = "" }, remoting.SystemError, "The producer group wrong"},
		{"queue offset", func(r *EndTransactionRequest) { r.TranStateTableOffset = 7 }, remoting.SystemError,
			"The transaction state table offset wrong"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := good
			tc.edit(&r)
			wantRefusal(t, endTx(t, b, r), tc.code, tc.remark)
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
	queued, err := b.EndTransaction(&EndTransactionRequest{CommitOrRollback: message.TransactionNot}, func(error) { called = true })
	if queued || err != nil || called {
		t.Fatalf("pending state: queued %t err %v answered %t", queued, err, called)
	}
	r := &EndTransactionRequest{CommitOrRollback: message.TransactionCommit}
	if queued, err := b.EndTransaction(r, nil); !queued || err != nil {
		t.Fatalf("first: queued %t err %v", queued, err)
	}
	_, err = b.EndTransaction(r, nil)
	wantRefusal(t, err, remoting.SystemBusy, "[OVERLOAD]system busy, start flow control for a while")
	<-b.endTx.jobs
}

// A producer's own END_TRANSACTION after CHECK_IMMUNITY_TIME_IN_SECONDS is
// ILLEGAL_OPERATION (5.x); the answer to a check is not.
func TestEndTransactionImmunity(t *testing.T) {
	b, _ := txBroker(t, t.TempDir(), nil)
	r := sendReq("T", props("TRAN_MSG", "true", "PGROUP", "PG", "CHECK_IMMUNITY_TIME_IN_SECONDS", "1"), "x")
	r.SysFlag = message.TransactionPrep
	r.BornTimestamp = time.Now().Add(-5 * time.Second).UnixMilli()
	var res SendResult
	if err := b.Send(r, &res, nil); err != nil {
		t.Fatal(err)
	}
	waitRecords(t, b, message.TransHalfTopic, 0, 1)
	req := endReq(t, res, message.TransactionCommit)
	err := endTx(t, b, req)
	var rf *remoting.Refusal
	if !errors.As(err, &rf) || rf.Code != remoting.IllegalOperation || !errors.Is(err, ErrCheckImmunity) {
		t.Fatalf("late commit: %v", err)
	}
	req.FromTransactionCheck = true
	if err := endTx(t, b, req); err != nil {
		t.Fatal(err)
	}
}

func TestOpOffsets(t *testing.T) {
	for _, tc := range []struct {
		body string
		want []int64
	}{
		{"17", []int64{17}},                // 4.9 / 5.0
		{"17,18,21,", []int64{17, 18, 21}}, // 5.1+
		{"", nil},
		{",,", nil},
		{"x,5,", []int64{5}},
		{"-1,3", []int64{3}},
		{"99999999999999999999,4", []int64{4}},
	} {
		var got []int64
		opOffsets([]byte(tc.body), func(v int64) { got = append(got, v) })
		if len(got) != len(tc.want) {
			t.Errorf("%q: %v, want %v", tc.body, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q: %v, want %v", tc.body, got, tc.want)
			}
		}
	}
	if got := opProgress([]int64{5, 3, 4, 7}, 3); got != 6 {
		t.Errorf("opProgress = %d, want 6", got)
	}
}

// putOpBody appends an op record with any body (4.9 and 5.x writers).
func putOpBody(t *testing.T, b *Broker, body string) {
	t.Helper()
	m := testMsg(message.TransOpHalfTopic, props("TAGS", "d"))
	m.Body = []byte(body)
	if _, err := b.Store.Put(m); err != nil {
		t.Fatal(err)
	}
}

// checkRun runs the check service once at now, and waits until what it
// appended is dispatched.
func checkRun(b *Broker, now time.Time) {
	b.txCheck.now = func() time.Time { return now }
	b.txCheck.checkAll(nil)
	deadline := time.Now().Add(10 * time.Second)
	for b.Store.DispatchedPhyOffset() < b.Store.MaxPhyOffset() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // polling the dispatcher
	}
}

// The check service's decisions: resolved half messages (op bodies in
// either format) are skipped, young ones wait, old ones are re-appended
// with TRANSACTION_CHECK_TIMES+1 until transactionCheckMax, then moved to
// TRANS_CHECK_MAX_TIME_TOPIC; progress is CID_RMQ_SYS_TRANS's offsets.
func TestTransactionCheck(t *testing.T) {
	b, _ := txBroker(t, t.TempDir(), func(c *Config) { c.TransactionCheckMax = 2 })
	for i := range 5 {
		prepare(t, b, 0, "m"+strconv.Itoa(i))
	}
	waitRecords(t, b, message.TransHalfTopic, 0, 5)
	putOpBody(t, b, "0")    // 4.9
	putOpBody(t, b, "1,3,") // 5.1+
	waitRecords(t, b, message.TransOpHalfTopic, 0, 2)

	// Young: nothing happens, no progress past the unresolved offset 2.
	checkRun(b, time.Now())
	if off, _ := b.Offsets.Query(message.TransGroup, message.TransHalfTopic, 0); off != 2 {
		t.Fatalf("half progress %d after a young run, want 2", off)
	}
	if n := b.Store.MaxOffset(message.TransHalfTopic, 0); n != 5 {
		t.Fatalf("young messages re-appended: %d", n)
	}

	// Old: 2 and 4 are re-appended (check 1), 0, 1, 3 skipped.
	later := time.Now().Add(time.Minute)
	checkRun(b, later)
	recs := waitRecords(t, b, message.TransHalfTopic, 0, 7)
	for _, r := range recs[5:] {
		if message.Property(r.Properties, "TRANSACTION_CHECK_TIMES") != "1" {
			t.Fatalf("re-appended %q: %v", r.Body, message.ParseProperties(r.Properties))
		}
	}
	if string(recs[5].Body) != "m2" || string(recs[6].Body) != "m4" {
		t.Fatalf("re-appended %q %q, want m2 m4", recs[5].Body, recs[6].Body)
	}
	if off, _ := b.Offsets.Query(message.TransGroup, message.TransHalfTopic, 0); off != 5 {
		t.Fatalf("half progress %d, want 5", off)
	}
	if off, _ := b.Offsets.Query(message.TransGroup, message.TransOpHalfTopic, 0); off != 2 {
		t.Fatalf("op progress %d, want 2", off)
	}
	// A producer rolls back the copy of m4 (offset 6).
	putOpBody(t, b, "6")
	waitRecords(t, b, message.TransOpHalfTopic, 0, 3)
	checkRun(b, later.Add(time.Minute)) // m2 copy → check 2
	waitRecords(t, b, message.TransHalfTopic, 0, 8)
	checkRun(b, later.Add(2*time.Minute))
	moved := waitRecords(t, b, message.TransCheckMaxTimeTopic, 0, 1)
	if string(moved[0].Body) != "m2" || len(moved) != 1 {
		t.Fatalf("moved to TRANS_CHECK_MAX_TIME_TOPIC: %d, first %q", len(moved), moved[0].Body)
	}
	if n := b.Store.MaxOffset(message.TransHalfTopic, 0); n != 8 {
		t.Fatalf("half queue holds %d, want 8 (m4 rolled back, m2 checked twice)", n)
	}
	// 5 prepared, m2 discarded; the op records put by hand are no ends the
	// broker counts.
	wantTx(t, b, "T", 4, 0, 0)
}

// Restart: only the commit log and consumerOffset.json hold the state. A
// half message resolved before the restart is neither checked nor
// committed again; an unresolved one is checked.
func TestTransactionRestart(t *testing.T) {
	dir := t.TempDir()
	b, stop := txBroker(t, dir, nil)
	c := prepare(t, b, 0, "committed")
	r := prepare(t, b, 0, "rolled-back")
	prepare(t, b, 0, "open")
	waitRecords(t, b, message.TransHalfTopic, 0, 3)
	if err := endTx(t, b, endReq(t, c, message.TransactionCommit)); err != nil {
		t.Fatal(err)
	}
	if err := endTx(t, b, endReq(t, r, message.TransactionRollbk)); err != nil {
		t.Fatal(err)
	}
	waitRecords(t, b, message.TransOpHalfTopic, 0, 2)
	stop()

	b, _ = txBroker(t, dir, nil)
	checkRun(b, time.Now().Add(time.Minute))
	recs := waitRecords(t, b, message.TransHalfTopic, 0, 4)
	if string(recs[3].Body) != "open" {
		t.Fatalf("re-appended after restart: %q", recs[3].Body)
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { return b.Store.DispatchedPhyOffset() == b.Store.MaxPhyOffset() })
	if n := b.Store.MaxOffset("T", 0); n != 1 {
		t.Fatalf("T/0 holds %d messages, want the one commit", n)
	}
	if n := b.Store.MaxOffset(message.TransHalfTopic, 0); n != 4 {
		t.Fatalf("half queue holds %d, want 4", n)
	}
}

// Inside CHECK_IMMUNITY_TIME_IN_SECONDS a half message is re-appended
// carrying its first offset (TRAN_PREPARED_QUEUE_OFFSET), not checked; a
// copy whose first offset was resolved is dropped. Re-appends and checks
// share the run's budget.
func TestTransactionCheckImmunity(t *testing.T) {
	b, _ := txBroker(t, t.TempDir(), nil)
	prepare(t, b, 0, "immune", "CHECK_IMMUNITY_TIME_IN_SECONDS", "600")
	prepare(t, b, 0, "plain")
	waitRecords(t, b, message.TransHalfTopic, 0, 2)
	b.txCheck.maxPerRun = 1
	later := time.Now().Add(time.Minute)
	checkRun(b, later) // re-appends the immune one, then the budget is spent
	recs := waitRecords(t, b, message.TransHalfTopic, 0, 3)
	// As Apache's: the run is counted, WAIT=false.
	if string(recs[2].Body) != "immune" || message.Property(recs[2].Properties, "TRAN_PREPARED_QUEUE_OFFSET") != "0" ||
		message.Property(recs[2].Properties, "TRANSACTION_CHECK_TIMES") != "1" ||
		message.Property(recs[2].Properties, "WAIT") != "false" {
		t.Fatalf("immune copy %q %v", recs[2].Body, message.ParseProperties(recs[2].Properties))
	}
	if off, _ := b.Offsets.Query(message.TransGroup, message.TransHalfTopic, 0); off != 1 {
		t.Fatalf("half progress %d after a spent budget, want 1", off)
	}
	putOpBody(t, b, "0") // the producer rolls back the original
	waitRecords(t, b, message.TransOpHalfTopic, 0, 1)
	b.txCheck.maxPerRun = 10
	checkRun(b, later.Add(time.Minute)) // "plain" checked (copy 3), the immune copy resolved
	recs = waitRecords(t, b, message.TransHalfTopic, 0, 4)
	if string(recs[3].Body) != "plain" || len(recs) != 4 {
		t.Fatalf("after the second run: %d records, last %q", len(recs), recs[len(recs)-1].Body)
	}
	if off, _ := b.Offsets.Query(message.TransGroup, message.TransOpHalfTopic, 0); off != 1 {
		t.Fatalf("op progress %d, want 1", off)
	}
}

// A transaction is asked about once per copy, never again after an answer
// arrived for any copy of it (same producer group and UNIQ_KEY): neither
// when the answer named an earlier copy (a late answer) nor when a crash
// rolled the progress back before the original (its copy was answered).
// Copies are made as Apache makes them (no property linking them), so
// copies Apache made are matched too. Other transactions are still checked.
func TestTransactionCheckOnce(t *testing.T) {
	b, _ := txBroker(t, t.TempDir(), nil)
	prepare(t, b, 0, "late", "TRAN_PREPARED_QUEUE_OFFSET", "7") // a claim: stripped
	waitRecords(t, b, message.TransHalfTopic, 0, 1)
	now := time.Now().Add(time.Minute)
	checkRun(b, now)                  // copy 1
	checkRun(b, now.Add(time.Minute)) // no answer yet: copy 2
	recs := waitRecords(t, b, message.TransHalfTopic, 0, 3)
	for _, r := range recs {
		if p := message.Property(r.Properties, "TRAN_PREPARED_QUEUE_OFFSET"); p != "" {
			t.Fatalf("record %d carries TRAN_PREPARED_QUEUE_OFFSET %q", r.QueueOffset, p)
		}
	}
	prepare(t, b, 0, "other") // offset 3, another transaction of the group
	waitRecords(t, b, message.TransHalfTopic, 0, 4)
	putOpBody(t, b, "1") // the late answer, about copy 1
	waitRecords(t, b, message.TransOpHalfTopic, 0, 1)
	checkRun(b, now.Add(2*time.Minute))
	recs = waitRecords(t, b, message.TransHalfTopic, 0, 5)
	if len(recs) != 5 || string(recs[4].Body) != "other" {
		t.Fatalf("after the late answer: %d records, last %q; want only \"other\" checked", len(recs), recs[len(recs)-1].Body)
	}

	// A crash loses the progress: the walk starts at the original again.
	putOpBody(t, b, "4") // "other" answered too
	waitRecords(t, b, message.TransOpHalfTopic, 0, 2)
	b.Offsets.Commit(message.TransGroup, message.TransHalfTopic, 0, 0)
	b.Offsets.Commit(message.TransGroup, message.TransOpHalfTopic, 0, 0)
	checkRun(b, now.Add(3*time.Minute))
	if n := b.Store.MaxOffset(message.TransHalfTopic, 0); n != 5 {
		t.Fatalf("after a progress roll-back an answered transaction was checked again: half queue holds %d", n)
	}
	if off, _ := b.Offsets.Query(message.TransGroup, message.TransHalfTopic, 0); off != 5 {
		t.Fatalf("half progress %d, want 5", off)
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
	b.endTransaction(&endTxJob{r: endReq(t, res, message.TransactionCommit), done: func(err error) { answered <- err }})
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

// Op bodies come from the store, written by either broker: parsing never
// panics and yields only offsets a body spells.
func FuzzOpOffsets(f *testing.F) {
	for _, s := range []string{"17", "17,18,21,", "", ",", "-1,3", "x,5,", "99999999999999999999"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		opOffsets(body, func(v int64) {
			if v < 0 || !bytes.Contains(body, []byte(strconv.FormatInt(v, 10))) {
				t.Fatalf("%q gave %d", body, v)
			}
		})
	})
}

// BenchmarkEndTransactionCommit is one worker's cost of a commit: read and
// check the half message, store the committed message and the op record.
func BenchmarkEndTransactionCommit(b *testing.B) {
	t := &testing.T{} // testBroker's cleanup never runs on it: stop does
	br, stop := txBroker(t, b.TempDir(), func(c *Config) { c.Store.MappedFileSizeCommitLog = 256 << 20 })
	b.Cleanup(stop)
	reqs := make([]EndTransactionRequest, b.N)
	for i := range reqs {
		r := sendReq("T", props("TRAN_MSG", "true", "PGROUP", "PG", "TAGS", "tg", "KEYS", "k"+strconv.Itoa(i)), "0123456789abcdef")
		r.SysFlag = message.TransactionPrep
		var res SendResult
		if err := br.Send(r, &res, nil); err != nil {
			b.Fatal(err)
		}
		_, off, _ := message.DecodeOffsetMsgID(string(res.MsgID))
		reqs[i] = EndTransactionRequest{ProducerGroup: "PG", TranStateTableOffset: res.QueueOffset, CommitLogOffset: off,
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
		br.endTransaction(&endTxJob{r: reqs[i], done: done})
	}
}

// A transaction ends once: a repeated commit, a commit after a rollback and
// a commit of a check's copy after the original was committed each write
// an op record for the half message they name and store nothing else.
func TestEndTransactionOnce(t *testing.T) {
	b, _ := txBroker(t, t.TempDir(), nil)
	c := prepare(t, b, 0, "committed")
	r := prepare(t, b, 0, "rolled-back")
	u := prepare(t, b, 0, "checked")
	waitRecords(t, b, message.TransHalfTopic, 0, 3)
	for _, e := range []struct {
		res   SendResult
		state int32
	}{{c, message.TransactionCommit}, {c, message.TransactionCommit}, {r, message.TransactionRollbk},
		{r, message.TransactionCommit}, {u, message.TransactionCommit}} {
		if err := endTx(t, b, endReq(t, e.res, e.state)); err != nil {
			t.Fatal(err)
		}
	}
	// The check service made a copy of "checked" before the producer's
	// commit arrived; the producer's answer to the check names the copy.
	recs := storedRecords(t, b, message.TransHalfTopic, 0)
	v, _, err := message.DecodeRecordView(mustRecord(t, b, recs[2].PhysicalOffset))
	if err != nil {
		t.Fatal(err)
	}
	pr, _, err := b.txCheck.renew(&v, message.PropTransactionCheckTimes, "1")
	if err != nil {
		t.Fatal(err)
	}
	waitRecords(t, b, message.TransHalfTopic, 0, 4)
	copyReq := EndTransactionRequest{ProducerGroup: "PG", TranStateTableOffset: pr.QueueOffset,
		CommitLogOffset: pr.PhysicalOffset, CommitOrRollback: message.TransactionCommit, FromTransactionCheck: true}
	if err := endTx(t, b, copyReq); err != nil {
		t.Fatal(err)
	}
	ops := waitRecords(t, b, message.TransOpHalfTopic, 0, 6)
	if got := string(ops[5].Body); got != "3" {
		t.Fatalf("op record of the copy: %q", got)
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { return b.Store.DispatchedPhyOffset() == b.Store.MaxPhyOffset() })
	got := storedRecords(t, b, "T", 0)
	if len(got) != 2 || string(got[0].Body) != "committed" || string(got[1].Body) != "checked" {
		t.Fatalf("T/0 holds %d messages, want committed and checked once each", len(got))
	}
}

func mustRecord(t *testing.T, b *Broker, off int64) []byte {
	t.Helper()
	rec, err := b.Store.MessageAt(off)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// After a crash rolled the progress back, one run meets several copies of a
// transaction: it asks about it once.
func TestTransactionCheckOncePerRun(t *testing.T) {
	b, _ := txBroker(t, t.TempDir(), nil)
	prepare(t, b, 0, "m")
	waitRecords(t, b, message.TransHalfTopic, 0, 1)
	now := time.Now().Add(time.Minute)
	checkRun(b, now)                  // copy 1
	checkRun(b, now.Add(time.Minute)) // copy 2
	waitRecords(t, b, message.TransHalfTopic, 0, 3)
	b.Offsets.Commit(message.TransGroup, message.TransHalfTopic, 0, 0) // the crash
	checkRun(b, now.Add(2*time.Minute))
	if n := b.Store.MaxOffset(message.TransHalfTopic, 0); n != 4 {
		t.Fatalf("one run over 3 copies of one transaction made %d copies, want 1", n-3)
	}
}

// While one worker ends a transaction, a second END_TRANSACTION of it
// writes nothing: an op record must not reach the log before the commit.
func TestEndTransactionWhileEnding(t *testing.T) {
	b, _ := txBroker(t, t.TempDir(), nil)
	res := prepare(t, b, 0, "m")
	recs := waitRecords(t, b, message.TransHalfTopic, 0, 1)
	v, _, err := message.DecodeRecordView(mustRecord(t, b, recs[0].PhysicalOffset))
	if err != nil {
		t.Fatal(err)
	}
	key := txID(&v)
	if first, _ := b.endTx.resolved.claim(key); !first {
		t.Fatal("claimed before")
	}
	before := b.Store.MaxPhyOffset()
	if err := endTx(t, b, endReq(t, res, message.TransactionCommit)); err != nil {
		t.Fatal(err)
	}
	if b.Store.MaxPhyOffset() != before {
		t.Fatal("an END_TRANSACTION of a transaction being ended wrote to the log")
	}
	b.endTx.resolved.ended(key)
	if err := endTx(t, b, endReq(t, res, message.TransactionCommit)); err != nil {
		t.Fatal(err)
	}
	ops := waitRecords(t, b, message.TransOpHalfTopic, 0, 1)
	if string(ops[0].Body) != "0" || b.Store.MaxOffset("T", 0) != 0 {
		t.Fatalf("after it ended: op %q, T/0 holds %d", ops[0].Body, b.Store.MaxOffset("T", 0))
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
	for _, res := range []SendResult{a, c, d} {
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
