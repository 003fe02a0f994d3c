package autoswitch

// What the master's writer ships next (AutoSwitchHAConnection.transferToSlave):
// one TRANSFER frame holds bytes of a single epoch, so a slave can record an
// epoch entry whenever the header's epoch changes and never mixes terms.
// A chunk therefore ends at the earliest of: the end of the epoch holding
// its first byte, the bytes readable in one piece (the caller bounds them
// by the commit log file end and the max offset), and the batch size
// (haTransferBatchSize, 32 KiB by default).

import "github.com/rocketgo/rocketgo/store"

// NextChunk returns the size of the chunk starting at from and the epoch
// entry it is tagged with; false when no epoch holds from (Apache logs it
// and waits: the epoch file and the commit log disagree). size is 0 when
// nothing is readable (a heartbeat frame).
func NextChunk(epochs *store.EpochCache, from, readable int64, batch int) (int, store.EpochEntry, bool) {
	e, ok := epochs.ByOffset(from)
	if !ok {
		return 0, store.EpochEntry{}, false
	}
	size := min(readable, int64(batch), e.EndOffset-from)
	return int(max(size, 0)), e, true
}
