package proxy

import (
	"sync/atomic"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
)

// budget bounds the request bytes all calls together hold between their
// decode and the broker's answer: past it a call is refused at once
// (TOO_MANY_REQUESTS) instead of waiting, so thousands of streams each
// carrying a large message cannot add up to more than max.
type budget struct {
	max  int64
	used atomic.Int64
}

// take reserves n bytes, or reports false and reserves nothing. A request
// larger than the whole budget counts as max, so it is served when
// nothing else is in flight.
func (b *budget) take(n int64) (int64, bool) {
	n = min(n, b.max)
	if b.used.Add(n) > b.max {
		b.used.Add(-n)
		return 0, false
	}
	return n, true
}

// give returns what take reserved.
func (b *budget) give(n int64) { b.used.Add(-n) }

// requestBytes is what a request's messages hold: bodies and properties,
// the part a client can make large. Requests without messages weigh 0.
func requestBytes(req any) int64 {
	r, ok := req.(*v2.SendMessageRequest)
	if !ok {
		return 0
	}
	var n int64
	for _, m := range r.GetMessages() {
		n += int64(len(m.GetBody()))
		for k, v := range m.GetUserProperties() {
			n += int64(len(k) + len(v))
		}
	}
	return n
}
