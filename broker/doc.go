// Package broker holds a RocketMQ broker's state above the message store:
// its config, topics, subscription groups, consumer offsets, the registry of
// connected producers and consumers, parked long-poll pulls, and registration
// with the name servers.
//
// Owns: Broker (lifecycle), Config, Topics, Groups, Offsets, Clients, Holds,
// the config/*.json files in Apache's shapes.
// Never: parses frames or request headers (processor does); touches the
// CommitLog except through store.Store; blocks an event loop (file writes and
// name-server calls run on the broker's own goroutines).
//
// Goroutines: persister (config files), registrar (name servers), client
// expiry, long-poll holds; all started by Start and awaited by Shutdown.
package broker
