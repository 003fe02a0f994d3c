package compattest

import (
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// TestControllerGoBrokersElectBack: mastership moved by an admin election
// (1002 with designateElect, mqadmin electMaster's request) from the
// master to a slave and back, again and again, on three rocketgo brokers
// under three rocketgo controllers: first on a quiet set, then under load.
// After every election the demoted master follows the new one (truncating
// to the consistent point), and the new master proposes every slave back
// into the SyncStateSet (1001); the whole set must be in sync again within
// electBackBound. Under load every acknowledged message must be on the
// last master (allAckInSyncStateSet). ROCKETGO_ELECT_ROUNDS sets the rounds
// per phase (default 10; each round two elections).
func TestControllerGoBrokersElectBack(t *testing.T) {
	t.Parallel()
	rounds := 10
	if n, err := strconv.Atoi(os.Getenv("ROCKETGO_ELECT_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	r, _, state := newGoCtlSet(t, "electback")
	start := time.Now()
	var worst time.Duration
	var times []string
	phase := func(name string) {
		for i := range rounds {
			for leg := range 2 {
				d := electAway(t, r, state)
				worst = max(worst, d)
				times = append(times, d.Round(10*time.Millisecond).String())
				t.Logf("%s round %d.%d: the set whole again %v after the election", name, i+1, leg+1, d.Round(time.Millisecond))
			}
		}
	}
	phase("quiet")
	r.startLoad()
	r.waitSends(time.Now(), 100, 60*time.Second, "before the elections under load")
	phase("load")
	r.waitSends(time.Now(), 50, 60*time.Second, "after the elections")
	all := r.stopLoad()
	master := state().masterAddr
	checkAckedPulled(t, master, r.topic, all, "on the last master")
	report(t, start, len(all), len(all), fmt.Sprintf("elections=%d worst=%s times=%s", 4*rounds,
		worst.Round(time.Millisecond), strings.Join(times, ",")))
}

// checkAckedPulled fails unless every acknowledged message is on addr at
// the queue and offset its producer was told, with its body, read by pull
// from the consume queues (durability). It then asks the index for each by
// its message id (QUERY_MESSAGE) and logs the ones it misses, apart from
// durability: truncations leave index entries whose records are gone, and
// a query has to skip them.
func checkAckedPulled(t *testing.T, addr, topic string, acked []ackedMsg, when string) {
	t.Helper()
	queues := map[int]bool{}
	for _, a := range acked {
		queues[a.queueID] = true
	}
	byID := map[string][]*primitive.MessageExt{}
	for q := range queues {
		msgs, err := pullQueue(addr, topic, uniq("electback_reader"), q, 0)
		if err != nil {
			t.Fatalf("%s: pull queue %d: %v", when, q, err)
		}
		for _, m := range msgs {
			byID[m.GetProperty(idProp)] = append(byID[m.GetProperty(idProp)], m)
		}
	}
	for _, a := range acked {
		ok := false
		for _, m := range byID[a.id] {
			ok = ok || (string(m.Body) == a.body && int(m.Queue.QueueId) == a.queueID && m.QueueOffset == a.offset)
		}
		if !ok {
			t.Fatalf("%s: acknowledged %s (queue %d offset %d) not in its consume queue (%d copies elsewhere)",
				when, a.id, a.queueID, a.offset, len(byID[a.id]))
		}
	}
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	end := time.Now().UnixMilli() + 1000
	var missed []string
	for _, a := range acked {
		r, err := queryMessageOn(conn, topic, a.uniq, 32, 0, end, true)
		if err != nil {
			t.Fatalf("%s: query %s: %v", when, a.id, err)
		}
		if !slices.ContainsFunc(r.records, func(m *primitive.MessageExt) bool { return m.MsgId == a.uniq }) {
			missed = append(missed, a.id)
		}
	}
	if len(missed) > 0 {
		t.Logf("%s: the index misses %d of %d acknowledged messages the consume queues hold: %v",
			when, len(missed), len(acked), missed[:min(len(missed), 10)])
	}
}

// electBackBound is how long the set may take to be whole again after an
// election: the slaves' reconnection (a refused one is retried within
// 5 s), their truncation and catch-up, and the new master's proposal.
const electBackBound = 10 * time.Second

// electAway elects an in-sync slave in place of the master and returns
// how long it took until every broker was back in the SyncStateSet under
// the new master; it fails the test past electBackBound.
func electAway(t *testing.T, r *ctlRig, state func() ctlSyncState) time.Duration {
	t.Helper()
	s := state()
	if len(s.inSync) != 3 {
		t.Fatalf("set not whole before the election: %+v", s)
	}
	var target string
	for _, a := range s.inSync {
		if a != s.masterAddr {
			target = a
			break
		}
	}
	old := s.masterAddr
	li := r.g.leader(30 * time.Second)
	at := time.Now()
	resp, err := rawInvoke(r.g.addrs[li], javaRequest(1002, map[string]string{"clusterName": clusterName, "brokerName": ctlBrokerSet,
		"brokerId": strconv.FormatInt(s.ids[target], 10), "designateElect": "true",
		"invokeTime": strconv.FormatInt(at.UnixMilli(), 10)}, nil), 5*time.Second)
	if err != nil || resp.Code != 0 {
		t.Fatalf("elect %s: %v %+v", target, err, resp)
	}
	if !waitFor(t, electBackBound, func() bool {
		st := state()
		return st.masterAddr == target && len(st.inSync) == 3
	}) {
		st := state()
		for _, b := range r.bs {
			if b.addr == old || !slices.Contains(st.inSync, b.addr) {
				t.Logf("tail of %s:\n%s", b.name, tailFile(b.p.logPath, 40))
			}
		}
		t.Fatalf("after electing %s in place of %s: set not whole within %v: %+v", target, old, electBackBound, st)
	}
	return time.Since(at)
}
