// Package autoswitch is Apache RocketMQ 5.x's AutoSwitch HA protocol
// (spec/ha.md §3, 5.1.1+ layout), used by brokers in controller mode beside
// the classic protocol of package ha, which it does not replace: the two
// are not wire compatible.
//
// Owns so far: the wire format (frame.go): the slave's handshake and
// offset reports, the master's handshake (its epoch entries) and transfer
// headers (each tagged with the epoch of its bytes and the confirm offset);
// the slave's truncation decision after the handshake (truncate.go); the
// master's chunking, one epoch per TRANSFER frame (chunk.go); the slave's
// checks, epoch entries and confirm offset per received frame (receive.go);
// the master's SyncStateSet view and confirm offset (syncset.go).
// Never: decides roles (replicas/ and the controller do), parses Remoting
// frames, trusts a peer's sizes (every body is bounded before it is read).
//
// Not done yet (issue #20): the master and slave connections — handshake
// with epochs, doing the truncation in the store, sending the chunks,
// proposing SyncStateSet changes with CONTROLLER_ALTER_SYNC_STATE_SET
// (replicas.Client.AlterSyncStateSet), dispatching up to the confirm offset.
package autoswitch
