package role

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/namesrv/namesrvtest"
)

// afterRegistration calls AfterRegistration and waits for done, failing
// past limit; it returns how long done took.
func afterRegistration(t *testing.T, h *harness, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	called := make(chan struct{})
	var once sync.Once
	h.AfterRegistration(func() {
		ok := true
		once.Do(func() { ok = false; close(called) })
		if ok {
			t.Error("done called twice")
		}
	})
	select {
	case <-called:
	case <-time.After(limit):
		t.Fatalf("done not called within %v", limit)
	}
	return time.Since(start)
}

// A topic added to the table is in the name server's routes when
// AfterRegistration calls done, every time; before the role runs and after
// it stopped, done is called at once.
func TestAfterRegistration(t *testing.T) {
	ns := namesrvtest.Run(t)
	h := newHarness(t, func(c *Config) { c.NamesrvAddrs = []string{ns.Addr()} }, withFakeHA(&fakeHA{}))
	afterRegistration(t, h, time.Second) // not running: nobody to wait for
	h.start(t)
	for i := range 30 {
		name := fmt.Sprintf("New%d", i)
		if err := h.topics.Put(tables.TopicConfig{TopicName: name, ReadQueueNums: 1, WriteQueueNums: 1, Perm: message.PermRead | message.PermWrite}); err != nil {
			t.Fatal(err)
		}
		afterRegistration(t, h, 10*time.Second)
		if _, err := ns.Routes.Route(name); err != nil {
			t.Fatalf("topic %s: done called before the name server had its route: %v", name, err)
		}
	}
	h.stop()
	afterRegistration(t, h, time.Second)
}

// A name server that never answers holds done back for
// registerBrokerTimeoutMills at most, and a live one has the route by then.
func TestAfterRegistrationHangingNamesrv(t *testing.T) {
	hanging := hangingNamesrv(t)
	ns := namesrvtest.Run(t)
	h := newHarness(t, func(c *Config) {
		c.NamesrvAddrs = []string{hanging, ns.Addr()}
		c.RegisterTimeout = 2 * time.Second
	}, withFakeHA(&fakeHA{}))
	h.start(t)
	if err := h.topics.Put(tables.TopicConfig{TopicName: "Late", ReadQueueNums: 1, WriteQueueNums: 1, Perm: message.PermRead | message.PermWrite}); err != nil {
		t.Fatal(err)
	}
	took := afterRegistration(t, h, 10*time.Second)
	if took < time.Second {
		t.Errorf("done after %v: the hanging name server was not waited for", took)
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { _, err := ns.Routes.Route("Late"); return err == nil })
}
