// Package namesrv is Apache RocketMQ's name server state: the route table
// (topic → per-broker queue data, brokerName → addresses, cluster → brokers),
// broker liveness, and the namespaced KV config, plus the Server that serves
// them over Remoting.
//
// Owns: Routes (RouteInfoManager), KV (KVConfigManager and kvConfig.json),
// the JSON shapes clients read (TopicRouteData, ClusterInfo, TopicList,
// KVTable, DataVersion), RegisterBrokerBody decoding, Server (remoting server,
// housekeeping goroutine, registration worker), and the request handlers
// (Handlers: decode the header, call Routes or KV, encode the answer), and
// the opt-in authentication of the writes (auth.go: the name server's
// users; the signature check is package auth/signature's).
// Never: stores messages; parses frames (remoting does); serves a write
// unsigned with authenticationEnabled; imports processor, broker or store, so mqnamesrv links none of them
// (cmd/mqnamesrv/deps_test.go).
//
// Invariants:
//   - Every brokerName in the cluster table has a BrokerData with at least one
//     address; a topic has at least one QueueData.
//   - A broker address belongs to at most one brokerId of its BrokerData.
//   - Routes reads no clock: callers pass now, so expiry is testable.
//   - Route JSON is compact, with quoted integer keys and brokerAddrs always
//     an object (the Go client splits it by hand).
//
// Goroutines: one housekeeping goroutine (expiry scan, KV persistence) and
// one worker (registrations, Offload), started by Server.Start and awaited by
// Server.Shutdown.
// Lock order: Routes.mu and KV.mu are never held together.
package namesrv
