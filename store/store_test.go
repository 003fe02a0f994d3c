package store

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
)

func TestMain(m *testing.M) {
	FakeDiskUsage(0.5) // no test depends on how full the host disk is
	testutil.VerifyNoLeaks(m)
}

func testConfig(dir string) Config {
	cfg := DefaultConfig()
	cfg.StorePathRootDir = dir
	cfg.MappedFileSizeCommitLog = 64 * 1024
	cfg.MappedFileSizeConsumeQueue = 100 * cqEntrySize
	cfg.FlushIntervalCommitLog = 10
	cfg.FlushIntervalConsumeQueue = 10
	cfg.AccessMessageInMemoryMaxRatio = 0 // tests of the residency check write 16 MiB, not GiBs
	return cfg
}

func openStarted(t testing.TB, cfg Config) *Store {
	t.Helper()
	s, err := Open(cfg, testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	return s
}

func shutdown(t testing.TB, s *Store) {
	t.Helper()
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// crashClose stops the goroutines and unmaps without flushing, writing
// the checkpoint or removing abort: what kill -9 leaves (data stays in the
// page cache).
func (s *Store) crashClose() {
	s.closing.Store(true)
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	if s.started.Load() {
		close(s.quit)
		s.wg.Wait()
	}
	_ = s.closeFiles() // test helper: nothing to report
}

var (
	bornHost  = netip.MustParseAddrPort("10.0.0.9:54321")
	storeHost = netip.MustParseAddrPort("127.0.0.1:10911")
)

func testMsg(topic string, qid int32, i int) *PutMessage {
	tag := "TagA"
	if i%2 == 1 {
		tag = "TagB"
	}
	return &PutMessage{
		Topic:         topic,
		QueueID:       qid,
		Flag:          int32(i),
		Body:          fmt.Appendf(nil, "body-%s-%d-%d", topic, qid, i),
		Properties:    "TAGS\x01" + tag + "\x02KEYS\x01k" + fmt.Sprint(i) + "\x02",
		BornTimestamp: 1700000000000 + int64(i),
		BornHost:      bornHost,
		StoreHost:     storeHost,
	}
}

// Message filters for reads: TagA only (testMsg tags even messages TagA),
// and nothing.
func onlyA(code int64, _ []byte) bool { return code == message.TagsHash("TagA") }
func never(int64, []byte) bool        { return false }

// putN puts n messages round-robin over queues of topic and returns the results.
func putN(t testing.TB, s *Store, topic string, queues int32, from, n int) []PutResult {
	t.Helper()
	var out []PutResult
	for i := from; i < from+n; i++ {
		r, err := s.Put(testMsg(topic, int32(i)%queues, i))
		if err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
		out = append(out, r)
	}
	return out
}

// readAll pulls the whole queue and returns decoded records.
func readAll(t testing.TB, s *Store, topic string, qid int32) []message.Record {
	t.Helper()
	var recs []message.Record
	off := s.MinOffset(topic, qid)
	for {
		res := s.GetMessages(nil, topic, qid, off, 32, 1<<20, nil)
		if res.Status == OffsetOverflowOne || res.Status == NoMessageInQueue {
			return recs
		}
		if res.Status != Found {
			t.Fatalf("get %s-%d@%d: %v", topic, qid, off, res.Status)
		}
		b := res.Body
		for len(b) > 0 {
			r, rest, err := message.DecodeRecord(b)
			if err != nil {
				t.Fatal(err)
			}
			if message.BodyCRC(r.Body) != r.BodyCRC {
				t.Fatal("crc mismatch")
			}
			r.Body = append([]byte(nil), r.Body...)
			recs = append(recs, r)
			b = rest
		}
		if res.Count == 0 || res.NextBeginOffset <= off {
			t.Fatalf("no progress at %d: %+v", off, res)
		}
		off = res.NextBeginOffset
	}
}

// checkQueues verifies every message i in [0,n) of putN is in its queue
// in order with consecutive queue offsets.
func checkQueues(t testing.TB, s *Store, topic string, queues int32, n int) {
	t.Helper()
	for q := int32(0); q < queues; q++ {
		recs := readAll(t, s, topic, q)
		want := 0
		for i := 0; i < n; i++ {
			if int32(i)%queues == q {
				want++
			}
		}
		if len(recs) != want || s.MaxOffset(topic, q) != int64(want) {
			t.Fatalf("queue %d: %d records, max offset %d, want %d", q, len(recs), s.MaxOffset(topic, q), want)
		}
		for k, r := range recs {
			i := int(q) + k*int(queues)
			if r.QueueOffset != int64(k) || r.Topic != topic || r.QueueID != q || string(r.Body) != fmt.Sprintf("body-%s-%d-%d", topic, q, i) ||
				r.BornHost != bornHost || r.StoreHost != storeHost || r.Flag != int32(i) {
				t.Fatalf("queue %d record %d: %+v", q, k, r)
			}
		}
	}
}

func TestPutGetRollover(t *testing.T) {
	t.Parallel()
	s := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, s)
	const n = 1000 // ~150 KiB: three commit log files, several CQ files per queue
	res := putN(t, s, "TopicTest", 4, 0, n)
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
	checkQueues(t, s, "TopicTest", 4, n)
	ents, _ := os.ReadDir(filepath.Join(s.cfg.StorePathRootDir, "commitlog"))
	if len(ents) < 3 || ents[1].Name() != "00000000000000065536" {
		t.Fatalf("commit log files %v", ents)
	}
	// The first file ends with a BLANK record.
	last := res[0]
	for _, r := range res {
		if r.PhysicalOffset < 65536 {
			last = r
		}
	}
	raw, _ := os.ReadFile(filepath.Join(s.cfg.StorePathRootDir, "commitlog", ents[0].Name()))
	end := last.PhysicalOffset + int64(last.WroteBytes)
	if be32(raw[end+4:]) != 0xCBD43194 || int64(be32(raw[end:])) != 65536-end {
		t.Fatalf("no blank at %d", end)
	}
	// MessageAt returns the record as stored.
	b, err := s.MessageAt(res[7].PhysicalOffset)
	if err != nil || len(b) != int(res[7].WroteBytes) {
		t.Fatal(err)
	}
	r, _, _ := message.DecodeRecord(b)
	if r.QueueOffset != res[7].QueueOffset || r.StoreTimestamp != res[7].StoreTimestamp {
		t.Fatalf("MessageAt: %+v", r)
	}
	if _, err := s.MessageAt(end); !errors.Is(err, ErrNotFound) {
		t.Fatalf("MessageAt blank: %v", err)
	}
	if _, err := s.MessageAt(s.MaxPhyOffset() + 100); !errors.Is(err, ErrNotFound) {
		t.Fatalf("MessageAt beyond: %v", err)
	}
}

func TestGetStatuses(t *testing.T) {
	t.Parallel()
	s := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, s)
	putN(t, s, "T", 1, 0, 10)
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.MaxOffset("T", 0) == 10 })
	tests := []struct {
		name    string
		topic   string
		offset  int64
		max     int
		bytes   int
		match   func(int64, []byte) bool
		status  GetStatus
		next    int64
		count   int
		minimum int64
	}{
		{"unknown queue", "X", 5, 32, 1 << 20, nil, NoMatchedLogicQueue, 0, 0, 0},
		{"caught up", "T", 10, 32, 1 << 20, nil, OffsetOverflowOne, 10, 0, 0},
		{"overflow badly", "T", 11, 32, 1 << 20, nil, OffsetOverflowBadly, 0, 0, 0},
		{"all", "T", 0, 32, 1 << 20, nil, Found, 10, 10, 0},
		{"max msgs", "T", 2, 3, 1 << 20, nil, Found, 5, 3, 0},
		{"max bytes keeps first", "T", 0, 32, 1, nil, Found, 1, 1, 0},
		{"filter", "T", 0, 32, 1 << 20, onlyA, Found, 10, 5, 0},
		{"all filtered", "T", 0, 32, 1 << 20, never, NoMatchedMessage, 10, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := s.GetMessages(nil, tt.topic, 0, tt.offset, tt.max, tt.bytes, tt.match)
			if res.Status != tt.status || res.NextBeginOffset != tt.next || res.Count != tt.count {
				t.Fatalf("got %v next %d count %d, want %v %d %d", res.Status, res.NextBeginOffset, res.Count, tt.status, tt.next, tt.count)
			}
			n := 0
			for b := res.Body; len(b) > 0; n++ {
				r, rest, err := message.DecodeRecord(b)
				if err != nil {
					t.Fatal(err)
				}
				if tt.match != nil && message.Property(r.Properties, "TAGS") != "TagA" {
					t.Fatal("filter let through")
				}
				b = rest
			}
			if n != tt.count {
				t.Fatalf("%d records in body, count %d", n, tt.count)
			}
		})
	}
}

func TestRestart(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	s := openStarted(t, cfg)
	putN(t, s, "TopicTest", 3, 0, 700)
	putN(t, s, "Other", 1, 0, 5)
	shutdown(t, s)
	shutdown(t, s) // idempotent
	if _, err := os.Stat(filepath.Join(cfg.StorePathRootDir, "abort")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("abort left after clean shutdown: %v", err)
	}
	if _, err := s.Put(testMsg("T", 0, 0)); !errors.Is(err, ErrClosed) {
		t.Fatalf("put after shutdown: %v", err)
	}

	s = openStarted(t, cfg)
	checkQueues(t, s, "TopicTest", 3, 700)
	checkQueues(t, s, "Other", 1, 5)
	// Offsets continue.
	r, err := s.Put(testMsg("TopicTest", 0, 700+2))
	if err != nil || r.QueueOffset != 234 {
		t.Fatalf("put after restart: %+v %v", r, err)
	}
	if got := s.Topics(); len(got) != 2 || len(got["TopicTest"]) != 3 {
		t.Fatalf("topics %v", got)
	}
	shutdown(t, s)
}

func TestCrashRecovery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		tear func(t *testing.T, path string, pos int64, rec []byte)
	}{
		{"zeroed tail", func(t *testing.T, path string, pos int64, rec []byte) {}},
		{"torn record", func(t *testing.T, path string, pos int64, rec []byte) {
			writeAt(t, path, pos, rec[:len(rec)/2])
		}},
		{"bad crc", func(t *testing.T, path string, pos int64, rec []byte) {
			bad := append([]byte(nil), rec...)
			bad[message.PosBornHost+8+8+8+4+8+4+2] ^= 0xFF // inside the body
			writeAt(t, path, pos, bad)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t.TempDir())
			s := openStarted(t, cfg)
			res := putN(t, s, "TopicTest", 2, 0, 600)
			testutil.WaitFor(t, 5*time.Second, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
			end := s.MaxPhyOffset()
			rec, err := s.MessageAt(res[len(res)-1].PhysicalOffset)
			if err != nil {
				t.Fatal(err)
			}
			s.crashClose()
			if _, err := os.Stat(filepath.Join(cfg.StorePathRootDir, "abort")); err != nil {
				t.Fatalf("abort file: %v", err)
			}
			file := end / cfg.MappedFileSizeCommitLog * cfg.MappedFileSizeCommitLog
			path := filepath.Join(cfg.StorePathRootDir, "commitlog", fileName(file))
			tt.tear(t, path, end-file, rec)
			// Stale garbage further on must not be resurrected.
			writeAt(t, path, end-file+int64(len(rec))+64, rec)

			s = openStarted(t, cfg)
			if s.MaxPhyOffset() != end {
				t.Fatalf("recovered to %d, want %d", s.MaxPhyOffset(), end)
			}
			checkQueues(t, s, "TopicTest", 2, 600)
			more := putN(t, s, "TopicTest", 2, 600, 10)
			if more[0].QueueOffset != 300 || more[0].PhysicalOffset != end {
				t.Fatalf("put after recovery: %+v", more[0])
			}
			shutdown(t, s)
			s = openStarted(t, cfg)
			checkQueues(t, s, "TopicTest", 2, 610)
			shutdown(t, s)
		})
	}
}

func TestCrashRebuildsConsumeQueues(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	s := openStarted(t, cfg)
	putN(t, s, "TopicTest", 2, 0, 400)
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
	s.crashClose()
	// Lose one queue entirely and the tail of the other.
	if err := os.RemoveAll(filepath.Join(cfg.StorePathRootDir, "consumequeue", "TopicTest", "1")); err != nil {
		t.Fatal(err)
	}
	q0 := filepath.Join(cfg.StorePathRootDir, "consumequeue", "TopicTest", "0")
	writeAt(t, filepath.Join(q0, fileName(100*cqEntrySize)), 50*cqEntrySize, make([]byte, 50*cqEntrySize))
	s = openStarted(t, cfg)
	checkQueues(t, s, "TopicTest", 2, 400)
	shutdown(t, s)
}

func writeAt(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestPutBatch(t *testing.T) {
	t.Parallel()
	s := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, s)
	putN(t, s, "B", 1, 0, 3)
	var ms []PutMessage
	for i := 3; i < 8; i++ {
		ms = append(ms, *testMsg("B", 0, i))
	}
	res, err := s.PutBatch(ms, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.QueueOffset != int64(3+i) {
			t.Fatalf("batch %d queue offset %d", i, r.QueueOffset)
		}
		if i > 0 && r.PhysicalOffset != res[i-1].PhysicalOffset+int64(res[i-1].WroteBytes) {
			t.Fatal("batch not contiguous")
		}
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.MaxOffset("B", 0) == 8 })
	checkQueues(t, s, "B", 1, 8)
	ms[1].QueueID = 1
	if _, err := s.PutBatch(ms, nil); !errors.Is(err, ErrBadBatch) {
		t.Fatalf("mixed batch: %v", err)
	}
}

func TestTransactionRecords(t *testing.T) {
	t.Parallel()
	s := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, s)
	m := testMsg("Tx", 0, 0)
	m.SysFlag = message.TransactionPrep
	r, err := s.Put(m)
	if err != nil || r.QueueOffset != 0 {
		t.Fatal(err)
	}
	m.SysFlag = message.TransactionCommit
	m.PreparedTransactionOffset = r.PhysicalOffset
	if _, err := s.Put(m); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
	if s.MaxOffset("Tx", 0) != 1 {
		t.Fatalf("max offset %d", s.MaxOffset("Tx", 0))
	}
}

func TestWaitFlushAndOnDispatch(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	cfg.FlushDiskType = SyncFlush
	cfg.FlushIntervalCommitLog = 60000
	s, err := Open(cfg, testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	dispatched := make(chan int64, 100)
	s.OnDispatch(func(topic string, qid int32, max int64) { dispatched <- max })
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	r, err := s.Put(testMsg("W", 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	s.WaitFlush(r.PhysicalOffset+int64(r.WroteBytes), func(err error) { done <- err })
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WaitFlush never answered")
	}
	select {
	case m := <-dispatched:
		if m != 1 {
			t.Fatalf("OnDispatch max %d", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("OnDispatch not called")
	}
	// A waiter beyond the commit log end (its record cut by a truncation
	// before it waited) is refused at once.
	s.WaitFlush(s.MaxPhyOffset()+1000, func(err error) { done <- err })
	if err := <-done; !errors.Is(err, ErrTruncated) {
		t.Fatalf("err = %v", err)
	}
	shutdown(t, s)
}

func TestOffsetByTimeDeleteTopic(t *testing.T) {
	t.Parallel()
	s := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, s)
	res := putN(t, s, "T", 1, 0, 50)
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.MaxOffset("T", 0) == 50 })
	for _, i := range []int{0, 17, 49} {
		ts := res[i].StoreTimestamp
		got := s.OffsetByTime("T", 0, ts)
		if res[got].StoreTimestamp != ts || (got > 0 && res[got-1].StoreTimestamp >= ts) {
			t.Fatalf("OffsetByTime(%d) = %d", ts, got)
		}
	}
	if got := s.OffsetByTime("T", 0, 0); got != 0 {
		t.Fatalf("OffsetByTime(0) = %d", got)
	}
	if got := s.OffsetByTime("T", 0, res[49].StoreTimestamp+1); got != 50 {
		t.Fatalf("OffsetByTime(future) = %d", got)
	}
	if ts, err := s.EarliestMessageTime("T", 0); err != nil || ts != res[0].StoreTimestamp {
		t.Fatalf("EarliestMessageTime = %d %v", ts, err)
	}
	if err := s.DeleteTopic("T"); err != nil {
		t.Fatal(err)
	}
	if s.MaxOffset("T", 0) != 0 || len(s.Topics()) != 0 {
		t.Fatal("topic still there")
	}
	if _, err := os.Stat(filepath.Join(s.cfg.StorePathRootDir, "consumequeue", "T")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("consume queue dir: %v", err)
	}
	if _, err := s.EarliestMessageTime("T", 0); !errors.Is(err, ErrNoQueue) {
		t.Fatal(err)
	}
}

func TestScheduleTopicTagsCode(t *testing.T) {
	t.Parallel()
	s := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, s)
	m := testMsg(ScheduleTopic, 1, 0)
	m.Properties = "DELAY\x012\x02REAL_TOPIC\x01T\x02"
	r, err := s.Put(m)
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.MaxOffset(ScheduleTopic, 1) == 1 })
	e, ok := s.findCQ(ScheduleTopic, 1).entry(0)
	if !ok || e.tagsCode != r.StoreTimestamp+5000 || e.phy != r.PhysicalOffset || e.size != r.WroteBytes {
		t.Fatalf("entry %+v", e)
	}
}

func TestOpenLockedAndLimits(t *testing.T) {
	t.Parallel()
	s := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, s)
	m := testMsg("T", 0, 0)
	m.Body = make([]byte, 70*1024)
	if _, err := s.Put(m); !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("big: %v", err)
	}
	m = testMsg(strings.Repeat("t", MaxTopicLen+1), 0, 0)
	if _, err := s.Put(m); !errors.Is(err, ErrTopicTooLong) {
		t.Fatalf("topic: %v", err)
	}
	var ft FlushDiskType
	if err := ft.UnmarshalText([]byte("SYNC_FLUSH")); err != nil || ft != SyncFlush || ft.String() != "SYNC_FLUSH" {
		t.Fatal("flush type")
	}
	if err := ft.UnmarshalText([]byte("NOPE")); err == nil {
		t.Fatal("bad flush type accepted")
	}
}

func TestBadFileSizeRefused(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	s := openStarted(t, cfg)
	putN(t, s, "T", 1, 0, 3)
	shutdown(t, s)
	cfg.MappedFileSizeCommitLog *= 2
	if _, err := Open(cfg, testutil.Logger()); !errors.Is(err, ErrBadFileSize) {
		t.Fatalf("err = %v", err)
	}
}

func TestCrashAfterCheckpoint(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	s := openStarted(t, cfg)
	putN(t, s, "TopicTest", 2, 0, 800)
	shutdown(t, s) // checkpoint written with the store times so far
	s = openStarted(t, cfg)
	if s.ckpt.physic.Load() == 0 || s.ckpt.logics.Load() == 0 {
		t.Fatal("checkpoint not written")
	}
	res := putN(t, s, "TopicTest", 2, 800, 800)
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
	s.crashClose()
	// Pretend the flush services checkpointed up to a record in file 2
	// (store times in a test run are too close together for the -3 s rule).
	var ts int64
	for _, r := range res {
		if r.PhysicalOffset >= 2*cfg.MappedFileSizeCommitLog {
			ts = r.StoreTimestamp + 3000
			break
		}
	}
	ck, err := loadCheckpoint(filepath.Join(cfg.StorePathRootDir, "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	ck.physic.Store(ts)
	ck.logics.Store(ts)
	if err := ck.flush(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(cfg, testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	if start := s.abnormalStartFile(); start < 1 {
		t.Fatalf("abnormal recovery started at file %d, want a later one", start)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	checkQueues(t, s, "TopicTest", 2, 1600)
	shutdown(t, s)
}

func TestConcurrentPutGetDelete(t *testing.T) {
	t.Parallel()
	s := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, s)
	done := make(chan struct{})
	errs := make(chan error, 3)
	for w := 0; w < 2; w++ {
		go func(w int) {
			for i := 0; i < 500; i++ {
				topic := "C"
				if i%3 == 0 {
					topic = "Doomed"
				}
				if _, err := s.Put(testMsg(topic, int32(w), i)); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}(w)
	}
	go func() {
		defer close(done)
		for i := 0; i < 200; i++ {
			s.GetMessages(nil, "C", int32(i%2), s.MinOffset("C", int32(i%2)), 16, 1<<20, nil)
			if i%50 == 0 {
				if err := s.DeleteTopic("Doomed"); err != nil {
					errs <- err
					return
				}
			}
		}
	}()
	for i := 0; i < 2; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	<-done
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
	for q := int32(0); q < 2; q++ {
		recs := readAll(t, s, "C", q)
		for k, r := range recs {
			if r.QueueOffset != int64(k) {
				t.Fatalf("queue %d record %d has offset %d", q, k, r.QueueOffset)
			}
		}
	}
}

// TestAsyncFlushPowerLoss simulates losing the page cache with ASYNC_FLUSH:
// everything after the last flushed offset reads as zeros (commit log and
// consume queue tails). Recovery keeps every flushed message, drops the
// rest cleanly and appends continue at the recovered end.
func TestAsyncFlushPowerLoss(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	cfg.FlushIntervalCommitLog = 600000 // only explicit flushes
	s := openStarted(t, cfg)
	putN(t, s, "P", 2, 0, 300)
	if err := s.flushCommitLog(0); err != nil {
		t.Fatal(err)
	}
	flushed := s.cl.flushedWhere.Load()
	putN(t, s, "P", 2, 300, 200) // never flushed
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
	end := s.MaxPhyOffset()
	s.crashClose()
	// The page cache is gone: zero [flushed, end) in the commit log.
	for off := flushed; off < end; {
		file := off / cfg.MappedFileSizeCommitLog * cfg.MappedFileSizeCommitLog
		n := min(end, file+cfg.MappedFileSizeCommitLog) - off
		writeAt(t, filepath.Join(cfg.StorePathRootDir, "commitlog", fileName(file)), off-file, make([]byte, n))
		off += n
	}
	s = openStarted(t, cfg)
	defer shutdown(t, s)
	if s.MaxPhyOffset() != flushed {
		t.Fatalf("recovered to %d, flushed was %d", s.MaxPhyOffset(), flushed)
	}
	checkQueues(t, s, "P", 2, 300)
	more := putN(t, s, "P", 2, 300, 2)
	if more[0].QueueOffset != 150 || more[0].PhysicalOffset != flushed {
		t.Fatalf("put after recovery: %+v", more[0])
	}
}

// TestDamageBeforeTailRefused: a bad record in an older file, with valid
// records after it, stops Open instead of truncating good data.
func TestDamageBeforeTailRefused(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	s := openStarted(t, cfg)
	res := putN(t, s, "D", 1, 0, 1500) // several 64 KiB files
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
	if s.MaxPhyOffset() < 2*cfg.MappedFileSizeCommitLog {
		t.Fatal("need several files")
	}
	s.crashClose() // abnormal: recovery scans from the first file
	writeAt(t, filepath.Join(cfg.StorePathRootDir, "commitlog", fileName(0)), res[10].PhysicalOffset+4, []byte{0, 0, 0, 0})
	_, err := Open(cfg, testutil.Logger())
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open with damage in file 0: %v", err)
	}
}
