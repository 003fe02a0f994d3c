// Package message holds Apache RocketMQ's message formats shared by the
// store and the broker: the properties string, sysflag bits and magic codes,
// the stored (CommitLog / pull body) record, the SEND_BATCH_MESSAGE body,
// tag hashes and message ids; and the vocabulary every front end shares:
// topic and group name rules, system topic names, perm bits (names.go) and
// the pop handle (ExtraInfo) codec (popinfo.go).
//
// Owns: byte layouts of records, batch bodies, properties, ids and pop
// handles; what a valid topic or group name is.
// Never: does I/O, starts goroutines, reads the clock (callers pass time in),
// or keeps package-level mutable state.
//
// Invariants:
//   - Encoders append to dst and return the extended slice; they never
//     write outside dst[len(dst):cap] growth.
//   - Decoders check every length against the buffer before slicing and
//     never panic on arbitrary input (fuzzed). Byte slices they return are
//     views into the input (documented per function); strings are copies.
//   - All integers are big-endian.
package message
