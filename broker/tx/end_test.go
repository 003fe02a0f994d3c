package tx

import (
	"testing"

	"github.com/rocketgo/rocketgo/message"
)

// A transaction ends once: a repeated commit, a commit after a rollback and
// a commit of a check's copy after the original was committed each write
// an op record for the half message they name and store nothing else.
func TestEndTransactionOnce(t *testing.T) {
	h := newHarness(t, t.TempDir(), nil)
	c := putHalf(t, h, 0, "committed")
	r := putHalf(t, h, 0, "rolled-back")
	u := putHalf(t, h, 0, "checked")
	waitRecords(t, h, message.TransHalfTopic, 0, 3)
	for _, e := range []struct {
		res   half
		state int32
	}{{c, message.TransactionCommit}, {c, message.TransactionCommit}, {r, message.TransactionRollbk},
		{r, message.TransactionCommit}, {u, message.TransactionCommit}} {
		if err := endTx(t, h, endReq(e.res, e.state)); err != nil {
			t.Fatal(err)
		}
	}
	// The check service made a copy of "checked" before the producer's
	// commit arrived; the producer's answer to the check names the copy.
	recs := storedRecords(t, h, message.TransHalfTopic, 0)
	v, _, err := message.DecodeRecordView(mustRecord(t, h, recs[2].PhysicalOffset))
	if err != nil {
		t.Fatal(err)
	}
	pr, _, err := h.check.renew(&v, message.PropTransactionCheckTimes, "1")
	if err != nil {
		t.Fatal(err)
	}
	waitRecords(t, h, message.TransHalfTopic, 0, 4)
	copyReq := EndRequest{ProducerGroup: "PG", TranStateTableOffset: pr.QueueOffset,
		CommitLogOffset: pr.PhysicalOffset, CommitOrRollback: message.TransactionCommit, FromTransactionCheck: true}
	if err := endTx(t, h, copyReq); err != nil {
		t.Fatal(err)
	}
	ops := waitRecords(t, h, message.TransOpHalfTopic, 0, 6)
	if got := string(ops[5].Body); got != "3" {
		t.Fatalf("op record of the copy: %q", got)
	}
	dispatched(t, h)
	got := storedRecords(t, h, "T", 0)
	if len(got) != 2 || string(got[0].Body) != "committed" || string(got[1].Body) != "checked" {
		t.Fatalf("T/0 holds %d messages, want committed and checked once each", len(got))
	}
}

// While one worker ends a transaction, a second END_TRANSACTION of it
// writes nothing: an op record must not reach the log before the commit.
func TestEndTransactionWhileEnding(t *testing.T) {
	h := newHarness(t, t.TempDir(), nil)
	res := putHalf(t, h, 0, "m")
	recs := waitRecords(t, h, message.TransHalfTopic, 0, 1)
	v, _, err := message.DecodeRecordView(mustRecord(t, h, recs[0].PhysicalOffset))
	if err != nil {
		t.Fatal(err)
	}
	key := txID(&v)
	if first, _ := h.resolved.claim(key); !first {
		t.Fatal("claimed before")
	}
	before := h.st.MaxPhyOffset()
	if err := endTx(t, h, endReq(res, message.TransactionCommit)); err != nil {
		t.Fatal(err)
	}
	if h.st.MaxPhyOffset() != before {
		t.Fatal("an END_TRANSACTION of a transaction being ended wrote to the log")
	}
	h.resolved.ended(key)
	if err := endTx(t, h, endReq(res, message.TransactionCommit)); err != nil {
		t.Fatal(err)
	}
	ops := waitRecords(t, h, message.TransOpHalfTopic, 0, 1)
	if string(ops[0].Body) != "0" || h.st.MaxOffset("T", 0) != 0 {
		t.Fatalf("after it ended: op %q, T/0 holds %d", ops[0].Body, h.st.MaxOffset("T", 0))
	}
}
