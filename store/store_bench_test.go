package store

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

func benchConfig(b *testing.B) Config {
	cfg := testConfig(b.TempDir())
	cfg.MappedFileSizeCommitLog = 64 << 20
	cfg.MappedFileSizeConsumeQueue = 300000 * cqEntrySize
	cfg.FlushIntervalCommitLog = 500
	cfg.FlushIntervalConsumeQueue = 1000
	return cfg
}

func BenchmarkPut1KiB(b *testing.B) {
	s := openStarted(b, benchConfig(b))
	defer shutdown(b, s)
	m := testMsg("BenchTopic", 0, 0)
	m.Body = make([]byte, 1024)
	b.SetBytes(int64(len(m.Body)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.QueueID = int32(i & 7)
		if _, err := s.Put(m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutLMQ1KiB: a lite message, indexed in its topic and one LMQ
// of 64 (multi-dispatch on).
func BenchmarkPutLMQ1KiB(b *testing.B) {
	cfg := benchConfig(b)
	cfg.EnableLmq, cfg.EnableMultiDispatch = true, true
	s := openStarted(b, cfg)
	defer shutdown(b, s)
	m := testMsg("BenchTopic", 0, 0)
	m.Body = make([]byte, 1024)
	props := make([]string, 64)
	for i := range props {
		props[i] = m.Properties + "INNER_MULTI_DISPATCH\x01%LMQ%$BenchTopic$lite-" + strconv.Itoa(i) + "\x02"
	}
	b.SetBytes(int64(len(m.Body)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.QueueID = int32(i & 7)
		m.Properties = props[i&63]
		if _, err := s.Put(m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPut1KiBParallel: many writers contending for the append lock.
func BenchmarkPut1KiBParallel(b *testing.B) {
	s := openStarted(b, benchConfig(b))
	defer shutdown(b, s)
	b.SetBytes(1024)
	b.ReportAllocs()
	b.SetParallelism(8) // 8 × GOMAXPROCS writers
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		m := *testMsg("BenchTopic", 0, 0)
		m.Body = make([]byte, 1024)
		i := 0
		for pb.Next() {
			m.QueueID = int32(i & 7)
			i++
			if _, err := s.Put(&m); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkPutBatch: batches of 16 × 1 KiB to one queue (a batch send).
func BenchmarkPutBatch(b *testing.B) {
	s := openStarted(b, benchConfig(b))
	defer shutdown(b, s)
	ms := make([]PutMessage, 16)
	for i := range ms {
		ms[i] = *testMsg("BenchTopic", 0, i)
		ms[i].Body = make([]byte, 1024)
	}
	res := make([]PutResult, 0, len(ms))
	b.SetBytes(int64(len(ms)) * 1024)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := int32(i & 7)
		for j := range ms {
			ms[j].QueueID = q
		}
		var err error
		if res, err = s.PutBatch(ms, res[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutSyncFlush: SYNC_FLUSH sends, each Put waiting for the group
// commit (many writers share one fsync). Allocations per op are the
// waiter's own: each writer reuses its callback.
func BenchmarkPutSyncFlush(b *testing.B) {
	cfg := benchConfig(b)
	cfg.FlushDiskType = SyncFlush
	s := openStarted(b, cfg)
	defer shutdown(b, s)
	b.SetBytes(1024)
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		m := *testMsg("BenchTopic", 0, 0)
		m.Body = make([]byte, 1024)
		done := make(chan error, 1)
		answer := func(err error) { done <- err }
		for i := 0; pb.Next(); i++ {
			m.QueueID = int32(i & 7)
			r, err := s.Put(&m)
			if err != nil {
				b.Error(err)
				return
			}
			s.WaitFlush(r.PhysicalOffset+int64(r.WroteBytes), answer)
			if err := <-done; err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkDispatch: consume queue and index entries (KEYS + UNIQ_KEY)
// built for records already in the commit log.
func BenchmarkDispatch(b *testing.B) {
	s, err := Open(benchConfig(b), testutil.Logger()) // not started: no dispatcher running
	if err != nil {
		b.Fatal(err)
	}
	defer shutdown(b, s)
	m := testMsg("BenchTopic", 0, 0)
	m.Body = make([]byte, 1024)
	for i := 0; i < b.N; i++ {
		m.QueueID = int32(i & 7)
		m.Properties = "TAGS\x01TagA\x02KEYS\x01order-" + strconv.Itoa(i) + "\x02UNIQ_KEY\x01" + strconv.Itoa(1e9+i) + "\x02"
		if _, err := s.Put(m); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(1024)
	b.ReportAllocs()
	b.ResetTimer()
	s.dispatchAvailable()
	b.StopTimer()
	if s.DispatchedPhyOffset() != s.MaxPhyOffset() {
		b.Fatal("dispatch incomplete")
	}
}

// BenchmarkDispatchNewQueues: every record is the first of its queue (one
// topic per record, as queue spraying or 100,000 one-queue topics make
// them): the consume queue is created and its entry kept until the
// creator (not running here) makes its file, so that the dispatcher
// never makes the file nor reads ahead its whole 6 MB. Stores of 10,000 records each, set up and closed untimed.
func BenchmarkDispatchNewQueues(b *testing.B) {
	const batch = 10000
	m := testMsg("", 0, 0)
	m.Body = make([]byte, 128)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(batch, b.N-done)
		b.StopTimer()
		cfg := benchConfig(b)
		s, err := Open(cfg, testutil.Logger()) // not started: no dispatcher running
		if err != nil {
			b.Fatal(err)
		}
		for i := range n {
			m.Topic = "New" + strconv.Itoa(i)
			if _, err := s.Put(m); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if err := s.dispatchAvailable(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if s.DispatchedPhyOffset() != s.MaxPhyOffset() {
			b.Fatal("dispatch incomplete")
		}
		s.crashClose() // no files for the pending entries: nothing to wait for
		if err := os.RemoveAll(cfg.StorePathRootDir); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		done += n
	}
}

func BenchmarkQueryMessage(b *testing.B) {
	s := openStarted(b, benchConfig(b))
	defer shutdown(b, s)
	m := testMsg("BenchTopic", 0, 0)
	m.Body = make([]byte, 1024)
	const n = 10000
	for i := 0; i < n; i++ {
		m.Properties = "KEYS\x01order-" + strconv.Itoa(i) + "\x02"
		if _, err := s.Put(m); err != nil {
			b.Fatal(err)
		}
	}
	testutil.WaitFor(b, 10*time.Second, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
	buf := make([]byte, 0, 4<<10)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "order-" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res := s.QueryMessage(buf[:0], "BenchTopic", keys[i%n], 32, 0, 1<<62)
		if res.Count != 1 {
			b.Fatalf("count %d", res.Count)
		}
	}
}

// BenchmarkGetMessages pulls 32 × 1 KiB into a caller buffer (dst reused).
func BenchmarkGetMessages(b *testing.B) {
	buf := make([]byte, 0, 64<<10)
	benchGetMessages(b, func(s *Store, off int64) int {
		return s.GetMessages(buf[:0], "BenchTopic", 0, off, 32, 256<<10, nil).Count
	})
}

// BenchmarkGetMessagesNil is the pull without a caller buffer: the result is
// allocated per call.
func BenchmarkGetMessagesNil(b *testing.B) {
	benchGetMessages(b, func(s *Store, off int64) int {
		return s.GetMessages(nil, "BenchTopic", 0, off, 32, 256<<10, nil).Count
	})
}

// BenchmarkGetMessageViews is the broker's pull: the same 32 × 1 KiB as
// slices of the mapping (one, the records being adjacent), held and released.
func BenchmarkGetMessageViews(b *testing.B) {
	benchGetMessages(b, func(s *Store, off int64) int {
		res := s.GetMessageViews("BenchTopic", 0, off, 32, 256<<10, nil, AnyPages)
		res.Release()
		return res.Count
	})
}

// BenchmarkGetMessageViewsResident is the pull of an event loop
// (ResidentPages) of records older than the hot tail, in memory: the cost
// of the mincore check.
func BenchmarkGetMessageViewsResident(b *testing.B) {
	benchGetMessagesBehind(b, minHotTail+(1<<20), func(s *Store, off int64) int {
		res := s.GetMessageViews("BenchTopic", 0, off, 32, 256<<10, nil, ResidentPages)
		res.Release()
		return res.Count
	})
}

// BenchmarkGetMessageViewsHotTail is the same within the hot tail: no check.
func BenchmarkGetMessageViewsHotTail(b *testing.B) {
	benchGetMessagesBehind(b, 0, func(s *Store, off int64) int {
		res := s.GetMessageViews("BenchTopic", 0, off, 32, 256<<10, nil, ResidentPages)
		res.Release()
		return res.Count
	})
}

func benchGetMessages(b *testing.B, get func(s *Store, off int64) int) {
	benchGetMessagesBehind(b, 0, get)
}

// benchGetMessagesBehind stores 10,000 messages of 1 KiB, then behind
// bytes of others, and pulls 32 of the first at a time with get.
func benchGetMessagesBehind(b *testing.B, behind int64, get func(s *Store, off int64) int) {
	s := openStarted(b, benchConfig(b))
	defer shutdown(b, s)
	m := testMsg("BenchTopic", 0, 0)
	m.Body = make([]byte, 1024)
	const n = 10000
	for i := 0; i < n; i++ {
		if _, err := s.Put(m); err != nil {
			b.Fatal(err)
		}
	}
	filler := testMsg("Filler", 0, 0)
	filler.Body = make([]byte, 64<<10)
	for written := int64(0); written < behind; written += int64(len(filler.Body)) {
		if _, err := s.Put(filler); err != nil {
			b.Fatal(err)
		}
	}
	testutil.WaitFor(b, 10*time.Second, func() bool { return s.MaxOffset("BenchTopic", 0) == n })
	b.SetBytes(32 * int64(len(m.Body)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if c := get(s, int64(i*32)%(n-32)); c != 32 {
			b.Fatalf("count %d", c)
		}
	}
}

func TestPutAllocs(t *testing.T) {
	s := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, s)
	m := testMsg("T", 0, 0)
	if _, err := s.Put(m); err != nil { // creates the queue offset entry
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := s.Put(m); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Put allocates %v times", allocs)
	}
}

// BenchmarkLMQMemory makes 100,000 LMQs of one entry each (1,000 messages
// naming 100 each) and reports the store's heap bytes per LMQ once their
// files exist and nothing is mapped: what an idle lite topic costs
// (target: 512 B).
func BenchmarkLMQMemory(b *testing.B) {
	const lmqs, perMsg = 100000, 100
	for range b.N {
		cfg := benchConfig(b)
		cfg.EnableLmq, cfg.EnableMultiDispatch = true, true
		cfg.MappedFileSizeConsumeQueue = 100 * cqEntrySize
		cfg.MaxMappedConsumeQueueFiles = 16 // idle LMQs keep no mapping
		s := openStarted(b, cfg)
		before := heapInUse()
		m := testMsg("P", 0, 0)
		base := m.Properties
		var names []byte
		for i := 0; i < lmqs; i += perMsg {
			names = names[:0]
			for j := i; j < i+perMsg; j++ {
				if j > i {
					names = append(names, ',')
				}
				names = append(names, "%LMQ%$P$lite-"...)
				names = strconv.AppendInt(names, int64(j), 10)
			}
			m.Properties = base + "INNER_MULTI_DISPATCH\x01" + string(names) + "\x02"
			if _, err := s.Put(m); err != nil {
				b.Fatal(err)
			}
		}
		testutil.WaitFor(b, 10*time.Minute, func() bool {
			return s.DispatchedPhyOffset() == s.MaxPhyOffset() && s.pendBytes.Load() == 0 && s.cqMapped.Load() <= 16
		})
		if s.LmqNum() != lmqs {
			b.Fatalf("LmqNum %d", s.LmqNum())
		}
		after := heapInUse()
		b.ReportMetric(float64(after-before)/lmqs, "B/LMQ")
		shutdown(b, s)
	}
}

func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
