package autoswitch

// The slave's bookkeeping for each TRANSFER frame (AutoSwitchHAClient's
// reader), apart from appending the bytes: the frame must continue the
// local commit log exactly (an empty store takes any start, as in Apache);
// a frame whose epoch differs from the last one received appends (epoch,
// epoch start) to the epoch file — refused quietly when the entry is
// already there, as Apache's appendEntry refuses it; the confirm offset
// is the master's, capped by what the slave holds.

import (
	"errors"
	"fmt"

	"github.com/rocketgo/rocketgo/store"
)

// ErrNotContiguous is returned for a frame that does not start at the
// slave's max offset: the connection is dropped and redone with a
// handshake (Apache's reader returns false there).
var ErrNotContiguous = errors.New("transfer does not continue the local commit log")

// Receiver follows the epochs of one connection's TRANSFER frames.
type Receiver struct {
	epochs  *store.EpochCache
	current int32
}

// NewReceiver starts a connection: the first frame's epoch counts as a
// change (Apache resets currentReceivedEpoch to -1 on connect).
func NewReceiver(epochs *store.EpochCache) *Receiver {
	return &Receiver{epochs: epochs, current: -1}
}

// Accept checks f against the local max offset before its body is
// appended and records an epoch change.
func (r *Receiver) Accept(f MasterFrame, localMax int64) error {
	if localMax != 0 && localMax != f.Offset {
		return fmt.Errorf("master sent %d, slave holds up to %d: %w", f.Offset, localMax, ErrNotContiguous)
	}
	if f.Epoch == r.current {
		return nil
	}
	r.current = f.Epoch
	err := r.epochs.Append(f.Epoch, f.EpochStart)
	if err != nil && !errors.Is(err, store.ErrEpochOrder) {
		return fmt.Errorf("record epoch %d at %d: %w", f.Epoch, f.EpochStart, err)
	}
	return nil
}

// Confirm is the slave's confirm offset after appending f's body: the
// master's, never beyond the slave's own max offset.
func Confirm(f MasterFrame, localMax int64) int64 {
	return max(min(f.Confirm, localMax), 0)
}
