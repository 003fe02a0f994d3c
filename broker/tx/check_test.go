package tx

import (
	"strconv"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/message"
)

// The check service's decisions: resolved half messages (op bodies in
// either format) are skipped, young ones wait, old ones are re-appended
// with TRANSACTION_CHECK_TIMES+1 until transactionCheckMax, then moved to
// TRANS_CHECK_MAX_TIME_TOPIC; progress is CID_RMQ_SYS_TRANS's offsets.
func TestTransactionCheck(t *testing.T) {
	h := newHarness(t, t.TempDir(), func(c *Config) { c.CheckMax = 2 })
	for i := range 5 {
		putHalf(t, h, 0, "m"+strconv.Itoa(i))
	}
	waitRecords(t, h, message.TransHalfTopic, 0, 5)
	putOpBody(t, h, "0")    // 4.9
	putOpBody(t, h, "1,3,") // 5.1+
	waitRecords(t, h, message.TransOpHalfTopic, 0, 2)

	// Young: nothing happens, no progress past the unresolved offset 2.
	checkRun(h, time.Now())
	if off, _ := h.offsets.Query(message.TransGroup, message.TransHalfTopic, 0); off != 2 {
		t.Fatalf("half progress %d after a young run, want 2", off)
	}
	if n := h.st.MaxOffset(message.TransHalfTopic, 0); n != 5 {
		t.Fatalf("young messages re-appended: %d", n)
	}

	// Old: 2 and 4 are re-appended (check 1), 0, 1, 3 skipped.
	later := time.Now().Add(time.Minute)
	checkRun(h, later)
	recs := waitRecords(t, h, message.TransHalfTopic, 0, 7)
	for _, r := range recs[5:] {
		if message.Property(r.Properties, "TRANSACTION_CHECK_TIMES") != "1" {
			t.Fatalf("re-appended %q: %v", r.Body, message.ParseProperties(r.Properties))
		}
	}
	if string(recs[5].Body) != "m2" || string(recs[6].Body) != "m4" {
		t.Fatalf("re-appended %q %q, want m2 m4", recs[5].Body, recs[6].Body)
	}
	if off, _ := h.offsets.Query(message.TransGroup, message.TransHalfTopic, 0); off != 5 {
		t.Fatalf("half progress %d, want 5", off)
	}
	if off, _ := h.offsets.Query(message.TransGroup, message.TransOpHalfTopic, 0); off != 2 {
		t.Fatalf("op progress %d, want 2", off)
	}
	// A producer rolls back the copy of m4 (offset 6).
	putOpBody(t, h, "6")
	waitRecords(t, h, message.TransOpHalfTopic, 0, 3)
	checkRun(h, later.Add(time.Minute)) // m2 copy → check 2
	waitRecords(t, h, message.TransHalfTopic, 0, 8)
	checkRun(h, later.Add(2*time.Minute))
	moved := waitRecords(t, h, message.TransCheckMaxTimeTopic, 0, 1)
	if string(moved[0].Body) != "m2" || len(moved) != 1 {
		t.Fatalf("moved to TRANS_CHECK_MAX_TIME_TOPIC: %d, first %q", len(moved), moved[0].Body)
	}
	if n := h.st.MaxOffset(message.TransHalfTopic, 0); n != 8 {
		t.Fatalf("half queue holds %d, want 8 (m4 rolled back, m2 checked twice)", n)
	}
	// m2 discarded (the prepared sends are the broker's to count); the op
	// records put by hand are no ends the service counts.
	var flows int
	h.counts.RangeTopics(func(topic string, f *stats.TxFlow) bool {
		flows++
		if topic != "T" || f.Half.Load() != -1 || f.Commits.Load() != 0 || f.Rollbacks.Load() != 0 {
			t.Errorf("%s: half %d commits %d rollbacks %d, want one discard of T", topic, f.Half.Load(),
				f.Commits.Load(), f.Rollbacks.Load())
		}
		return true
	})
	if flows != 1 {
		t.Errorf("%d topics counted, want T", flows)
	}
}

// Restart: only the commit log and consumerOffset.json hold the state. A
// half message resolved before the restart is neither checked nor
// committed again; an unresolved one is checked.
func TestTransactionRestart(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, dir, nil)
	c := putHalf(t, h, 0, "committed")
	r := putHalf(t, h, 0, "rolled-back")
	putHalf(t, h, 0, "open")
	waitRecords(t, h, message.TransHalfTopic, 0, 3)
	if err := endTx(t, h, endReq(c, message.TransactionCommit)); err != nil {
		t.Fatal(err)
	}
	if err := endTx(t, h, endReq(r, message.TransactionRollbk)); err != nil {
		t.Fatal(err)
	}
	waitRecords(t, h, message.TransOpHalfTopic, 0, 2)
	h.stop()

	h = newHarness(t, dir, nil)
	checkRun(h, time.Now().Add(time.Minute))
	recs := waitRecords(t, h, message.TransHalfTopic, 0, 4)
	if string(recs[3].Body) != "open" {
		t.Fatalf("re-appended after restart: %q", recs[3].Body)
	}
	dispatched(t, h)
	if n := h.st.MaxOffset("T", 0); n != 1 {
		t.Fatalf("T/0 holds %d messages, want the one commit", n)
	}
	if n := h.st.MaxOffset(message.TransHalfTopic, 0); n != 4 {
		t.Fatalf("half queue holds %d, want 4", n)
	}
}

// Inside CHECK_IMMUNITY_TIME_IN_SECONDS a half message is re-appended
// carrying its first offset (TRAN_PREPARED_QUEUE_OFFSET), not checked; a
// copy whose first offset was resolved is dropped. Re-appends and checks
// share the run's budget.
func TestTransactionCheckImmunity(t *testing.T) {
	h := newHarness(t, t.TempDir(), nil)
	putHalf(t, h, 0, "immune", "CHECK_IMMUNITY_TIME_IN_SECONDS", "600")
	putHalf(t, h, 0, "plain")
	waitRecords(t, h, message.TransHalfTopic, 0, 2)
	h.check.maxPerRun = 1
	later := time.Now().Add(time.Minute)
	checkRun(h, later) // re-appends the immune one, then the budget is spent
	recs := waitRecords(t, h, message.TransHalfTopic, 0, 3)
	// As Apache's: the run is counted, WAIT=false.
	if string(recs[2].Body) != "immune" || message.Property(recs[2].Properties, "TRAN_PREPARED_QUEUE_OFFSET") != "0" ||
		message.Property(recs[2].Properties, "TRANSACTION_CHECK_TIMES") != "1" ||
		message.Property(recs[2].Properties, "WAIT") != "false" {
		t.Fatalf("immune copy %q %v", recs[2].Body, message.ParseProperties(recs[2].Properties))
	}
	if off, _ := h.offsets.Query(message.TransGroup, message.TransHalfTopic, 0); off != 1 {
		t.Fatalf("half progress %d after a spent budget, want 1", off)
	}
	putOpBody(t, h, "0") // the producer rolls back the original
	waitRecords(t, h, message.TransOpHalfTopic, 0, 1)
	h.check.maxPerRun = 10
	checkRun(h, later.Add(time.Minute)) // "plain" checked (copy 3), the immune copy resolved
	recs = waitRecords(t, h, message.TransHalfTopic, 0, 4)
	if string(recs[3].Body) != "plain" || len(recs) != 4 {
		t.Fatalf("after the second run: %d records, last %q", len(recs), recs[len(recs)-1].Body)
	}
	if off, _ := h.offsets.Query(message.TransGroup, message.TransOpHalfTopic, 0); off != 1 {
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
	h := newHarness(t, t.TempDir(), nil)
	putHalf(t, h, 0, "late")
	waitRecords(t, h, message.TransHalfTopic, 0, 1)
	now := time.Now().Add(time.Minute)
	checkRun(h, now)                  // copy 1
	checkRun(h, now.Add(time.Minute)) // no answer yet: copy 2
	recs := waitRecords(t, h, message.TransHalfTopic, 0, 3)
	for _, r := range recs { // a check's copy names no first offset: only an immune copy does
		if p := message.Property(r.Properties, "TRAN_PREPARED_QUEUE_OFFSET"); p != "" {
			t.Fatalf("record %d carries TRAN_PREPARED_QUEUE_OFFSET %q", r.QueueOffset, p)
		}
	}
	putHalf(t, h, 0, "other") // offset 3, another transaction of the group
	waitRecords(t, h, message.TransHalfTopic, 0, 4)
	putOpBody(t, h, "1") // the late answer, about copy 1
	waitRecords(t, h, message.TransOpHalfTopic, 0, 1)
	checkRun(h, now.Add(2*time.Minute))
	recs = waitRecords(t, h, message.TransHalfTopic, 0, 5)
	if len(recs) != 5 || string(recs[4].Body) != "other" {
		t.Fatalf("after the late answer: %d records, last %q; want only \"other\" checked", len(recs), recs[len(recs)-1].Body)
	}

	// A crash loses the progress: the walk starts at the original again.
	putOpBody(t, h, "4") // "other" answered too
	waitRecords(t, h, message.TransOpHalfTopic, 0, 2)
	h.offsets.Commit(message.TransGroup, message.TransHalfTopic, 0, 0)
	h.offsets.Commit(message.TransGroup, message.TransOpHalfTopic, 0, 0)
	checkRun(h, now.Add(3*time.Minute))
	if n := h.st.MaxOffset(message.TransHalfTopic, 0); n != 5 {
		t.Fatalf("after a progress roll-back an answered transaction was checked again: half queue holds %d", n)
	}
	if off, _ := h.offsets.Query(message.TransGroup, message.TransHalfTopic, 0); off != 5 {
		t.Fatalf("half progress %d, want 5", off)
	}
}

// After a crash rolled the progress back, one run meets several copies of a
// transaction: it asks about it once.
func TestTransactionCheckOncePerRun(t *testing.T) {
	h := newHarness(t, t.TempDir(), nil)
	putHalf(t, h, 0, "m")
	waitRecords(t, h, message.TransHalfTopic, 0, 1)
	now := time.Now().Add(time.Minute)
	checkRun(h, now)                  // copy 1
	checkRun(h, now.Add(time.Minute)) // copy 2
	waitRecords(t, h, message.TransHalfTopic, 0, 3)
	h.offsets.Commit(message.TransGroup, message.TransHalfTopic, 0, 0) // the crash
	checkRun(h, now.Add(2*time.Minute))
	if n := h.st.MaxOffset(message.TransHalfTopic, 0); n != 4 {
		t.Fatalf("one run over 3 copies of one transaction made %d copies, want 1", n-3)
	}
}
