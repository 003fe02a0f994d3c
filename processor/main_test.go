package processor

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// The in-process controller (controllermode_test.go) leaves
// hashicorp/raft's inbound handlers behind (see controller/main_test.go).
func TestMain(m *testing.M) {
	store.FakeDiskUsage(0.5) // no test depends on how full the host disk is
	testutil.VerifyNoLeaksRaft(m)
}

// runBroker serves a broker on a free loopback port (picked, then bound by
// the broker: racy, fine for tests) through wrap(its table) (nil: the
// table as is). The configuration has two event loops and 1 MiB commit log
// files before edit changes it. Shut down by tb.Cleanup.
func runBroker(tb testing.TB, edit func(*broker.Config), wrap func(remoting.Table) remoting.Handler) *broker.Broker {
	tb.Helper()
	// Two ports held at once, so they differ: remoting and HA (listenPort+1
	// is often some client's ephemeral port under parallel tests).
	var ports [2]int
	var lns [2]net.Listener
	for i := range lns {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		lns[i], ports[i] = ln, ln.Addr().(*net.TCPAddr).Port
	}
	for _, ln := range lns {
		if err := ln.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	port := ports[0]
	cfg := broker.DefaultConfig()
	cfg.HA.HAListenPort = ports[1]
	cfg.FastListenPort = -1 // no VIP channel unless a test asks
	cfg.BrokerName = "b"
	cfg.BrokerIP1 = "127.0.0.1"
	cfg.BindAddress = "127.0.0.1"
	cfg.ListenPort = port
	cfg.NamesrvAddr = ""
	cfg.ServerWorkerThreads = 2
	cfg.Store.StorePathRootDir = tb.TempDir()
	cfg.Store.MappedFileSizeCommitLog = 1 << 20
	cfg.Store.AccessMessageInMemoryMaxRatio = 0 // tests of the residency check write 17 MiB, not GiBs
	if edit != nil {
		edit(&cfg)
	}
	log := testutil.Logger()
	b, err := broker.New(cfg, log)
	if err != nil {
		tb.Fatal(err)
	}
	var h remoting.Handler = BrokerTable(ServicesOf(b), log)
	if wrap != nil {
		h = wrap(BrokerTable(ServicesOf(b), log))
	}
	if err := b.Start(h); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Shutdown(ctx); err != nil {
			tb.Errorf("shutdown: %v", err)
		}
	})
	return b
}

// oneLoop is the configuration of the send and pull benchmarks: one event
// loop, commit log files large enough not to roll while measured.
func oneLoop(edit func(*broker.Config)) func(*broker.Config) {
	return func(c *broker.Config) {
		c.ServerWorkerThreads = 1
		c.Store.MappedFileSizeCommitLog = 64 << 20
		if edit != nil {
			edit(c)
		}
	}
}

func expectCode(t *testing.T, resp *remoting.Command, code int32) {
	t.Helper()
	if resp.Code != code {
		t.Fatalf("code %d (remark %q), want %d", resp.Code, resp.Remark, code)
	}
}
