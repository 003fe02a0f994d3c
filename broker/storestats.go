package broker

// Store put and get timings for GET_BROKER_RUNTIME_INFO, as Apache 5.3.3's
// StoreStatsService keeps them (the keys rocketmq-dashboard's broker status
// and mqadmin's brokerStatus show): the longest put and get, failed puts,
// the puts of the last full minute by duration (putMessageDistributeTime,
// Apache's 13 ranges) and the 99th and 99.9th percentile put latency of
// that minute, interpolated in Apache's 70 finer buckets. A put's time is
// the store append's (Apache's also holds a synchronous flush or
// replication wait; with the default ASYNC_FLUSH / ASYNC_MASTER they are
// the same). Counters are atomics on the send and pull paths; the minute
// rolls over from the runtime statistics' once-a-second sampling.

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// putRanges are StoreStatsService's PUT_MESSAGE_ENTIRE_TIME_MAX_DESC and
// the upper bound (exclusive, ms) of each but the last.
var (
	putRangeNames = [...]string{"[<=0ms]", "[0~10ms]", "[10~50ms]", "[50~100ms]", "[100~200ms]", "[200~500ms]",
		"[500ms~1s]", "[1~2s]", "[2~3s]", "[3~4s]", "[4~5s]", "[5~10s]", "[10s~]"}
	putRangeBounds = [...]int64{1, 10, 50, 100, 200, 500, 1000, 2000, 3000, 4000, 5000, 10000}
)

// putBucketBounds are the upper bounds (inclusive, ms) of Apache's latency
// buckets: steps of 1 ms to 20, 2 to 50, 5 to 100, 10 to 200, 50 to 500,
// 100 to 1000 and 1000 to 10000, then one for everything longer.
var putBucketBounds = func() []int64 {
	var out []int64
	at := int64(0)
	for _, r := range []struct{ step, n int64 }{{1, 20}, {2, 15}, {5, 10}, {10, 10}, {50, 6}, {100, 5}, {1000, 9}} {
		for i := int64(0); i < r.n; i++ {
			at += r.step
			out = append(out, at)
		}
	}
	return append(out, math.MaxInt64)
}()

// storeTimes is one minute's counts.
type storeMinute struct {
	ranges  [len(putRangeNames)]atomic.Int64
	buckets []atomic.Int64 // len(putBucketBounds)
}

func newStoreMinute() *storeMinute {
	return &storeMinute{buckets: make([]atomic.Int64, len(putBucketBounds))}
}

type storeStats struct {
	putMax, getMax atomic.Int64 // ms
	putFailed      atomic.Int64
	cur            atomic.Pointer[storeMinute]

	mu       sync.Mutex
	last     *storeMinute // the last full minute; nil before the first roll
	lastRoll time.Time
}

func newStoreStats(now time.Time) *storeStats {
	s := &storeStats{lastRoll: now}
	s.cur.Store(newStoreMinute())
	return s
}

// put records one store append (a batch is one) that took d; failed when
// the store refused it.
func (s *storeStats) put(d time.Duration, failed bool) {
	ms := d.Milliseconds()
	raiseMax(&s.putMax, ms)
	if failed {
		s.putFailed.Add(1)
	}
	m := s.cur.Load()
	m.ranges[sort.Search(len(putRangeBounds), func(i int) bool { return ms < putRangeBounds[i] })].Add(1)
	m.buckets[sort.Search(len(putBucketBounds), func(i int) bool { return ms <= putBucketBounds[i] })].Add(1)
}

// got records one store read for a pull that took d.
func (s *storeStats) got(d time.Duration) { raiseMax(&s.getMax, d.Milliseconds()) }

func raiseMax(a *atomic.Int64, v int64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}

// roll starts a new minute when the current one is over (Apache: more
// than 60 s after the last).
func (s *storeStats) roll(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.lastRoll) <= time.Minute {
		return
	}
	s.lastRoll = now
	s.last = s.cur.Swap(newStoreMinute())
}

// distribution is putMessageDistributeTime: "null" before the first minute
// is over, as Apache's.
func (s *storeStats) distribution() string {
	s.mu.Lock()
	last := s.last
	s.mu.Unlock()
	if last == nil {
		return "null"
	}
	var b strings.Builder
	for i, name := range putRangeNames {
		fmt.Fprintf(&b, "%s:%d ", name, last.ranges[i].Load())
	}
	return b.String()
}

// latency is findPutMessageEntireTimePX over the last full minute: the
// bucket the px-th put falls in, interpolated linearly inside it; 0 with
// no minute or no puts.
func (s *storeStats) latency(px float64) string {
	s.mu.Lock()
	last := s.last
	s.mu.Unlock()
	res := 0.0
	if last != nil {
		counts := make([]int64, len(last.buckets))
		total := int64(0)
		for i := range last.buckets {
			counts[i] = last.buckets[i].Load()
			total += counts[i]
		}
		idx := int64(float64(total) * px)
		pass := int64(0)
		for i, n := range counts {
			if idx > pass+n {
				pass += n
				continue
			}
			rel := float64(idx - pass)
			lo := int64(0)
			if i > 0 {
				lo = putBucketBounds[i-1]
			}
			if n > 0 {
				res = float64(lo) + float64(putBucketBounds[i]-lo)*rel/float64(n)
			} else {
				res = float64(lo)
			}
			break
		}
	}
	return fmt.Sprintf("%.2f", res)
}

// report adds StoreStatsService's keys to a runtime-info table; puts and
// bytes are the totals the send path counts (Stats).
func (s *storeStats) report(info map[string]string, puts, bytes int64) {
	times := max(puts, 1) // Apache divides by, and prints, at least 1
	info["putMessageEntireTimeMax"] = fmt.Sprint(s.putMax.Load())
	info["putMessageTimesTotal"] = fmt.Sprint(times)
	info["putMessageFailedTimes"] = fmt.Sprint(s.putFailed.Load())
	info["putMessageSizeTotal"] = fmt.Sprint(bytes)
	info["putMessageDistributeTime"] = s.distribution()
	info["putMessageAverageSize"] = JavaDouble(float64(bytes) / float64(times))
	info["dispatchMaxBuffer"] = "0" // Apache never sets it
	info["getMessageEntireTimeMax"] = fmt.Sprint(s.getMax.Load())
	info["putLatency99"] = s.latency(0.99)
	info["putLatency999"] = s.latency(0.999)
}
