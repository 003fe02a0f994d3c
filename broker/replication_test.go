package broker

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/role"
	"github.com/rocketgo/rocketgo/broker/send"
	"github.com/rocketgo/rocketgo/ha"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// Apache's BrokerStartup: a master has brokerId 0 and a slave a positive
// one; haListenPort 0 is listenPort+1 and brokerIP2 defaults to brokerIP1.
func TestHAConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		ok   bool
	}{
		{"master 0", func(c *Config) {}, true},
		{"sync master 0", func(c *Config) { c.HA.BrokerRole = ha.SyncMaster }, true},
		{"master 1", func(c *Config) { c.BrokerID = 1 }, false},
		{"slave 1", func(c *Config) { c.HA.BrokerRole, c.BrokerID = ha.Slave, 1 }, true},
		{"slave 0", func(c *Config) { c.HA.BrokerRole = ha.Slave }, false},
		{"slave -1", func(c *Config) { c.HA.BrokerRole, c.BrokerID = ha.Slave, -1 }, false},
		{"bad brokerIP2", func(c *Config) { c.BrokerIP2 = "host" }, false},
		{"haListenPort", func(c *Config) { c.HA.HAListenPort = 70000 }, false},
		{"slaveTimeout", func(c *Config) { c.HA.SlaveTimeout = 0 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.BrokerName, c.BrokerIP1, c.ListenPort = "b", "10.0.0.1", 10911
			tc.edit(&c)
			if err := c.Validate(); (err == nil) != tc.ok {
				t.Fatalf("Validate: %v", err)
			}
		})
	}
	c := DefaultConfig()
	c.BrokerName, c.BrokerIP1, c.ListenPort = "b", "10.0.0.1", 20911
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.HA.HAListenPort != 20912 || c.BrokerIP2 != "10.0.0.1" || c.HAServerAddr() != "10.0.0.1:20912" {
		t.Fatalf("haListenPort %d brokerIP2 %q haServerAddr %q", c.HA.HAListenPort, c.BrokerIP2, c.HAServerAddr())
	}
}

// A SYNC_MASTER send waits for a slave (and the flush under SYNC_FLUSH);
// each way the wait can end is answered with Apache's status, the message
// stored either way. An ASYNC_MASTER, and WAIT=false, do not wait.
func TestSyncMasterSendStatus(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flush store.FlushDiskType
		err   error
		want  send.Status
	}{
		{"acked", store.AsyncFlush, nil, send.OK},
		{"no slave", store.AsyncFlush, store.ErrReplicaNotAvailable, send.SlaveNotAvailable},
		{"slave timeout", store.AsyncFlush, errors.Join(errors.New("offset 10"), store.ErrReplicaTimeout), send.FlushSlaveTimeout},
		{"closed", store.AsyncFlush, store.ErrClosed, send.FlushSlaveTimeout},
		{"sync flush closed", store.SyncFlush, store.ErrClosed, send.FlushDiskTimeout},
		{"sync flush slave timeout", store.SyncFlush, store.ErrReplicaTimeout, send.FlushSlaveTimeout},
		{"sync flush disk timeout", store.SyncFlush, store.ErrFlushTimeout, send.FlushDiskTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := testBroker(t, t.TempDir(), func(c *Config) {
				c.HA.BrokerRole = ha.SyncMaster
				c.Store.FlushDiskType = tc.flush
			})
			putTopic(t, b, "T", 1, message.PermRead|message.PermWrite)
			var need store.Durability
			b.wait = func(_ int64, n store.Durability, done func(error)) { need = n; done(tc.err) }
			var got send.Status = -1
			var res send.Result
			if err := b.Sends.Send(sendReq("T", "", "x"), &res, func() func(send.Status) {
				return func(st send.Status) { got = st }
			}); err != nil {
				t.Fatal(err)
			}
			want := store.Replicated
			if tc.flush == store.SyncFlush {
				want |= store.Flushed
			}
			if need != want || got != tc.want || !res.Parked || len(res.MsgID) == 0 {
				t.Fatalf("waited for %v, status %v (parked %t, msgId %q); want %v, %v", need, got, res.Parked, res.MsgID, want, tc.want)
			}
		})
	}
	// A batch waits for its last message's end.
	sm, _ := testBroker(t, t.TempDir(), func(c *Config) { c.HA.BrokerRole = ha.SyncMaster })
	putTopic(t, sm, "T", 1, message.PermRead|message.PermWrite)
	var waited int64
	sm.wait = func(end int64, _ store.Durability, done func(error)) {
		waited = end
		done(store.ErrReplicaNotAvailable)
	}
	var got send.Status = -1
	var bres send.Result
	if err := sm.Sends.Send(batchReq(t, "T", "", "a", "b", "c"), &bres, func() func(send.Status) {
		return func(st send.Status) { got = st }
	}); err != nil {
		t.Fatal(err)
	}
	if got != send.SlaveNotAvailable || waited != sm.Store.MaxPhyOffset() || strings.Count(string(bres.MsgID), ",") != 2 {
		t.Fatalf("batch: status %v, waited for %d (log end %d), msgId %q", got, waited, sm.Store.MaxPhyOffset(), bres.MsgID)
	}

	b, _ := testBroker(t, t.TempDir(), nil)
	putTopic(t, b, "T", 1, message.PermRead|message.PermWrite)
	b.wait = func(int64, store.Durability, func(error)) { t.Fatal("an ASYNC_MASTER waited") }
	var res send.Result
	if err := b.Sends.Send(sendReq("T", "", "x"), &res, func() func(send.Status) { return func(send.Status) {} }); err != nil || res.Parked {
		t.Fatalf("ASYNC_MASTER: %v parked %t", err, res.Parked)
	}
}

// fakeHA records how the broker made and stopped its replication service.
type fakeHA struct {
	cfg     ha.Config
	mu      sync.Mutex
	stopped bool
}

func (f *fakeHA) Start() error { return nil }
func (f *fakeHA) Shutdown(context.Context) error {
	f.mu.Lock()
	f.stopped = true
	f.mu.Unlock()
	return nil
}
func (f *fakeHA) Addr() string               { return "127.0.0.1:" + strconv.Itoa(f.cfg.HAListenPort) }
func (f *fakeHA) UpdateMasterAddress(string) {}
func (f *fakeHA) Status() ha.Status          { return ha.Status{Role: f.cfg.BrokerRole} }

// freePort picks a free loopback port (racy, fine for tests).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// runServing starts a broker that serves nothing (an empty table) and
// registers with namesrvAddr, with a fake replication service.
func runServing(t *testing.T, namesrvAddr string, edit func(*Config)) (*Broker, *fakeHA) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.BrokerName, cfg.BrokerIP1, cfg.BindAddress = "bn", "127.0.0.1", "127.0.0.1"
	cfg.ListenPort = freePort(t)
	cfg.NamesrvAddr = namesrvAddr
	cfg.ServerWorkerThreads = 1
	cfg.Store.StorePathRootDir = t.TempDir()
	cfg.Store.MappedFileSizeCommitLog = 1 << 20
	cfg.RegisterBrokerTimeoutMills = 20000
	cfg.FastListenPort = -1
	if edit != nil {
		edit(&cfg)
	}
	b, err := New(cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	fake := &fakeHA{}
	b.newHA = func(c ha.Config, _ string, _ *store.Store, _ zerolog.Logger) (role.Replicator, error) {
		fake.cfg = c
		return fake, nil
	}
	if err := b.Start(remoting.Table{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return b, fake
}

// The replication service starts with the broker, with its HA keys
// (brokerRole among them, haAuthSecret as the service's secret), and is
// shut down with it.
func TestReplicationFollowsBroker(t *testing.T) {
	b, fake := runServing(t, "", func(c *Config) { c.HA.BrokerRole, c.HAAuthSecret = ha.SyncMaster, "s3cret" })
	if fake.cfg.BrokerRole != ha.SyncMaster || string(fake.cfg.AuthSecret) != "s3cret" {
		t.Fatalf("replication service made with role %v secret %q", fake.cfg.BrokerRole, fake.cfg.AuthSecret)
	}
	if st := b.Role.HAStatus(); st.Role != ha.SyncMaster {
		t.Fatalf("HA status %+v", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if !fake.stopped {
		t.Error("replication service not shut down")
	}
}

// slaveReadEnable changes at runtime (Apache reads it per pull); the role
// does not (recorded for the next start).
func TestSlaveReadEnableAtRuntime(t *testing.T) {
	b, _ := testBroker(t, t.TempDir(), func(c *Config) { c.BrokerID, c.HA.BrokerRole = 1, ha.Slave; optIn(c) })
	if !b.Role.RejectsPulls() || !b.Role.RejectsSends() {
		t.Fatal("a slave without slaveReadEnable takes pulls or sends")
	}
	ch, err := b.UpdateConfig([]byte("slaveReadEnable=true\nbrokerRole=ASYNC_MASTER\nbrokerId=0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if b.Role.RejectsPulls() || !b.Role.IsSlave() || len(ch.Applied) != 1 || ch.Applied[0] != "slaveReadEnable" {
		t.Fatalf("after the update: rejects pulls %t, slave %t, change %+v", b.Role.RejectsPulls(), b.Role.IsSlave(), ch)
	}
}

// A slave's runtime info counts no puts, as Apache's (its put statistics
// never see the replicated messages), though its queues hold them.
func TestSlaveRuntimeInfoCountsNoPuts(t *testing.T) {
	dir := t.TempDir()
	m, stop := testBroker(t, dir, nil)
	if err := m.Sends.Send(sendReq("T", "", "counted"), &send.Result{}, nil); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return m.Store.MaxOffset("T", 0) == 1 })
	if got := m.RuntimeInfo()["msgPutTotalTodayNow"]; got != "1" {
		t.Fatalf("master counts %q puts", got)
	}
	stop()
	s, _ := testBroker(t, dir, func(c *Config) { c.BrokerID, c.HA.BrokerRole = 1, ha.Slave })
	testutil.WaitFor(t, 10*time.Second, func() bool { return s.Store.MaxOffset("T", 0) == 1 })
	if info := s.RuntimeInfo(); info["msgPutTotalTodayNow"] != "0" || info["putTps"] != "  " ||
		info["brokerActive"] != "false" {
		t.Fatalf("slave runtime info: msgPutTotalTodayNow %q putTps %q brokerActive %q",
			info["msgPutTotalTodayNow"], info["putTps"], info["brokerActive"])
	}
}
