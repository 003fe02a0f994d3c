package store

import (
	"testing"
	"time"
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

func BenchmarkGetMessages(b *testing.B) {
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
	waitFor(b, 10*time.Second, func() bool { return s.MaxOffset("BenchTopic", 0) == n })
	buf := make([]byte, 0, 64<<10)
	b.SetBytes(32 * int64(len(m.Body)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res := s.GetMessages(buf[:0], "BenchTopic", 0, int64(i*32)%(n-32), 32, 256<<10, nil)
		if res.Count != 32 {
			b.Fatalf("count %d status %v", res.Count, res.Status)
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
