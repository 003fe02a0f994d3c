// Package controller is Apache RocketMQ 5.x's controller: the replica
// metadata of every broker set (broker ids and addresses, master, master
// epoch, SyncStateSet and its epoch) replicated with hashicorp/raft, the
// election policy, broker heartbeats, and the answers to the controller
// request codes (904, 1001–1006, 1009–1013) that Apache brokers in
// controller mode and mqadmin send, behind ACL 2.0 authentication when
// authenticationEnabled (auth.go; the user codes 3001–3005 in users.go, the ACL codes 3006–3010 in
// acls.go).
//
// Owns: the replicated State and its raft log, snapshots and stable store
// (controllerStorePath); the in-memory heartbeat table (each controller keeps
// its own, as Apache's DefaultBrokerHeartbeatManager does: brokers send
// heartbeats to every controller); elections triggered by an inactive master;
// NOTIFY_BROKER_ROLE_CHANGED pushes after an election; the controllers'
// users (replicated like the metadata) and the check of every request
// against them.
//
// Never: serves a request its check refused (with authenticationEnabled,
// an unsigned one other than a known broker's heartbeat, or an admin code
// from a user who is not Super); lets UPDATE_CONTROLLER_CONFIG change a key
// read only at start (store, peers, raft, ports, limits, authentication);
// imports broker, store, ha, processor or package auth (signatures come
// from auth/signature); stores messages; decides anything on a follower
// (followers answer CONTROLLER_NOT_LEADER, as Apache's do); blocks an event
// loop (raft proposals run on the controller's workers and answer with
// Conn.Reply; the check is map reads and one HMAC).
//
// The controller-to-controller protocol is raft (hashicorp/raft's TCP
// transport), not DLedger: an Apache controller cannot join a rocketgo one.
// Brokers and mqadmin see only the Remoting protocol, byte for byte Apache's.
//
// Invariants:
//   - State changes only in the raft FSM's Apply (events), in log order; the
//     rules that produce events read the state under the proposal lock, so
//     one proposal's read and its events are not interleaved with another's
//     (Apache's single EventScheduler thread).
//   - The leader serves only after a raft barrier: everything committed
//     before it became leader is applied.
//   - Every wait on a raft future holds propose, and Shutdown takes propose
//     before it stops raft: hashicorp/raft never answers a future whose
//     entry is still queued for the FSM at shutdown.
//
// Goroutines: raft's own; workers serving requests; the leadership watcher;
// the heartbeat scan; the inactive-master scan; the notifier. All started by
// Start, stopped and awaited by Shutdown.
//
// Lock order: propose, then state (read) — never state then propose.
package controller
