package tx

import (
	"context"
	"net/netip"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/store"
	"github.com/rocketgo/rocketgo/store/storetest"
)

func TestMain(m *testing.M) {
	store.FakeDiskUsage(0.5) // no test depends on how full the host disk is
	testutil.VerifyNoLeaks(m)
}

// harness is the service on a real store and real tables, with topic T (4
// queues) and the half and op topics, as a broker builds it; commits go
// straight to the store.
type harness struct {
	*Service
	st      *store.Store
	offsets *tables.Offsets
	counts  stats.TxStats
	quit    chan struct{}
}

var testHost = netip.MustParseAddrPort("127.0.0.1:10911")

// uniqs numbers the UNIQ_KEYs putHalf makes.
var uniqs atomic.Int64

func newHarness(t *testing.T, dir string, edit func(*Config)) *harness {
	t.Helper()
	st := storetest.Open(t, dir, nil)
	topics := tables.NewTopics(filepath.Join(dir, "config", "topics.json"), 1024, func() {}, func() bool { return false })
	for _, name := range []string{"T", message.TransHalfTopic, message.TransOpHalfTopic} {
		n := int32(1)
		if name == "T" {
			n = 4
		}
		topics.PutSystem(tables.TopicConfig{TopicName: name, ReadQueueNums: n, WriteQueueNums: n, Perm: message.PermRead | message.PermWrite})
	}
	offsets := tables.NewOffsets(filepath.Join(dir, "config", "consumerOffset.json"), 1024)
	if err := offsets.Load(zerolog.Nop()); err != nil {
		t.Fatal(err)
	}
	cfg := Config{BrokerName: "b", TimeOut: 6000, CheckMax: 15, CheckInterval: 30 * time.Second,
		FileReservedTime: 72, MaxMessageSize: 4 << 20}
	if edit != nil {
		edit(&cfg)
	}
	h := &harness{st: st, offsets: offsets, quit: make(chan struct{})}
	h.Service = New(Deps{Config: func() Config { return cfg }, Store: st, Offsets: offsets, Topics: topics,
		Producers: tables.NewClients(time.Minute, zerolog.Nop()), Commit: st.Put,
		CheckRealTopic: func(string, int) error { return nil }, Wait: st.Wait, Counts: &h.counts,
		StoreHost: testHost, QueueCapacity: 16, Quit: h.quit}, zerolog.Nop())
	t.Cleanup(h.stop)
	return h
}

// stop closes the store, keeping the offsets in their file; a second call
// does nothing.
func (h *harness) stop() {
	select {
	case <-h.quit:
		return
	default:
	}
	close(h.quit)
	_ = h.offsets.PersistIfDirty()
	_ = h.st.Shutdown(context.Background())
}

// half is what a prepared send answers, as far as END_TRANSACTION needs it.
type half struct {
	queueOffset, phyOffset int64
	uniq                   string
}

// putHalf stores a half message of group PG for T/q as the broker's
// prepared send does: the client's properties plus __transactionId__,
// REAL_TOPIC and REAL_QID, in the half topic's queue 0.
func putHalf(t *testing.T, h *harness, q int32, body string, extra ...string) half {
	t.Helper()
	uniq := "U" + strconv.FormatInt(uniqs.Add(1), 10)
	kv := append([]string{"TRAN_MSG", "true", "PGROUP", "PG", "WAIT", "true", "UNIQ_KEY", uniq}, extra...)
	p := message.SetProperties("", kv...)
	uniq = message.Property(p, message.PropUniqClientMessageID)
	p = message.SetProperties(p, message.PropTransactionID, uniq, message.PropRealTopic, "T",
		message.PropRealQueueID, strconv.Itoa(int(q)))
	m := &store.PutMessage{Topic: message.TransHalfTopic, Body: []byte(body), Properties: p,
		SysFlag: message.TransactionNot, BornHost: testHost, StoreHost: testHost, BornTimestamp: time.Now().UnixMilli()}
	pr, err := h.st.Put(m)
	if err != nil {
		t.Fatal(err)
	}
	return half{queueOffset: pr.QueueOffset, phyOffset: pr.PhysicalOffset, uniq: uniq}
}

// endReq is the END_TRANSACTION a producer sends about a half message.
func endReq(hf half, state int32) EndRequest {
	return EndRequest{ProducerGroup: "PG", TranStateTableOffset: hf.queueOffset, CommitLogOffset: hf.phyOffset,
		CommitOrRollback: state, MsgID: hf.uniq, TransactionID: hf.uniq, Remote: "10.0.0.1:5"}
}

// endTx runs one END_TRANSACTION on the calling goroutine and returns
// what it answered.
func endTx(t *testing.T, h *harness, r EndRequest) error {
	t.Helper()
	var got error
	answered := make(chan struct{})
	h.Serve(&r, func(err error) { got = err; close(answered) })
	select {
	case <-answered:
	case <-time.After(10 * time.Second):
		t.Fatal("END_TRANSACTION not answered")
	}
	return got
}

// putOpBody appends an op record with any body (4.9 and 5.x writers).
func putOpBody(t *testing.T, h *harness, body string) {
	t.Helper()
	m := &store.PutMessage{Topic: message.TransOpHalfTopic, Body: []byte(body),
		Properties: message.SetProperties("", "TAGS", "d"), BornHost: testHost, StoreHost: testHost,
		BornTimestamp: time.Now().UnixMilli()}
	if _, err := h.st.Put(m); err != nil {
		t.Fatal(err)
	}
}

// checkRun runs the check service once at now, and waits until what it
// appended is dispatched.
func checkRun(h *harness, now time.Time) {
	h.check.now = func() time.Time { return now }
	h.check.checkAll(nil)
	deadline := time.Now().Add(10 * time.Second)
	for h.st.DispatchedPhyOffset() < h.st.MaxPhyOffset() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // polling the dispatcher
	}
}

// storedRecords are the messages of topic-queueID, from its first.
func storedRecords(t *testing.T, h *harness, topic string, queueID int32) []message.Record {
	t.Helper()
	return storetest.Records(t, h.st, topic, queueID)
}

// waitRecords waits until topic-queueID holds n messages and returns them.
func waitRecords(t *testing.T, h *harness, topic string, queueID int32, n int) []message.Record {
	t.Helper()
	return storetest.WaitRecords(t, h.st, topic, queueID, n)
}

// dispatched waits until every record appended is dispatched.
func dispatched(t *testing.T, h *harness) {
	t.Helper()
	testutil.WaitFor(t, 5*time.Second, func() bool { return h.st.DispatchedPhyOffset() == h.st.MaxPhyOffset() })
}

func mustRecord(t *testing.T, h *harness, off int64) []byte {
	t.Helper()
	rec, err := h.st.MessageAt(off)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}
