package processor

import (
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
)

// CLEAN_UNUSED_TOPIC deletes the queues of a topic the table no longer
// holds, and no other; CLEAN_EXPIRED_CONSUMEQUEUE answers SUCCESS and
// leaves queues whose entries are all readable.
func TestCleanQueues(t *testing.T) {
	b, cl := svcBroker(t)
	putKeyed(t, b, 2)
	resp := svcCall(t, b, cl, remoting.CleanExpiredConsumeQueue, nil, nil)
	expectAnswer(t, resp, remoting.Success, "")
	resp = svcCall(t, b, cl, remoting.CleanUnusedTopic, nil, nil)
	expectAnswer(t, resp, remoting.Success, "")
	if b.Store.MaxOffset("T", 0) != 2 {
		t.Fatalf("T's queue cleaned while in use: max %d", b.Store.MaxOffset("T", 0))
	}
	b.Topics.Delete("T") // from the table only: its queues stay on disk
	if _, ok := b.Store.Topics()["T"]; !ok {
		t.Fatal("T's queues gone with the table entry")
	}
	resp = svcCall(t, b, cl, remoting.CleanUnusedTopic, nil, nil)
	expectAnswer(t, resp, remoting.Success, "")
	testutil.WaitFor(t, 10*time.Second, func() bool { _, ok := b.Store.Topics()["T"]; return !ok })
}
