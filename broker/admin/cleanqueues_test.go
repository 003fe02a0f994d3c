package admin

import (
	"sync"
	"testing"
)

// A cleanup requested while another pass runs is done by a pass after it
// (CLEAN_UNUSED_TOPIC during a CLEAN_EXPIRED_CONSUMEQUEUE pass is not
// dropped), and a flood of requests meanwhile adds one pass, not one each.
func TestCleanupsQueueBehindARunningPass(t *testing.T) {
	var c cleanups
	var wg sync.WaitGroup
	start := func(fn func()) bool { wg.Add(1); go func() { defer wg.Done(); fn() }(); return true }
	first := make(chan struct{})
	release := make(chan struct{})
	var mu sync.Mutex
	var passes [][2]bool
	pass := func(expired, unused bool) {
		mu.Lock()
		passes = append(passes, [2]bool{expired, unused})
		n := len(passes)
		mu.Unlock()
		if n == 1 {
			close(first)
			<-release
		}
	}
	c.request(true, false, start, pass)
	<-first
	for range 100 {
		c.request(false, true, start, pass)
	}
	close(release)
	wg.Wait() // the second pass runs on the first one's goroutine
	if len(passes) != 2 || passes[0] != [2]bool{true, false} || passes[1] != [2]bool{false, true} {
		t.Fatalf("passes %v, want the expired pass, then one unused pass", passes)
	}
}
