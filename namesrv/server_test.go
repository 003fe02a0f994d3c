package namesrv

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
)

// testConfig returns a config for tests: loopback, free port, temp KV file.
func testConfig(t *testing.T) Config {
	cfg := DefaultConfig()
	cfg.BindAddress = "127.0.0.1"
	cfg.ListenPort = 0
	cfg.ServerSelectorThreads = 1
	cfg.KvConfigPath = filepath.Join(t.TempDir(), "kvConfig.json")
	return cfg
}

type nopHandler struct{}

func (nopHandler) Serve(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	return remoting.NewResponse(req, remoting.Success, "")
}

func TestServerLifecycle(t *testing.T) {
	cfg := testConfig(t)
	cfg.ScanNotActiveBrokerInterval = 10
	s, err := New(cfg, testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(nopHandler{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	if s.Addr() == "" {
		t.Fatal("no address")
	}
	if err := s.Start(nopHandler{}); err == nil {
		t.Fatal("second Start accepted")
	}

	cl := remoting.NewClient(testutil.Logger())
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cl.Invoke(ctx, s.Addr(), remoting.NewRequest(remoting.GetBrokerClusterInfo, nil, nil))
	if err != nil || resp.Code != remoting.Success {
		t.Fatalf("invoke: %v %+v", err, resp)
	}

	// Housekeeping expires silent brokers and persists the KV table.
	reg := masterReg("broker-a", "127.0.0.1:10911", 0, "T", "U")
	reg.HeartbeatTimeout = time.Millisecond
	mustRegister(t, s.Routes, reg, time.Now())
	testutil.WaitFor(t, 5*time.Second, func() bool { _, err := s.Routes.Route("T"); return err != nil })
	s.KV.Put("ns", "k", "v")
	testutil.WaitFor(t, 5*time.Second, func() bool { _, err := os.Stat(cfg.KvConfigPath); return err == nil })

	s.KV.Put("ns", "k2", "v2") // persisted by Shutdown at the latest
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
	kv := NewKV(cfg.KvConfigPath)
	if err := kv.Load(); err != nil {
		t.Fatal(err)
	}
	if v, _ := kv.Value("ns", "k2"); v != "v2" {
		t.Fatalf("k2 = %q after shutdown", v)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	cfg := testConfig(t)
	cfg.ListenPort = 70000
	if _, err := New(cfg, testutil.Logger()); err == nil {
		t.Fatal("bad port accepted")
	}
	s, err := New(testConfig(t), testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Shutdown(context.Background()); err != nil { // never started
		t.Fatal(err)
	}
}

func TestMain(m *testing.M) { testutil.VerifyNoLeaks(m) }

// TestOffloadOrderAndBound: offloaded work runs in order on the worker, and
// past workQueue waiting items Offload refuses instead of blocking a loop.
func TestOffloadOrderAndBound(t *testing.T) {
	s, err := New(testConfig(t), testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(nopHandler{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })

	release := make(chan struct{})
	started := make(chan struct{})
	if !s.Offload(func() { close(started); <-release }) {
		t.Fatal("first Offload refused")
	}
	<-started // the worker is busy; what follows waits in the queue
	var got []int
	done := make(chan struct{})
	for i := 0; i < workQueue; i++ {
		i := i
		if !s.Offload(func() {
			got = append(got, i) // only the worker touches got
			if i == workQueue-1 {
				close(done)
			}
		}) {
			t.Fatalf("Offload %d refused below the bound", i)
		}
	}
	if s.Offload(func() {}) {
		t.Fatal("Offload accepted past the bound")
	}
	close(release)
	<-done
	for i, v := range got {
		if v != i {
			t.Fatalf("offloaded work ran out of order: %v", got)
		}
	}
}
