package compattest

// Crash safety with real processes: official Go client producers send while
// mqbroker is killed with SIGKILL; after each restart every acknowledged
// message must be in its queue at its acknowledged offset, findable by its
// unique key, and finally consumable. ROCKETGO_CRASH_CYCLES sets the number
// of kill/restart cycles (3 by default; `make soak` runs 20).

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

func crashCycles(def int) int {
	if n, err := strconv.Atoi(os.Getenv("ROCKETGO_CRASH_CYCLES")); err == nil && n > 0 {
		return n
	}
	return def
}

type ackedMsg struct {
	id, uniq string
	queueID  int
	offset   int64
	body     string
}

func TestCrashSyncFlush(t *testing.T) { runCrash(t, "SYNC_FLUSH", crashCycles(3)) }

// With ASYNC_FLUSH a killed process loses nothing either (its writes are in
// the page cache); what must hold is that recovery finds no corruption.
func TestCrashAsyncFlush(t *testing.T) { runCrash(t, "ASYNC_FLUSH", 1) }

func runCrash(t *testing.T, flushDiskType string, cycles int) {
	start := time.Now()
	c := newCluster(t, "crash-"+strings.ToLower(flushDiskType))
	c.stopBroker()
	// Small files, so cycles cross commit log, consume queue and index
	// file boundaries.
	extra := fmt.Sprintf(`flushDiskType=%s
mappedFileSizeCommitLog=1048576
mappedFileSizeConsumeQueue=6000
maxHashSlotNum=1000
maxIndexNum=3000
`, flushDiskType)
	startBrokerWith(t, c, extra)
	topic := uniq("CrashTopic")
	createTopic(t, c, topic)
	// topics.json is persisted by a 1 s ticker (Apache writes it on every
	// update): wait for it, or the first kill would lose the topic itself.
	if !waitFor(t, 10*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(c.dir, "store", "config", "topics.json"))
		return strings.Contains(string(b), topic)
	}) {
		t.Fatal("topic not persisted to config/topics.json")
	}

	var (
		mu    sync.Mutex
		acked []ackedMsg
	)
	var recoveries []string
	for cycle := 0; cycle < cycles; cycle++ {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var prods []*producerHandle
		before := len(acked)
		for w := 0; w < 4; w++ {
			p := newProducer(t, c, producer.WithRetry(0), producer.WithSendMsgTimeout(3*time.Second))
			prods = append(prods, p)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ctx.Err() == nil; i++ {
					id := fmt.Sprintf("c%d-w%d-%d", cycle, w, i)
					m := newMsg(topic, id, "TagC")
					m.WithKeys([]string{id})
					r, err := p.sendSync(ctx, m)
					if err != nil || r.Status != primitive.SendOK {
						continue
					}
					mu.Lock()
					acked = append(acked, ackedMsg{id, r.MsgID, r.MessageQueue.QueueId, r.QueueOffset, "body-" + id})
					mu.Unlock()
				}
			}()
		}
		// Kill mid-load: after a few hundred acknowledgements.
		waitFor(t, 20*time.Second, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(acked)-before >= 300
		})
		_ = c.broker.cmd.Process.Kill()
		<-c.broker.done
		cancel()
		wg.Wait()
		for _, p := range prods {
			p.shutdown()
		}
		mu.Lock()
		cycleAcked := len(acked) - before
		mu.Unlock()
		if cycleAcked == 0 {
			t.Fatalf("cycle %d: nothing acknowledged before the kill", cycle)
		}

		restart := time.Now()
		startBrokerWith(t, c, extra)
		recoveries = append(recoveries, fmt.Sprintf("%.2fs", time.Since(restart).Seconds()))
		checkAcked(t, c, topic, acked, fmt.Sprintf("cycle %d", cycle))
		t.Logf("cycle %d: %d acknowledged before SIGKILL, all %d so far present after a restart of %s",
			cycle, cycleAcked, len(acked), recoveries[len(recoveries)-1])
	}

	waitRoute(t, c, topic, 0)
	col := newCollector("crash")
	startConsumer(t, c, uniq("CG_crash"), topic, "*", col)
	ids := make([]string, len(acked))
	for i, a := range acked {
		ids[i] = a.id
	}
	waitAll(t, col, ids, 60*time.Second, "consume every acknowledged message after the crashes")
	report(t, start, len(acked), col.distinct(), fmt.Sprintf("%s cycles=%d restarts=%s", flushDiskType, cycles, strings.Join(recoveries, ",")))
}

// checkAcked verifies every acknowledged message: the queue reaches past its
// offset and QUERY_MESSAGE by unique key returns it, with its body, at that
// queue/offset. when names the moment in failures.
func checkAcked(t *testing.T, c *cluster, topic string, acked []ackedMsg, when string) {
	t.Helper()
	maxAcked := map[int]int64{}
	for _, a := range acked {
		maxAcked[a.queueID] = max(maxAcked[a.queueID], a.offset+1)
	}
	for q, want := range maxAcked {
		got, err := getMaxOffset(c.brokerAddr, topic, q)
		if err != nil || got < want {
			t.Fatalf("%s: queue %d max offset %d (%v), an acknowledged message has offset %d", when, q, got, err, want-1)
		}
	}
	end := time.Now().UnixMilli() + 1000
	conn, err := net.DialTimeout("tcp", c.brokerAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, a := range acked {
		r, err := queryMessageOn(conn, topic, a.uniq, 32, 0, end, true)
		if err != nil {
			t.Fatalf("%s: query %s: %v", when, a.id, err)
		}
		found := false
		for _, m := range r.records {
			if m.MsgId == a.uniq {
				found = true
				if string(m.Body) != a.body || int(m.Queue.QueueId) != a.queueID || m.QueueOffset != a.offset {
					t.Fatalf("%s: %s stored as queue %d offset %d (%d body bytes), acknowledged queue %d offset %d",
						when, a.id, m.Queue.QueueId, m.QueueOffset, len(m.Body), a.queueID, a.offset)
				}
			}
		}
		if !found {
			t.Fatalf("%s: acknowledged %s (queue %d offset %d) not found: code %d %q",
				when, a.id, a.queueID, a.offset, r.code, r.remark)
		}
	}
}
