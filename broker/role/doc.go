// Package role is the broker's role and its replication, as Apache 5.3.3's
// BrokerController wires BrokerOuterAPI, HAService, SlaveSynchronize and
// ReplicasManager:
//
//	registration.go  registering the topic table with every name server
//	                 (full, incremental, split or compressed) and
//	                 unregistering at shutdown
//	replication.go   the classic HA service, a slave's master learned from
//	                 the registration answers, its copy of the master's
//	                 metadata (topics, groups, offsets, delay and timer
//	                 progress), and what a master serves its slaves
//	timermetrics.go  the timer's per-topic counts served to slaves and
//	                 copied from a master
//	controllermode.go, autoswitch.go, roleswitch.go
//	                 controller mode: registering with the controllers,
//	                 heartbeats, elections, the role changes they answer,
//	                 the AutoSwitch HA service driven by them
//
// One Service, built from Deps: the store (the HA services copy its commit
// log), the tables it serves and replaces, small interfaces to the delay
// levels' and the timer's progress, a view of the configuration in force
// (Config, one per snapshot) and SetRole to store an edited snapshot, the
// broker's goroutine starter, and the broker's part of a role change.
//
// A role change (takeRole) is here, not in the broker: its order is the
// protocol — the HA service takes or stops writes before the configuration
// says master or slave, the configuration before the slave's sync loop,
// registration last — and the HA service, the master's address and the
// sync loop are this package's. What starts and stops with the role is the
// broker's (its special services: delay and timer delivery, transaction
// checks, pop revive), handed in as Deps.BeforeMaster and Deps.RunMaster,
// so the lifecycle stays in package broker and this package reaches no
// other service.
//
// Owns: the registrar and its name-server peers, the role's Remoting client
// (name servers, controllers, the master; SignOutgoing signs its requests),
// the HA service (classic or AutoSwitch), the slave's master addresses and
// metadata sync, the controller-mode state (epoch file, controller id,
// role in force, SyncStateSet).
// Never: parses request headers or answers clients (processor does); reads
// the broker's configuration except through Deps.Config, or changes it
// except through Deps.SetRole; starts or stops another service's work
// itself; applies a role the controller leader did not answer (a
// NOTIFY_BROKER_ROLE_CHANGED push is a hint, confirmed first); blocks an
// event loop (RegisterSoon, RoleChangeAllowed and the Rejects checks only
// signal or read).
//
// Invariants:
//   - No registration follows the unregistration: Unregister halts the
//     registrar and waits for the registrations in flight first.
//   - Role changes are serialised (one mutex) and a master epoch not above
//     the last one acted on is dropped (replicas.Roles).
//   - A slave takes what a master sends only after checking it: a bad
//     part changes nothing and fails alone.
//   - Outside controller mode the role is the configuration's and never
//     changes at runtime.
//
// Goroutines, all started through Deps.Go (the broker's Shutdown awaits
// them) and ended by Deps.Quit: the registrar and a goroutine per name
// server; a slave's metadata sync; in controller mode the controller loop,
// the heartbeats, and each role's services, ended at the next role change.
// The HA service's own are started by StartHA and stopped by ShutdownHA.
package role
