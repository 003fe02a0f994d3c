package autoswitch

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/rocketgo/rocketgo/store"
)

// A slave truncated to the consistent point (epochs 1 and 2) receives the
// rest of epoch 2 and then epoch 4's bytes: one new entry, written to the
// epoch file; a gap drops the connection.
func TestReceiverRecordsEpochChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), store.FileEpochCheckpoint)
	epochs, err := store.OpenEpochFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []store.EpochEntry{{Epoch: 1, StartOffset: 0}, {Epoch: 2, StartOffset: 1000}} {
		if err := epochs.Append(e.Epoch, e.StartOffset); err != nil {
			t.Fatal(err)
		}
	}
	r := NewReceiver(epochs)
	frames := []struct {
		f        MasterFrame
		localMax int64
	}{
		{MasterFrame{Offset: 2600, Epoch: 2, EpochStart: 1000, Confirm: 2600}, 2600}, // already known: no entry
		{MasterFrame{Offset: 2600, Epoch: 4, EpochStart: 2600, Confirm: 2600}, 2600}, // epoch 4 starts here
		{MasterFrame{Offset: 3000, Epoch: 4, EpochStart: 2600, Confirm: 9000}, 3000},
	}
	for i, fr := range frames {
		if err := r.Accept(fr.f, fr.localMax); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
	}
	reopened, err := store.OpenEpochFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := reopened.All()
	if len(got) != 3 || got[2].Epoch != 4 || got[2].StartOffset != 2600 {
		t.Fatalf("epoch file: %v", got)
	}
	if c := Confirm(frames[2].f, 3100); c != 3100 {
		t.Errorf("confirm %d, want the slave's own max 3100", c)
	}
	if c := Confirm(MasterFrame{Confirm: 2800}, 3100); c != 2800 {
		t.Errorf("confirm %d, want the master's 2800", c)
	}
	if err := r.Accept(MasterFrame{Offset: 4000, Epoch: 4, EpochStart: 2600}, 3100); !errors.Is(err, ErrNotContiguous) {
		t.Errorf("gap: %v", err)
	}
	// An empty store takes the master's first offset, whatever it is.
	empty, err := store.NewEpochCache(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := NewReceiver(empty).Accept(MasterFrame{Offset: 1 << 30, Epoch: 3, EpochStart: 1 << 20}, 0); err != nil {
		t.Fatal(err)
	}
	if e, ok := empty.Last(); !ok || e.Epoch != 3 {
		t.Errorf("empty store's epochs: %v", empty.All())
	}
}
