package autoswitch

// The slave's decision after the master's handshake (Apache's
// AutoSwitchHAClient.doTruncate): a slave without epoch entries is a new
// replica (or a store migrated from classic HA) and keeps what it has;
// otherwise both epoch lists, closed at the respective max offsets, give
// the consistent point, and the slave truncates its commit log and consume
// queues there, and its epoch file after the epoch that gave the point,
// before it reports and receives. The caller
// does the truncation (the store requires a record boundary).

import (
	"errors"
	"fmt"

	"github.com/rocketgo/rocketgo/store"
)

// ErrNoConsistentPoint is returned when no epoch of the slave exists on
// the master with the same start offset: the slave cannot follow this
// master without an operator (Apache retries and logs the same).
var ErrNoConsistentPoint = errors.New("no consistent point with the master")

// Truncation says whether and where the slave truncates.
type Truncation struct {
	Truncate bool
	Offset   int64 // the consistent point, when Truncate
	// Epoch is the newest epoch the slave and the master share (same
	// start): the slave's epoch entries after it go, its own stays, even
	// when it starts at Offset (an epoch in which nothing was written).
	// Cutting by offset instead would drop that shared entry too, and a
	// slave left with no entry, elected later, writes an epoch entry no
	// other replica's file matches: they find no consistent point with it.
	Epoch int32
}

// TruncatePoint decides for a slave holding local epoch entries and
// commit log bytes up to localMax, given the master's handshake.
func TruncatePoint(local []store.EpochEntry, localMax int64, master MasterFrame) (Truncation, error) {
	if len(local) == 0 {
		return Truncation{}, nil
	}
	mc, err := store.NewEpochCache(master.Epochs)
	if err != nil {
		return Truncation{}, fmt.Errorf("master's epoch entries: %w: %w", ErrFrame, err)
	}
	mc.SetLastEnd(master.MaxOffset)
	lc, err := store.NewEpochCache(local)
	if err != nil {
		return Truncation{}, fmt.Errorf("local epoch entries: %w", err)
	}
	lc.SetLastEnd(localMax)
	p, epoch, ok := lc.Consistent(mc)
	if !ok {
		return Truncation{}, fmt.Errorf("local %v, master %v: %w", local, master.Epochs, ErrNoConsistentPoint)
	}
	return Truncation{Truncate: true, Offset: p, Epoch: epoch}, nil
}
