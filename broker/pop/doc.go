// Package pop is pop consumption (Apache 5.x's POP_MESSAGE, PEEK_MESSAGE,
// ACK_MESSAGE, BATCH_ACK_MESSAGE, CHANGE_MESSAGE_INVISIBLETIME and
// NOTIFICATION): pops read a queue and write a checkpoint to the revive
// log; acks mark it; the revive loop gives what was not acknowledged in
// time back to the group through its pop retry topic; orderly pops keep
// their own state (consumerOrderInfo.json) instead of checkpoints.
//
// Owns: the live checkpoints and their revive, the bounds on parked pops
// and notifications and POLLING_INFO's counts (they wait on the store's
// arrival waiter, store.Park), the orderly pops' table and file. Never: reads the
// broker's configuration beyond Config, decides the broker's role (it is
// handed SlaveRefusal), or runs on an event loop (pops run through
// Deps.Go).
//
// Invariants: a popped message is answered only after its checkpoint is in
// the revive log, and the group's offset moves past it only then; the
// revive offset is never past the oldest live checkpoint, so a restart
// rebuilds them all. Lock order: popMu (one pop at a time, held across its
// store reads and revive-log writes; never taken on an event loop), then
// the checkpoint table's or the order table's mutex (the latter held across
// an Offsets commit, and the lite order table's across the lite service's
// CancelDispatchAt, whose own lock calls nothing here).
package pop
