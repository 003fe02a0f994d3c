package compattest

// TestSoak: a mixed workload from the official Go
// client against real mqnamesrv + mqbroker under SYNC_FLUSH for
// ROCKETGO_SOAK_DURATION (10 min), the broker killed with SIGKILL every
// 20–60 s and restarted on the same store, while raw-socket floods attack
// both servers (soak_flood_test.go). At the end every acknowledged message
// must be in the store at its acknowledged queue offset and consumed at least
// once, delayed and timer messages delivered; no server may have exited other
// than by our kill, the broker must restart every time, peak VmRSS stays under
// a bound, and nothing appears outside the store. Skipped unless
// ROCKETGO_SOAK=1.
//
// Environment (defaults in brackets):
//
//	ROCKETGO_SOAK=1                   run it
//	ROCKETGO_SOAK_DURATION [10m]      length of the load phase
//	ROCKETGO_SOAK_FLOODS [all]        all | none (or 0) | comma list of
//	                                  conn,partial,pipeline,header,filter,names
//	ROCKETGO_SOAK_KILLS [1]           0: no kill -9 (for diagnosis)
//	ROCKETGO_SOAK_BROKER_RSS_MB [1024]  bound on the broker's peak VmRSS/VmHWM
//	ROCKETGO_SOAK_NAMESRV_RSS_MB [1024] the same for the name server
//	ROCKETGO_SOAK_LOG_MB [256]        bound on each server log's growth
//	ROCKETGO_SOAK_NOFILE [1024]       soft RLIMIT_NOFILE of both servers (0: inherit)
//	ROCKETGO_SOAK_SEED [time]         seeds the kill schedule
//	ROCKETGO_SOAK_INJECT_LOSS [0]     1: harness self-check — at the first kill,
//	                                  zero the newest 64 KiB of the commit log
//	                                  before the restart; the run must then fail
//	                                  with lost > 0

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/rlog"
)

var soakFloodNames = []string{"conn", "partial", "pipeline", "header", "filter", "names"}

type soakConfig struct {
	duration  time.Duration
	floods    map[string]bool
	kills     bool
	brokerRSS int64 // bytes
	nsRSS     int64 // bytes
	logGrowth int64 // bytes, per server log
	nofile    int
	seed      int64
	inject    bool
}

func soakEnvInt(t *testing.T, key string, def int64) int64 {
	t.Helper()
	v := os.Getenv(key)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a non-negative integer", key, v)
	}
	return n
}

func soakConfigFromEnv(t *testing.T) soakConfig {
	t.Helper()
	cfg := soakConfig{
		duration:  10 * time.Minute,
		floods:    map[string]bool{},
		kills:     soakEnvInt(t, "ROCKETGO_SOAK_KILLS", 1) != 0,
		brokerRSS: soakEnvInt(t, "ROCKETGO_SOAK_BROKER_RSS_MB", 1024) << 20,
		nsRSS:     soakEnvInt(t, "ROCKETGO_SOAK_NAMESRV_RSS_MB", 1024) << 20,
		logGrowth: soakEnvInt(t, "ROCKETGO_SOAK_LOG_MB", 256) << 20,
		nofile:    int(soakEnvInt(t, "ROCKETGO_SOAK_NOFILE", 1024)),
		seed:      soakEnvInt(t, "ROCKETGO_SOAK_SEED", time.Now().UnixNano()%1_000_000_000),
		inject:    soakEnvInt(t, "ROCKETGO_SOAK_INJECT_LOSS", 0) != 0,
	}
	if v := os.Getenv("ROCKETGO_SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("ROCKETGO_SOAK_DURATION=%q: want a positive duration such as 90s or 10m", v)
		}
		cfg.duration = d
	}
	switch v := strings.TrimSpace(os.Getenv("ROCKETGO_SOAK_FLOODS")); v {
	case "", "all", "1":
		for _, f := range soakFloodNames {
			cfg.floods[f] = true
		}
	case "none", "0":
	default:
		for _, f := range strings.Split(v, ",") {
			f = strings.TrimSpace(f)
			if !contains(soakFloodNames, f) {
				t.Fatalf("ROCKETGO_SOAK_FLOODS: unknown flood %q (known: %s)", f, strings.Join(soakFloodNames, ","))
			}
			cfg.floods[f] = true
		}
	}
	return cfg
}

func (cfg soakConfig) floodList() string {
	var on []string
	for _, f := range soakFloodNames {
		if cfg.floods[f] {
			on = append(on, f)
		}
	}
	if len(on) == 0 {
		return "none"
	}
	return strings.Join(on, ",")
}

// soakExtraConf: SYNC_FLUSH, 1 s delay levels, and small files so ten minutes
// of load cross many commit log and consume queue file boundaries.
const soakExtraConf = "flushDiskType=SYNC_FLUSH\n" + shortDelays +
	"mappedFileSizeCommitLog=4194304\nmappedFileSizeConsumeQueue=60000\n"

// How long the end waits for consumers: before the final restart, and after
// it for what is still missing (shorter when the run was aborted).
const (
	soakDrain        = 3 * time.Minute
	soakDrainAfter   = 2 * time.Minute
	soakDrainAborted = 30 * time.Second
)

type soak struct {
	t   *testing.T
	cfg soakConfig
	c   *cluster

	tMain, tDelay, tOrder, tFlood string
	gMain, gTagA, gDelay, gOrder  string
	floodPhy                      int64 // commit log offset of a tFlood message (target of hostile sendbacks)

	runCtx  context.Context // load, kills and floods
	stopRun context.CancelFunc
	started time.Time

	broker     atomic.Pointer[proc] // the running broker (the sampler reads it)
	restarting atomic.Bool          // a broker (re)start is waiting for its registration
	churn      atomic.Int64         // odd while the broker is down by our doing (see floodStats)
	ns         atomic.Pointer[proc] // the running name server
	kills      atomic.Int64

	mu         sync.Mutex
	failures   []string
	abortWhy   string
	expected   map[*proc]string // processes we ended ourselves, and how
	ended      bool             // the test is over: exits are the cleanup's
	restarts   []time.Duration  // after each kill -9
	aborted    atomic.Bool
	unexpected atomic.Int64 // server exits not caused by us

	load    *soakLoad
	floods  map[string]*floodStats
	hostile *hostileLog
	mem     *soakSampler
	guard   *storeGuard
}

func TestSoak(t *testing.T) {
	if os.Getenv("ROCKETGO_SOAK") != "1" {
		t.Skip("soak: set ROCKETGO_SOAK=1 (make soak)")
	}
	cfg := soakConfigFromEnv(t)
	// The client logs every failed send and pull while the broker is down.
	rlog.SetLogLevel("fatal")
	t.Cleanup(func() { rlog.SetLogLevel("error") })

	s := &soak{t: t, cfg: cfg, expected: map[*proc]string{}, floods: map[string]*floodStats{}, hostile: newHostileLog()}
	for _, f := range soakFloodNames {
		s.floods[f] = &floodStats{churn: s.churnOf}
	}
	s.setup()
	s.run()
	s.finish()
}

// failf records a failure; the test fails with all of them at the end (the
// table is printed first).
func (s *soak) failf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.mu.Lock()
	s.failures = append(s.failures, msg)
	s.mu.Unlock()
	fmt.Printf("soak %s: FAIL: %s\n", s.elapsed(), firstLine(msg))
}

// abort ends the load phase early: something is already broken and going on
// would only bury it (or eat the shared machine's memory or disk).
func (s *soak) abort(why string) {
	s.mu.Lock()
	if s.abortWhy == "" {
		s.abortWhy = why
	}
	s.mu.Unlock()
	s.aborted.Store(true)
	if s.stopRun != nil {
		s.stopRun()
	}
}

func (s *soak) elapsed() string {
	if s.started.IsZero() {
		return "setup"
	}
	return time.Since(s.started).Truncate(time.Second).String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

func (s *soak) setup() {
	t := s.t
	if s.cfg.nofile > 0 {
		useNofileWrappers(t, s.cfg.nofile)
	}
	s.c = newClusterConf(t, "soak", soakExtraConf)
	s.broker.Store(s.c.broker)
	s.ns.Store(s.c.ns)
	s.watch(s.c.ns)
	s.watch(s.c.broker)
	t.Cleanup(func() {
		s.mu.Lock()
		s.ended = true
		s.mu.Unlock()
	})
	s.mem = startSampler(s)
	t.Cleanup(s.mem.stop)

	s.tMain, s.tDelay, s.tOrder, s.tFlood = uniq("SoakMain"), uniq("SoakDelay"), uniq("SoakOrder"), uniq("SoakFlood")
	s.gMain, s.gTagA, s.gDelay, s.gOrder = uniq("CG_soak_main"), uniq("CG_soak_tagA"), uniq("CG_soak_delay"), uniq("CG_soak_order")
	s.createTopics()
	s.prefillFlood()
	s.guard = newStoreGuard(t, s.c)
	s.load = newSoakLoad(s)
	s.load.startConsumers()
}

func (s *soak) run() {
	s.runCtx, s.stopRun = context.WithCancel(context.Background())
	defer s.stopRun()
	s.started = time.Now()
	fmt.Printf("soak: %s under SYNC_FLUSH, kill -9 %s, floods %s, open files limit broker %s namesrv %s, seed %d, work dir %s\n",
		s.cfg.duration, map[bool]string{true: "every 20–60 s", false: "off"}[s.cfg.kills], s.cfg.floodList(),
		procNofile(s.c.broker), procNofile(s.c.ns), s.cfg.seed, s.c.dir)

	var wg sync.WaitGroup
	s.load.startProducers(s.runCtx, &wg)
	if s.cfg.kills {
		wg.Add(1)
		go func() { defer wg.Done(); s.killLoop(s.runCtx) }()
	}
	s.startFloods(s.runCtx, &wg)

	deadline := time.NewTimer(s.cfg.duration)
	progress := time.NewTicker(30 * time.Second)
	defer progress.Stop()
loop:
	for {
		select {
		case <-deadline.C:
			break loop
		case <-s.runCtx.Done():
			deadline.Stop()
			break loop
		case <-progress.C:
			s.progress()
		}
	}
	s.stopRun()
	wg.Wait()
	s.progress()
}

func (s *soak) progress() {
	b, n := s.mem.peaks()
	fmt.Printf("soak %s: acked %d (send errors %d), consumed %d, kills %d, flood conns %d, peak VmRSS broker %s namesrv %s\n",
		s.elapsed(), s.load.ackedCount(), s.load.sendErrs.Load(), s.load.consumedCount(), s.kills.Load(),
		s.floodTotal(func(f *floodStats) int64 { return f.opened.Load() }), mb(b.peak()), mb(n.peak()))
}

func (s *soak) finish() {
	t := s.t
	s.load.stopProducers()
	drain := soakDrain
	if s.aborted.Load() {
		drain = soakDrainAborted
	}

	// The broker is up for the drain: a last kill's restart may have failed,
	// or it died by itself (already recorded as a failure).
	startFailed := false
	if p := s.broker.Load(); p == nil || p.exited() {
		if err := s.startBroker(); err != nil {
			s.failf("broker does not start for the final checks: %v", err)
			startFailed = true
		}
	}
	// The name server too (the memory guard may have killed it).
	if p := s.ns.Load(); p.exited() {
		if err := s.restartNamesrv(); err != nil {
			s.failf("name server does not start for the final checks: %v", err)
		}
	}
	nsAlive := !s.ns.Load().exited()
	if nsAlive {
		s.load.waitConsumed(drain)
	}

	// One clean restart: SIGTERM, then the same store (unless it just
	// failed to start: trying again would say the same).
	how := "after SIGTERM"
	if p := s.broker.Load(); p != nil && !p.exited() {
		s.expect(p, "SIGTERM (final restart)")
		if graceful, took := s.c.stopBroker(); !graceful {
			s.failf("broker did not exit within %s of SIGTERM (killed after %s)", stopGracePeriod, took)
		}
	} else {
		how = "(it was not running)"
	}
	if !startFailed {
		if err := s.startBroker(); err != nil {
			s.failf("broker does not start on its store for the final check %s: %v", how, err)
		}
	}

	v := s.load.verifyStore()
	if nsAlive && !s.ns.Load().exited() {
		after := soakDrainAfter
		if s.aborted.Load() {
			after = soakDrainAborted
		}
		s.load.waitConsumed(after)
	}
	cons := s.load.checkConsumed()
	s.load.stopConsumers()
	s.mem.stop()
	outside := s.guard.check()

	s.printTable(v, cons, outside)
	report(t, s.started, v.acked, cons.consumed, fmt.Sprintf("lost=%d kills=%d", v.lost, s.kills.Load()))

	if v.unchecked != "" {
		s.failf("store not checked: %s", v.unchecked)
	}
	if v.lost > 0 {
		s.failf("%d of %d acknowledged messages lost (not in the store at their acknowledged queue offset, nor found by key); e.g.\n%s",
			v.lost, v.acked, strings.Join(v.lostExamples, "\n"))
	}
	if v.misplaced > 0 {
		s.failf("%d acknowledged messages stored elsewhere than their acknowledged queue offset; e.g.\n%s",
			v.misplaced, strings.Join(v.misplacedExamples, "\n"))
	}
	if v.undelivered > 0 {
		s.failf("%d acknowledged delay/timer messages never reached their topic; e.g.\n%s",
			v.undelivered, strings.Join(v.undeliveredExamples, "\n"))
	}
	if !nsAlive {
		s.failf("consumption not checked: the name server died")
	} else {
		for _, f := range cons.failures {
			s.failf("%s", f)
		}
	}
	for _, o := range outside {
		s.failf("outside the store: %s", o)
	}
	s.mu.Lock()
	failures := append([]string(nil), s.failures...)
	why := s.abortWhy
	s.mu.Unlock()
	if why != "" {
		t.Errorf("soak ended early after %s: %s", s.elapsed(), why)
	}
	for _, f := range failures {
		t.Error(f)
	}
}

func (s *soak) floodTotal(get func(*floodStats) int64) int64 {
	var n int64
	for _, f := range s.floods {
		n += get(f)
	}
	return n
}

func mb(bytes int64) string { return fmt.Sprintf("%d MB", bytes>>20) }

// procNofile reads the "Max open files" soft/hard limit the process runs with.
func procNofile(p *proc) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", p.cmd.Process.Pid))
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 5 && strings.HasPrefix(l, "Max open files") {
			return f[3] + "/" + f[4]
		}
	}
	return "?"
}

func nofileString(n int) string {
	if n <= 0 {
		return "inherited"
	}
	return strconv.Itoa(n)
}

func (s *soak) printTable(v storeCheck, cons consumeCheck, outside []string) {
	b, n := s.mem.peaks()
	var w strings.Builder
	row := func(name, value, note string) {
		fmt.Fprintf(&w, "  %-22s %14s  %s\n", name, value, note)
	}
	num := func(x int64) string { return strconv.FormatInt(x, 10) }
	s.mu.Lock()
	restarts := append([]time.Duration(nil), s.restarts...)
	why := s.abortWhy
	s.mu.Unlock()
	var worst time.Duration
	for _, d := range restarts {
		worst = max(worst, d)
	}
	fmt.Fprintf(&w, "soak result (%s of load under SYNC_FLUSH, floods %s, servers' RLIMIT_NOFILE %s):\n",
		s.cfg.duration, s.cfg.floodList(), nofileString(s.cfg.nofile))
	if why != "" {
		fmt.Fprintf(&w, "  ENDED EARLY after %s: %s\n", s.elapsed(), firstLine(why))
	}
	row("acknowledged", num(int64(v.acked)), v.kinds)
	if v.unchecked != "" {
		row("recovered", num(int64(v.recovered)), "NOT CHECKED (all): "+v.unchecked)
	} else {
		row("recovered", num(int64(v.recovered)), "in the store after the final restart (at its queue offset; delay/timer: in its topic)")
	}
	row("consumed", num(int64(cons.consumed)), cons.note)
	row("lost", num(int64(v.lost)), "must be 0")
	if v.misplaced > 0 || v.undelivered > 0 {
		row("misplaced/undelivered", fmt.Sprintf("%d/%d", v.misplaced, v.undelivered), "must be 0")
	}
	row("send errors", num(s.load.sendErrs.Load()), "not acknowledged (broker down, flooded, timeouts): not counted")
	row("kills (kill -9)", num(s.kills.Load()), fmt.Sprintf("slowest restart %.1fs", worst.Seconds()))
	row("unexpected exits", num(s.unexpected.Load()), "must be 0")
	for _, name := range soakFloodNames {
		if !s.cfg.floods[name] {
			continue
		}
		f := s.floods[name]
		row("flood "+name, fmt.Sprintf("%d conns", f.opened.Load()),
			fmt.Sprintf("refused %d (dial %d, closed by server %d), frames %d, %s sent",
				f.dialErrors.Load()+f.closedByServer.Load(), f.dialErrors.Load(), f.closedByServer.Load(),
				f.frames.Load(), humanBytes(f.bytes.Load())))
	}
	row("peak RSS broker", mb(b.peak()), fmt.Sprintf("VmRSS %s, VmHWM %s, RssAnon %s, fds %d; bound %s",
		mb(b.rss), mb(b.hwm), mb(b.anon), b.fds, mb(s.cfg.brokerRSS)))
	row("peak RSS namesrv", mb(n.peak()), fmt.Sprintf("VmRSS %s, VmHWM %s, RssAnon %s, fds %d; bound %s",
		mb(n.rss), mb(n.hwm), mb(n.anon), n.fds, mb(s.cfg.nsRSS)))
	self := s.mem.self()
	row("peak RSS this test", mb(self.peak()), fmt.Sprintf("clients and floods: VmHWM %s, fds %d", mb(self.hwm), self.fds))
	bl, nl := s.mem.logGrowth()
	row("log growth", humanBytes(bl+nl), fmt.Sprintf("broker %s, namesrv %s; bound %s each", humanBytes(bl), humanBytes(nl), mb(s.cfg.logGrowth)))
	if len(outside) == 0 {
		row("outside the store", "nothing", "sentinel intact, no new path next to the store")
	} else {
		row("outside the store", num(int64(len(outside))), "new or missing paths: "+strings.Join(outside, "; "))
	}
	fmt.Print(w.String())
	if s.cfg.floods["names"] {
		fmt.Print(s.hostile.String())
	}
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%d kB", n>>10)
	}
}

// ---------------------------------------------------------------------------
// processes: kill -9, restarts, unexpected exits

// churnOf is floodStats.churn: the broker's down/up count, 0 for the name
// server (whose kills end the run anyway).
func (s *soak) churnOf(addr string) int64 {
	if addr == s.c.brokerAddr {
		return s.churn.Load()
	}
	return 0
}

// brokerDown and brokerUp move the churn count to odd and back to even.
func (s *soak) brokerDown() {
	for n := s.churn.Load(); n%2 == 0 && !s.churn.CompareAndSwap(n, n+1); n = s.churn.Load() {
	}
}

func (s *soak) brokerUp() {
	for n := s.churn.Load(); n%2 == 1 && !s.churn.CompareAndSwap(n, n+1); n = s.churn.Load() {
	}
}

// expect marks p as ended by us; its exit is then no failure.
func (s *soak) expect(p *proc, how string) {
	s.mu.Lock()
	s.expected[p] = how
	s.mu.Unlock()
}

// watch records p's exit as a failure unless we caused it.
func (s *soak) watch(p *proc) {
	go func() {
		<-p.done
		s.mu.Lock()
		_, ours := s.expected[p]
		ended := s.ended
		s.mu.Unlock()
		if ours || ended {
			return
		}
		s.unexpected.Add(1)
		s.failf("%s (pid %d) exited by itself after %s: %v (exit status 0 means it stopped as if asked to); log tail:\n%s",
			p.name, p.cmd.Process.Pid, s.elapsed(), p.waitErr, tailFile(p.logPath, 40))
		s.abort(p.name + " exited by itself")
	}()
}

// restartNamesrv starts the name server again on its port and config.
func (s *soak) restartNamesrv() error {
	c := s.c
	p, err := startProc("mqnamesrv", filepath.Join(binDir, "mqnamesrv"),
		[]string{"-c", filepath.Join(c.dir, "namesrv.properties")}, filepath.Join(c.dir, "namesrv.log"))
	if err != nil {
		return err
	}
	c.ns = p
	s.ns.Store(p)
	s.watch(p)
	return waitTCP(p, c.nsAddr, readyTimeout)
}

// startBroker (re)starts the broker on its store and waits until the name
// server routes to it. The harness waits 15 s; a connection flood may delay
// the registration, so a broker that is alive gets 45 s more.
func (s *soak) startBroker() error {
	c := s.c
	s.restarting.Store(true)
	defer s.restarting.Store(false)
	s.brokerDown() // a crash or a failed start left it down without a kill of ours
	defer s.brokerUp()
	err := c.startBroker()
	if c.broker != nil {
		s.broker.Store(c.broker)
		s.watch(c.broker)
	}
	if err == nil || c.broker == nil || c.broker.exited() {
		return err
	}
	var last error = err
	if waitFor(s.t, 45*time.Second, func() bool {
		if c.broker.exited() {
			return true
		}
		code, route, remark, err := queryRoute(c.nsAddr, "TBW102")
		switch {
		case err != nil:
			last = err
		case code != 0:
			last = fmt.Errorf("route TBW102: code %d %q", code, remark)
		case !route.hasBroker(c.brokerAddr):
			last = fmt.Errorf("route TBW102 without %s", c.brokerAddr)
		default:
			last = nil
			return true
		}
		return false
	}) && last == nil {
		return nil
	}
	if c.broker.exited() {
		return fmt.Errorf("%s exited during start-up: %v\n%s", c.broker.name, c.broker.waitErr, tailFile(c.broker.logPath, 40))
	}
	return fmt.Errorf("not registered with the name server within 60 s: %v", last)
}

func (s *soak) killLoop(ctx context.Context) {
	rng := rand.New(rand.NewSource(s.cfg.seed))
	for {
		wait := 20*time.Second + time.Duration(rng.Int63n(int64(40*time.Second)))
		if !sleepCtx(ctx, wait) {
			return
		}
		p := s.broker.Load()
		if p == nil || p.exited() {
			return // died by itself: recorded by watch, the run is aborting
		}
		s.expect(p, "kill -9")
		s.brokerDown()
		_ = p.cmd.Process.Kill()
		<-p.done
		n := s.kills.Add(1)
		if s.cfg.inject && n == 1 {
			s.injectLoss()
		}
		start := time.Now()
		if err := s.startBroker(); err != nil {
			s.failf("broker does not restart after kill -9 #%d: %v", n, err)
			s.abort("broker does not restart")
			return
		}
		took := time.Since(start)
		s.mu.Lock()
		s.restarts = append(s.restarts, took)
		s.mu.Unlock()
		fmt.Printf("soak %s: kill -9 #%d of the broker, restarted in %.1fs\n", s.elapsed(), n, took.Seconds())
	}
}

// injectLoss zeroes the commit log from the first record that ends in the
// newest 64 KiB of written data to the end of the newest file, while the
// broker is down: recovery then takes that as a torn tail and drops those
// records, as a store that lost acknowledged writes would.
func (s *soak) injectLoss() {
	dir := filepath.Join(s.c.dir, "store", "commitlog")
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) == 0 {
		s.failf("inject loss: no commit log in %s: %v", dir, err)
		return
	}
	// The newest file holding data: 20-digit names sort by offset, and
	// the newest may be the empty one made ahead of need (store/allocate.go).
	var path string
	var data []byte
	end := 0
	for i := len(ents) - 1; i >= 0 && end == 0; i-- {
		path = filepath.Join(dir, ents[i].Name())
		if data, err = os.ReadFile(path); err != nil {
			s.failf("inject loss: %v", err)
			return
		}
		end = len(data)
		for end > 0 && data[end-1] == 0 {
			end--
		}
	}
	pos := 0
	for pos+4 <= end {
		size := int(binary.BigEndian.Uint32(data[pos:]))
		if size <= 0 || pos+size > end || pos+size > end-64<<10 {
			break
		}
		pos += size
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteAt(make([]byte, len(data)-pos), int64(pos))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		s.failf("inject loss: zero %s from %d: %v", path, pos, err)
		return
	}
	fmt.Printf("soak %s: INJECTED LOSS: zeroed %s from byte %d (written data ended at %d)\n", s.elapsed(), path, pos, end)
}

// sleepCtx waits d unless ctx ends first; it reports whether ctx is still live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}

// useNofileWrappers makes the harness start both servers through a shell
// wrapper that lowers RLIMIT_NOFILE first, so a connection flood of a few
// thousand sockets crosses it (1024 is many systems' default; the test
// process keeps its own higher limit). Soft and hard limit both: a Go program
// raises its soft limit to the hard one at start-up. binDir is restored at
// the end.
func useNofileWrappers(t *testing.T, nofile int) {
	t.Helper()
	dir := filepath.Join(workDir, "soak-bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"mqnamesrv", "mqbroker"} {
		real, err := filepath.Abs(filepath.Join(binDir, b))
		if err != nil {
			t.Fatal(err)
		}
		script := fmt.Sprintf("#!/bin/sh\n# soak: lower the open-files limit, then become the server (same pid)\nulimit -n %d || exit 97\nexec %q \"$@\"\n", nofile, real)
		if err := os.WriteFile(filepath.Join(dir, b), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := binDir
	binDir = dir
	t.Cleanup(func() { binDir = old })
}

// ---------------------------------------------------------------------------
// hostile request outcomes, for the report

type hostileLog struct {
	mu   sync.Mutex
	seen map[string]*hostileOutcome
}

type hostileOutcome struct {
	sent, refused, noAnswer int
	last                    string
}

func newHostileLog() *hostileLog { return &hostileLog{seen: map[string]*hostileOutcome{}} }

// note records the answer to one hostile request: resp nil means no answer
// (connection closed, timeout, broker down).
func (h *hostileLog) note(what string, resp *rawCmd, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	o := h.seen[what]
	if o == nil {
		o = &hostileOutcome{}
		h.seen[what] = o
	}
	o.sent++
	switch {
	case err != nil:
		o.noAnswer++
		o.last = "no answer: " + firstLine(err.Error())
	default:
		if resp.Code != 0 {
			o.refused++
		}
		o.last = fmt.Sprintf("code %d %q", resp.Code, resp.Remark)
	}
}

func (h *hostileLog) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	keys := make([]string, 0, len(h.seen))
	for k := range h.seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("hostile requests (sent, refused, unanswered; last answer):\n")
	for _, k := range keys {
		o := h.seen[k]
		fmt.Fprintf(&b, "  %-58s %4d %4d %4d  %s\n", k, o.sent, o.refused, o.noAnswer, o.last)
	}
	return b.String()
}
