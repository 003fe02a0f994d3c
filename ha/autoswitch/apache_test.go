package autoswitch

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/ctltest"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/namesrv/namesrvtest"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/replicas"
	"github.com/rocketgo/rocketgo/store"
)

// Interop with Apache 5.3.3 in controller mode, byte for byte: the
// brokers of one set register with an in-process rocketgo controller; the
// commit logs and epoch files of both sides are compared on disk. Needs
// Java and Maven: ROCKETGO_JAVA=1 ROCKETGO_CONTROLLER=1 (make
// test-controller).

const apacheFileSize = 1 << 20 // mappedFileSizeCommitLog on both sides

func needApache(t *testing.T) {
	t.Helper()
	if os.Getenv("ROCKETGO_JAVA") == "" || os.Getenv("ROCKETGO_CONTROLLER") == "" {
		t.Skip("Apache 5.3.3 brokers run with ROCKETGO_JAVA=1 ROCKETGO_CONTROLLER=1 (make test-controller)")
	}
}

// controlPlane starts a rocketgo controller and name server in-process
// and returns their addresses, a Remoting client and a controller client.
func controlPlane(t *testing.T) (ctlAddr, nsAddr string, rc *remoting.Client, cl *replicas.Client) {
	t.Helper()
	ctlAddr = ctltest.Start(t)
	nsAddr = namesrvtest.Run(t).Addr()
	rc = remoting.NewClient(testutil.Logger())
	t.Cleanup(func() { rc.Close() })
	return ctlAddr, nsAddr, rc, replicas.NewClient(rc, ctlAddr, 3*time.Second)
}

// apacheBroker is an Apache 5.3.3 broker in controller mode.
type apacheBroker struct {
	addr, haAddr, dir string
	port              int
	nsAddr            string
	cmd               *exec.Cmd
	logf              *os.File
}

// startApache runs the broker; seed, when not "", is a store root copied
// in as its store first; extra adds broker.properties lines.
func startApache(t *testing.T, brokerName, nsAddr, ctlAddr, seed string, extra ...string) *apacheBroker {
	t.Helper()
	port := ctltest.PortPair(t)
	b := &apacheBroker{addr: fmt.Sprintf("127.0.0.1:%d", port), haAddr: fmt.Sprintf("127.0.0.1:%d", port+1), dir: t.TempDir(),
		port: port, nsAddr: nsAddr}
	props := fmt.Sprintf(`brokerName=%s
brokerId=-1
brokerRole=SLAVE
enableControllerMode=true
controllerAddr=%s
mappedFileSizeCommitLog=%d
haSendHeartbeatInterval=1000
syncBrokerMetadataPeriod=1000
checkSyncStateSetPeriod=1000
syncControllerMetadataPeriod=2000
registerNameServerPeriod=10000
`, brokerName, ctlAddr, apacheFileSize) + strings.Join(extra, "")
	if err := os.WriteFile(filepath.Join(b.dir, "broker.extra.properties"), []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	if seed != "" {
		if out, err := exec.Command("cp", "-r", seed, filepath.Join(b.dir, "store")).CombinedOutput(); err != nil {
			t.Fatalf("seed the store: %v %s", err, out)
		}
		// The commit log, checkpoint and epoch file; consume queues are
		// rebuilt by Apache (the test's use a smaller file size).
		for _, d := range []string{"lock", "consumequeue", "index"} {
			_ = os.RemoveAll(filepath.Join(b.dir, "store", d))
		}
	}
	t.Cleanup(func() {
		b.kill()
		if t.Failed() {
			for _, f := range []string{filepath.Join(b.dir, "broker.out"), filepath.Join(b.dir, "logs", "rocketmqlogs", "broker_default.log"),
				filepath.Join(b.dir, "logs", "rocketmqlogs", "store.log")} {
				raw, _ := os.ReadFile(f)
				if len(raw) > 6000 {
					raw = raw[len(raw)-6000:]
				}
				t.Logf("tail of %s:\n%s", f, raw)
			}
		}
	})
	b.start(t)
	return b
}

// start runs the JVM (again) on the broker's directory and port.
func (b *apacheBroker) start(t *testing.T) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "..", "compat-tests", "reference", "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if b.logf, err = os.OpenFile(filepath.Join(b.dir, "broker.out"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err != nil {
		t.Fatal(err)
	}
	b.cmd = exec.Command(script, "broker", strconv.Itoa(b.port), b.nsAddr, b.dir, "asCluster")
	b.cmd.Stdout, b.cmd.Stderr = b.logf, b.logf
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
}

// kill ends the JVM with SIGKILL (its process group: run.sh execs java).
func (b *apacheBroker) kill() {
	if b.cmd == nil {
		return
	}
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
	_ = b.cmd.Wait()
	_ = b.logf.Close()
	b.cmd = nil
}

// commitLog reads Apache's commit log files [0, end) from disk.
func (b *apacheBroker) commitLog(t *testing.T, from, end int64) []byte {
	t.Helper()
	var out []byte
	for off := from - from%apacheFileSize; off < end; off += apacheFileSize {
		raw, err := os.ReadFile(filepath.Join(b.dir, "store", "commitlog", fmt.Sprintf("%020d", off)))
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := max(from-off, 0), min(end-off, int64(len(raw)))
		out = append(out, raw[lo:hi]...)
	}
	return out
}

func (b *apacheBroker) epochs(t *testing.T) []store.EpochEntry {
	t.Helper()
	c, err := store.OpenEpochFile(filepath.Join(b.dir, "store", store.FileEpochCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	return c.All()
}

// maxOffset is GET_BROKER_RUNTIME_INFO's commitLogMaxOffset.
func maxOffset(rc *remoting.Client, addr string) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := rc.Invoke(ctx, addr, remoting.NewRequest(28, nil, nil))
	if err != nil {
		return 0, err
	}
	s := string(resp.Body)
	i := strings.Index(s, `"commitLogMaxOffset":"`)
	if i < 0 {
		return 0, fmt.Errorf("runtime info without commitLogMaxOffset: %.200s", s)
	}
	s = s[i+len(`"commitLogMaxOffset":"`):]
	return strconv.ParseInt(s[:strings.IndexByte(s, '"')], 10, 64)
}

// send is SEND_MESSAGE (10) as a producer sends it; the answer must be
// SUCCESS.
func send(rc *remoting.Client, addr, topic string, i int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body := fmt.Appendf(nil, "as-%d-%s", i, bytes.Repeat([]byte("y"), 1500+i%500))
	req := remoting.NewRequest(remoting.SendMessage, map[string]string{
		"producerGroup": "asGroup", "topic": topic, "defaultTopic": "TBW102", "defaultTopicQueueNums": "4",
		"queueId": strconv.Itoa(i % 4), "sysFlag": "0", "bornTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10),
		"flag": "0", "properties": "KEYS\x01k" + strconv.Itoa(i) + "\x02WAIT\x01true\x02", "reconsumeTimes": "0",
		"unitMode": "false", "batch": "false",
	}, body)
	for {
		resp, err := rc.Invoke(ctx, addr, req)
		if err != nil {
			return err
		}
		switch {
		case resp.Code == 0:
			return nil
		case resp.Code == remoting.SystemBusy && ctx.Err() == nil:
			// Apache's flow control on a loaded box (TIMEOUT_CLEAN_QUEUE):
			// a producer retries.
			time.Sleep(100 * time.Millisecond)
		default:
			return fmt.Errorf("send %d: code %d %s", i, resp.Code, resp.Remark)
		}
	}
}

// heartbeats keeps brokers alive at the controller until the test ends
// or paused is set.
func heartbeats(t *testing.T, cl *replicas.Client, hbs ...replicas.Heartbeat) *atomic.Bool {
	stop := make(chan struct{})
	paused := new(atomic.Bool)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(300 * time.Millisecond)
		defer tk.Stop()
		for {
			for _, hb := range hbs {
				if !paused.Load() {
					_ = cl.SendHeartbeat(context.Background(), hb) // a miss is repeated 300 ms later
				}
			}
			select {
			case <-stop:
				return
			case <-tk.C:
			}
		}
	}()
	t.Cleanup(func() { close(stop); wg.Wait() })
	return paused
}

// A rocketgo slave follows an Apache 5.3.3 master elected by the rocketgo
// controller: the master adds it to the SyncStateSet (CONTROLLER_ALTER_
// SYNC_STATE_SET from Apache), SYNC_MASTER sends succeed on its acks, and
// the commit logs (across files) and epoch files are byte-equal. Then the
// slave, disconnected, writes a divergent tail under an epoch the master
// never had; on reconnecting it truncates it at the consistent point and
// is byte-equal again.
func TestAutoSwitchRocketgoSlaveOfApacheMaster(t *testing.T) {
	needApache(t)
	ctlAddr, nsAddr, rc, cl := controlPlane(t)
	ctx := context.Background()
	const name = "asA"

	ap := startApache(t, name, nsAddr, ctlAddr, "")
	var st replicas.ReplicaState
	testutil.WaitFor(t, 120*time.Second, func() bool {
		var err error
		st, err = cl.ReplicaInfo(ctx, name)
		return err == nil && st.MasterID != nil && st.MasterAddr == ap.addr
	})

	cfg := testConfig()
	n := openNodeSize(t, cfg, apacheFileSize)
	self := replicas.Broker{Cluster: "asCluster", BrokerName: name, Addr: "127.0.0.1:1"}
	// The register answer names the master only once the controller has
	// its heartbeat (Apache's controller does the same).
	files := replicas.IdentityFiles{Root: t.TempDir()}
	var id int64
	var rs replicas.ReplicaState
	testutil.WaitFor(t, 30*time.Second, func() bool {
		var err error
		id, rs, err = replicas.Register(ctx, cl, files, self)
		if err != nil {
			t.Fatal(err)
		}
		return rs.MasterID != nil && *rs.MasterID == *st.MasterID && rs.MasterAddr == ap.addr
	})
	heartbeats(t, cl, replicas.Heartbeat{Cluster: self.Cluster, BrokerName: name, BrokerAddr: self.Addr, BrokerID: id,
		Epoch: -1, TimeoutMillis: 10000})
	if err := n.svc.BecomeSlave(ap.haAddr, rs.MasterEpoch, id); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 60*time.Second, func() bool {
		info, err := cl.ReplicaInfo(ctx, name)
		return err == nil && slices.Contains(info.SyncStateSet, id)
	})
	topic := "TopicAS" + strconv.FormatInt(time.Now().UnixNano(), 36)
	testutil.WaitFor(t, 60*time.Second, func() bool { return send(rc, ap.addr, topic, -1) == nil })
	for i := range 800 { // about 1.6 MiB: two commit log files
		if err := send(rc, ap.addr, topic, i); err != nil {
			t.Fatal(err)
		}
	}
	equalToApache(t, rc, ap, n)

	// A divergent tail: the slave, on its own, under epoch 9.
	ctxS, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := n.svc.Shutdown(ctxS); err != nil {
		t.Fatal(err)
	}
	cut := n.st.MaxPhyOffset()
	if _, err := n.st.LeaveReplica(); err != nil {
		t.Fatal(err)
	}
	if err := n.epochs.Append(9, cut); err != nil {
		t.Fatal(err)
	}
	put(t, n.st, 0, 300, 2)
	n.st.BecomeReplica()
	var err error
	if n.svc, err = New(cfg, "127.0.0.1:0", n.st, n.epochs, testutil.Logger()); err != nil {
		t.Fatal(err)
	}
	if err := n.svc.Start(); err != nil {
		t.Fatal(err)
	}
	if err := n.svc.BecomeSlave(ap.haAddr, rs.MasterEpoch, id); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 60*time.Second, func() bool {
		info, err := cl.ReplicaInfo(ctx, name)
		return err == nil && slices.Contains(info.SyncStateSet, id)
	})
	for i := 800; i < 1000; i++ {
		if err := send(rc, ap.addr, topic, i); err != nil {
			t.Fatal(err)
		}
	}
	equalToApache(t, rc, ap, n)
}

// readLog copies the store's commit log [from, end).
func readLog(t *testing.T, st *store.Store, from, end int64) []byte {
	t.Helper()
	var out []byte
	for off := from; off < end; {
		sp, ok := st.ReadReplica(off, 1<<20)
		if !ok {
			t.Fatalf("read at %d", off)
		}
		out = append(out, sp.Bytes...)
		off += int64(len(sp.Bytes))
		sp.Release()
	}
	return out
}

// equalToApache waits for the node to hold Apache's end and compares the
// commit logs over the node's range and the epoch files.
func equalToApache(t *testing.T, rc *remoting.Client, ap *apacheBroker, n *node) {
	t.Helper()
	var end int64
	testutil.WaitFor(t, 60*time.Second, func() bool {
		var err error
		end, err = maxOffset(rc, ap.addr)
		return err == nil && end > 0 && n.st.MaxPhyOffset() == end
	})
	if end < apacheFileSize {
		t.Fatalf("only %d bytes: want more than one file", end)
	}
	from := n.st.MinPhyOffset()
	want := ap.commitLog(t, from, end)
	got := readLog(t, n.st, from, end)
	if !bytes.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Fatalf("commit logs differ at %d (rocketgo %d bytes, Apache %d)", from+int64(i), len(got), len(want))
	}
	if a, r := ap.epochs(t), n.epochs.All(); !slices.Equal(a, r) {
		t.Fatalf("epoch entries: Apache %v rocketgo %v", a, r)
	}
	ae, err1 := os.ReadFile(filepath.Join(ap.dir, "store", store.FileEpochCheckpoint))
	re, err2 := os.ReadFile(filepath.Join(n.dir, store.FileEpochCheckpoint))
	if err1 != nil || err2 != nil || !bytes.Equal(ae, re) {
		t.Fatalf("epoch files differ: Apache %q %v, rocketgo %q %v", ae, err1, re, err2)
	}
	t.Logf("byte-equal commit logs [%d, %d), epochs %v", from, end, n.epochs.All())
}

// registerMaster registers a rocketgo master with the name server
// (REGISTER_BROKER, brokerId 0) so that an Apache slave learns its HA
// address from its own registration's answer, as in controller mode.
func registerMaster(t *testing.T, rc *remoting.Client, nsAddr, cluster, name, brokerAddr, haAddr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	body := []byte(`{"topicConfigSerializeWrapper":{"topicConfigTable":{},"dataVersion":{"timestamp":0,"counter":0}},"filterServerList":[]}`)
	resp, err := rc.Invoke(ctx, nsAddr, remoting.NewRequest(remoting.RegisterBroker, map[string]string{
		"brokerName": name, "brokerAddr": brokerAddr, "clusterName": cluster, "haServerAddr": haAddr,
		"brokerId": "0", "compressed": "false"}, body))
	if err != nil || resp.Code != 0 {
		t.Fatalf("register master: %v %+v", err, resp)
	}
}

// An Apache 5.3.3 slave follows a rocketgo master: the Apache broker starts
// on a store (made by rocketgo, Apache's format) that holds the master's
// epoch-1 bytes and then a tail of its own written alone in epoch 1, while
// the controller re-elected the rocketgo broker (a new epoch starting where
// the Apache store's common part ends). Apache registers with the rocketgo
// controller, is told to follow the rocketgo master, learns its HA address
// from the name server, truncates its tail at the consistent point and
// replicates; the rocketgo master adds it to the SyncStateSet; commit logs
// and epoch files are byte-equal.
func TestAutoSwitchApacheSlaveOfRocketgoMaster(t *testing.T) {
	needApache(t)
	ctlAddr, nsAddr, rc, cl := controlPlane(t)
	ctx := context.Background()
	const cluster, name = "asCluster", "asB"

	cfg := testConfig()
	cfg.AlterSyncStateSet = func(master int64, epoch int32, set []int64, setEpoch int32) ([]int64, int32, error) {
		return cl.AlterSyncStateSet(ctx, name, master, epoch, set, setEpoch)
	}
	m := openNodeSize(t, cfg, apacheFileSize)
	self := replicas.Broker{Cluster: cluster, BrokerName: name, Addr: "127.0.0.1:2"}
	id, _, err := replicas.Register(ctx, cl, replicas.IdentityFiles{Root: t.TempDir()}, self)
	if err != nil {
		t.Fatal(err)
	}
	paused := heartbeats(t, cl, replicas.Heartbeat{Cluster: cluster, BrokerName: name, BrokerAddr: self.Addr, BrokerID: id,
		Epoch: -1, TimeoutMillis: 1500})
	elect := func() replicas.ReplicaState {
		var st replicas.ReplicaState
		testutil.WaitFor(t, 20*time.Second, func() bool {
			var err error
			st, err = cl.Elect(ctx, cluster, name, id)
			return err == nil && st.MasterID != nil && *st.MasterID == id
		})
		return st
	}
	st := elect()
	m.master(t, st.MasterEpoch, id, st.SyncStateSet, st.SyncStateSetEpoch)
	put(t, m.st, 0, 4500, 4) // about 1.2 MiB: the second file begins

	// The future Apache store: a rocketgo replica of epoch 1, then a tail
	// of its own.
	s := openNodeSize(t, testConfig(), apacheFileSize)
	if err := s.svc.BecomeSlave(m.svc.Addr(), st.MasterEpoch, id+100); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 20*time.Second, func() bool { return s.st.MaxPhyOffset() == m.st.MaxPhyOffset() })
	common := m.st.MaxPhyOffset()
	ctxS, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := s.svc.Shutdown(ctxS); err != nil {
		t.Fatal(err)
	}
	if _, err := s.st.LeaveReplica(); err != nil {
		t.Fatal(err)
	}
	put(t, s.st, 90000, 400, 4)
	if err := s.st.Shutdown(ctxS); err != nil {
		t.Fatal(err)
	}

	// The controller elects the rocketgo broker again (its heartbeats
	// paused, then back): a new epoch starting at the common end.
	paused.Store(true)
	testutil.WaitFor(t, 20*time.Second, func() bool {
		info, err := cl.ReplicaInfo(ctx, name)
		return err == nil && info.MasterEpoch > st.MasterEpoch
	})
	paused.Store(false)
	st = elect()
	m.master(t, st.MasterEpoch, id, st.SyncStateSet, st.SyncStateSetEpoch)
	put(t, m.st, 4500, 300, 4)
	haAddr := m.svc.Addr()
	registerMaster(t, rc, nsAddr, cluster, name, self.Addr, haAddr)

	ap := startApache(t, name, nsAddr, ctlAddr, s.dir)
	testutil.WaitFor(t, 120*time.Second, func() bool {
		info, err := cl.ReplicaInfo(ctx, name)
		return err == nil && len(info.SyncStateSet) == 2 && len(m.svc.SyncStateSet()) == 2
	})
	put(t, m.st, 4800, 300, 4)
	var end int64
	testutil.WaitFor(t, 60*time.Second, func() bool {
		end, err = maxOffset(rc, ap.addr)
		return err == nil && end == m.st.MaxPhyOffset()
	})
	want := ap.commitLog(t, 0, end)
	got := readLog(t, m.st, 0, end)
	if !bytes.Equal(got, want) {
		t.Fatalf("commit logs differ (rocketgo %d bytes, Apache %d)", len(got), len(want))
	}
	if common < apacheFileSize {
		t.Fatalf("common part %d: want it across the first file", common)
	}
	if a, r := ap.epochs(t), m.epochs.All(); !slices.Equal(a, r) || len(r) != 2 || r[1].StartOffset != common {
		t.Fatalf("epoch entries: Apache %v rocketgo %v, want the second at %d", a, r, common)
	}
	t.Logf("byte-equal commit logs [0, %d), epochs %v; Apache cut its tail at %d", end, m.epochs.All(), common)
}

// holdProxy forwards connections to target; while held, nothing flows
// from target back (a master's frames stop), while the other direction
// (a slave's reports) passes, so the master still sees the slave.
type holdProxy struct {
	ln     net.Listener
	target string
	held   atomic.Bool
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  []net.Conn
}

func newHoldProxy(t *testing.T, target string) *holdProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &holdProxy{ln: ln, target: target}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			p.wg.Add(2)
			go func() { defer p.wg.Done(); _, _ = io.Copy(up, c); _ = up.Close(); _ = c.Close() }()
			go func() { defer p.wg.Done(); p.back(c, up) }()
		}
	}()
	t.Cleanup(func() {
		p.held.Store(false)
		_ = ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *holdProxy) back(down, up net.Conn) {
	defer down.Close()
	defer up.Close()
	buf := make([]byte, 64<<10)
	for {
		if p.held.Load() { // released at the test's end at the latest
			time.Sleep(10 * time.Millisecond)
			continue
		}
		n, err := up.Read(buf)
		if n > 0 {
			if _, werr := down.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// A set of an Apache 5.3.3 broker and a rocketgo broker fails over both
// ways through the rocketgo controller: the Apache master (all acks in
// the SyncStateSet) writes a tail the rocketgo slave never receives and
// is killed with SIGKILL; the controller elects the rocketgo broker,
// which becomes master in a new epoch; the Apache broker, restarted,
// follows it, cuts the tail it alone had at the consistent point and
// holds the rocketgo master's log byte for byte. Every message
// acknowledged by the Apache master is in it.
func TestAutoSwitchMixedFailover(t *testing.T) {
	needApache(t)
	ctlAddr, nsAddr, rc, cl := controlPlane(t)
	ctx := context.Background()
	const cluster, name = "asCluster", "asM"

	ap := startApache(t, name, nsAddr, ctlAddr, "", "allAckInSyncStateSet=true\ncontrollerHeartBeatTimeoutMills=3000\n")
	var st replicas.ReplicaState
	testutil.WaitFor(t, 120*time.Second, func() bool {
		var err error
		st, err = cl.ReplicaInfo(ctx, name)
		return err == nil && st.MasterID != nil && st.MasterAddr == ap.addr
	})
	apacheID := *st.MasterID

	cfg := testConfig()
	cfg.AllAckInSyncStateSet = true
	cfg.AlterSyncStateSet = func(master int64, epoch int32, set []int64, setEpoch int32) ([]int64, int32, error) {
		return cl.AlterSyncStateSet(ctx, name, master, epoch, set, setEpoch)
	}
	n := openNodeSize(t, cfg, apacheFileSize)
	self := replicas.Broker{Cluster: cluster, BrokerName: name, Addr: "127.0.0.1:3"}
	files := replicas.IdentityFiles{Root: t.TempDir()}
	var id int64
	testutil.WaitFor(t, 30*time.Second, func() bool {
		var rs replicas.ReplicaState
		var err error
		id, rs, err = replicas.Register(ctx, cl, files, self)
		if err != nil {
			t.Fatal(err)
		}
		return rs.MasterID != nil && *rs.MasterID == apacheID
	})
	heartbeats(t, cl, replicas.Heartbeat{Cluster: cluster, BrokerName: name, BrokerAddr: self.Addr, BrokerID: id,
		Epoch: -1, TimeoutMillis: 10000})
	proxy := newHoldProxy(t, ap.haAddr)
	if err := n.svc.BecomeSlave(proxy.ln.Addr().String(), st.MasterEpoch, id); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 60*time.Second, func() bool {
		info, err := cl.ReplicaInfo(ctx, name)
		return err == nil && slices.Contains(info.SyncStateSet, id)
	})
	topic := "TopicMX" + strconv.FormatInt(time.Now().UnixNano(), 36)
	testutil.WaitFor(t, 60*time.Second, func() bool { return send(rc, ap.addr, topic, -1) == nil })
	for i := range 600 {
		if err := send(rc, ap.addr, topic, i); err != nil {
			t.Fatal(err)
		}
	}
	acked, err := maxOffset(rc, ap.addr)
	if err != nil {
		t.Fatal(err)
	}

	// The Apache master's frames stop reaching the slave; it stores more
	// (one-way sends: no answer to wait for) and dies.
	proxy.held.Store(true)
	for i := 600; i < 650; i++ {
		req := remoting.NewRequest(remoting.SendMessage, map[string]string{
			"producerGroup": "asGroup", "topic": topic, "defaultTopic": "TBW102", "defaultTopicQueueNums": "4",
			"queueId": strconv.Itoa(i % 4), "sysFlag": "0", "bornTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10),
			"flag": "0", "properties": "", "reconsumeTimes": "0", "unitMode": "false", "batch": "false",
		}, fmt.Appendf(nil, "alone-%d", i))
		if err := rc.InvokeOneway(ctx, ap.addr, req); err != nil {
			t.Fatal(err)
		}
	}
	var alone int64
	testutil.WaitFor(t, 30*time.Second, func() bool {
		alone, err = maxOffset(rc, ap.addr)
		return err == nil && alone > acked+50*40
	})
	ap.kill()
	atKill := n.st.MaxPhyOffset()
	if atKill < acked || atKill >= alone {
		t.Fatalf("slave holds %d: want every acknowledged byte (%d) and not the master's tail (%d)", atKill, acked, alone)
	}

	// The controller elects the rocketgo broker; it becomes master.
	testutil.WaitFor(t, 60*time.Second, func() bool {
		var err error
		st, err = cl.ReplicaInfo(ctx, name)
		return err == nil && st.MasterID != nil && *st.MasterID == id
	})
	if err := n.epochs.Append(st.MasterEpoch, n.st.MaxPhyOffset()); err != nil {
		t.Fatal(err)
	}
	if err := n.svc.BecomeMaster(st.MasterEpoch, id, st.SyncStateSet, st.SyncStateSetEpoch); err != nil {
		t.Fatal(err)
	}
	cut := n.st.MaxPhyOffset()
	put(t, n.st, 0, 300, 4)
	registerMaster(t, rc, nsAddr, cluster, name, self.Addr, n.svc.Addr())

	// The old master comes back as a slave and cuts its tail.
	ap.start(t)
	testutil.WaitFor(t, 120*time.Second, func() bool {
		info, err := cl.ReplicaInfo(ctx, name)
		return err == nil && slices.Contains(info.SyncStateSet, apacheID) && slices.Contains(n.svc.SyncStateSet(), apacheID)
	})
	put(t, n.st, 300, 300, 4)
	var end int64
	testutil.WaitFor(t, 60*time.Second, func() bool {
		end, err = maxOffset(rc, ap.addr)
		return err == nil && end == n.st.MaxPhyOffset()
	})
	if !bytes.Equal(ap.commitLog(t, 0, end), readLog(t, n.st, 0, end)) {
		t.Fatalf("commit logs differ over [0, %d)", end)
	}
	if a, r := ap.epochs(t), n.epochs.All(); !slices.Equal(a, r) || len(r) != 2 || r[1].StartOffset != cut {
		t.Fatalf("epoch entries: Apache %v rocketgo %v, want the second at %d", a, r, cut)
	}
	t.Logf("acknowledged up to %d, Apache alone up to %d, cut at %d; byte-equal [0, %d), epochs %v", acked, alone, cut, end, n.epochs.All())
}
