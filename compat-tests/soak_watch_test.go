package compattest

// What the soak watches besides messages: the servers' memory, open files and
// logs (sampled every second from /proc), and the directory around the store.

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// procPeak holds the highest values seen for one server role (across
// restarts). VmHWM is the kernel's own high-water mark of the resident set,
// so a spike between two samples is not missed.
type procPeak struct {
	rss, hwm, anon int64 // bytes
	fds            int
}

func (p procPeak) peak() int64 { return max(p.rss, p.hwm) }

type procSample struct {
	rss, hwm, anon int64
	threads, fds   int
}

// readProcStatus reads VmRSS, VmHWM, RssAnon and Threads of pid, and counts
// its open descriptors.
func readProcStatus(pid int) (procSample, error) {
	var ps procSample
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ps, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "VmRSS":
			ps.rss = n << 10
		case "VmHWM":
			ps.hwm = n << 10
		case "RssAnon":
			ps.anon = n << 10
		case "Threads":
			ps.threads = int(n)
		}
	}
	if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
		ps.fds = len(ents)
	}
	return ps, nil
}

type soakSampler struct {
	s        *soak
	quit     chan struct{}
	done     chan struct{}
	stopOnce sync.Once

	mu                 sync.Mutex
	broker, ns, me     procPeak
	brokerLog0, nsLog0 int64
	brokerLogN, nsLogN int64
	brokerOver, nsOver bool
	logOver            bool
	csv                *os.File
}

// killForMemory SIGKILLs a server that passed its RSS bound (an expected exit).
func (s *soak) killForMemory(p *proc) {
	if p == nil || p.exited() {
		return
	}
	s.expect(p, "SIGKILL by the soak: RSS above the bound")
	if p == s.broker.Load() {
		s.brokerDown()
	}
	_ = p.cmd.Process.Kill()
	<-p.done // freeing gigabytes takes a moment; the end must see it gone
	fmt.Printf("soak %s: %s killed: RSS above the bound\n", s.elapsed(), p.name)
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// startSampler samples both servers every second until stop, writing
// soak-samples.csv next to the store and enforcing the RSS and log bounds.
func startSampler(s *soak) *soakSampler {
	m := &soakSampler{s: s, quit: make(chan struct{}), done: make(chan struct{})}
	m.brokerLog0 = fileSize(filepath.Join(s.c.dir, "broker.log"))
	m.nsLog0 = fileSize(filepath.Join(s.c.dir, "namesrv.log"))
	f, err := os.Create(filepath.Join(s.c.dir, "soak-samples.csv"))
	if err == nil {
		m.csv = f
		fmt.Fprintln(f, "unix_ms,broker_pid,broker_rss_kb,broker_hwm_kb,broker_anon_kb,broker_threads,broker_fds,"+
			"ns_rss_kb,ns_hwm_kb,ns_anon_kb,ns_threads,ns_fds,broker_log_bytes,ns_log_bytes,test_rss_kb,test_fds")
	}
	go m.loop()
	return m
}

func (m *soakSampler) stop() {
	m.stopOnce.Do(func() {
		close(m.quit)
		<-m.done
		if m.csv != nil {
			m.csv.Close()
		}
	})
}

func (m *soakSampler) peaks() (broker, ns procPeak) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.broker, m.ns
}

// self is this test process's peak: clients, accounting and floods.
func (m *soakSampler) self() procPeak {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.me
}

func (m *soakSampler) logGrowth() (broker, ns int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return max(0, m.brokerLogN-m.brokerLog0), max(0, m.nsLogN-m.nsLog0)
}

func (m *soakSampler) loop() {
	defer close(m.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		m.sample()
		select {
		case <-m.quit:
			return
		case <-tick.C:
		}
	}
}

func merge(p *procPeak, ps procSample) {
	p.rss, p.hwm, p.anon, p.fds = max(p.rss, ps.rss), max(p.hwm, ps.hwm), max(p.anon, ps.anon), max(p.fds, ps.fds)
}

func (m *soakSampler) sample() {
	s := m.s
	var bs, ns procSample
	bpid := 0
	if p := s.broker.Load(); p != nil && !p.exited() {
		bpid = p.cmd.Process.Pid
		bs, _ = readProcStatus(bpid)
	}
	if p := s.ns.Load(); p != nil && !p.exited() {
		ns, _ = readProcStatus(p.cmd.Process.Pid)
	}
	me, _ := readProcStatus(os.Getpid())
	bl := fileSize(filepath.Join(s.c.dir, "broker.log"))
	nl := fileSize(filepath.Join(s.c.dir, "namesrv.log"))

	m.mu.Lock()
	merge(&m.broker, bs)
	merge(&m.ns, ns)
	merge(&m.me, me)
	m.brokerLogN, m.nsLogN = bl, nl
	bp, np := m.broker.peak(), m.ns.peak()
	killB := max(bs.rss, bs.hwm) > s.cfg.brokerRSS
	killN := max(ns.rss, ns.hwm) > s.cfg.nsRSS
	overB := !m.brokerOver && killB
	overN := !m.nsOver && killN
	overL := !m.logOver && (bl-m.brokerLog0 > s.cfg.logGrowth || nl-m.nsLog0 > s.cfg.logGrowth)
	m.brokerOver = m.brokerOver || overB
	m.nsOver = m.nsOver || overN
	m.logOver = m.logOver || overL
	if m.csv != nil {
		fmt.Fprintf(m.csv, "%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d\n", time.Now().UnixMilli(), bpid,
			bs.rss>>10, bs.hwm>>10, bs.anon>>10, bs.threads, bs.fds, ns.rss>>10, ns.hwm>>10, ns.anon>>10, ns.threads, ns.fds, bl, nl,
			me.rss>>10, me.fds)
	}
	m.mu.Unlock()

	// Past a bound the run stops and the failure is recorded. A server past
	// its RSS bound is killed at once: stopping the floods is not enough (one
	// GET_TOPIC_STATS_INFO over 2^31 queues kept allocating to 17 GB), and the
	// machine is shared.
	if killB {
		s.killForMemory(s.broker.Load())
	}
	if killN {
		s.killForMemory(s.ns.Load())
	}
	if overB {
		s.failf("broker peak RSS %s above the bound %s (ROCKETGO_SOAK_BROKER_RSS_MB); VmRSS %s, RssAnon %s, %d fds at that sample",
			mb(bp), mb(s.cfg.brokerRSS), mb(bs.rss), mb(bs.anon), bs.fds)
		s.abort("broker RSS above the bound")
	}
	if overN {
		s.failf("name server peak RSS %s above the bound %s (ROCKETGO_SOAK_NAMESRV_RSS_MB); VmRSS %s, RssAnon %s, %d fds at that sample",
			mb(np), mb(s.cfg.nsRSS), mb(ns.rss), mb(ns.anon), ns.fds)
		s.abort("name server RSS above the bound")
	}
	if overL {
		s.failf("server logs grew past %s (ROCKETGO_SOAK_LOG_MB): broker.log +%s, namesrv.log +%s; tail of broker.log:\n%s",
			mb(s.cfg.logGrowth), humanBytes(bl-m.brokerLog0), humanBytes(nl-m.nsLog0), tailFile(filepath.Join(s.c.dir, "broker.log"), 20))
		s.abort("server log growth above the bound")
	}
}

// ---------------------------------------------------------------------------
// nothing outside the store

// storeGuard remembers every path in the store's parent directory (except
// inside the store) and the work dir's top level, plus a sentinel directory
// that a hostile DELETE_TOPIC_IN_BROKER aims at.
type storeGuard struct {
	c        *cluster
	before   map[string]bool
	workTop  map[string]bool
	sentinel string
}

const sentinelText = "soak sentinel: must survive\n"

func newStoreGuard(t *testing.T, c *cluster) *storeGuard {
	t.Helper()
	g := &storeGuard{c: c, sentinel: filepath.Join(c.dir, "sentinel", "keep.txt")}
	if err := os.MkdirAll(filepath.Dir(g.sentinel), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(g.sentinel, []byte(sentinelText), 0o644); err != nil {
		t.Fatal(err)
	}
	g.before = g.listParent()
	g.workTop = listTop(workDir)
	return g
}

func (g *storeGuard) listParent() map[string]bool {
	out := map[string]bool{}
	store := filepath.Join(g.c.dir, "store")
	_ = filepath.WalkDir(g.c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a path removed while we walk
		}
		if p == store {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(g.c.dir, p)
		out[rel] = true
		return nil
	})
	return out
}

func listTop(dir string) map[string]bool {
	out := map[string]bool{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		out[e.Name()] = true
	}
	return out
}

// check lists what changed outside the store: new paths next to it, new
// entries in the work dir, a missing store or sentinel.
func (g *storeGuard) check() []string {
	var out []string
	if fi, err := os.Stat(filepath.Join(g.c.dir, "store", "commitlog")); err != nil || !fi.IsDir() {
		out = append(out, "the store's commitlog directory is gone")
	}
	if b, err := os.ReadFile(g.sentinel); err != nil || string(b) != sentinelText {
		out = append(out, fmt.Sprintf("sentinel %s removed or changed (%v)", g.sentinel, err))
	}
	var added []string
	for p := range g.listParent() {
		if !g.before[p] {
			added = append(added, filepath.Join(g.c.dir, p))
		}
	}
	for n := range listTop(workDir) {
		if !g.workTop[n] {
			added = append(added, filepath.Join(workDir, n))
		}
	}
	sort.Strings(added)
	if len(added) > 20 {
		added = append(added[:20], fmt.Sprintf("(and %d more)", len(added)-20))
	}
	for _, a := range added {
		out = append(out, "created "+a)
	}
	return out
}
