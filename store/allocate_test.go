package store

import "testing"

// A roll that makes a file for another offset while the allocator makes
// the next one takes the busy slot; the allocator ending after it closes
// only its own channel and leaves the roll's slot alone (closing the
// slot's channel from both would panic).
func TestAllocatorMakesEndIndependently(t *testing.T) {
	var a allocator
	ahead, roll := make(chan struct{}), make(chan struct{})
	a.busy, a.done = 100, ahead // the allocator makes the file at 100
	a.busy, a.done = 200, roll  // a roll makes the one at 200 meanwhile
	a.finish(ahead)
	select {
	case <-ahead:
	default:
		t.Fatal("the allocator's waiters were not released")
	}
	select {
	case <-roll:
		t.Fatal("the roll's channel was closed by the allocator")
	default:
	}
	if a.busy != 200 {
		t.Fatalf("busy %d after the allocator ended, want the roll's 200", a.busy)
	}
	a.finish(roll)
	if a.busy != -1 {
		t.Fatalf("busy %d after both ended", a.busy)
	}
}
