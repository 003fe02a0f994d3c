package stats

import (
	"strconv"
	"sync"
	"testing"
)

// TestStatsCounts: flows per key and in total, concurrent adds included;
// past MaxKeys a new key counts only in the totals.
func TestStatsCounts(t *testing.T) {
	var s Stats
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				s.In("T", MessageNormal, 1, 10)
				s.Out("G", "T", 2, 20)
			}
		}()
	}
	wg.Wait()
	s.In("T", MessageDelay, 1, 5)
	in := map[TopicType]int64{}
	s.RangeIn(func(k TopicType, f *InFlow) bool { in[k] = f.Msgs.Load(); return true })
	if in[TopicType{"T", MessageNormal}] != 4000 || in[TopicType{"T", MessageDelay}] != 1 || len(in) != 2 {
		t.Fatalf("in %v", in)
	}
	var out int64
	s.RangeOut(func(k GroupTopic, f *Flow) bool { out += f.Bytes.Load(); return true })
	if out != 80000 {
		t.Fatalf("out bytes %d", out)
	}

	s.inKeys.Store(MaxKeys)
	s.In("other", MessageNormal, 7, 70)
	n := 0
	s.RangeIn(func(TopicType, *InFlow) bool { n++; return true })
	inMsgs, inBytes, outMsgs, _ := s.Totals()
	if n != 2 || inMsgs != 4008 || inBytes != 40075 || outMsgs != 8000 {
		t.Fatalf("past the bound: keys %d, totals %d msgs %d bytes, out %d", n, inMsgs, inBytes, outMsgs)
	}
}

// BenchmarkStatsIn is the per-send cost: one map read, two atomic adds.
func BenchmarkStatsIn(b *testing.B) {
	var s Stats
	topics := make([]string, 64)
	for i := range topics {
		topics[i] = "topic-" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			s.In(topics[i&63], MessageNormal, 1, 1024)
			i++
		}
	})
}

// TestStatsSizes: one observation per send of its bytes per message, in
// Apache's buckets (an upper bound is inclusive), past the last in +Inf.
func TestStatsSizes(t *testing.T) {
	var s Stats
	s.In("S", MessageFIFO, 1, 1024)      // le 1 KiB
	s.In("S", MessageFIFO, 2, 3000)      // 1500 each: le 4 KiB
	s.In("S", MessageFIFO, 1, 5<<20)     // +Inf
	s.In("S", MessageFIFO, 4, 4*600<<10) // 600 KiB each: le 1 MiB
	var f *InFlow
	s.RangeIn(func(_ TopicType, x *InFlow) bool { f = x; return true })
	cum, n, sum := f.Sizes.Read()
	if cum != [len(SizeBuckets)]uint64{1, 2, 2, 3, 3, 3} || n != 4 || sum != 1024+1500+5<<20+600<<10 {
		t.Fatalf("cumulative %v, count %d, sum %d", cum, n, sum)
	}
	if MessageFIFO.String() != "fifo" {
		t.Fatal(MessageFIFO.String())
	}
}

// TestTxStatsFinish: commit latencies in seconds, in Apache's buckets.
func TestTxStatsFinish(t *testing.T) {
	var s TxStats
	s.Prepared("T")
	s.Prepared("T")
	s.Committed("T", 0, 4_999)     // 4 s
	s.Committed("T", 0, 7_200_000) // 2 h
	s.RolledBack("T")
	var f *TxFlow
	s.RangeTopics(func(_ string, x *TxFlow) bool { f = x; return true })
	cum, n, sum := f.Finish.Read()
	if cum != [len(FinishBuckets)]uint64{1, 1, 1, 1, 2, 2} || n != 2 || sum != 7204 || f.Half.Load() != -1 {
		t.Fatalf("cumulative %v count %d sum %d half %d", cum, n, sum, f.Half.Load())
	}
}
