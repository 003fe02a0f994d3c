package autoswitch

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/rocketgo/rocketgo/store"
)

// The slave/master pair Apache's EpochFileCache wrote (store/testdata/
// epochfile): the slave wrote a divergent tail in epoch 3 up to 3500, the
// master moved on to epoch 4 at 2600; Apache's findConsistentPoint gives
// 2600. A handshake carries the master's entries; the slave cuts there.
func TestTruncatePointApachePair(t *testing.T) {
	open := func(name string) []store.EpochEntry {
		c, err := store.OpenEpochFile(filepath.Join("..", "..", "store", "testdata", "epochfile", name, store.FileEpochCheckpoint))
		if err != nil {
			t.Fatal(err)
		}
		return c.All()
	}
	hs := AppendMasterHandshake(nil, 5000, 4, open("master"))
	mf, _, err := ParseMasterFrame(hs, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := TruncatePoint(open("slave"), 3500, mf)
	if err != nil || !tr.Truncate || tr.Offset != 2600 {
		t.Fatalf("slave vs master: %+v %v, want truncate at 2600", tr, err)
	}
	// A slave that is only behind truncates at its own end: nothing to cut.
	tr, err = TruncatePoint([]store.EpochEntry{{Epoch: 1, StartOffset: 0}, {Epoch: 2, StartOffset: 1000}}, 1800, mf)
	if err != nil || tr.Offset != 1800 {
		t.Fatalf("behind: %+v %v", tr, err)
	}
}

func TestTruncatePointEdges(t *testing.T) {
	mf := MasterFrame{State: StateHandshake, MaxOffset: 100, Epochs: []store.EpochEntry{{Epoch: 7, StartOffset: 50}}}
	if tr, err := TruncatePoint(nil, 999, mf); err != nil || tr.Truncate {
		t.Fatalf("new replica: %+v %v", tr, err)
	}
	if _, err := TruncatePoint([]store.EpochEntry{{Epoch: 7, StartOffset: 40}}, 90, mf); !errors.Is(err, ErrNoConsistentPoint) {
		t.Fatalf("same epoch, other start: %v", err)
	}
	// The shared epoch starts at the point (nothing written since): the
	// point names it, so that the slave keeps its entry.
	empty := MasterFrame{State: StateHandshake, MaxOffset: 50, Epochs: []store.EpochEntry{{Epoch: 7, StartOffset: 50}}}
	if tr, err := TruncatePoint([]store.EpochEntry{{Epoch: 7, StartOffset: 50}}, 50, empty); err != nil || tr.Offset != 50 || tr.Epoch != 7 {
		t.Fatalf("empty shared epoch: %+v %v", tr, err)
	}
	bad := MasterFrame{State: StateHandshake, MaxOffset: 100, Epochs: []store.EpochEntry{{Epoch: 7, StartOffset: 50}, {Epoch: 6, StartOffset: 60}}}
	if _, err := TruncatePoint([]store.EpochEntry{{Epoch: 7, StartOffset: 50}}, 90, bad); !errors.Is(err, ErrFrame) {
		t.Fatalf("unordered master epochs: %v", err)
	}
}
