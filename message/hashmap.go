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
