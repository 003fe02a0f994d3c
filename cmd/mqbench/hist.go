package main

// hist is a small HDR-style histogram: values below 256 are counted exactly,
// larger values in 128 linear sub-buckets per power of two (relative error
// below 1/128). Values are nanoseconds; the range ends at 2^40 ns (~18 min).

import "math/bits"

const (
	histSub     = 128
	histMaxBits = 40
	histLen     = 2*histSub + (histMaxBits-8+1)*histSub
)

type hist struct {
	counts [histLen]uint64
	n      uint64
	max    int64
	sum    float64
}

func histIndex(v int64) int {
	if v < 0 {
		v = 0
	}
	if v < 2*histSub {
		return int(v)
	}
	shift := bits.Len64(uint64(v)) - 8
	if shift > histMaxBits-8+1 {
		return histLen - 1
	}
	return 2*histSub + (shift-1)*histSub + int(uint64(v)>>shift) - histSub
}

// histValue is the highest value counted in bucket i.
func histValue(i int) int64 {
	if i < 2*histSub {
		return int64(i)
	}
	i -= 2 * histSub
	shift := i/histSub + 1
	m := int64(i%histSub + histSub)
	return (m+1)<<shift - 1
}

func (h *hist) record(v int64) {
	h.counts[histIndex(v)]++
	h.n++
	h.sum += float64(v)
	if v > h.max {
		h.max = v
	}
}

func (h *hist) merge(o *hist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	h.max = max(h.max, o.max)
}

func (h *hist) reset() { *h = hist{} }

// quantile returns the value at quantile q (0..1); max for q >= 1.
func (h *hist) quantile(q float64) int64 {
	if h.n == 0 {
		return 0
	}
	if q >= 1 {
		return h.max
	}
	rank := uint64(q*float64(h.n) + 0.5)
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(histValue(i), h.max)
		}
	}
	return h.max
}

func (h *hist) mean() float64 {
	if h.n == 0 {
		return 0
	}
	return h.sum / float64(h.n)
}
