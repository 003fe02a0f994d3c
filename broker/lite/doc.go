// Package lite is the broker's side of lite topics (Apache 5.5, RIP-83):
// which clients want which lite topics, the per-client events that tell a
// client's POP_LITE_MESSAGE which lite topics to read, the expiry of lite
// topics nobody writes, and the admin codes' answers about them.
//
// A lite topic is a light message queue (LMQ) %LMQ%$<parent>$<lite> of one
// queue that the store fills by multi-dispatch; this package never reads
// or writes messages.
//
// Owns: the subscription registry (LITE_SUBSCRIPTION_CTL: PARTIAL_ADD,
// PARTIAL_REMOVE, COMPLETE_ADD, COMPLETE_REMOVE; Exclusive eviction and its
// NOTIFY_UNSUBSCRIBE_LITE; offset options; quota; expiry), the event sets
// and their dispatch (LMQ arrival, ack, block expiry, registration, the
// scan of inactive clients, full dispatch), the sharding decision, the TTL
// of lite topics, and the lite admin bodies.
//
// Never: reads messages, moves a group's offset except for a reset or a
// deletion, imports broker/pop (the pop side is handed in as Deps.Orders
// and Deps.Wake), blocks an event loop, or calls out (store deletion,
// notifications, wakes) while holding its mutex.
//
// Invariants (lite-design.md 8.3):
//   - active == Σ |client sets|; byLMQ[lmq] holds c iff c's set holds lmq, and
//     only registered clients (dropLocked empties a client's set first).
//   - an LMQ name sits at most once in a client's event set, and the set
//     never exceeds its capacity; a set exists only for a registered client.
//   - every map keyed by what a client sends is bounded: clients and pairs by
//     maxLiteSubscriptionCount, events by the set capacity, block timers by
//     the pairs in flight, the blacklist by the clients.
//
// Goroutines: one maintenance loop (Run), owned by the broker: block
// expiries and full dispatches (100 ms tick), the scan of inactive clients
// (liteEventCheckInterval), subscription expiry (liteSubscriptionCheckInterval)
// and the TTL (liteTtlCheckInterval, after minLiteTTl of uptime).
// Lock order: Service.mu, then the tables' and store's own locks.
package lite
