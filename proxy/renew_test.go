package proxy

import (
	"sync"
	"testing"
	"time"
)

// TestRenewalsTakeWaitsForRenewal: an ack that arrives while a renewal is
// in flight gets the handle the renewal leaves, and the entry is gone.
func TestRenewalsTakeWaitsForRenewal(t *testing.T) {
	r := newRenewals()
	k := renewKey{"c", "g"}
	e := &renewed{handle: receiptHandle{raw: "old", popTime: 1000, invisibleTime: 3000}}
	if !r.add(k, "orig", e) {
		t.Fatal("add refused")
	}
	e.mu.Lock() // a renewal in flight
	var got receiptHandle
	var ok bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); got, ok = r.take(k, "orig") }()
	time.Sleep(20 * time.Millisecond)
	e.handle = receiptHandle{raw: "renewed"}
	e.mu.Unlock()
	wg.Wait()
	if !ok || got.raw != "renewed" || !e.gone || r.n != 0 || len(r.byKey) != 0 {
		t.Fatalf("take: ok=%v handle=%q gone=%v n=%d keys=%d", ok, got.raw, e.gone, r.n, len(r.byKey))
	}
	if _, ok := r.take(k, "orig"); ok {
		t.Fatal("taken twice")
	}
}

// TestRenewalsDue: handles visible within the lead time are due; those of an
// offline client are all due for clearing and removed; a busy entry waits
// for the next scan.
func TestRenewalsDue(t *testing.T) {
	r := newRenewals()
	now := time.UnixMilli(100_000)
	soon := &renewed{handle: receiptHandle{popTime: 100_000, invisibleTime: 1_000}}
	later := &renewed{handle: receiptHandle{popTime: 100_000, invisibleTime: 60_000}}
	busy := &renewed{handle: receiptHandle{popTime: 100_000, invisibleTime: 1_000}}
	gone := &renewed{handle: receiptHandle{popTime: 100_000, invisibleTime: 60_000}}
	r.add(renewKey{"on", "g"}, "soon", soon)
	r.add(renewKey{"on", "g"}, "later", later)
	r.add(renewKey{"on", "g"}, "busy", busy)
	r.add(renewKey{"off", "g"}, "gone", gone)
	busy.mu.Lock()
	due := r.due(now, 10*time.Second, func(id string) bool { return id == "on" })
	busy.mu.Unlock()
	var renew, clear []string
	for _, d := range due {
		if d.clear {
			clear = append(clear, d.original)
		} else {
			renew = append(renew, d.original)
		}
	}
	if len(renew) != 1 || renew[0] != "soon" || len(clear) != 1 || clear[0] != "gone" {
		t.Fatalf("renew %v clear %v", renew, clear)
	}
	if r.n != 3 || r.byKey[renewKey{"off", "g"}] != nil {
		t.Fatalf("after the scan: n=%d, offline key kept=%v", r.n, r.byKey[renewKey{"off", "g"}] != nil)
	}
}

// TestRenewalsBound: past maxRenewHandles a handle is not kept.
func TestRenewalsBound(t *testing.T) {
	r := newRenewals()
	r.n = maxRenewHandles
	if r.add(renewKey{"c", "g"}, "h", &renewed{}) {
		t.Fatal("kept past the bound")
	}
}

// TestGroupNextDelay: Apache's RetryPolicy.nextDelayDuration — customized
// from index reconsumeTimes+2, exponential capped at max.
func TestGroupNextDelay(t *testing.T) {
	g := &groupConfig{}
	if d := g.nextDelay(0); d != 10_000 {
		t.Fatalf("default, first: %d", d)
	}
	if d := g.nextDelay(100); d != 7_200_000 {
		t.Fatalf("default, last: %d", d)
	}
	g.GroupRetryPolicy = &groupRetryPolicy{Type: "EXPONENTIAL",
		ExponentialRetryPolicy: &exponentialSchedule{Initial: 1000, Max: 60_000, Multiplier: 2}}
	for n, want := range map[int32]int64{0: 1000, 3: 8000, 10: 60_000} {
		if d := g.nextDelay(n); d != want {
			t.Fatalf("exponential %d: %d, want %d", n, d, want)
		}
	}
}
