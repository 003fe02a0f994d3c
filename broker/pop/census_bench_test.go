package pop

import (
	"strconv"
	"testing"
)

// BenchmarkEachInFlight is one scrape's pass over the checkpoint table
// at its bound (popMaxCheckpoints), the time pops and acks wait for it.
func BenchmarkEachInFlight(b *testing.B) {
	p := &Service{cks: make(map[ckKey]*popCk, popMaxCheckpoints)}
	for i := 0; i < popMaxCheckpoints; i++ {
		k := ckKey{group: "G" + strconv.Itoa(i%100), topic: "T", queueID: int32(i % 8), startOffset: int64(i)}
		p.cks[k] = &popCk{key: k, offsets: []int64{int64(i), int64(i) + 1}, acked: 1}
	}
	n := int64(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.EachInFlight(func(_, _ string, _ int32, k int64) { n += k })
	}
	if n != int64(b.N)*popMaxCheckpoints {
		b.Fatal(n)
	}
}
