// Package broker holds a RocketMQ broker's state above the message store:
// its config, topics, subscription groups, consumer offsets, the registry of
// connected producers and consumers, parked long-poll pulls, orderly locks,
// delayed and timer messages, retry and dead-letter queues, compiled SQL92
// filters, and registration with the name servers.
//
// Owns: Broker (lifecycle), Config, Topics, Groups, Offsets, Clients, Holds,
// Locks, Filters, the send service (Broker.Send: msgCheck, the retry/DLQ
// rule, the schedule hook DELAY → SCHEDULE_TOPIC_XXXX and TIMER_* →
// rmq_sys_wheel_timer, single and batch alike), SendBack, transactions (half
// messages, EndTransaction, op records, the check service), pop consumption
// (pop.go: checkpoints in the revive log, revive, parked pops, the FIFO order
// table; requestmode.go: QUERY_ASSIGNMENT's modes), the config/*.json
// files in Apache's shapes (plus timerProgress.json, ours). Services refuse
// with a *Refusal (Apache's code and remark).
// Never: parses frames or request headers (processor does); touches the
// CommitLog except through store.Store; blocks an event loop (file writes and
// name-server calls run on the broker's own goroutines; Send only appends,
// and a SYNC_FLUSH send completes later through the caller's completion).
//
// Invariants:
//   - A staged (delay or timer) message keeps REAL_TOPIC / REAL_QID; delivery
//     stores a new record in that queue and only then advances the level
//     offset or drops the heap entry, so a crash repeats, never loses, a delivery.
//   - Entries of one delay-level queue are due in queue order: the delay loop
//     reads only each queue's head.
//   - Lock owner = (group, clientId, connection); a lock held by another live,
//     unexpired owner is never granted.
//   - A popped message is answered only after its checkpoint is in the revive
//     log, and the group's offset moves past it only then; the revive offset
//     is never past the oldest live checkpoint, so a restart rebuilds them all.
//
// Goroutines: persister (config files), registrar (name servers), client
// expiry, long-poll holds, delay-level delivery, timer delivery, cold-pull
// workers, END_TRANSACTION workers, the transaction check service, pop
// revive (and a goroutine per running pop or peek); all
// started by Start and awaited by Shutdown.
// Lock order: none nested — Locks, Filters, the delay offsets and the timer
// checkpoint each have their own mutex, never held across a store call —
// except pop's: popMu (one pop at a time, held across its store reads and
// revive-log writes; never taken on an event loop), then the checkpoint
// table's or the order table's mutex (the latter held across an Offsets commit).
package broker
