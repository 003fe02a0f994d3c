package pop

import (
	"net/netip"
	"path/filepath"
	"strings"
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

// harness is the service on a real store and real tables, with topic T (4
// queues) and groups created on demand, as a master broker builds it.
type harness struct {
	*Service
	st      *store.Store
	topics  *tables.Topics
	offsets *tables.Offsets
	counts  stats.Stats
	revive  stats.PopStats
	filters tables.Filters
	jobs    chan struct{} // tokens of the goroutines Go started
	groups  *tables.Groups
	cfg     atomic.Pointer[Config]
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	dir := t.TempDir()
	st := storetest.Open(t, dir, nil)
	h := &harness{st: st, jobs: make(chan struct{}, 64),
		topics:  tables.NewTopics(filepath.Join(dir, "config", "topics.json"), 1024, func() {}, func() bool { return false }),
		offsets: tables.NewOffsets(filepath.Join(dir, "config", "consumerOffset.json"), 1024)}
	h.topics.PutSystem(tables.TopicConfig{TopicName: "T", ReadQueueNums: 4, WriteQueueNums: 4, Perm: message.PermRead | message.PermWrite})
	groups := tables.NewGroups(filepath.Join(dir, "config", "subscriptionGroup.json"), 1024, func() bool { return true })
	h.groups = groups
	h.cfg.Store(&Config{BrokerName: "b", BrokerIP1: "127.0.0.1", ClusterName: "c", Permission: message.PermRead | message.PermWrite,
		TimerWheelEnable: true, MaxTransferBytes: 256 << 10, MaxTransferCount: 32, PriorityOrderAsc: true})
	h.Service = New(Deps{Config: func() Config { return *h.cfg.Load() }, Store: st, Offsets: h.offsets, Topics: h.topics, Groups: groups,
		Filters: &h.filters,
		CreateDLQ: func(topic string) (int32, error) {
			_, _, err := h.topics.CreateIfAbsent(tables.TopicConfig{TopicName: topic, ReadQueueNums: 1, WriteQueueNums: 1,
				Perm: message.PermRead | message.PermWrite})
			return 1, err
		},
		PutStatus: func(err error) string { return "UNKNOWN_ERROR" },
		Go: func(fn func()) bool {
			h.jobs <- struct{}{}
			go func() { defer func() { <-h.jobs }(); fn() }()
			return true
		},
		Counts: &h.counts, Revive: &h.revive, Got: func(bool, int) {}, StoreHost: testHost,
		OrdersPath: filepath.Join(dir, "config", "consumerOrderInfo.json")}, zerolog.Nop())
	t.Cleanup(func() {
		for range cap(h.jobs) { // every pop answered, before the store shuts down
			h.jobs <- struct{}{}
		}
	})
	return h
}

// putT stores messages of T/0 with the given tags and waits until they
// are dispatched.
func putT(t *testing.T, h *harness, tags ...string) {
	t.Helper()
	want := h.st.MaxOffset("T", 0) + int64(len(tags))
	for _, tag := range tags {
		m := &store.PutMessage{Topic: "T", Body: []byte("hello"), BornHost: testHost, StoreHost: testHost,
			BornTimestamp: time.Now().UnixMilli(),
			Properties:    message.SetProperties("", "TAGS", tag, "color", strings.ToLower(tag))}
		if _, err := h.st.Put(m); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return h.st.MaxOffset("T", 0) == want })
}
