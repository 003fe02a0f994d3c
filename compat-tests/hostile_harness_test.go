package compattest

// Harness additions for the hostile-connection tests: a namesrv+broker pair
// started under a chosen RLIMIT_NOFILE and with extra namesrv properties,
// process memory and descriptor readings, and the "official client still
// works" check.

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
)

// limitedArgs runs bin through sh with RLIMIT_NOFILE set to nofile (soft and
// hard: Go would raise a lower soft limit to the hard one) before exec, so
// the process starts, and derives its limits, under it. nofile 0 keeps the
// test's own limit.
func limitedArgs(nofile int, bin string, args []string) (string, []string) {
	if nofile <= 0 {
		return bin, args
	}
	script := fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, nofile)
	return "/bin/sh", append([]string{"-c", script, bin}, args...)
}

// newHostileCluster starts a dedicated namesrv+broker pair, each under
// RLIMIT_NOFILE nofile (0: unchanged), with extra properties for each.
func newHostileCluster(t *testing.T, name string, nofile int, nsExtra, brokerExtra string) *cluster {
	t.Helper()
	c := &cluster{name: name, brokerName: "broker-" + name, extraConf: brokerExtra}
	t.Cleanup(c.stop)
	c.attachLogs(t)
	c.dir = filepath.Join(workDir, name)
	if err := os.MkdirAll(filepath.Join(c.dir, "store"), 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	if c.nsPort, err = pickPort(); err != nil {
		t.Fatal(err)
	}
	if c.brokerPort, err = pickPort(); err != nil {
		t.Fatal(err)
	}
	c.nsAddr = fmt.Sprintf("127.0.0.1:%d", c.nsPort)
	c.brokerAddr = fmt.Sprintf("127.0.0.1:%d", c.brokerPort)

	nsConf := filepath.Join(c.dir, "namesrv.properties")
	if err := os.WriteFile(nsConf, []byte(fmt.Sprintf("listenPort=%d\n%s", c.nsPort, nsExtra)), 0o644); err != nil {
		t.Fatal(err)
	}
	bin, args := limitedArgs(nofile, filepath.Join(binDir, "mqnamesrv"), []string{"-c", nsConf})
	if c.ns, err = startProc("mqnamesrv", bin, args, filepath.Join(c.dir, "namesrv.log")); err != nil {
		t.Fatal(err)
	}
	if err := waitTCP(c.ns, c.nsAddr, readyTimeout); err != nil {
		t.Fatal(err)
	}

	conf := filepath.Join(c.dir, "broker.properties")
	if err := os.WriteFile(conf, []byte(c.brokerConf()), 0o644); err != nil {
		t.Fatal(err)
	}
	c.starts++
	bin, args = limitedArgs(nofile, filepath.Join(binDir, "mqbroker"), []string{"-n", c.nsAddr, "-c", conf})
	if c.broker, err = startProc("mqbroker#1", bin, args, filepath.Join(c.dir, "broker.log")); err != nil {
		t.Fatal(err)
	}
	if err := waitTCP(c.broker, c.brokerAddr, readyTimeout); err != nil {
		t.Fatal(err)
	}
	var last string
	if !waitFor(t, readyTimeout, func() bool {
		code, route, remark, err := queryRoute(c.nsAddr, "TBW102")
		switch {
		case err != nil:
			last = err.Error()
		case code != 0:
			last = fmt.Sprintf("code %d remark %q", code, remark)
		default:
			return route.hasBroker(c.brokerAddr)
		}
		return false
	}) {
		t.Fatalf("broker not registered with namesrv: %s", last)
	}
	return c
}

// procStatus returns fields of /proc/<pid>/status in kB (VmRSS, RssAnon, ...).
func procStatus(pid int) (map[string]int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		if fs := strings.Fields(v); len(fs) == 2 && fs[1] == "kB" {
			n, _ := strconv.ParseInt(fs[0], 10, 64)
			out[k] = n
		}
	}
	return out, sc.Err()
}

// rssMB is VmRSS in MB, or -1 when it cannot be read.
func rssMB(p *proc) int64 {
	st, err := procStatus(p.cmd.Process.Pid)
	if err != nil {
		return -1
	}
	return st["VmRSS"] / 1024
}

// openFDs is the number of descriptors p has open.
func openFDs(p *proc) int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	return len(ents)
}

// rssSampler records the peak VmRSS of p until stopped.
type rssSampler struct {
	stop chan struct{}
	done chan int64
}

func sampleRSS(p *proc) *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan int64, 1)}
	go func() {
		var peak int64
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			peak = max(peak, rssMB(p))
			select {
			case <-s.stop:
				s.done <- peak
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// peak stops the sampler and returns the highest VmRSS seen, in MB.
func (s *rssSampler) peak() int64 {
	close(s.stop)
	return <-s.done
}

// requireAlive fails t if a server of c has exited.
func requireAlive(t *testing.T, c *cluster) {
	t.Helper()
	if c.ns.exited() || c.broker.exited() {
		t.Fatalf("server exited: namesrv exited=%v (%v), broker exited=%v (%v)",
			c.ns.exited(), c.ns.waitErr, c.broker.exited(), c.broker.waitErr)
	}
}

// officialClientWorks sends n messages with the official Go producer to a
// new topic and consumes them all with the official push consumer.
func officialClientWorks(t *testing.T, c *cluster, n int) {
	t.Helper()
	requireAlive(t, c)
	topic := uniq("HostileAfter")
	createTopic(t, c, topic, admin.WithReadQueueNums(2), admin.WithWriteQueueNums(2))
	p := newProducer(t, c)
	var ids []string
	for i := range n {
		id := fmt.Sprintf("after-%d", i)
		p.mustSend(t, newMsg(topic, id, "T"))
		ids = append(ids, id)
	}
	col := newCollector("after")
	startConsumer(t, c, uniq("CG"), topic, "*", col)
	waitAll(t, col, ids, 60*time.Second, "official client after the attack")
	p.shutdown()
}

// tcpEstablished reports whether the socket with local port local and peer
// port peer is in state ESTABLISHED, from /proc/net/tcp and tcp6 (the
// servers listen on [::], IPv4 peers appear there mapped).
func tcpEstablished(local, peer int) bool {
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			fs := strings.Fields(line)
			if len(fs) < 4 || !strings.Contains(fs[1], ":") {
				continue
			}
			port := func(addr string) int {
				n, _ := strconv.ParseInt(addr[strings.LastIndexByte(addr, ':')+1:], 16, 32)
				return int(n)
			}
			if port(fs[1]) == local && port(fs[2]) == peer && fs[3] == "01" {
				return true
			}
		}
	}
	return false
}
