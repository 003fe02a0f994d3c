package compattest

// What a controller-mode SYNC_MASTER answers, with the brokers configured
// as Apache's quick start configures them (brokerId=-1, brokerRole=SLAVE,
// allAckInSyncStateSet and inSyncReplicas left at their defaults) and
// with the other settings that change it:
//
//   - a lone master (SyncStateSet of one) answers SEND_OK at once;
//   - a master of two whose slave is killed -9 under load, then restarted,
//     answers every send SEND_OK throughout (allAckInSyncStateSet false),
//     or at most FLUSH_SLAVE_TIMEOUT until the set has shrunk (true);
//   - minInSyncReplicas above the set size refuses a send with
//     SYSTEM_ERROR "in-sync replicas not enough" and stores nothing;
//   - a topic created on the master reaches the slave on Apache's
//     controller-mode schedule (a look every 3 s, a whole copy after 10 s)
//     with slaveSynchronizePeriod at its default of a minute.
//
// Every acknowledged message is read back from the master with the
// official Go client's pulls. The rocketgo brokers run in make test; with
// ROCKETGO_JAVA=1 ROCKETGO_CONTROLLER=1 (make test-controller) the same
// cases run against Apache 5.3.3's brokers and must answer the same.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/tidwall/gjson"
)

// ackTarget starts brokers of one implementation in a controller-mode set.
type ackTarget struct {
	name string
	// start starts (or restarts, same store) broker i of set with extra
	// broker.conf lines; the controllers and the name server are given.
	start func(t *testing.T, set string, i int, extra string) *ctlBroker
}

// ackRig is the controllers and name server the cases share; each case
// has a broker set of its own.
type ackRig struct {
	g       *ctlGroup
	c       *cluster
	targets []ackTarget
}

func newAckRig(t *testing.T) *ackRig {
	t.Helper()
	name := uniq("acks")
	r := &ackRig{g: startControllers(t, name+"-raft")}
	r.g.leader(30 * time.Second)
	c, err := startNamesrvConf(name+"-ns", "")
	if c != nil {
		t.Cleanup(c.stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	r.c = c
	ctlAddrs := strings.Join(r.g.addrs, ";")
	ports := map[string]int{}
	var mu sync.Mutex
	r.targets = append(r.targets, ackTarget{name: "rocketgo", start: func(t *testing.T, set string, i int, extra string) *ctlBroker {
		t.Helper()
		key := fmt.Sprintf("%s-b%d", set, i)
		mu.Lock()
		port, ok := ports[key]
		if !ok {
			if port, err = pickPort(); err != nil {
				mu.Unlock()
				t.Fatal(err)
			}
			ports[key] = port
		}
		mu.Unlock()
		// goCtlBrokerConf is the failover tests'; the quick start's
		// defaults override it (a later key wins).
		quick := fmt.Sprintf("brokerName=%s\nallAckInSyncStateSet=false\nslaveSynchronizePeriod=60000\n", set)
		return startGoCtlBrokerOn(t, nil, filepath.Join(workDir, name, key), port, c.nsAddr, ctlAddrs, quick+extra)
	}})
	if os.Getenv("ROCKETGO_JAVA") != "" && os.Getenv("ROCKETGO_CONTROLLER") != "" {
		r.targets = append(r.targets, ackTarget{name: "apache", start: func(t *testing.T, set string, i int, extra string) *ctlBroker {
			t.Helper()
			conf := fmt.Sprintf("brokerName=%s\nbrokerId=-1\nbrokerRole=SLAVE\nenableControllerMode=true\ncontrollerAddr=%s\n"+
				"syncBrokerMetadataPeriod=1000\ncheckSyncStateSetPeriod=1000\nsyncControllerMetadataPeriod=2000\n", set, ctlAddrs)
			bname := fmt.Sprintf("%s-%s-b%d", name, set, i)
			p, addr, _ := startApacheBroker(t, bname, c.nsAddr, conf+extra)
			return &ctlBroker{name: bname, addr: addr, p: p}
		}})
	}
	return r
}

// state is the set's state as the leading controller reports it.
func (r *ackRig) state(set string) ctlSyncState {
	for i := range r.g.addrs {
		if s, err := r.g.syncStateOf(i, set); err == nil {
			return s
		}
	}
	return ctlSyncState{}
}

// waitMaster waits until the controllers name b master of set and b takes
// topic changes as one (it acts on the controller's answer a moment later).
func (r *ackRig) waitMaster(t *testing.T, set string, b *ctlBroker) {
	t.Helper()
	probe := uniq("AckProbe")
	if !waitFor(t, 90*time.Second, func() bool {
		if r.state(set).masterAddr != b.addr {
			return false
		}
		resp, err := rawInvoke(b.addr, createTopicReq(probe, 1, 1), 3*time.Second)
		return err == nil && resp.Code == 0
	}) {
		t.Fatalf("%s never master of %s: %+v", b.addr, set, r.state(set))
	}
}

func (r *ackRig) waitInSync(t *testing.T, set string, n int, what string) {
	t.Helper()
	if !waitFor(t, 90*time.Second, func() bool {
		s := r.state(set)
		return s.masterAddr != "" && len(s.inSync) == n
	}) {
		t.Fatalf("%s: SyncStateSet never %d: %+v", what, n, r.state(set))
	}
}

// sendLoad sends from one official Go producer until stopped, recording
// every outcome.
type sendLoad struct {
	mu     sync.Mutex
	acked  []ackedMsg
	by     map[string]int // outcome (status or error) → count
	after  map[string]int // the same, for sends begun after mark
	mark   time.Time
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func startSendLoad(t *testing.T, c *cluster, topic string) *sendLoad {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	l := &sendLoad{by: map[string]int{}, after: map[string]int{}, cancel: cancel}
	p := newProducer(t, c, producer.WithRetry(0), producer.WithSendMsgTimeout(5*time.Second))
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			id := fmt.Sprintf("load-%d", i)
			m := newMsg(topic, id, "TagAck")
			began := time.Now()
			res, err := p.sendSync(context.Background(), m)
			outcome := "SEND_OK"
			switch {
			case err != nil:
				outcome = "error: " + err.Error()
			case res.Status != primitive.SendOK:
				outcome = fmt.Sprintf("status %d", res.Status)
			}
			l.mu.Lock()
			l.by[outcome]++
			if !l.mark.IsZero() && began.After(l.mark) {
				l.after[outcome]++
			}
			if outcome == "SEND_OK" {
				l.acked = append(l.acked, ackedMsg{id, res.MsgID, res.MessageQueue.QueueId, res.QueueOffset, "body-" + id})
			}
			l.mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return l
}

// markNow starts counting outcomes of sends begun from now on apart.
func (l *sendLoad) markNow() {
	l.mu.Lock()
	l.mark = time.Now()
	l.mu.Unlock()
}

func (l *sendLoad) stop() {
	l.cancel()
	l.wg.Wait()
}

// checkRead fails unless the official client's pulls from the master read
// every acknowledged message once.
func checkRead(t *testing.T, master, topic string, acked []ackedMsg, what string) {
	t.Helper()
	var missing []string
	var got map[string][]*primitive.MessageExt
	waitFor(t, 15*time.Second, func() bool {
		got = pullAll(t, master, topic)
		missing = missing[:0]
		for _, a := range acked {
			if len(got[a.id]) == 0 {
				missing = append(missing, a.id)
			}
		}
		return len(missing) == 0
	})
	if len(missing) > 0 {
		t.Fatalf("%s: %d of %d acknowledged messages not read from %s, e.g. %v", what, len(missing), len(acked), master, missing[:min(5, len(missing))])
	}
	for _, a := range acked {
		if n := len(got[a.id]); n != 1 {
			t.Fatalf("%s: %s read %d times", what, a.id, n)
		}
	}
}

// sendLone sends n messages to a lone master and checks each answer comes
// as SEND_OK within a second.
func sendLone(t *testing.T, c *cluster, topic string, n int, what string) []ackedMsg {
	t.Helper()
	p := newProducer(t, c, producer.WithRetry(0), producer.WithSendMsgTimeout(5*time.Second))
	defer p.shutdown()
	var acked []ackedMsg
	var slowest time.Duration
	for i := range n {
		id := fmt.Sprintf("lone-%d", i)
		began := time.Now()
		res, err := p.sendSync(context.Background(), newMsg(topic, id, "TagAck"))
		took := time.Since(began)
		if err != nil {
			t.Fatalf("%s: send %d: %v after %v; want SEND_OK", what, i, err, took.Round(time.Millisecond))
		}
		if res.Status != primitive.SendOK {
			t.Fatalf("%s: send %d: status %d after %v; want SEND_OK", what, i, res.Status, took.Round(time.Millisecond))
		}
		slowest = max(slowest, took)
		acked = append(acked, ackedMsg{id, res.MsgID, res.MessageQueue.QueueId, res.QueueOffset, "body-" + id})
	}
	if slowest > time.Second {
		t.Fatalf("%s: slowest SEND_OK took %v; a lone master must not wait for replicas", what, slowest)
	}
	t.Logf("%s: %d sends SEND_OK, slowest %v", what, n, slowest.Round(time.Millisecond))
	return acked
}

// ackCaseKill is the lone master, then a slave joining, killed -9 under
// load and restarted; allAck is allAckInSyncStateSet.
func ackCaseKill(t *testing.T, r *ackRig, tg ackTarget, allAck bool) {
	set := uniq("acks" + tg.name[:1])
	extra := fmt.Sprintf("allAckInSyncStateSet=%v\n", allAck)
	b0 := tg.start(t, set, 0, extra)
	r.waitMaster(t, set, b0)
	topic := uniq("AckT")
	createTopicOn(t, r.c.nsAddr, b0.addr, topic)
	acked := sendLone(t, r.c, topic, 20, tg.name+" lone master")

	b1 := tg.start(t, set, 1, extra)
	r.waitInSync(t, set, 2, "slave joined")
	load := startSendLoad(t, r.c, topic)
	time.Sleep(time.Second)
	killAt := time.Now()
	killJava(b1.p)
	r.waitInSync(t, set, 1, "slave killed")
	shrunk := time.Since(killAt)
	load.markNow()
	time.Sleep(2 * time.Second)
	b1 = tg.start(t, set, 1, extra)
	r.waitInSync(t, set, 2, "slave restarted")

	// The slave's copy of a topic created now, with slaveSynchronizePeriod
	// at a minute: Apache's controller-mode schedule copies it within 13 s.
	topic2 := uniq("AckT2")
	created := time.Now()
	createTopicOn(t, r.c.nsAddr, b0.addr, topic2)
	if !waitFor(t, 30*time.Second, func() bool {
		resp, err := rawInvoke(b1.addr, javaRequest(21, nil, nil), 3*time.Second)
		return err == nil && resp.Code == 0 && gjson.GetBytes(resp.Body, "topicConfigTable."+topic2).Exists()
	}) {
		t.Fatalf("slave never copied topic %s", topic2)
	}
	copied := time.Since(created)
	time.Sleep(time.Second)
	load.stop()

	load.mu.Lock()
	by, after := load.by, load.after
	acked = append(acked, load.acked...)
	load.mu.Unlock()
	t.Logf("%s allAckInSyncStateSet=%v: set shrank %v after the kill; outcomes %v, after the shrink %v; new topic on the slave after %v",
		tg.name, allAck, shrunk.Round(time.Millisecond), by, after, copied.Round(time.Millisecond))
	if by["SEND_OK"] == 0 {
		t.Fatalf("no send accepted under load: %v", by)
	}
	timeout := fmt.Sprintf("status %d", primitive.SendFlushSlaveTimeout)
	for outcome, n := range by {
		if outcome == "SEND_OK" || (allAck && outcome == timeout && after[outcome] == 0) {
			continue // allAckInSyncStateSet: the kill may time sends out until the set shrinks
		}
		t.Fatalf("%d sends answered %q (all: %v; after the shrink: %v)", n, outcome, by, after)
	}
	if copied > 20*time.Second {
		t.Fatalf("a new topic reached the slave after %v; want within Apache's 3 s + 10 s schedule", copied)
	}
	checkRead(t, b0.addr, topic, acked, tg.name+" master after the slave's restart")
}

// ackCaseMinInSync is minInSyncReplicas 2: alone the master refuses sends
// (SYSTEM_ERROR, nothing stored); with its slave in the set it accepts
// them at once.
func ackCaseMinInSync(t *testing.T, r *ackRig, tg ackTarget) {
	set := uniq("ackm" + tg.name[:1])
	extra := "minInSyncReplicas=2\n"
	b0 := tg.start(t, set, 0, extra)
	r.waitMaster(t, set, b0)
	topic := uniq("AckM")
	createTopicOn(t, r.c.nsAddr, b0.addr, topic)
	before := totalMax(t, b0.addr, topic)
	resp, err := sendRaw(b0.addr, topic, propsOf("WAIT", "true"))
	if err != nil || resp.Code != 1 || resp.Remark != "in-sync replicas not enough" {
		t.Fatalf("%s: send to a lone master with minInSyncReplicas 2: %+v %v; want SYSTEM_ERROR in-sync replicas not enough", tg.name, resp, err)
	}
	if after := totalMax(t, b0.addr, topic); after != before {
		t.Fatalf("%s: the refused send was stored (queue ends %d → %d)", tg.name, before, after)
	}
	tg.start(t, set, 1, extra)
	r.waitInSync(t, set, 2, "slave joined")
	acked := sendLone(t, r.c, topic, 10, tg.name+" master with its slave, minInSyncReplicas 2")
	checkRead(t, b0.addr, topic, acked, tg.name+" master")
}

// totalMax is the sum of topic's queue ends on addr.
func totalMax(t *testing.T, addr, topic string) int64 {
	t.Helper()
	var n int64
	for q := range haQueues {
		m, err := getMaxOffset(addr, topic, q)
		if err != nil {
			t.Fatal(err)
		}
		n += m
	}
	return n
}

func TestControllerAcks(t *testing.T) {
	start := time.Now()
	r := newAckRig(t)
	for _, tg := range r.targets {
		t.Run(tg.name+"/quickstart", func(t *testing.T) { ackCaseKill(t, r, tg, false) })
		t.Run(tg.name+"/minInSyncReplicas", func(t *testing.T) { ackCaseMinInSync(t, r, tg) })
		if tg.name != "rocketgo" || os.Getenv("ROCKETGO_CONTROLLER") != "" {
			// allAckInSyncStateSet=true is also what TestControllerGoBrokers runs.
			t.Run(tg.name+"/allAck", func(t *testing.T) { ackCaseKill(t, r, tg, true) })
		}
	}
	if t.Failed() {
		return
	}
	var names []string
	for _, tg := range r.targets {
		names = append(names, tg.name)
	}
	report(t, start, 0, 0, "targets="+strings.Join(names, ","))
}
