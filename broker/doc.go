// Package broker is a RocketMQ broker's lifecycle: from the config snapshot
// it opens the store and the tables (broker/tables), builds the services,
// each in a package of its own and constructed with only what it uses
// (broker/send, broker/clients, broker/pull, broker/pop, broker/admin,
// broker/tx, broker/timer, broker/role), serves the Remoting servers with
// the handlers cmd/mqbroker wires (processor), and starts and stops the
// background work in order.
//
// Owns: Broker, Config and its snapshot (runtimeconfig.go) and the views
// of it each service reads (services.go), the system topics made at start,
// what starts and stops with the role (roleswitch.go: broker/role decides
// when), the broker's runtime figures, the persistence of the
// config/*.json files.
// Services refuse with a *remoting.Refusal (Apache's code and remark).
// Never: parses frames or request headers (processor does); touches the
// CommitLog except through store.Store; blocks an event loop (file writes and
// name-server calls run on the broker's own goroutines).
//
// Invariants:
//   - A service is built once, in New, before Start; its configuration is
//     read per request from the snapshot in force (a runtime change stores a
//     whole new snapshot), never cached past one request.
//   - On a slave the special services do not run: no delay or timer
//     delivery, no transaction checks, no pop revive; the slave copies its
//     master's progress instead (broker/role), and starts them when it
//     becomes master (roleswitch.go, called by broker/role).
//   - Replication starts after the store and stops before it; the broker
//     unregisters from the name servers before it stops accepting.
//
// Goroutines: persister (config files), client expiry, the pull service's
// cold-pull workers, END_TRANSACTION workers, the role's (registrar, a
// slave's sync, controller mode's loops), and on a master the transaction
// check service, pop revive and the delay and timer deliveries (and a
// goroutine per running pop or peek); all started by Start, or by the role
// through the broker, and awaited by Shutdown.
package broker
