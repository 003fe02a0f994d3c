package pull

import (
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/store"
	"github.com/rocketgo/rocketgo/store/storetest"
)

func TestMain(m *testing.M) {
	store.FakeDiskUsage(0.5) // no test depends on how full the host disk is
	testutil.VerifyNoLeaks(m)
}

var testHost = netip.MustParseAddrPort("127.0.0.1:10911")

// setup is what a test changes of the harness before it starts.
type setup struct {
	cfg              Config
	deps             Deps // MaxParked, ColdThreads, ColdCapacity
	autoCreateGroups bool
	commitLogSize    int64
	run              bool // the cold workers run
}

// harness is the service on a real store and real tables, with topic T (4
// queues) and group G, as a broker builds it.
type harness struct {
	*Service
	st      *store.Store
	topics  *tables.Topics
	groups  *tables.Groups
	offsets *tables.Offsets
	clients *tables.Clients
	counts  stats.Stats
	filters tables.Filters
	cfg     atomic.Pointer[Config]
}

func newHarness(t *testing.T, edit func(*setup)) *harness {
	t.Helper()
	su := setup{autoCreateGroups: true, commitLogSize: 1 << 20, run: true,
		cfg: Config{BrokerIP1: "127.0.0.1", Permission: message.PermRead | message.PermWrite, MaxTransferCount: 32,
			MaxTransferBytes: 256 << 10, LongPollingEnable: true, ShortPollingTime: time.Second},
		deps: Deps{MaxParked: DefaultMaxParked, ColdThreads: 4, ColdCapacity: 100}}
	if edit != nil {
		edit(&su)
	}
	dir := t.TempDir()
	h := &harness{
		topics:  tables.NewTopics(filepath.Join(dir, "config", "topics.json"), 1024, func() {}, func() bool { return false }),
		groups:  tables.NewGroups(filepath.Join(dir, "config", "subscriptionGroup.json"), 1024, func() bool { return su.autoCreateGroups }),
		offsets: tables.NewOffsets(filepath.Join(dir, "config", "consumerOffset.json"), 1024),
		clients: tables.NewClients(time.Minute, zerolog.Nop())}
	h.st = storetest.Open(t, dir, func(c *store.Config) {
		c.MappedFileSizeCommitLog = su.commitLogSize
		c.AccessMessageInMemoryMaxRatio = 0 // the residency check reads 17 MiB in these tests, not GiBs
	})
	st := h.st
	h.cfg.Store(&su.cfg)
	d := su.deps
	d.Config = func() Config { return *h.cfg.Load() }
	d.Store, d.Offsets, d.Groups, d.Topics, d.Filters, d.Clients = st, h.offsets, h.groups, h.topics, &h.filters, h.clients
	d.Counts, d.Got, d.StoreGot = &h.counts, func(bool, int) {}, func(time.Duration) {}
	h.Service = New(d, zerolog.Nop())
	quit := make(chan struct{})
	var wg sync.WaitGroup
	if su.run {
		wg.Go(func() { h.Run(quit) })
	}
	t.Cleanup(func() { // before the store's shutdown: cleanups run last first
		close(quit)
		wg.Wait()
	})
	if err := h.topics.Put(tables.TopicConfig{TopicName: "T", ReadQueueNums: 4, WriteQueueNums: 4, Perm: message.PermRead | message.PermWrite}); err != nil {
		t.Fatal(err)
	}
	if err := h.groups.Put(tables.DefaultGroupConfig("G")); err != nil {
		t.Fatal(err)
	}
	return h
}

// setConfig changes the configuration in force, as UPDATE_BROKER_CONFIG does.
func (h *harness) setConfig(edit func(*Config)) {
	c := *h.cfg.Load()
	edit(&c)
	h.cfg.Store(&c)
}

func testMsg(topic, props string) *store.PutMessage {
	return &store.PutMessage{Topic: topic, Body: []byte("hello"), Properties: props, BornHost: testHost, StoreHost: testHost,
		BornTimestamp: time.Now().UnixMilli()}
}

func props(kv ...string) string { return message.SetProperties("", kv...) }

// putT stores messages with the given tags in T/0 and waits for their
// dispatch.
func putT(t *testing.T, h *harness, tags ...string) {
	t.Helper()
	want := h.st.MaxOffset("T", 0) + int64(len(tags))
	for _, tag := range tags {
		if _, err := h.st.Put(testMsg("T", props("TAGS", tag, "color", strings.ToLower(tag)))); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return h.st.MaxOffset("T", 0) == want })
}
