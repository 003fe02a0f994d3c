// Package autoswitch is Apache RocketMQ 5.x's AutoSwitch HA protocol
// (spec/ha.md §3, 5.1.1+ layout), used by brokers in controller mode beside
// the classic protocol of package ha, which it does not replace: the two
// are not wire compatible.
//
// Owns: the wire format (frame.go): the slave's handshake and offset
// reports, the master's handshake (its epoch entries) and transfer headers
// (each tagged with the epoch of its bytes and the confirm offset); the
// slave's truncation decision after the handshake (truncate.go); the
// master's chunking, one epoch per TRANSFER frame (chunk.go); the slave's
// checks, epoch entries and confirm offset per received frame (receive.go);
// the master's SyncStateSet view and confirm offset (syncset.go); the
// Service (service.go): the HA listener, the master's connections
// (master.go: handshake, transfer, SyncStateSet proposals through
// Config.AlterSyncStateSet, the confirm offset and SYNC_MASTER's
// store.Replicated source) and the slave's client (slave.go: handshake,
// truncation of the store at the consistent point, append).
// Never: decides roles (replicas/ and the controller do; the broker calls
// BecomeMaster and BecomeSlave), parses Remoting frames, trusts a peer's
// sizes (every body is bounded before it is read).
//
// Memory per connection is bounded: a master's writer sends views of the
// mapped commit log, one frame at a time, and reads reports into 1 KiB; a
// slave reads frames into one 4 MiB buffer (Apache's) and refuses a larger
// frame at its header.
package autoswitch
