package compattest

// Classic HA against Apache RocketMQ 5.3.3 first-hand (spec/ha.md §1): an
// Apache slave replicating from a rocketgo master, and a rocketgo slave
// replicating from an Apache master. The official Go client sends to the
// master; once the slave reports the master's commit log end, both stop and
// the commit log files on disk are compared byte for byte up to the
// master's max offset (BLANK records and file tails included: the bytes
// travel as they lie on disk). Files of 1 MiB make the copy cross file
// boundaries. Enabled by ROCKETGO_JAVA=1.

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/tidwall/gjson"
)

const (
	haFileSize = 1 << 20
	haMessages = 700 // of 4 KiB: about 2.9 MiB, three commit log files
	// haTestKeys shorten Apache's intervals for both brokers.
	haTestKeys = "mappedFileSizeCommitLog=1048576\nhaSendHeartbeatInterval=1000\nhaHousekeepingInterval=20000\n"
)

// startApacheBroker runs an Apache 5.3.3 broker (reference/run.sh) with
// extra broker.properties lines; it returns the process, its remoting
// address and its directory.
func startApacheBroker(t *testing.T, name, nsAddr, extra string) (*proc, string, string) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("reference", "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	port, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(workDir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broker.extra.properties"), []byte(extra), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := startProc(name, script, []string{"broker", strconv.Itoa(port), nsAddr, dir, clusterName}, filepath.Join(dir, "broker.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.stop() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	if err := waitTCP(p, addr, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("tail of %s:\n%s", p.logPath, tailFile(p.logPath, 40))
		}
	})
	return p, addr, dir
}

// killJava ends an Apache broker at once: its commit log is compared only
// after the other side reported the same end, and the page cache keeps
// what it wrote (a SIGTERM takes it more than the harness's 10 s grace,
// then SIGKILL anyway: 10 s per broker for nothing).
func killJava(p *proc) {
	_ = p.cmd.Process.Kill() // exited already: nothing to do
	<-p.done
	fmt.Fprintf(p.logFile, "===== %s killed by the test: %v\n", p.name, p.waitErr)
	_ = p.logFile.Close() // stop() returns early for an exited process
}

// commitLogMaxOffset reads GET_BROKER_RUNTIME_INFO (28) commitLogMaxOffset.
func commitLogMaxOffset(addr string) (int64, error) {
	resp, err := rawInvoke(addr, javaRequest(28, nil, nil), 5*time.Second)
	if err != nil {
		return 0, err
	}
	if resp.Code != 0 {
		return 0, fmt.Errorf("runtime info from %s: code %d %s", addr, resp.Code, resp.Remark)
	}
	v := gjson.GetBytes(resp.Body, "table.commitLogMaxOffset")
	if !v.Exists() {
		return 0, fmt.Errorf("runtime info from %s: no commitLogMaxOffset: %s", addr, resp.Body)
	}
	return strconv.ParseInt(v.String(), 10, 64)
}

// waitCaughtUp waits until the slave's commit log ends where the master's
// does, and returns that offset.
func waitCaughtUp(t *testing.T, master, slave string, timeout time.Duration) int64 {
	t.Helper()
	var m, s int64
	var last error
	if !waitFor(t, timeout, func() bool {
		var err error
		if m, err = commitLogMaxOffset(master); err != nil {
			last = err
			return false
		}
		if s, err = commitLogMaxOffset(slave); err != nil {
			last = err
			return false
		}
		return m > 0 && m == s
	}) {
		t.Fatalf("slave %s at %d, master %s at %d after %v (%v)", slave, s, master, m, timeout, last)
	}
	return m
}

// sendHA sends n messages of 4 KiB with the official Go client through the
// name server of c to topic and returns them by message id.
func sendHA(t *testing.T, c *cluster, topic string, from, n int) {
	t.Helper()
	p := newProducer(t, c)
	// Random bytes: the client compresses bodies over 4 KiB, and these
	// must take their room in the commit log.
	body := make([]byte, 4096)
	_, _ = rand.NewChaCha8([32]byte{byte(from)}).Read(body) // never fails
	for i := from; i < from+n; i++ {
		m := primitive.NewMessage(topic, append(fmt.Appendf(nil, "%06d-", i), body...))
		m.WithTag("ha")
		m.WithKeys([]string{fmt.Sprintf("k%d", i)})
		m.WithProperty(idProp, strconv.Itoa(i))
		p.mustSend(t, m)
	}
	p.shutdown()
}

// sameQueueMaxOffsets waits until the slave's consume queues of topic (4
// queues) end where the master's do (GET_MAX_OFFSET 30 on both): the
// slave's dispatcher built them from the replicated records' queue offsets.
func sameQueueMaxOffsets(t *testing.T, master, slave, topic string) {
	t.Helper()
	var last string
	if !waitFor(t, 30*time.Second, func() bool {
		for q := range 4 {
			a, err1 := getMaxOffset(master, topic, q)
			b, err2 := getMaxOffset(slave, topic, q)
			if err1 != nil || err2 != nil || a != b || a == 0 {
				last = fmt.Sprintf("queue %d: master %d (%v), slave %d (%v)", q, a, err1, b, err2)
				return false
			}
		}
		return true
	}) {
		t.Fatalf("consume queues differ: %s", last)
	}
}

// createTopicOn creates topic (4 queues) on the broker at addr and waits
// until the name server routes it there.
func createTopicOn(t *testing.T, nsAddr, brokerAddr, topic string) {
	t.Helper()
	resp, err := rawInvoke(brokerAddr, createTopicReq(topic, 4, 4), 5*time.Second)
	if err != nil || resp.Code != 0 {
		t.Fatalf("create topic %s on %s: %v %+v", topic, brokerAddr, err, resp)
	}
	if !waitFor(t, 60*time.Second, func() bool {
		code, rd, _, err := queryRoute(nsAddr, topic)
		return err == nil && code == 0 && rd.hasBroker(brokerAddr)
	}) {
		t.Fatalf("topic %s not routed to %s", topic, brokerAddr)
	}
}

// sameCommitLogs compares the commit log files of two stores over
// [from, end): every file of that range must exist on both sides with the
// same bytes. It returns the number of files compared.
func sameCommitLogs(t *testing.T, masterDir, slaveDir string, from, end int64) int {
	t.Helper()
	n := 0
	for start := from - from%haFileSize; start < end; start += haFileSize {
		name := fmt.Sprintf("%020d", start)
		a, err := os.ReadFile(filepath.Join(masterDir, name))
		if err != nil {
			t.Fatalf("master: %v", err)
		}
		b, err := os.ReadFile(filepath.Join(slaveDir, name))
		if err != nil {
			t.Fatalf("slave: %v", err)
		}
		if len(a) != haFileSize || len(b) != haFileSize {
			t.Fatalf("%s: master %d bytes, slave %d bytes, want %d", name, len(a), len(b), haFileSize)
		}
		lo, hi := max(from, start)-start, min(end, start+haFileSize)-start
		if !bytes.Equal(a[lo:hi], b[lo:hi]) {
			i := lo
			for i < hi && a[i] == b[i] {
				i++
			}
			t.Fatalf("%s differs at offset %d (file position %d)", name, start+i, i)
		}
		n++
	}
	return n
}

// firstFile is the start offset of the oldest commit log file in dir.
func firstFile(t *testing.T, dir string) int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if len(e.Name()) == 20 {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		t.Fatalf("no commit log file in %s", dir)
	}
	sort.Strings(names)
	v, err := strconv.ParseInt(names[0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// apacheSlaveOfRocketgo: an Apache slave of a rocketgo master in role. A
// SYNC_MASTER answers SendOK only once a slave acknowledged the record:
// every send after the first acknowledged one must be SendOK, acked by
// the Apache slave within slaveTimeout.
func apacheSlaveOfRocketgo(t *testing.T, role string) {
	haPort, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	name := "ha-gomaster-" + strings.ToLower(role[:4])
	c := newClusterConf(t, name, fmt.Sprintf("brokerRole=%s\nhaListenPort=%d\n%s", role, haPort, haTestKeys))
	topic := uniq("HARef")
	createTopicOn(t, c.nsAddr, c.brokerAddr, topic)
	start := time.Now()
	// The master is empty: the slave starts at file 0. No haMasterAddress:
	// Apache 5.3.3 applies it before its HA client exists
	// (BrokerController.initialize runs before the store's start makes the
	// client) and then never asks the name server; the slave learns our
	// haServerAddr from its registration answer.
	slave, slaveAddr, slaveDir := startApacheBroker(t, "ha-apacheslave-"+strings.ToLower(role[:4]), c.nsAddr, fmt.Sprintf(
		"brokerName=%s\nbrokerId=1\nbrokerRole=SLAVE\n%s", c.brokerName, haTestKeys))
	p := newProducer(t, c)
	notOK := 0
	if !waitFor(t, 120*time.Second, func() bool {
		r, err := p.sendSync(context.Background(), primitive.NewMessage(topic, []byte("first")))
		if err == nil && r.Status == primitive.SendOK {
			return true
		}
		notOK++
		return false
	}) {
		t.Fatalf("no SendOK within 120 s (%d sends not OK)", notOK)
	}
	if role == "ASYNC_MASTER" && notOK > 0 {
		t.Fatalf("ASYNC_MASTER: %d sends not OK", notOK)
	}
	p.shutdown()
	// Connected and caught up before the bulk: an ASYNC_MASTER does not
	// wait, and a slave connecting later starts at the master's last file.
	waitCaughtUp(t, c.brokerAddr, slaveAddr, 120*time.Second)
	sendHA(t, c, topic, 0, haMessages) // mustSend: SendOK each
	end := waitCaughtUp(t, c.brokerAddr, slaveAddr, 120*time.Second)
	took := time.Since(start)
	sameQueueMaxOffsets(t, c.brokerAddr, slaveAddr, topic)
	killJava(slave)
	c.stopBroker()
	from := firstFile(t, filepath.Join(slaveDir, "store", "commitlog"))
	if from != 0 {
		t.Fatalf("Apache slave's first file starts at %d, want 0", from)
	}
	files := sameCommitLogs(t, filepath.Join(c.dir, "store", "commitlog"), filepath.Join(slaveDir, "store", "commitlog"), from, end)
	if files < 3 {
		t.Fatalf("compared %d files, want the copy to cross file boundaries", files)
	}
	report(t, start, haMessages+1+notOK, 0, fmt.Sprintf("rocketgo %s -> Apache slave: %d bytes, %d files identical, %d sends before the first SendOK, %.1fs",
		role, end, files, notOK, took.Seconds()))
}

func TestHAReference(t *testing.T) {
	requireJava(t)
	for _, role := range []string{"ASYNC_MASTER", "SYNC_MASTER"} {
		t.Run("ApacheSlaveOfRocketgo_"+role, func(t *testing.T) { apacheSlaveOfRocketgo(t, role) })
	}

	for _, role := range []string{"ASYNC_MASTER", "SYNC_MASTER"} {
		t.Run("RocketgoSlaveOfApache_"+role, func(t *testing.T) { rocketgoSlaveOfApache(t, role) })
	}
	// An empty rocketgo slave joining an Apache master that has three files
	// starts at the master's last file (the Java master's rule for a report
	// of 0): its first file is not 0. It follows on, is restarted (its
	// store opens with that first file), and follows on again.
	t.Run("RocketgoSlaveJoinsApacheMasterLate", func(t *testing.T) {
		c, err := startNamesrvConf("ha-golate", "")
		if c != nil {
			t.Cleanup(c.stop)
			c.attachLogs(t)
		}
		if err != nil {
			t.Fatal(err)
		}
		haPort, err := pickPort()
		if err != nil {
			t.Fatal(err)
		}
		master, masterAddr, masterDir := startApacheBroker(t, "ha-apachemaster-late", c.nsAddr, fmt.Sprintf(
			"brokerName=%s\nbrokerId=0\nbrokerRole=ASYNC_MASTER\nhaListenPort=%d\n%s", c.brokerName, haPort, haTestKeys))
		topic := uniq("HARef")
		createTopicOn(t, c.nsAddr, masterAddr, topic)
		sendHA(t, c, topic, 0, haMessages)
		before, err := commitLogMaxOffset(masterAddr)
		if err != nil {
			t.Fatal(err)
		}
		lastFile := before - before%haFileSize
		if lastFile == 0 {
			t.Fatalf("master at %d: want several files", before)
		}
		start := time.Now()
		c.extraConf = fmt.Sprintf("brokerId=1\nbrokerRole=SLAVE\nhaMasterAddress=127.0.0.1:%d\n%s", haPort, haTestKeys)
		if err := c.startBroker(); err != nil {
			t.Fatal(err)
		}
		waitCaughtUp(t, masterAddr, c.brokerAddr, 120*time.Second)
		sendHA(t, c, topic, haMessages, 300) // into the next file
		waitCaughtUp(t, masterAddr, c.brokerAddr, 120*time.Second)
		c.stopBroker()
		if err := c.startBroker(); err != nil {
			t.Fatal(err)
		}
		sendHA(t, c, topic, haMessages+300, 50)
		end := waitCaughtUp(t, masterAddr, c.brokerAddr, 120*time.Second)
		took := time.Since(start)
		c.stopBroker()
		killJava(master)
		slaveLog := filepath.Join(c.dir, "store", "commitlog")
		from := firstFile(t, slaveLog)
		if from != lastFile {
			t.Fatalf("slave's first file starts at %d, want the master's last file %d", from, lastFile)
		}
		files := sameCommitLogs(t, filepath.Join(masterDir, "store", "commitlog"), slaveLog, from, end)
		report(t, start, haMessages+350, 0, fmt.Sprintf("rocketgo slave joined an Apache master at its last file %d, restarted: %d bytes, %d files identical, %.1fs",
			from, end-from, files, took.Seconds()))
	})
}

// TestHASlaveKill9: a rocketgo slave killed with SIGKILL while its master
// streams to it recovers (a partial tail record truncated), resumes from
// its own end, and ends with the master's commit log byte for byte:
// nothing below its end lost or duplicated.
func TestHASlaveKill9(t *testing.T) {
	haPort, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	m := newClusterConf(t, "ha-kmaster", fmt.Sprintf("brokerRole=ASYNC_MASTER\nhaListenPort=%d\n%s", haPort, haTestKeys))
	topic := uniq("HAKill")
	createTopicOn(t, m.nsAddr, m.brokerAddr, topic)
	sendHA(t, m, topic, 0, 5)
	s := newClusterConf(t, "ha-kslave", fmt.Sprintf("brokerName=%s\nbrokerId=1\nbrokerRole=SLAVE\nhaMasterAddress=127.0.0.1:%d\n%s",
		m.brokerName, haPort, haTestKeys))
	waitCaughtUp(t, m.brokerAddr, s.brokerAddr, 60*time.Second)

	// Stream while the slave is killed and restarted. (Caught up, the slave
	// mostly ends on a record boundary when killed; a torn tail record is
	// store's TestReplicaCrashMidRecord.)
	start := time.Now()
	stop := make(chan struct{})
	done := make(chan int)
	go func() {
		p := newProducer(t, m)
		body := make([]byte, 4096)
		n := 0
		for {
			select {
			case <-stop:
				done <- n
				return
			default:
			}
			_, _ = rand.NewChaCha8([32]byte{byte(n)}).Read(body) // never fails
			msg := primitive.NewMessage(topic, body)
			if r, err := p.sendSync(context.Background(), msg); err != nil || r.Status != primitive.SendOK {
				t.Errorf("send %d: %v %v", n, err, r)
				done <- n
				return
			}
			n++
		}
	}()
	if !waitFor(t, 60*time.Second, func() bool {
		off, err := commitLogMaxOffset(s.brokerAddr)
		return err == nil && off > haFileSize+haFileSize/2
	}) {
		t.Fatal("slave never got 1.5 MiB")
	}
	// Stop the slave while the master writes on, let it run again and kill
	// it once its catch-up has begun: its log may end inside a record (the
	// result line says whether recovery cut a torn record; not asserted, a
	// matter of timing: on loopback the catch-up mostly ends before the
	// kill lands).
	stoppedAt, _ := commitLogMaxOffset(s.brokerAddr)
	_ = s.broker.cmd.Process.Signal(syscall.SIGSTOP)
	if !waitFor(t, 60*time.Second, func() bool {
		off, err := commitLogMaxOffset(m.brokerAddr)
		return err == nil && off > stoppedAt+haFileSize
	}) {
		t.Fatal("master did not write on")
	}
	_ = s.broker.cmd.Process.Signal(syscall.SIGCONT)
	waitFor(t, 10*time.Second, func() bool { // the catch-up has begun
		off, err := commitLogMaxOffset(s.brokerAddr)
		return err == nil && off > stoppedAt
	})
	_ = s.broker.cmd.Process.Kill()
	<-s.broker.done
	if err := s.startBroker(); err != nil {
		t.Fatal(err)
	}
	killedAt, _ := commitLogMaxOffset(s.brokerAddr) // the recovered end
	torn := "no"
	if l := recoveryLine(filepath.Join(s.dir, "broker.log")); l != "" && !strings.Contains(l, "magic 0x0") {
		torn = "yes"
	}
	if !waitFor(t, 60*time.Second, func() bool {
		off, err := commitLogMaxOffset(s.brokerAddr)
		return err == nil && off > killedAt+haFileSize/2
	}) {
		t.Fatal("restarted slave does not progress")
	}
	close(stop)
	sent := <-done
	end := waitCaughtUp(t, m.brokerAddr, s.brokerAddr, 60*time.Second)
	s.stopBroker()
	m.stopBroker()
	slaveLog := filepath.Join(s.dir, "store", "commitlog")
	files := sameCommitLogs(t, filepath.Join(m.dir, "store", "commitlog"), slaveLog, firstFile(t, slaveLog), end)
	report(t, start, sent+5, 0, fmt.Sprintf("slave killed during catch-up, recovered to %d (torn tail record: %s), %d bytes in %d files identical",
		killedAt, torn, end, files))
}

// recoveryLine is the last "commit log recovered" line of a broker log.
func recoveryLine(path string) string {
	b, _ := os.ReadFile(path) // none: ""
	lines := strings.Split(string(b), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], `"message":"commit log recovered"`) {
			return lines[i]
		}
	}
	return ""
}

// TestHASlaveKill9TornRecord: a rocketgo slave (the real binary) killed
// with SIGKILL right after a frame that ended inside a record. A scripted
// master serves a real commit log (written by a rocketgo broker): the
// first frame ends 100 bytes into record 20; once the slave reported that
// end it is killed. Restarted, it must report the torn record's start
// (recovery cut the partial record, nothing before it), take the rest
// from there, and end with the source log byte for byte.
func TestHASlaveKill9TornRecord(t *testing.T) {
	src := newClusterConf(t, "ha-tornsrc", "mappedFileSizeCommitLog=1048576\n")
	topic := uniq("HATorn")
	createTopicOn(t, src.nsAddr, src.brokerAddr, topic)
	sendHA(t, src, topic, 0, 60)
	src.stopBroker()
	data, err := os.ReadFile(filepath.Join(src.dir, "store", "commitlog", fmt.Sprintf("%020d", 0)))
	if err != nil {
		t.Fatal(err)
	}
	var starts []int64 // record starts, then the end
	for pos := int64(0); ; {
		starts = append(starts, pos)
		size := int64(binary.BigEndian.Uint32(data[pos:]))
		if size == 0 || pos+size > int64(len(data)) {
			break
		}
		pos += size
	}
	if len(starts) < 50 {
		t.Fatalf("source log has %d records", len(starts)-1)
	}
	end := starts[len(starts)-1]
	torn := starts[20]
	cut := torn + 100

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	start := time.Now()
	reports := make(chan haReport, 64) // the slave's reports, in order
	quit := make(chan struct{})        // the test no longer reads reports
	served := make(chan struct{})
	go func() {
		defer close(served)
		for conn := 1; ; conn++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serveScripted(c, conn, data, cut, end, reports, quit)
		}
	}()
	defer func() { close(quit); ln.Close(); <-served }()

	s := newClusterConf(t, "ha-torn", fmt.Sprintf("brokerId=1\nbrokerRole=SLAVE\nhaMasterAddress=%s\n%s", ln.Addr(), haTestKeys))
	// next is the next report on a connection after the first (stale
	// reports of a connection before are skipped).
	next := func(minConn int) haReport {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case r := <-reports:
				if r.conn >= minConn {
					return r
				}
			case <-deadline:
				t.Fatalf("no report on connection %d or later", minConn)
			}
		}
	}
	for r := next(1); r.offset != cut; r = next(1) {
	} // holds [0, cut): record 20 half
	_ = s.broker.cmd.Process.Kill()
	<-s.broker.done
	if err := s.startBroker(); err != nil {
		t.Fatal(err)
	}
	if r := next(2); r.offset != torn {
		t.Fatalf("restarted slave reported %d on connection %d, want the torn record's start %d (cut at %d)", r.offset, r.conn, torn, cut)
	}
	for r := next(2); r.offset != end; r = next(2) {
	}
	s.stopBroker()
	got, err := os.ReadFile(filepath.Join(s.dir, "store", "commitlog", fmt.Sprintf("%020d", 0)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[:end], data[:end]) {
		t.Fatal("slave's log differs from the source")
	}
	if l := recoveryLine(filepath.Join(s.dir, "broker.log")); !strings.Contains(l, fmt.Sprintf(`"processOffset":%d`, torn)) {
		t.Fatalf("recovery line %q, want processOffset %d", l, torn)
	}
	report(t, start, 60, 0, fmt.Sprintf("cut at %d inside the record at %d; the restarted slave resumed there; %d bytes identical", cut, torn, end))
}

type haReport struct {
	conn   int // the master's connection count when it arrived
	offset int64
}

// serveScripted is a classic HA master for one connection: from a first
// report of 0 it sends [0, cut) as one frame; from any other, the rest of
// data up to end in 32 KiB frames. Every report goes to reports.
func serveScripted(c net.Conn, conn int, data []byte, cut, end int64, reports chan<- haReport, quit <-chan struct{}) {
	defer c.Close()
	var b [8]byte
	send := func(off int64, body []byte) error {
		var h [12]byte
		binary.BigEndian.PutUint64(h[:], uint64(off))
		binary.BigEndian.PutUint32(h[8:], uint32(len(body)))
		_, err := c.Write(append(h[:], body...))
		return err
	}
	first := true
	for {
		if _, err := io.ReadFull(c, b[:]); err != nil {
			return
		}
		r := int64(binary.BigEndian.Uint64(b[:]))
		select {
		case reports <- haReport{conn, r}:
		case <-quit:
			return
		}
		if !first {
			continue
		}
		first = false
		if r == 0 {
			if send(0, data[:cut]) != nil {
				return
			}
			continue
		}
		for off := r; off < end; off += 32 << 10 {
			if send(off, data[off:min(off+32<<10, end)]) != nil {
				return
			}
		}
	}
}

// rocketgoSlaveOfApache: a rocketgo slave of an Apache 5.3.3 master in
// role. An Apache SYNC_MASTER with inSyncReplicas=2 (5.x waits for no slave
// with its default of 1) answers SendOK only once our slave's report
// covered the record: every send must be SendOK.
func rocketgoSlaveOfApache(t *testing.T, role string) {
	suffix := strings.ToLower(role[:4])
	c, err := startNamesrvConf("ha-goslave-"+suffix, "")
	if c != nil {
		t.Cleanup(c.stop)
		c.attachLogs(t)
	}
	if err != nil {
		t.Fatal(err)
	}
	haPort, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	master, masterAddr, masterDir := startApacheBroker(t, "ha-apachemaster-"+suffix, c.nsAddr, fmt.Sprintf(
		"brokerName=%s\nbrokerId=0\nbrokerRole=%s\ninSyncReplicas=2\nhaListenPort=%d\n%s", c.brokerName, role, haPort, haTestKeys))
	topic := uniq("HARef")
	createTopicOn(t, c.nsAddr, masterAddr, topic)
	start := time.Now()
	c.extraConf = fmt.Sprintf("brokerId=1\nbrokerRole=SLAVE\nhaMasterAddress=127.0.0.1:%d\n%s", haPort, haTestKeys)
	if err := c.startBroker(); err != nil {
		t.Fatal(err)
	}
	// Into the slave's first file, then across two file boundaries.
	// A SYNC_MASTER answers SendOK once our slave reported (at once on
	// connecting): wait for the first one.
	p := newProducer(t, c)
	if !waitFor(t, 60*time.Second, func() bool {
		r, err := p.sendSync(context.Background(), primitive.NewMessage(topic, []byte("first")))
		return err == nil && r.Status == primitive.SendOK
	}) {
		t.Fatal("no SendOK within 60 s")
	}
	p.shutdown()
	sendHA(t, c, topic, 0, 10) // mustSend: SendOK each
	waitCaughtUp(t, masterAddr, c.brokerAddr, 120*time.Second)
	sendHA(t, c, topic, 10, haMessages)
	end := waitCaughtUp(t, masterAddr, c.brokerAddr, 120*time.Second)
	took := time.Since(start)
	sameQueueMaxOffsets(t, masterAddr, c.brokerAddr, topic)
	c.stopBroker()
	killJava(master)
	slaveLog := filepath.Join(c.dir, "store", "commitlog")
	from := firstFile(t, slaveLog)
	files := sameCommitLogs(t, filepath.Join(masterDir, "store", "commitlog"), slaveLog, from, end)
	if files < 3 {
		t.Fatalf("compared %d files from %d, want the copy to cross file boundaries", files, from)
	}
	if strings.Contains(tailFile(filepath.Join(c.dir, "broker.log"), 200), "ha replication refused") {
		t.Fatal("our slave refused a frame of the Apache master")
	}
	report(t, start, haMessages+11, 0, fmt.Sprintf("Apache %s -> rocketgo slave: %d bytes from %d, %d files identical, %.1fs", role, end-from, from, files, took.Seconds()))
}
