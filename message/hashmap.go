package message

import "sort"

// HashMapOrder sorts items, given in insertion order, into the iteration
// order of a java.util.HashMap created with initialCap and filled with them:
// the table grows by doubling past three quarters full, and iteration walks
// its buckets ((h ^ h>>>16) & (n-1), h the key's hashCode), each bucket in
// insertion order (a resize keeps that order). Apache's brokers write such
// maps through fastjson, and tools print them in that order.
func HashMapOrder[T any](items []T, initialCap int, hash func(T) int32) {
	n := 1
	for n < initialCap {
		n <<= 1
	}
	for len(items) > n*3/4 {
		n <<= 1
	}
	bucket := func(t T) int {
		h := uint32(hash(t))
		return int((h ^ h>>16) & uint32(n-1))
	}
	sort.SliceStable(items, func(i, j int) bool { return bucket(items[i]) < bucket(items[j]) })
}

// ConcurrentHashMapOrder sorts items, given in insertion order, into the
// iteration order of a java.util.concurrent.ConcurrentHashMap (JDK 9 to 17)
// whose table starts at tableSize (16 for a java.util.Properties, which
// keeps its entries in one made with capacity 8) and is filled with them:
// a bin appends, the table doubles once the count reaches three quarters
// of it, and a resize keeps each bin's last run (its tail of nodes bound
// for the same half) in order but moves the nodes before it, one by one,
// to the front of their new bins, reversing them. Keys are distinct.
func ConcurrentHashMapOrder[T any](items []T, tableSize int, hash func(T) int32) {
	n := 1
	for n < tableSize {
		n <<= 1
	}
	spread := func(t T) uint32 {
		h := uint32(hash(t))
		return (h ^ h>>16) & 0x7fffffff
	}
	bins := make([][]T, n)
	for count, it := range items {
		i := spread(it) & uint32(n-1)
		bins[i] = append(bins[i], it)
		if count+1 < n-n>>2 {
			continue
		}
		next := make([][]T, 2*n)
		for i := n - 1; i >= 0; i-- { // ConcurrentHashMap.transfer
			bin := bins[i]
			if len(bin) == 0 {
				continue
			}
			runBit, lastRun := spread(bin[0])&uint32(n), 0
			for j := 1; j < len(bin); j++ {
				if b := spread(bin[j]) & uint32(n); b != runBit {
					runBit, lastRun = b, j
				}
			}
			var lo, hi []T
			if runBit == 0 {
				lo = append(lo, bin[lastRun:]...)
			} else {
				hi = append(hi, bin[lastRun:]...)
			}
			for _, p := range bin[:lastRun] {
				if spread(p)&uint32(n) == 0 {
					lo = append([]T{p}, lo...)
				} else {
					hi = append([]T{p}, hi...)
				}
			}
			next[i], next[i+n] = lo, hi
		}
		bins, n = next, 2*n
	}
	items = items[:0]
	for _, b := range bins {
		items = append(items, b...)
	}
}
