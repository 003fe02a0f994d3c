package role

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/broker/timer"
	"github.com/rocketgo/rocketgo/ha"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
	"github.com/rocketgo/rocketgo/store/storetest"
)

func TestMain(m *testing.M) {
	store.FakeDiskUsage(0.5) // no test depends on how full the host disk is
	testutil.VerifyNoLeaks(m)
}

// testConfig is a master's view of the broker's defaults: cluster c,
// broker b on 127.0.0.1:10911, no name server.
func testConfig() Config {
	hc := ha.DefaultConfig()
	return Config{ClusterName: "c", BrokerName: "b", Addr: "127.0.0.1:10911", HAServerAddr: "127.0.0.1:10912",
		HAListen: "127.0.0.1:0", HA: hc, Permission: 6, RegisterPeriod: 30 * time.Second,
		RegisterTimeout: 20 * time.Second, SplitRegistrationSize: 800, SlaveSyncPeriod: time.Minute}
}

// fakeTimers is the timer's progress as a test sets it.
type fakeTimers struct{ running atomic.Bool }

func (f *fakeTimers) Checkpoint() ([]byte, int64)            { return make([]byte, timer.CheckpointLen), 0 }
func (f *fakeTimers) TakeCheckpoint(*remoting.Command) error { return nil }
func (f *fakeTimers) Running() bool                          { return f.running.Load() }

// harness is the role on real tables, a real store and the real delay
// levels' progress, with the fake timer; it records the roles it is told
// to take, and its goroutines end with the test.
type harness struct {
	*Service
	cfg     atomic.Pointer[Config]
	store   *store.Store
	topics  *tables.Topics
	groups  *tables.Groups
	offsets *tables.Offsets
	timers  fakeTimers
	counts  stats.TimerStats
	quit    chan struct{}
	wg      sync.WaitGroup
}

// newHarness makes the role with testConfig changed by edit, and deps
// changed by deps (the HA service's maker, the role's callbacks).
func newHarness(t testing.TB, edit func(*Config), deps func(*Deps)) *harness {
	t.Helper()
	dir := t.TempDir()
	h := &harness{quit: make(chan struct{})}
	c := testConfig()
	if edit != nil {
		edit(&c)
	}
	h.cfg.Store(&c)
	h.store = storetest.Open(t, dir, nil)
	// A change of the table asks for a registration, as the broker's
	// topicsChanged does.
	h.topics = tables.NewTopics(filepath.Join(dir, "config", "topics.json"), 1024,
		func() { h.RegisterSoon() }, func() bool { return false })
	// A name server takes a first registration of one topic for a partial
	// one and refuses it: a broker registers its system topics too.
	for _, name := range []string{message.AutoCreateTopicKey, c.ClusterName} {
		h.topics.PutSystem(tables.TopicConfig{TopicName: name, ReadQueueNums: 1, WriteQueueNums: 1, Perm: message.PermRead | message.PermWrite})
	}
	h.groups = tables.NewGroups(filepath.Join(dir, "config", "subscriptionGroup.json"), 1024, func() bool { return false })
	h.offsets = tables.NewOffsets(filepath.Join(dir, "config", "consumerOffset.json"), 1024)
	delays := timer.NewDelays(h.store, nil, &stats.Stats{}, filepath.Join(dir, "config", "delayOffset.json"),
		h.store.DelayLevels(), zerolog.Nop())
	d := Deps{Config: func() *Config { return h.cfg.Load() },
		SetRole: func(id int64, r ha.Role) {
			h.edit(func(c *Config) { c.BrokerID, c.HA.BrokerRole = id, r })
		},
		StoreRoot: dir, Store: h.store, Topics: h.topics, Groups: h.groups, Offsets: h.offsets,
		Modes:  tables.NewRequestModes(filepath.Join(dir, "config", "messageRequestMode.json"), func() {}),
		Delays: delays, Timers: &h.timers, TimerCounts: &h.counts,
		Go: func(fn func()) {
			h.wg.Add(1)
			go func() {
				defer h.wg.Done()
				fn()
			}()
		},
		Quit: h.quit, BeforeMaster: func() {}, RunMaster: func(bool, func(func(<-chan struct{}))) {}}
	if deps != nil {
		deps(&d)
	}
	s, err := New(d, testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	h.Service = s
	t.Cleanup(h.stop)
	return h
}

// edit stores a copy of the configuration changed by fn, as the broker
// stores a new snapshot.
func (h *harness) edit(fn func(*Config)) {
	c := *h.cfg.Load()
	fn(&c)
	h.cfg.Store(&c)
}

// start starts the HA service and the role's goroutines, as the broker's
// Start does.
func (h *harness) start(t *testing.T) {
	t.Helper()
	if err := h.StartHA(); err != nil {
		t.Fatal(err)
	}
	h.Run()
}

// stop unregisters, ends the goroutines and stops the HA service, as the
// broker's Shutdown does; a second call does nothing.
func (h *harness) stop() {
	select {
	case <-h.quit:
		return
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h.Unregister(ctx)
	close(h.quit)
	h.wg.Wait()
	_ = h.ShutdownHA(ctx)
	_ = h.Close()
}

// fakeHA records what the role tells the replication service.
type fakeHA struct {
	cfg     ha.Config
	mu      sync.Mutex
	masters []string
	stopped bool
}

func (f *fakeHA) Start() error { return nil }
func (f *fakeHA) Shutdown(context.Context) error {
	f.mu.Lock()
	f.stopped = true
	f.mu.Unlock()
	return nil
}
func (f *fakeHA) Addr() string { return "127.0.0.1:10912" }
func (f *fakeHA) UpdateMasterAddress(addr string) {
	f.mu.Lock()
	f.masters = append(f.masters, addr)
	f.mu.Unlock()
}
func (f *fakeHA) Status() ha.Status { return ha.Status{Role: f.cfg.BrokerRole} }

func (f *fakeHA) learned() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.masters...)
}

// withFakeHA has the role make fake as its HA service.
func withFakeHA(fake *fakeHA) func(*Deps) {
	return func(d *Deps) {
		d.NewHA = func(c ha.Config, _ string, _ *store.Store, _ zerolog.Logger) (Replicator, error) {
			fake.cfg = c
			return fake, nil
		}
	}
}
