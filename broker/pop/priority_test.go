package pop

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/store"
)

// putPriority makes topic P (4 queues, message.type PRIORITY) and stores n
// messages in each of its queues.
func putPriority(t *testing.T, h *harness, n int) {
	t.Helper()
	if err := h.topics.Put(tables.TopicConfig{TopicName: "P", ReadQueueNums: 4, WriteQueueNums: 4,
		Perm: message.PermRead | message.PermWrite, Attributes: map[string]string{"message.type": "PRIORITY"}}); err != nil {
		t.Fatal(err)
	}
	for q := range int32(4) {
		for range n {
			m := &store.PutMessage{Topic: "P", QueueID: q, Body: []byte("x"), BornHost: testHost, StoreHost: testHost,
				BornTimestamp: time.Now().UnixMilli()}
			if _, err := h.st.Put(m); err != nil {
				t.Fatal(err)
			}
		}
		testutil.WaitFor(t, 10*time.Second, func() bool { return h.st.MaxOffset("P", q) == int64(n) })
	}
}

// poppedQueue pops one message of P from any queue and returns its queue.
func poppedQueue(t *testing.T, h *harness, group string) int {
	t.Helper()
	res := popNow(t, h, Request{Group: group, Topic: "P", QueueID: -1, MaxMsgNums: 1, InvisibleTime: 60_000, InitMode: 1})
	if res.Status != Found || res.Count != 1 {
		t.Fatalf("pop %+v", res)
	}
	res.Release()
	// startOffsetInfo: "0 <queue> <offset>" for the one queue read.
	f := strings.Fields(res.StartOffsetInfo)
	q, err := strconv.Atoi(f[1])
	if len(f) != 3 || err != nil {
		t.Fatalf("startOffsetInfo %q", res.StartOffsetInfo)
	}
	return q
}

// A PRIORITY topic's pops take the highest queue first (priorityOrderAsc,
// the default) or queue 0 first; a group whose priority.factor is 0 reads
// from a random queue.
func TestPopByPriority(t *testing.T) {
	h := newHarness(t)
	putPriority(t, h, 2)
	var got []int
	for range 8 {
		got = append(got, poppedQueue(t, h, "G"))
	}
	if want := []int{3, 3, 2, 2, 1, 1, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("queues popped %v, want %v", got, want)
	}

	c := *h.cfg.Load()
	c.PriorityOrderAsc = false
	h.cfg.Store(&c)
	got = got[:0]
	for range 8 {
		got = append(got, poppedQueue(t, h, "G2"))
	}
	if want := []int{0, 0, 1, 1, 2, 2, 3, 3}; !slices.Equal(got, want) {
		t.Errorf("priorityOrderAsc=false: queues popped %v, want %v", got, want)
	}

	// Groups whose priority.factor is 0, each popping P for the first time:
	// the queue each reads is where its random start fell, queue 3 for all
	// 20 with probability 4^-20.
	first := map[int]bool{}
	for i := range 20 {
		group := "Random" + strconv.Itoa(i)
		if err := h.groups.Put(tables.GroupConfig{GroupName: group, ConsumeEnable: true,
			Attributes: map[string]string{"+" + tables.AttrPriorityFactor: "0"}}); err != nil {
			t.Fatal(err)
		}
		first[poppedQueue(t, h, group)] = true
	}
	if len(first) < 2 {
		t.Errorf("priority.factor=0: every pop read queue %v", first)
	}
}
