package broker

import (
	"strings"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
)

// pullBroker is testBroker with the pull service running (its
// cold-pull workers), topic T (4 queues) and group G configured.
func pullBroker(t *testing.T, edit func(*Config)) *Broker {
	t.Helper()
	b, _ := testBroker(t, t.TempDir(), edit)
	quit := make(chan struct{})
	stopped := make(chan struct{})
	go func() { b.Pulls.Run(quit); close(stopped) }()
	t.Cleanup(func() { close(quit); <-stopped }) // before testBroker's stop
	putTopic(t, b, "T", 4, message.PermRead|message.PermWrite)
	if err := b.Groups.Put(tables.DefaultGroupConfig("G")); err != nil {
		t.Fatal(err)
	}
	return b
}

// putT stores messages with the given tags in T/0 and waits for their
// dispatch.
func putT(t *testing.T, b *Broker, tags ...string) {
	t.Helper()
	want := b.Store.MaxOffset("T", 0) + int64(len(tags))
	for _, tag := range tags {
		if _, err := b.Store.Put(testMsg("T", props("TAGS", tag, "color", strings.ToLower(tag)))); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return b.Store.MaxOffset("T", 0) == want })
}
