package compattest

// Master/slave roles with real processes on loopback:
// a rocketgo master and a rocketgo slave of it on one name server, driven by
// the official Go client. The multi-host scenarios (network namespaces),
// the Apache interop and the benchmarks are in hosts' and repl's files.

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/tidwall/gjson"
)

// Request codes the replication tests send raw.
const (
	codeSendMessageV2     = 310
	codeGetAllTopicConfig = 21
	codeGetBrokerRuntime  = 28
	codeSystemBusy        = 2
)

// replConf is what both brokers of a pair share: small commit log files
// (the same size on both: HA ships whole files), short HA and
// registration intervals.
const replConf = `mappedFileSizeCommitLog=8388608
haSendHeartbeatInterval=1000
haHousekeepingInterval=10000
registerNameServerPeriod=2000
`

// peerBroker is a broker process beside cluster c's own (a slave of it,
// or a master started by the test itself).
type peerBroker struct {
	addr string
	port int
	dir  string
	proc *proc
}

// startSlave starts a slave (brokerId 1) of c's master with its own port
// and store; extra lines override the configuration.
func startSlave(t *testing.T, c *cluster, extra string) *peerBroker {
	t.Helper()
	return startPeer(t, c, "slave", "brokerId=1\nbrokerRole=SLAVE\nslaveReadEnable=true\nslaveSynchronizePeriod=1000\n"+extra)
}

// startPeer starts a broker of c's broker name with its own port and store
// in c.dir/name and waits until it listens.
func startPeer(t *testing.T, c *cluster, name, extra string) *peerBroker {
	t.Helper()
	port, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	s := &peerBroker{port: port, addr: fmt.Sprintf("127.0.0.1:%d", port), dir: filepath.Join(c.dir, name)}
	if err := os.MkdirAll(filepath.Join(s.dir, "store"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`brokerClusterName=%s
brokerName=%s
listenPort=%d
namesrvAddr=%s
brokerIP1=127.0.0.1
storePathRootDir=%s
`, clusterName, c.brokerName, port, c.nsAddr, filepath.Join(s.dir, "store")) + replConf + extra
	path := filepath.Join(s.dir, "broker.properties")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	s.proc, err = startProc("mqbroker-"+name, filepath.Join(binDir, "mqbroker"), []string{"-c", path},
		filepath.Join(s.dir, "broker.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.proc.stop() })
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("----- tail of %s's log -----\n%s", name, tailFile(filepath.Join(s.dir, "broker.log"), 40))
		}
	})
	if err := waitTCP(s.proc, s.addr, readyTimeout); err != nil {
		t.Fatal(err)
	}
	return s
}

// brokerIDs is the route's brokerAddrs of brokerName: id → address.
func brokerIDs(nsAddr, topic, brokerName string) map[int64]string {
	code, rd, _, err := queryRoute(nsAddr, topic)
	if err != nil || code != 0 {
		return nil
	}
	return rd.brokers[brokerName]
}

// runtimeInfo is GET_BROKER_RUNTIME_INFO's table.
func runtimeInfo(addr string) (map[string]string, error) {
	resp, err := rawInvoke(addr, newRequest(codeGetBrokerRuntime, nil, nil), 3*time.Second)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	gjson.GetBytes(resp.Body, "table").ForEach(func(k, v gjson.Result) bool {
		out[k.String()] = v.String()
		return true
	})
	return out, nil
}

// caughtUp reports whether the slave's commit log ends where the master's
// does (runtime info's commitLogMaxOffset).
func caughtUp(master, slave string) bool {
	m, err1 := runtimeInfo(master)
	s, err2 := runtimeInfo(slave)
	return err1 == nil && err2 == nil && m["commitLogMaxOffset"] != "" && m["commitLogMaxOffset"] == s["commitLogMaxOffset"]
}

// The Go client sends to a rocketgo master; its rocketgo slave replicates
// and copies the master's metadata; the slave refuses sends with Apache
// 5.3.3's answer. A push consumer keeps consuming from the slave while the
// master is stopped; once the master is back, the client commits its
// offsets there and the group consumes only what is new: nothing it
// consumed from the slave comes again.
func TestReplicationSlaveReads(t *testing.T) {
	c := newClusterConf(t, uniq("repl"), replConf)
	s := startSlave(t, c, "")
	topic := uniq("ReplT")
	createTopic(t, c, topic, admin.WithReadQueueNums(2), admin.WithWriteQueueNums(2))
	if !waitFor(t, 30*time.Second, func() bool {
		ids := brokerIDs(c.nsAddr, topic, c.brokerName)
		return ids[0] == c.brokerAddr && ids[1] == s.addr
	}) {
		t.Fatalf("route of %s: %v, want {0: %s, 1: %s}", topic, brokerIDs(c.nsAddr, topic, c.brokerName), c.brokerAddr, s.addr)
	}

	// The slave refuses a send before reading it.
	send := newRequest(codeSendMessageV2, map[string]string{"a": "PG", "b": topic, "c": "TBW102", "d": "4",
		"e": "0", "f": "0", "g": strconv.FormatInt(time.Now().UnixMilli(), 10), "h": "0", "i": ""}, []byte("x"))
	resp, err := rawInvoke(s.addr, send, 3*time.Second)
	if err != nil || resp.Code != codeSystemBusy || resp.Remark != "[REJECTREQUEST]system busy, start flow control for a while" {
		t.Fatalf("send to the slave: %v %v", resp, err)
	}

	p := newProducer(t, c)
	var ids []string
	sendBatch := func(prefix string, n int) []string {
		var out []string
		for i := range n {
			id := fmt.Sprintf("%s-%d", prefix, i)
			p.mustSend(t, newMsg(topic, id, ""))
			out = append(out, id)
		}
		ids = append(ids, out...)
		return out
	}
	group := uniq("ReplG")
	col := newCollector("repl")
	h := startConsumer(t, c, group, topic, "*", col)
	start := time.Now()
	a := sendBatch("a", 20)
	waitAll(t, col, a, 60*time.Second, "batch A from the master")

	// Batch B reaches the master while the consumer does not pull; the
	// slave copies it, then the master stops.
	pauser, ok := h.pc.(interface {
		Suspend()
		Resume()
	})
	if !ok {
		t.Fatal("push consumer cannot be suspended")
	}
	pauser.Suspend()
	b := sendBatch("b", 30)
	if !waitFor(t, 30*time.Second, func() bool { return caughtUp(c.brokerAddr, s.addr) }) {
		t.Fatal("slave did not catch up with the master")
	}
	// Metadata: the slave has the topic (GET_ALL_TOPIC_CONFIG).
	if !waitFor(t, 20*time.Second, func() bool {
		resp, err := rawInvoke(s.addr, newRequest(codeGetAllTopicConfig, nil, nil), 3*time.Second)
		return err == nil && strings.Contains(string(resp.Body), `"`+topic+`":`)
	}) {
		t.Error("slave never synced the topic from its master")
	}
	if graceful, _ := c.stopBroker(); !graceful {
		t.Log("master did not stop gracefully")
	}
	if !waitFor(t, 20*time.Second, func() bool {
		ids := brokerIDs(c.nsAddr, topic, c.brokerName)
		return ids[0] == "" && ids[1] == s.addr
	}) {
		t.Fatalf("route after the master stopped: %v", brokerIDs(c.nsAddr, topic, c.brokerName))
	}
	pauser.Resume()
	// The client learns the new route within its 30 s poll.
	// The master's process is gone: whatever arrives now the slave served.
	waitAll(t, col, b, 90*time.Second, "batch B from the slave")
	t.Logf("batch B consumed from the slave %v after the start", time.Since(start))
	// The master returns; the client commits its offsets there; new
	// messages are consumed once, old ones not again.
	if err := c.startBroker(); err != nil {
		t.Fatal(err)
	}
	if !waitFor(t, 30*time.Second, func() bool { return brokerIDs(c.nsAddr, topic, c.brokerName)[0] == c.brokerAddr }) {
		t.Fatalf("route after the master returned: %v", brokerIDs(c.nsAddr, topic, c.brokerName))
	}
	// The first producer's route cache may still say no master until its
	// next poll (30 s): a new producer asks the name server now.
	p.shutdown()
	p2 := newProducer(t, c)
	var cc []string
	for i := range 10 {
		id := fmt.Sprintf("c-%d", i)
		var last error
		if !waitFor(t, 40*time.Second, func() bool {
			_, last = p2.sendSync(context.Background(), newMsg(topic, id, ""))
			return last == nil
		}) {
			t.Fatalf("send %s after the master returned: %v", id, last)
		}
		cc = append(cc, id)
	}
	ids = append(ids, cc...)
	waitAll(t, col, cc, 90*time.Second, "batch C after the master returned")
	t.Logf("batch C consumed %v after the start", time.Since(start))
	if !waitFor(t, 30*time.Second, func() bool { return committedAll(c.brokerAddr, group, topic) }) {
		t.Error("the group's offsets on the master never reached the queues' ends")
	}
	// Time for a re-delivery to show.
	time.Sleep(3 * time.Second) // observation window, not synchronisation: nothing is awaited here
	for _, id := range ids {
		if n := len(col.get(id)); n != 1 {
			t.Errorf("message %s delivered %d times", id, n)
		}
	}
	// The slave copies the master's offsets (GET_ALL_CONSUMER_OFFSET).
	if !waitFor(t, 20*time.Second, func() bool { return committedAll(s.addr, group, topic) }) {
		t.Error("the slave never synced the group's offsets from its master")
	}
	t.Logf("%d messages, %d of them consumed from the slave while the master was down", len(ids), len(b))
}

// committedAll reports whether group's committed offset of every queue of
// topic on addr equals the queue's max offset (read on the same broker).
func committedAll(addr, group, topic string) bool {
	for q := range 2 {
		code, off, err := queryConsumerOffset(addr, group, topic, q)
		if err != nil || code != 0 {
			return false
		}
		max, err := getMaxOffset(addr, topic, q)
		if err != nil || off != max {
			return false
		}
	}
	return true
}

// A SYNC_MASTER acknowledges a send once its slave holds it; with the slave
// gone it answers SLAVE_NOT_AVAILABLE at once, the message stored (the Go
// client reports it as SendSlaveNotAvailable, not an error).
func TestReplicationSyncMaster(t *testing.T) {
	c := newClusterConf(t, uniq("sync"), replConf+"brokerRole=SYNC_MASTER\nslaveTimeout=3000\n")
	s := startSlave(t, c, "")
	topic := uniq("SyncT")
	createTopic(t, c, topic, admin.WithReadQueueNums(1), admin.WithWriteQueueNums(1))
	p := newProducer(t, c)
	// The slave connects and reports within haSendHeartbeatInterval.
	var last *primitive.SendResult
	if !waitFor(t, 30*time.Second, func() bool {
		r, err := p.sendSync(context.Background(), newMsg(topic, uniq("m"), ""))
		last = r
		return err == nil && r.Status == primitive.SendOK
	}) {
		t.Fatalf("SYNC_MASTER never acknowledged a send with its slave connected: %+v", last)
	}
	start := time.Now()
	const n = 20
	for i := range n {
		r, err := p.sendSync(context.Background(), newMsg(topic, "ok-"+strconv.Itoa(i), ""))
		if err != nil || r.Status != primitive.SendOK {
			t.Fatalf("send %d: %+v %v", i, r, err)
		}
	}
	t.Logf("%d SYNC_MASTER sends acknowledged by the slave in %v", n, time.Since(start))

	s.proc.stop()
	if !waitFor(t, 30*time.Second, func() bool {
		r, err := p.sendSync(context.Background(), newMsg(topic, uniq("gone"), ""))
		return err == nil && r.Status == primitive.SendSlaveNotAvailable
	}) {
		t.Fatal("SYNC_MASTER without its slave never answered SLAVE_NOT_AVAILABLE")
	}
	before, err := getMaxOffset(c.brokerAddr, topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Now()
	r, err := p.sendSync(context.Background(), newMsg(topic, uniq("stored"), ""))
	if err != nil || r.Status != primitive.SendSlaveNotAvailable || r.MsgID == "" {
		t.Fatalf("send without slave: %+v %v", r, err)
	}
	if d := time.Since(took); d > 2*time.Second {
		t.Errorf("SLAVE_NOT_AVAILABLE took %v: not at once", d)
	}
	if !waitFor(t, 10*time.Second, func() bool { after, _ := getMaxOffset(c.brokerAddr, topic, 0); return after == before+1 }) {
		t.Error("the message answered SLAVE_NOT_AVAILABLE is not stored")
	}
}

// A broker configured with two name servers, one dead (nothing listens)
// and one hanging (accepts and never answers), registers with the third at
// once; a client knowing only that one finds master and slave.
func TestReplicationNameServers(t *testing.T) {
	c, err := startNamesrvConf(uniq("ns2"), replConf)
	if c != nil {
		t.Cleanup(c.stop)
		c.attachLogs(t)
	}
	if err != nil {
		t.Fatal(err)
	}
	dead, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	hang, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := hang.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, conn)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = hang.Close()
		<-done
		mu.Lock()
		for _, conn := range held {
			_ = conn.Close()
		}
		mu.Unlock()
	})
	list := fmt.Sprintf("namesrvAddr=127.0.0.1:%d;%s;%s\n", dead, hang.Addr(), c.nsAddr)
	start := time.Now()
	m := startPeer(t, c, "master", list)
	s := startSlave(t, c, list)
	if !waitFor(t, 20*time.Second, func() bool {
		ids := brokerIDs(c.nsAddr, "TBW102", c.brokerName)
		return ids[0] == m.addr && ids[1] == s.addr
	}) {
		t.Fatalf("route of TBW102 on the live name server: %v", brokerIDs(c.nsAddr, "TBW102", c.brokerName))
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("registration took %v", d)
	}
	// The slave learns its master from a registration answer: the one
	// after the master's registration, up to registerNameServerPeriod on.
	if !waitFor(t, 10*time.Second, func() bool {
		return strings.Contains(tailFile(filepath.Join(s.dir, "broker.log"), 200), "master address learned")
	}) {
		t.Error("slave never learned its master through the live name server")
	}
}

// setupMeta creates topic, group and a committed offset (queue 1 at 7) on
// the broker at addr with Java-style requests, as mqadmin and a consumer
// would.
func setupMeta(t *testing.T, addr, topic, group string) {
	t.Helper()
	steps := []*rawCmd{
		javaRequest(17, map[string]string{"topic": topic, "defaultTopic": "TBW102", "readQueueNums": "2",
			"writeQueueNums": "2", "perm": "6", "topicFilterType": "SINGLE_TAG"}, nil),
		javaRequest(200, nil, []byte(`{"groupName":"`+group+`","consumeEnable":true,"consumeFromMinEnable":true,`+
			`"consumeBroadcastEnable":true,"retryQueueNums":1,"retryMaxTimes":16,"brokerId":0,`+
			`"whichBrokerWhenConsumeSlowly":1,"notifyConsumerIdsChangedEnable":true}`)),
		javaRequest(15, map[string]string{"consumerGroup": group, "topic": topic, "queueId": "1", "commitOffset": "7"}, nil),
	}
	for _, req := range steps {
		resp, err := rawInvoke(addr, req, 5*time.Second)
		if err != nil || resp.Code != 0 {
			t.Fatalf("request %d to %s: %v %v", req.Code, addr, resp, err)
		}
	}
}

// synced reports whether the broker at addr has topic and group's offset 7
// on queue 1.
func synced(addr, topic, group string) bool {
	resp, err := rawInvoke(addr, javaRequest(codeGetAllTopicConfig, nil, nil), 3*time.Second)
	if err != nil || resp.Code != 0 || !strings.Contains(string(resp.Body), `"`+topic+`"`) {
		return false
	}
	code, off, err := queryConsumerOffset(addr, group, topic, 1)
	return err == nil && code == 0 && off == 7
}

// Metadata sync across implementations (ROCKETGO_JAVA=1): an Apache 5.3.3
// slave copies topics and consumer offsets from a rocketgo master (its
// first sync comes about 60 s after its start), and a rocketgo slave copies
// them from an Apache 5.3.3 master; neither logs a failed sync of topics,
// offsets, delay offsets, groups, timer checkpoint or timer metrics. Each
// slave holds its master's timer checkpoint (GET_TIMER_CHECK_POINT 60): the
// master delivered one timer message and holds another, due in an hour, so
// the timer queue offset read is 2. The rocketgo slave answers GET_TIMER_METRICS
// (61) with its master's count, one message of the topic waiting (an
// Apache slave adds to its copy what its own timer reads up to the
// checkpoint, so its count is not its master's).
func TestReplicationJavaMetadata(t *testing.T) {
	requireJava(t)
	// Mostly waiting (a minute for the Apache slave's first sync, which no
	// key shortens): it runs beside the other parallel tests, and its two
	// directions beside each other. Ports and directories are its own.
	t.Parallel()
	t.Run("ApacheSlaveOfRocketgo", func(t *testing.T) {
		t.Parallel()
		c := newClusterConf(t, uniq("jmeta"), replConf)
		topic, group := uniq("JMetaT"), uniq("JMetaG")
		setupMeta(t, c.brokerAddr, topic, group)
		sendTimer(t, c.brokerAddr, topic)
		sendWaitingTimer(t, c.brokerAddr, topic)
		_, slave, dir := startApacheBroker(t, uniq("apache-slave"), c.nsAddr,
			"brokerName="+c.brokerName+"\nbrokerId=1\nbrokerRole=SLAVE\n"+replConf)
		if !waitFor(t, 150*time.Second, func() bool { return synced(slave, topic, group) }) {
			t.Fatalf("the Apache slave never synced topic %s and group %s from the rocketgo master", topic, group)
		}
		// Apache's TimerCheckpoint file: lastReadTimeMs, lastTimerLogFlushPos,
		// lastTimerQueueOffset, masterTimerQueueOffset (big-endian longs),
		// mapped, so what the slave sets is in the file at once.
		var ck []byte
		if !waitFor(t, 30*time.Second, func() bool {
			ck, _ = os.ReadFile(filepath.Join(dir, "store", "config", "timercheck"))
			return len(ck) >= 32 && binary.BigEndian.Uint64(ck[24:]) == 2
		}) {
			t.Errorf("the Apache slave's timer checkpoint does not hold the master's timer queue offset 2: % x", ck[:min(len(ck), 32)])
		}
		log := filepath.Join(dir, "logs", "rocketmqlogs", "broker.log")
		for _, bad := range []string{"SyncTopicConfig Exception", "SyncConsumerOffset Exception",
			"SyncDelayOffset Exception", "SyncSubscriptionGroup Exception", "SyncMessageRequestMode Exception",
			"syncTimerCheckPoint Exception", "SyncTimerMetrics Exception"} {
			if tail := tailFile(log, 5000); strings.Contains(tail, bad) {
				t.Errorf("Apache slave logged %q", bad)
			}
		}
	})
	t.Run("RocketgoSlaveOfApache", func(t *testing.T) {
		t.Parallel()
		c, err := startNamesrvConf(uniq("jmeta2"), "")
		if c != nil {
			t.Cleanup(c.stop)
			c.attachLogs(t)
		}
		if err != nil {
			t.Fatal(err)
		}
		_, master, _ := startApacheBroker(t, uniq("apache-master"), c.nsAddr, replConf)
		topic, group := uniq("JMetaT"), uniq("JMetaG")
		setupMeta(t, master, topic, group)
		sendTimer(t, master, topic)
		sendWaitingTimer(t, master, topic)
		c.brokerName = "broker-ref" // reference/run.sh's broker name
		s := startSlave(t, c, "")
		if !waitFor(t, 60*time.Second, func() bool { return synced(s.addr, topic, group) }) {
			t.Fatalf("the rocketgo slave never synced topic %s and group %s from the Apache master", topic, group)
		}
		var progress string
		if !waitFor(t, 30*time.Second, func() bool {
			b, _ := os.ReadFile(filepath.Join(s.dir, "store", "config", "timerProgress.json"))
			progress = string(b)
			return strings.Contains(progress, `"enqueueOffset":2,"lowOffset":-1,`)
		}) {
			t.Errorf("the rocketgo slave's timer progress is not the Apache master's (offset 2, low unknown): %s", progress)
		}
		if n := timingCount(t, s.addr, topic); n != 1 {
			t.Errorf("the rocketgo slave's timer metrics: %d of %s waiting, want its master's 1", n, topic)
		}
		if tail := tailFile(filepath.Join(s.dir, "broker.log"), 2000); strings.Contains(tail, "slave metadata sync failed") {
			t.Errorf("rocketgo slave logged a failed sync:\n%s", tail)
		}
	})
}

// sendTimer sends a timer message due in a second to topic on the master at
// addr and waits until it is delivered to the topic (queue 0).
func sendTimer(t *testing.T, addr, topic string) {
	t.Helper()
	due := strconv.FormatInt(time.Now().UnixMilli()+1000, 10) // not past: a past time skips the timer
	if resp, err := sendRaw(addr, topic, propsOf("TIMER_DELIVER_MS", due)); err != nil || resp.Code != 0 {
		t.Fatalf("timer message to %s: %v %v", addr, resp, err)
	}
	if !waitFor(t, 30*time.Second, func() bool {
		max, err := getMaxOffset(addr, topic, 0)
		return err == nil && max >= 1
	}) {
		t.Fatalf("the timer message to %s was not delivered", addr)
	}
}

// sendWaitingTimer sends a timer message due in an hour to topic on the
// master at addr and waits until the master counts it waiting.
func sendWaitingTimer(t *testing.T, addr, topic string) {
	t.Helper()
	due := strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)
	if resp, err := sendRaw(addr, topic, propsOf("TIMER_DELIVER_MS", due)); err != nil || resp.Code != 0 {
		t.Fatalf("timer message to %s: %v %v", addr, resp, err)
	}
	if n := timingCount(t, addr, topic); n != 1 {
		t.Fatalf("%s counts %d timer messages of %s waiting, want 1", addr, n, topic)
	}
}

// timingCount waits (30 s at most) until GET_TIMER_METRICS (61) on addr
// counts topic's timer messages waiting, and returns the count (-1: none).
func timingCount(t *testing.T, addr, topic string) int64 {
	t.Helper()
	n := int64(-1)
	waitFor(t, 30*time.Second, func() bool {
		resp, err := rawInvoke(addr, javaRequest(61, nil, nil), 3*time.Second)
		if err != nil || resp.Code != 0 {
			return false
		}
		var m struct {
			TimingCount map[string]struct{ Count int64 } `json:"timingCount"`
		}
		if json.Unmarshal(resp.Body, &m) != nil {
			return false
		}
		c, ok := m.TimingCount[topic]
		if ok {
			n = c.Count
		}
		return ok && c.Count > 0
	})
	return n
}

// mqadmin 5.3.3 (ROCKETGO_JAVA=1) shows a rocketgo master and slave as it
// shows Apache's: clusterList lists both under the broker name with ids 0
// and 1, brokerStatus shows the slave inactive, haStatus lists the slave
// on the master and the master on the slave.
func TestReplicationMQAdmin(t *testing.T) {
	requireJava(t)
	cp := referenceClasspath(t)
	home := t.TempDir()
	c := newClusterConf(t, uniq("madm"), replConf)
	s := startSlave(t, c, "")
	if !waitFor(t, 30*time.Second, func() bool { return caughtUp(c.brokerAddr, s.addr) }) {
		t.Fatal("slave did not connect")
	}
	if !waitFor(t, 20*time.Second, func() bool {
		ids := brokerIDs(c.nsAddr, "TBW102", c.brokerName)
		return ids[0] == c.brokerAddr && ids[1] == s.addr
	}) {
		t.Fatal("route lacks master or slave")
	}
	out := mqadmin(t, cp, home, "clusterList", "-n", c.nsAddr)
	var master, slave bool
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[1] != c.brokerName {
			continue
		}
		master = master || (f[2] == "0" && f[3] == c.brokerAddr)
		slave = slave || (f[2] == "1" && f[3] == s.addr)
	}
	if !master || !slave {
		t.Errorf("clusterList lacks master (%t) or slave (%t):\n%s", master, slave, adminOutput(out))
	}
	out = mqadmin(t, cp, home, "brokerStatus", "-n", c.nsAddr, "-b", s.addr)
	if !regexp.MustCompile(`(?m)^brokerActive\s*:\s*false`).MatchString(out) {
		t.Errorf("brokerStatus of the slave:\n%s", adminOutput(out))
	}
	out = mqadmin(t, cp, home, "haStatus", "-n", c.nsAddr, "-b", c.brokerAddr)
	if !strings.Contains(out, "127.0.0.1") {
		t.Errorf("haStatus of the master:\n%s", adminOutput(out))
	}
	t.Logf("haStatus of the master:\n%s", adminOutput(out))
	out = mqadmin(t, cp, home, "haStatus", "-n", c.nsAddr, "-b", s.addr)
	t.Logf("haStatus of the slave:\n%s", adminOutput(out))
}

// adminOutput is mqadmin's output without logback's status lines.
func adminOutput(out string) string {
	var keep []string
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, "|-") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}
