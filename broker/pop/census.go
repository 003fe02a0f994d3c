package pop

import "math/bits"

// EachInFlight calls fn once per live pop checkpoint with the messages it
// holds that are not acknowledged yet (Apache's PopInflightMessageCounter,
// counted from the checkpoints instead of on the pop and ack paths). The
// topic is the one popped: a pop retry topic for retried messages. It holds
// the checkpoint table's lock for one pass over at most popMaxCheckpoints
// entries, as each revive pass's scan does (BenchmarkEachInFlight: tens
// of ms at the bound, pops and acks waiting); the metrics endpoint calls it
// once per scrape, and only when a pop group is online.
func (p *Service) EachInFlight(fn func(group, topic string, queueID int32, n int64)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, ck := range p.cks {
		n := int64(len(ck.offsets) - bits.OnesCount64(ck.acked))
		if n > 0 {
			fn(k.group, k.topic, k.queueID, n)
		}
	}
}
