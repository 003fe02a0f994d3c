package role

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	jsoniter "github.com/json-iterator/go"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/namesrv"
	"github.com/rocketgo/rocketgo/namesrv/namesrvtest"
	"github.com/rocketgo/rocketgo/remoting"
)

func regTopics(n int) []*tables.TopicConfig {
	out := make([]*tables.TopicConfig, n)
	for i := range out {
		tc := tables.TopicConfig{TopicName: fmt.Sprintf("%%RETRY%%group-%06d", i), ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}
		if i%3 == 0 {
			tc.Attributes = map[string]string{"+message.type": "NORMAL"}
		}
		tables.Normalize(&tc)
		out[i] = &tc
	}
	return out
}

// TestRegistrationBodies checks both body forms against the name server's
// decoders, and that the size estimate that decides an automatic split is
// an upper bound of the JSON body.
func TestRegistrationBodies(t *testing.T) {
	h := newHarness(t, nil, nil)
	r := h.reg
	topics := regTopics(1000)
	v := remoting.DataVersion{Counter: 7, StateVersion: 1, Timestamp: 1700000000000}
	for _, compressed := range []bool{false, true} {
		h.edit(func(c *Config) { c.CompressedRegister = compressed })
		body, err := r.encode(topics, v)
		if err != nil {
			t.Fatal(err)
		}
		var rb namesrv.RegisterBody
		if compressed {
			if !namesrv.IsZlib(body) {
				t.Fatalf("compressed body does not start with a zlib header: % x", body[:2])
			}
			rb, err = namesrv.DecodeCompressedRegisterBody(body, namesrv.DefaultMaxRegisterBodyInflated)
		} else {
			if namesrv.IsZlib(body) {
				t.Fatal("JSON body taken for zlib")
			}
			rb, err = namesrv.DecodeRegisterBody(body, 409)
			if est := r.estimate(topics); est < len(body) {
				t.Errorf("estimate %d below the JSON body's %d bytes", est, len(body))
			}
			checkApacheWrapperKeys(t, body)
		}
		if err != nil {
			t.Fatalf("compressed=%v: %v", compressed, err)
		}
		w := rb.TopicConfigSerializeWrapper
		if len(w.TopicConfigTable) != len(topics) || w.DataVersion != (namesrv.DataVersion{Counter: 7, StateVersion: 1, Timestamp: 1700000000000}) {
			t.Fatalf("compressed=%v: %d topics, version %+v", compressed, len(w.TopicConfigTable), w.DataVersion)
		}
		got := w.TopicConfigTable[topics[42].TopicName]
		if got != (namesrv.TopicConfig{TopicName: topics[42].TopicName, ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}) {
			t.Errorf("compressed=%v: topic %+v", compressed, got)
		}
		t.Logf("compressed=%v: %d topics in %d bytes", compressed, len(topics), len(body))
	}
}

// checkApacheWrapperKeys fails unless the JSON body's wrapper has the keys
// of Apache's TopicConfigAndMappingSerializeWrapper, its mapping maps and
// every topic's attributes being objects: a name server decoding strictly
// (rocketmq-rust's) refuses a body without them.
func checkApacheWrapperKeys(t *testing.T, body []byte) {
	t.Helper()
	var b struct {
		Wrapper map[string]jsoniter.RawMessage `json:"topicConfigSerializeWrapper"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	want := []string{"dataVersion", "mappingDataVersion", "topicConfigTable", "topicQueueMappingDetailMap", "topicQueueMappingInfoMap"}
	if got := slices.Sorted(maps.Keys(b.Wrapper)); !slices.Equal(got, want) {
		t.Fatalf("wrapper keys %v, Apache's %v", got, want)
	}
	for _, k := range want[3:] {
		if string(b.Wrapper[k]) != "{}" {
			t.Errorf("%s = %s, want {}", k, b.Wrapper[k])
		}
	}
	var table map[string]struct {
		Attributes jsoniter.RawMessage `json:"attributes"`
	}
	if err := json.Unmarshal(b.Wrapper["topicConfigTable"], &table); err != nil {
		t.Fatal(err)
	}
	for name, tc := range table {
		if len(tc.Attributes) == 0 || tc.Attributes[0] != '{' {
			t.Fatalf("topic %s: attributes %s, want an object", name, tc.Attributes)
		}
	}
}

// The name servers get each topic's perm less what brokerPermission takes
// away; the table itself is left alone.
func TestMaskPerms(t *testing.T) {
	tcs := []*tables.TopicConfig{{TopicName: "A", Perm: message.PermRead | message.PermWrite}, {TopicName: "B", Perm: message.PermRead | message.PermWrite | message.PermInherit}}
	if got := maskPerms(tcs, message.PermRead|message.PermWrite); &got[0] != &tcs[0] {
		t.Fatal("full permission copied the table")
	}
	got := maskPerms(tcs, message.PermRead)
	if got[0].Perm != message.PermRead || got[1].Perm != message.PermRead || tcs[0].Perm != message.PermRead|message.PermWrite {
		t.Fatalf("masked %d %d, table %d", got[0].Perm, got[1].Perm, tcs[0].Perm)
	}
}

func TestChunk(t *testing.T) {
	topics := regTopics(10)
	for _, tc := range []struct {
		size     int
		withRest bool
		want     []int
	}{
		{4, true, []int{4, 4, 2}},
		{5, true, []int{5, 5, 0}}, // Apache sends the (empty) rest too
		{5, false, []int{5, 5}},
		{20, true, []int{10}},
	} {
		parts := chunk(topics, tc.size, tc.withRest)
		var got []int
		for _, p := range parts {
			got = append(got, len(p))
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("chunk(10, %d, %v) = %v, want %v", tc.size, tc.withRest, got, tc.want)
		}
	}
}

// The broker's cost of one full registration of 100,000 topics, per body
// form (the topics are sorted once per registration too).
func BenchmarkRegistrationBody100k(b *testing.B) {
	topics := regTopics(100_000)
	v := remoting.DataVersion{Counter: 1}
	for _, tc := range []struct {
		name              string
		compressed, split bool
	}{{"json", false, false}, {"compressed", true, false}, {"split-json", false, true}} {
		b.Run(tc.name, func(b *testing.B) {
			h := newHarness(b, func(c *Config) { c.CompressedRegister = tc.compressed }, nil)
			r := h.reg
			b.ReportAllocs()
			var n int
			for b.Loop() {
				parts := [][]*tables.TopicConfig{topics}
				if tc.split {
					parts = chunk(topics, h.cfg.Load().SplitRegistrationSize, true)
				}
				n = 0
				for _, p := range parts {
					body, err := r.encode(p, v)
					if err != nil {
						b.Fatal(err)
					}
					n += len(body)
				}
			}
			b.ReportMetric(float64(n), "bytes/registration")
		})
	}
}

// A registration reads the configuration in force: after namesrvAddr and
// brokerPermission change, the full registration asked for
// (RegisterAllSoon) goes to the new name server only, every topic's perm
// masked by the broker's; the table keeps its perms.
func TestRegistrationFollowsConfig(t *testing.T) {
	nsA, addrA := namesrvtest.Start(t)
	nsB, addrB := namesrvtest.Start(t)
	h := newHarness(t, func(c *Config) { c.NamesrvAddrs = []string{addrA} }, nil)
	if err := h.topics.Put(tables.TopicConfig{TopicName: "T", ReadQueueNums: 2, WriteQueueNums: 2, Perm: message.PermRead | message.PermWrite}); err != nil {
		t.Fatal(err)
	}
	h.reg.register(true)
	if regs := nsA.Registrations(); len(regs) != 1 || regs[0]["T"].Perm != message.PermRead|message.PermWrite {
		t.Fatalf("name server A: %+v", regs)
	}
	h.edit(func(c *Config) { c.NamesrvAddrs, c.Permission = []string{addrB}, message.PermRead })
	h.RegisterAllSoon()
	// What RegisterAllSoon asked for: a full registration.
	h.reg.register(h.reg.full.Swap(false))
	if regs := nsB.Registrations(); len(regs) != 1 || regs[0]["T"].Perm != message.PermRead {
		t.Fatalf("name server B: %+v", regs)
	}
	if n := len(nsA.Registrations()); n != 1 {
		t.Fatalf("name server A got %d registrations after namesrvAddr moved", n)
	}
	if tc, _ := h.topics.Get("T"); tc.Perm != message.PermRead|message.PermWrite {
		t.Fatalf("the table's perm changed to %d", tc.Perm)
	}
}

// A name server that accepts connections and never answers delays no
// registration with another: the first registration and the one after a
// new topic reach the live name server while the hanging one still holds
// its requests (registerBrokerTimeoutMills 20 s).
func TestHangingNamesrv(t *testing.T) {
	hanging := hangingNamesrv(t)
	ns := namesrvtest.Run(t)
	start := time.Now()
	h := newHarness(t, func(c *Config) { c.NamesrvAddrs = []string{hanging, ns.Addr()} }, withFakeHA(&fakeHA{}))
	h.start(t)
	testutil.WaitFor(t, 10*time.Second, func() bool { return len(ns.Routes.ClusterInfo().BrokerAddrTable) == 1 })
	if err := h.topics.Put(tables.TopicConfig{TopicName: "Late", ReadQueueNums: 1, WriteQueueNums: 1, Perm: message.PermRead | message.PermWrite}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { _, err := ns.Routes.Route("Late"); return err == nil })
	if took := time.Since(start); took >= 20*time.Second {
		t.Errorf("registrations took %v: held back by the hanging name server", took)
	}
}

// hangingNamesrv is the address of a name server that accepts connections
// and never reads or answers, until the test ends.
func hangingNamesrv(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // read nothing, answer nothing
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String()
}
