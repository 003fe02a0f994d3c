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
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
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

func TestHAReference(t *testing.T) {
	requireJava(t)
	t.Run("ApacheSlaveOfRocketgoMaster", func(t *testing.T) {
		haPort, err := pickPort()
		if err != nil {
			t.Fatal(err)
		}
		c := newClusterConf(t, "ha-gomaster", fmt.Sprintf("brokerRole=ASYNC_MASTER\nhaListenPort=%d\n%s", haPort, haTestKeys))
		topic := uniq("HARef")
		createTopicOn(t, c.nsAddr, c.brokerAddr, topic)
		sendHA(t, c, topic, 0, 10) // the slave starts at the master's last file: file 0
		start := time.Now()
		// No haMasterAddress: Apache 5.3.3 applies it before its HA client
		// exists (BrokerController.initialize runs before the store's
		// start makes the client) and then never asks the name server; the
		// slave learns our haServerAddr from its registration answer.
		slave, slaveAddr, slaveDir := startApacheBroker(t, "ha-apacheslave", c.nsAddr, fmt.Sprintf(
			"brokerName=%s\nbrokerId=1\nbrokerRole=SLAVE\n%s", c.brokerName, haTestKeys))
		waitCaughtUp(t, c.brokerAddr, slaveAddr, 120*time.Second)
		sendHA(t, c, topic, 10, haMessages)
		end := waitCaughtUp(t, c.brokerAddr, slaveAddr, 120*time.Second)
		took := time.Since(start)
		slave.stop()
		c.stopBroker()
		from := firstFile(t, filepath.Join(slaveDir, "store", "commitlog"))
		if from != 0 {
			t.Fatalf("Apache slave's first file starts at %d, want 0", from)
		}
		files := sameCommitLogs(t, filepath.Join(c.dir, "store", "commitlog"), filepath.Join(slaveDir, "store", "commitlog"), from, end)
		if files < 3 {
			t.Fatalf("compared %d files, want the copy to cross file boundaries", files)
		}
		report(t, start, haMessages+10, 0, fmt.Sprintf("rocketgo master -> Apache slave: %d bytes, %d files identical, %.1fs", end, files, took.Seconds()))
	})

	t.Run("RocketgoSlaveOfApacheMaster", func(t *testing.T) {
		c, err := startNamesrvConf("ha-goslave", "")
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
		master, masterAddr, masterDir := startApacheBroker(t, "ha-apachemaster", c.nsAddr, fmt.Sprintf(
			"brokerName=%s\nbrokerId=0\nbrokerRole=ASYNC_MASTER\nhaListenPort=%d\n%s", c.brokerName, haPort, haTestKeys))
		topic := uniq("HARef")
		createTopicOn(t, c.nsAddr, masterAddr, topic)
		start := time.Now()
		c.extraConf = fmt.Sprintf("brokerId=1\nbrokerRole=SLAVE\nhaMasterAddress=127.0.0.1:%d\n%s", haPort, haTestKeys)
		if err := c.startBroker(); err != nil {
			t.Fatal(err)
		}
		// Into the slave's first file, then across two file boundaries.
		sendHA(t, c, topic, 0, 10)
		waitCaughtUp(t, masterAddr, c.brokerAddr, 120*time.Second)
		sendHA(t, c, topic, 10, haMessages)
		end := waitCaughtUp(t, masterAddr, c.brokerAddr, 120*time.Second)
		took := time.Since(start)
		c.stopBroker()
		master.stop()
		slaveLog := filepath.Join(c.dir, "store", "commitlog")
		from := firstFile(t, slaveLog)
		files := sameCommitLogs(t, filepath.Join(masterDir, "store", "commitlog"), slaveLog, from, end)
		if files < 3 {
			t.Fatalf("compared %d files from %d, want the copy to cross file boundaries", files, from)
		}
		if strings.Contains(tailFile(filepath.Join(c.dir, "broker.log"), 200), "ha replication refused") {
			t.Fatal("our slave refused a frame of the Apache master")
		}
		report(t, start, haMessages+10, 0, fmt.Sprintf("Apache master -> rocketgo slave: %d bytes from %d, %d files identical, %.1fs", end-from, from, files, took.Seconds()))
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

	// Stream while the slave is killed and restarted.
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
	killedAt, _ := commitLogMaxOffset(s.brokerAddr)
	_ = s.broker.cmd.Process.Kill()
	<-s.broker.done
	if err := s.startBroker(); err != nil {
		t.Fatal(err)
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
	report(t, time.Now(), sent+5, 0, fmt.Sprintf("slave killed at %d, restarted, %d bytes in %d files identical", killedAt, end, files))
}
