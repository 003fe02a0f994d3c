package autoswitch

import (
	"math"
	"testing"

	"github.com/rocketgo/rocketgo/store"
)

func TestNextChunkStopsAtEpochBoundary(t *testing.T) {
	epochs, err := store.NewEpochCache([]store.EpochEntry{{Epoch: 1, StartOffset: 0}, {Epoch: 2, StartOffset: 1000}, {Epoch: 5, StartOffset: 4096}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		from, readable int64
		batch          int
		size           int
		epoch          int32
	}{
		{900, 1 << 20, 32 << 10, 100, 1},               // up to epoch 2's start
		{1000, 1 << 20, 32 << 10, 3096, 2},             // the whole of epoch 2
		{1000, 500, 32 << 10, 500, 2},                  // what is readable
		{5000, 1 << 20, 32 << 10, 32 << 10, 5},         // the open last epoch: the batch
		{5000, 0, 32 << 10, 0, 5},                      // nothing new: heartbeat
		{math.MaxInt64 - 10, 1 << 20, 32 << 10, 10, 5}, // no overflow at the top
	} {
		size, e, ok := NextChunk(epochs, c.from, c.readable, c.batch)
		if !ok || size != c.size || e.Epoch != c.epoch {
			t.Errorf("from %d readable %d: size %d epoch %d ok %v, want %d in epoch %d", c.from, c.readable, size, e.Epoch, ok, c.size, c.epoch)
		}
	}
	late, err := store.NewEpochCache([]store.EpochEntry{{Epoch: 3, StartOffset: 2048}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := NextChunk(late, 100, 1<<20, 32<<10); ok {
		t.Error("an offset below the first epoch found an epoch")
	}
}
