package stats

import (
	"maps"
	"testing"
)

func lagOf(l *LiteLag) map[string]int64 {
	out := map[string]int64{}
	l.Range(func(group, parent string, oldest int64) bool { out[group+"/"+parent] = oldest; return true })
	return out
}

// TestLiteLag: Apache's topicGroupLagTimeMap — per (group, parent) the topK
// oldest lite topics left behind; a caught-up lite topic leaves; a deleted
// one leaves every group; an emptied pair goes.
func TestLiteLag(t *testing.T) {
	var l LiteLag
	l.Update("G", "P", "%LMQ%$P$a", 300, 2)
	l.Update("G", "P", "%LMQ%$P$b", 100, 2)
	l.Update("G", "P", "%LMQ%$P$c", 200, 2) // past topK: a, the latest, goes
	l.Update("H", "P", "%LMQ%$P$b", 150, 2)
	l.Update("G", "Q", "%LMQ%$Q$x", 50, 2)
	if got, want := lagOf(&l), map[string]int64{"G/P": 100, "H/P": 150, "G/Q": 50}; !maps.Equal(got, want) {
		t.Fatalf("oldest %v, want %v", got, want)
	}
	l.Update("G", "P", "%LMQ%$P$b", 400, 2) // b popped again, further on
	l.Update("G", "P", "%LMQ%$P$a", 300, 2) // a comes back, older than b now: b goes
	if got := lagOf(&l)["G/P"]; got != 200 {
		t.Fatalf("G/P oldest %d, want c's 200", got)
	}
	l.Remove("G", "P", "%LMQ%$P$c") // caught up
	l.Remove("G", "P", "%LMQ%$P$zz")
	if got := lagOf(&l)["G/P"]; got != 300 {
		t.Fatalf("G/P oldest %d, want a's 300", got)
	}
	l.Forget("P", "%LMQ%$P$b") // deleted: H's only entry, so H/P goes
	l.Remove("G", "Q", "%LMQ%$Q$x")
	if got, want := lagOf(&l), map[string]int64{"G/P": 300}; !maps.Equal(got, want) {
		t.Fatalf("oldest %v, want %v", got, want)
	}
	if l.npairs != 1 || len(l.byTop) != 1 {
		t.Fatalf("pairs %d, parents %d", l.npairs, len(l.byTop))
	}
	l.Update("G", "P", "%LMQ%$P$a", 1, 0) // topK 0 keeps nothing (Apache's heap neither)
	if got := lagOf(&l); len(got) != 0 {
		t.Fatalf("topK 0 kept %v", got)
	}
}

// TestLiteLagBound: past MaxKeys pairs a new pair is not kept.
func TestLiteLagBound(t *testing.T) {
	var l LiteLag
	l.npairs = MaxKeys
	l.Update("G", "P", "%LMQ%$P$a", 1, 50)
	if got := lagOf(&l); len(got) != 0 {
		t.Fatalf("past the bound: %v", got)
	}
}

// TestStatsOutLite: a lite pop's flow is marked, another's is not.
func TestStatsOutLite(t *testing.T) {
	var s Stats
	s.Out("G", "T", 1, 10)
	s.OutLite("L", "P", 2, 20)
	s.OutLite("L", "P", 3, 30)
	got := map[GroupTopic][2]int64{}
	lite := map[GroupTopic]bool{}
	s.RangeOut(func(k GroupTopic, f *Flow) bool {
		got[k], lite[k] = [2]int64{f.Msgs.Load(), f.Bytes.Load()}, f.Lite()
		return true
	})
	if got[GroupTopic{"L", "P"}] != [2]int64{5, 50} || !lite[GroupTopic{"L", "P"}] || lite[GroupTopic{"G", "T"}] {
		t.Fatalf("flows %v, lite %v", got, lite)
	}
}
