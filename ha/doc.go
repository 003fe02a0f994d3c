// Package ha replicates the commit log from a master broker to its slaves
// with Apache RocketMQ's classic HA protocol (spec/ha.md §1), byte for byte,
// so that an Apache slave follows a rocketgo master and a rocketgo slave
// follows an Apache master.
//
// Owns: the master's HA listener and one connection per slave (reports in,
// commit log bytes out), the slave's connection to its master (reports out,
// bytes appended to the local store), the SYNC_MASTER completion source
// (store.Replicated: Advance on acknowledgements, refusal when no slave is
// usable) and the replication status the broker reports.
// Never: decides roles or elections (the broker's configuration, later the
// controller), parses Remoting frames, blocks a caller of the store.
//
// Wire format: frame.go. Master side and what it does differently from
// Apache on purpose: master.go; slave side: slave.go. What both HA
// protocols share (ha/autoswitch uses it too): the listener's gate and
// its authentication (gate.go, auth.go), the master's shipping loop and
// frame writer (transfer.go).
//
// Memory per connection is bounded: a master's writer sends views of the
// mapped commit log (held one frame at a time) and reads reports into 1
// KiB; a slave reads frames into one 4 MiB buffer (Apache's) and refuses a
// larger frame at its header.
//
// Goroutines: master: the accept loop, per slave a reader and a writer;
// slave: the connect loop and, per connection, a reporter. All started by
// Service (refused once Shutdown began) and awaited by Shutdown, which
// closes the listener and every socket first.
package ha
