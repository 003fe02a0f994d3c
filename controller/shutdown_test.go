package controller

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
)

// Shutdown while decisions are being committed returns: no worker is left
// waiting on a raft future that raft, once shut down, never answers
// (hashicorp/raft drops the batches still queued for its FSM).
func TestShutdownWithProposalsInFlight(t *testing.T) {
	for round := range 6 {
		c := startSingle(t, nil)
		b := newFakeBroker(t, "sb")
		var wg sync.WaitGroup
		var stop atomic.Bool
		var applied atomic.Int64
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; !stop.Load(); i++ {
					// A new broker name each time: every apply commits events.
					resp, err := b.try(c.Addr(), remoting.ControllerApplyBrokerID, map[string]string{"clusterName": "c1",
						"brokerName": fmt.Sprintf("r%d-%d-%d", round, g, i), "appliedBrokerId": "1", "registerCheckCode": "127.0.0.1:1;1"}, nil)
					if err == nil && resp.Code == remoting.Success {
						applied.Add(1)
					}
				}
			}()
		}
		testutil.WaitFor(t, 10*time.Second, func() bool { return applied.Load() >= 20 })
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := c.Shutdown(ctx)
		cancel()
		stop.Store(true)
		wg.Wait()
		if err != nil {
			buf := make([]byte, 1<<20)
			t.Fatalf("round %d: shutdown: %v; goroutines:\n%s", round, err, buf[:runtime.Stack(buf, true)])
		}
	}
}
