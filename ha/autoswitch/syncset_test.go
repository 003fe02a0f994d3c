package autoswitch

import (
	"slices"
	"testing"
	"time"
)

func TestSyncSetExpandShrinkConfirm(t *testing.T) {
	const self = 1
	s := NewSyncSet(self, []int64{self}, 15*time.Second)
	if c := s.ConfirmOffset(5000, 0); c != 5000 {
		t.Fatalf("alone: confirm %d, want the master's max", c)
	}
	s.Connected(2)
	s.Ack(2, 3000)
	// Behind the confirm offset, then behind the epoch start: not yet.
	if _, ok := s.MaybeExpand(2, 3000, 4000, 0); ok {
		t.Fatal("expanded below the confirm offset")
	}
	if _, ok := s.MaybeExpand(2, 3000, 2000, 3500); ok {
		t.Fatal("expanded below the epoch start")
	}
	set, ok := s.MaybeExpand(2, 5000, 5000, 3500)
	if !ok || !slices.Equal(set, []int64{1, 2}) {
		t.Fatalf("expand: %v %v", set, ok)
	}
	// Proposed, not accepted: it counts already.
	if got := s.Current(); !slices.Equal(got, []int64{1, 2}) {
		t.Fatalf("current while proposing: %v", got)
	}
	s.Ack(2, 4200)
	if c := s.ConfirmOffset(5000, 0); c != 4200 {
		t.Fatalf("confirm %d, want the slave's ack 4200", c)
	}
	s.Accepted(set)
	now := time.Unix(1000, 0)
	s.CaughtUp(2, now)
	s.CaughtUp(2, now.Add(-time.Hour)) // never backwards
	if _, ok := s.MaybeShrink(now.Add(10 * time.Second)); ok {
		t.Fatal("shrunk a slave caught up 10 s ago")
	}
	set, ok = s.MaybeShrink(now.Add(16 * time.Second))
	if !ok || !slices.Equal(set, []int64{1}) {
		t.Fatalf("shrink after 16 s: %v %v", set, ok)
	}
	s.Accepted([]int64{1, 2})
	s.Disconnected(2)
	if c := s.ConfirmOffset(9000, 4200); c != 4200 {
		t.Fatalf("member without connection: confirm %d, want the previous 4200", c)
	}
	set, ok = s.MaybeShrink(now)
	if !ok || !slices.Equal(set, []int64{1}) {
		t.Fatalf("shrink a disconnected member: %v %v", set, ok)
	}
}
