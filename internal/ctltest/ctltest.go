// Package ctltest runs a rocketgo controller in-process for tests of its
// clients (replicas/, the broker in controller mode): a one-member raft
// group on a free port pair, with short scan intervals. Test code only;
// never imported by a binary.
package ctltest

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/controller"
	"github.com/rocketgo/rocketgo/internal/testutil"
)

// Start runs one controller and returns its Remoting address once it
// leads; tb's cleanup shuts it down. edit, when not nil, changes the
// configuration first.
func Start(tb testing.TB, edit func(*controller.Config)) string {
	tb.Helper()
	var port int
	for range 50 {
		l1, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		port = l1.Addr().(*net.TCPAddr).Port
		l2, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+1)) // the raft port
		l1.Close()
		if err == nil {
			l2.Close()
			break
		}
		port = 0
	}
	if port == 0 {
		tb.Fatal("no free port pair")
	}
	cfg := controller.DefaultConfig()
	cfg.ControllerDLegerGroup = "group1"
	cfg.ControllerDLegerPeers = fmt.Sprintf("n0-127.0.0.1:%d", port)
	cfg.ControllerDLegerSelfID = "n0"
	cfg.ControllerStorePath = tb.TempDir()
	cfg.ControllerRaftHeartbeatTimeoutMillis = 300
	cfg.ControllerRaftElectionTimeoutMillis = 300
	cfg.ScanInactiveMasterInterval = 300
	cfg.ScanNotActiveBrokerInterval = 300
	cfg.ControllerThreadPoolNums = 2
	cfg.ControllerRequestThreadPoolQueueCapacity = 16
	if edit != nil {
		edit(&cfg)
	}
	// The controller's log goes to the test's output (shown on failure).
	c, err := controller.New(cfg, zerolog.New(zerolog.NewTestWriter(tb)).Level(zerolog.InfoLevel))
	if err != nil {
		tb.Fatal(err)
	}
	if err := c.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Shutdown(ctx); err != nil {
			tb.Errorf("controller shutdown: %v", err)
		}
	})
	testutil.WaitFor(tb, 15*time.Second, c.IsLeader)
	return c.Addr()
}
