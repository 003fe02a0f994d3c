// Package ctltest starts a rocketgo controller in-process for tests of
// the packages that talk to one (a one-member raft group, short timeouts).
//
// Owns: test scaffolding only. Never: imported by non-test code.
package ctltest

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/controller"
	"github.com/rocketgo/rocketgo/internal/testutil"
)

// PortPair returns a free port whose successor is free too (a controller's
// raft port, a broker's HA port).
func PortPair(t testing.TB) int {
	t.Helper()
	for range 50 {
		l1, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l1.Addr().(*net.TCPAddr).Port
		l2, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+1))
		_ = l1.Close()
		if err == nil {
			_ = l2.Close()
			return port
		}
	}
	t.Fatal("no free port pair")
	return 0
}

// Start runs one controller, stopped when the test ends, and returns its
// Remoting address once it leads. Its log (warnings and up) goes to the
// test's output.
func Start(t testing.TB) string {
	t.Helper()
	port := PortPair(t)
	cfg := controller.DefaultConfig()
	cfg.ControllerDLegerGroup = "group1"
	cfg.ControllerDLegerPeers = fmt.Sprintf("n0-127.0.0.1:%d", port)
	cfg.ControllerDLegerSelfID = "n0"
	cfg.ControllerStorePath = t.TempDir()
	cfg.ConfigStorePath = filepath.Join(cfg.ControllerStorePath, "controller.properties")
	cfg.ControllerRaftHeartbeatTimeoutMillis = 300
	cfg.ControllerRaftElectionTimeoutMillis = 300
	cfg.ScanInactiveMasterInterval = 300
	cfg.ScanNotActiveBrokerInterval = 300
	cfg.ControllerThreadPoolNums = 2
	cfg.ControllerRequestThreadPoolQueueCapacity = 16
	c, err := controller.New(cfg, zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Shutdown(ctx); err != nil {
			t.Errorf("controller shutdown: %v", err)
		}
	})
	testutil.WaitFor(t, 15*time.Second, c.IsLeader)
	return c.Addr()
}
