package stats

import (
	"sync"
	"sync/atomic"
)

// statMap is a sync.Map of at most MaxKeys keys, each value made on its
// key's first use: the tables of the counters off the send path (TxStats,
// TimerStats, the DLQ counts), whose keys come from clients.
type statMap[K comparable, V any] struct {
	m sync.Map // K -> *V
	n atomic.Int64
}

// get returns key's value, storing a new one under clone(key) (a copy that
// does not pin a request's buffer) on first use; nil past the bound.
func (s *statMap[K, V]) get(key K, clone func(K) K) *V {
	if v, ok := s.m.Load(key); ok {
		return v.(*V)
	}
	if s.n.Load() >= MaxKeys {
		return nil
	}
	v, loaded := s.m.LoadOrStore(clone(key), new(V))
	if !loaded {
		s.n.Add(1)
	}
	return v.(*V)
}

// each calls fn for every key until fn returns false.
func (s *statMap[K, V]) each(fn func(K, *V) bool) {
	s.m.Range(func(k, v any) bool { return fn(k.(K), v.(*V)) })
}

// Histogram is a fixed-bucket histogram of atomic counters over Bounds:
// an observation is a scan of six bounds and two atomic adds, no
// allocation.
type Histogram struct {
	counts [len(Bounds{}) + 1]atomic.Int64 // per bucket, not cumulative; the last is +Inf
	sum    atomic.Int64
}

// Bounds are a Histogram's upper bounds, inclusive, ascending.
type Bounds [6]int64

func (h *Histogram) observe(b *Bounds, v int64) {
	i := 0
	for i < len(b) && v > b[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sum.Add(v)
}

// Read returns the cumulative count at each bound, the count and the sum.
func (h *Histogram) Read() (cumulative [len(Bounds{})]uint64, count uint64, sum int64) {
	var n uint64
	for i := range cumulative {
		n += uint64(h.counts[i].Load())
		cumulative[i] = n
	}
	return cumulative, n + uint64(h.counts[len(cumulative)].Load()), h.sum.Load()
}
