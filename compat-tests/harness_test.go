package compattest

// Process harness: builds (or locates) the mqnamesrv / mqbroker binaries,
// starts them on free loopback ports with a temp store, waits until they are
// ready, captures their output and stops them with SIGTERM (SIGKILL after 10 s).

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/rlog"
)

const (
	clusterName     = "RocketgoCompatCluster"
	readyTimeout    = 15 * time.Second
	stopGracePeriod = 10 * time.Second
)

var (
	binDir  string   // where mqnamesrv / mqbroker live
	workDir string   // per-run temp dir (binaries, stores, logs)
	shared  *cluster // namesrv+broker pair shared by most tests
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	rlog.SetLogLevel("error")

	var err error
	removeStaleWorkDirs(os.TempDir(), 3*time.Hour)
	workDir, err = os.MkdirTemp("", "rocketgo-compat-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat: mkdtemp:", err)
		return 1
	}
	keep := os.Getenv("ROCKETGO_KEEP_WORKDIR") != ""

	if binDir, err = prepareBinaries(workDir); err != nil {
		fmt.Fprintln(os.Stderr, "compat: preparing server binaries failed:", err)
		_ = os.RemoveAll(workDir)
		return 1
	}

	shared, err = startCluster("shared")
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat: starting shared namesrv+broker failed:", err)
		if shared != nil {
			fmt.Fprint(os.Stderr, shared.logTails(60))
			shared.stop()
		}
		_ = os.RemoveAll(workDir)
		return 1
	}

	fixed := fixedTmpFiles()
	code := m.Run()
	removeNewFixedTmpFiles(fixed)

	shared.stop()
	printSummary()
	switch {
	case keep:
		fmt.Fprintf(os.Stderr, "compat: work dir (stores + server logs) kept at %s\n", workDir)
	case code != 0:
		pruneStores(workDir)
		fmt.Fprintf(os.Stderr, "compat: server logs and configs kept at %s (stores removed; ROCKETGO_KEEP_WORKDIR=1 keeps them)\n", workDir)
	default:
		_ = os.RemoveAll(workDir)
	}
	return code
}

// fixedTmpPatterns are files official tools write to fixed paths, whatever
// they are told: Apache's mqadmin (and ours, which matches it) writes the body
// of each message it prints under /tmp/rocketmq/msgbodys, and the Go v5 SDK
// logs its gRPC calls to /tmp/rocketmq-logger.log (rotated as
// rocketmq-logger-<time>.log).
var fixedTmpPatterns = []string{"/tmp/rocketmq/msgbodys/*", "/tmp/rocketmq-logger*.log"}

// fixedTmpFiles lists the files matching fixedTmpPatterns.
func fixedTmpFiles() map[string]bool {
	found := map[string]bool{}
	for _, p := range fixedTmpPatterns {
		names, _ := filepath.Glob(p)
		for _, n := range names {
			found[n] = true
		}
	}
	return found
}

// removeNewFixedTmpFiles removes the files matching fixedTmpPatterns that
// were not in before, then /tmp/rocketmq if that left it empty.
func removeNewFixedTmpFiles(before map[string]bool) {
	for n := range fixedTmpFiles() {
		if !before[n] {
			_ = os.Remove(n)
		}
	}
	_ = os.Remove("/tmp/rocketmq/msgbodys") // only when empty
	_ = os.Remove("/tmp/rocketmq")
}

// pruneStores removes from dir every file over 1 MiB that is not a log:
// the stores (commit log files of up to 1 GiB, index files of 420 MB) of a
// failed run would otherwise stay on a shared disk, tens of GB a run.
func pruneStores(dir string) {
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".log") {
			return nil
		}
		if info, err := d.Info(); err == nil && info.Size() > 1<<20 {
			_ = os.Remove(path)
		}
		return nil
	})
}

// removeStaleWorkDirs removes the work dirs of runs that ended without
// cleaning up (killed by the test timeout, or by hand) and were last
// changed more than age ago; a run takes minutes, so none is still in use.
func removeStaleWorkDirs(tmp string, age time.Duration) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, "rocketgo-compat-*"))
	for _, d := range dirs {
		if info, err := os.Stat(d); err == nil && info.IsDir() && time.Since(info.ModTime()) > age {
			_ = os.RemoveAll(d)
		}
	}
}

// prepareBinaries returns the directory holding mqnamesrv, mqbroker,
// mqproxy, mqshutdown and mqadmin:
// $ROCKETGO_BIN_DIR if set, otherwise freshly built from ../cmd/... .
func prepareBinaries(dir string) (string, error) {
	if d := os.Getenv("ROCKETGO_BIN_DIR"); d != "" {
		for _, b := range []string{"mqnamesrv", "mqbroker", "mqproxy", "mqshutdown", "mqadmin"} {
			if _, err := os.Stat(filepath.Join(d, b)); err != nil {
				return "", fmt.Errorf("ROCKETGO_BIN_DIR=%s: %w", d, err)
			}
		}
		return d, nil
	}
	root, err := filepath.Abs("..")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "bin")
	for _, b := range []string{"mqnamesrv", "mqbroker", "mqproxy", "mqshutdown", "mqadmin"} {
		start := time.Now()
		// The repo root is a different module than compat-tests, so build
		// from there (a relative ../cmd path would be "outside main module").
		cmd := exec.Command("go", "build", "-o", filepath.Join(out, b), "./cmd/"+b)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOWORK=off")
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("go build ./cmd/%s (in %s): %v\n%s", b, root, err, buf.String())
		}
		fmt.Fprintf(os.Stderr, "compat: built %s in %.1fs\n", b, time.Since(start).Seconds())
	}
	return out, nil
}

// ---------------------------------------------------------------------------
// processes

type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	logFile *os.File
	done    chan struct{}
	waitErr error
}

func startProc(name, bin string, args []string, logPath string) (*proc, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(f, "===== %s start %s: %s %s\n", name, time.Now().Format(time.RFC3339Nano), bin, strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = os.Environ() // passes ROCKETGO_LOG etc. through
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, logPath: logPath, logFile: f, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, waits up to 10 s, then SIGKILLs. It reports whether the
// process exited by itself after SIGTERM and how long that took.
func (p *proc) stop() (graceful bool, took time.Duration) {
	start := time.Now()
	if p.exited() {
		return true, 0
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		graceful = true
	case <-time.After(stopGracePeriod):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	took = time.Since(start)
	fmt.Fprintf(p.logFile, "===== %s stopped graceful=%v after %s: %v\n", p.name, graceful, took, p.waitErr)
	p.logFile.Close()
	return graceful, took
}

func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// grepFile returns the first n lines of path that contain sub.
func grepFile(path, sub string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, sub) {
			if out = append(out, line); len(out) == n {
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// ---------------------------------------------------------------------------
// ports

var (
	portMu    sync.Mutex
	usedPorts []int
)

func portFree(p int) bool {
	if p <= 1024 || p > 65535 {
		return false
	}
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// pickPort returns a free loopback port p such that p-2..p+2 are free too and
// p is at least 10 away from every port picked before in this run (the broker
// also binds listenPort-2, its VIP channel, and as a master listenPort+1, its
// HA listener). Ports come from below the kernel's ephemeral range: a port
// picked there stays free until the broker binds it, where one from the
// ephemeral range can become some client connection's local port meanwhile
// (seen on the shared machine: "bind: address already in use" for
// listenPort+1).
func pickPort() (int, error) {
	portMu.Lock()
	defer portMu.Unlock()
	lo, hi := 10000, ephemeralLow()
	for attempt := 0; attempt < 500; attempt++ {
		p := lo + rand.IntN(hi-lo)
		ok := true
		for _, u := range usedPorts {
			if p > u-10 && p < u+10 {
				ok = false
				break
			}
		}
		for q := p - 2; ok && q <= p+2; q++ {
			if !portFree(q) {
				ok = false
			}
		}
		if ok {
			usedPorts = append(usedPorts, p)
			return p, nil
		}
	}
	return 0, errors.New("no free port found")
}

// ephemeralLow is the first port of the kernel's ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range), 32768 if unknown.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n <= 10000+100 {
		return 32768
	}
	return n
}

// ---------------------------------------------------------------------------
// cluster = one namesrv + one broker

type cluster struct {
	name       string
	dir        string
	nsPort     int
	brokerPort int
	brokerName string
	nsAddr     string // 127.0.0.1:nsPort
	brokerAddr string // 127.0.0.1:brokerPort
	ns         *proc
	broker     *proc
	starts     int
	extraConf  string   // appended to broker.properties (e.g. messageDelayLevel)
	brokerArgs []string // appended to mqbroker's command line (--enable-proxy -pc ...)
}

func startCluster(name string) (*cluster, error) { return startClusterConf(name, "") }

func startClusterConf(name, extraConf string) (*cluster, error) {
	c, err := startNamesrvConf(name, extraConf)
	if err != nil {
		return c, err
	}
	return c, c.startBroker()
}

// startNamesrvConf starts the name server of a cluster and picks its
// broker's port; startBroker starts the broker (tests that run another
// broker on the same port and store start it themselves).
func startNamesrvConf(name, extraConf string) (*cluster, error) {
	c := &cluster{name: name, brokerName: "broker-" + name, extraConf: extraConf}
	c.dir = filepath.Join(workDir, name)
	if err := os.MkdirAll(filepath.Join(c.dir, "store"), 0o755); err != nil {
		return nil, err
	}
	var err error
	if c.nsPort, err = pickPort(); err != nil {
		return nil, err
	}
	if c.brokerPort, err = pickPort(); err != nil {
		return nil, err
	}
	c.nsAddr = fmt.Sprintf("127.0.0.1:%d", c.nsPort)
	c.brokerAddr = fmt.Sprintf("127.0.0.1:%d", c.brokerPort)

	nsConf := filepath.Join(c.dir, "namesrv.properties")
	if err := os.WriteFile(nsConf, []byte(fmt.Sprintf("listenPort=%d\nkvConfigPath=%s\n", c.nsPort, filepath.Join(c.dir, "kvConfig.json"))), 0o644); err != nil {
		return nil, err
	}
	c.ns, err = startProc("mqnamesrv", filepath.Join(binDir, "mqnamesrv"), []string{"-c", nsConf}, filepath.Join(c.dir, "namesrv.log"))
	if err != nil {
		return c, err
	}
	if err := waitTCP(c.ns, c.nsAddr, readyTimeout); err != nil {
		return c, err
	}
	return c, nil
}

func (c *cluster) brokerConf() string {
	return fmt.Sprintf(`brokerClusterName=%s
brokerName=%s
brokerId=0
listenPort=%d
namesrvAddr=%s
brokerIP1=127.0.0.1
storePathRootDir=%s
flushDiskType=ASYNC_FLUSH
autoCreateTopicEnable=true
mappedFileSizeCommitLog=67108864
`, clusterName, c.brokerName, c.brokerPort, c.nsAddr, filepath.Join(c.dir, "store")) + c.extraConf
}

// startBroker starts (or restarts) the broker on the same ports and store and
// waits until the namesrv routes TBW102 to it.
func (c *cluster) startBroker() error {
	conf := filepath.Join(c.dir, "broker.properties")
	if err := os.WriteFile(conf, []byte(c.brokerConf()), 0o644); err != nil {
		return err
	}
	c.starts++
	var err error
	c.broker, err = startProc(fmt.Sprintf("mqbroker#%d", c.starts), filepath.Join(binDir, "mqbroker"),
		append([]string{"-n", c.nsAddr, "-c", conf}, c.brokerArgs...), filepath.Join(c.dir, "broker.log"))
	if err != nil {
		return err
	}
	if err := waitTCP(c.broker, c.brokerAddr, readyTimeout); err != nil {
		return err
	}
	// Registered with the namesrv: TBW102 routes to this broker.
	var last string
	deadline := time.Now().Add(readyTimeout)
	for time.Now().Before(deadline) {
		if c.broker.exited() {
			return fmt.Errorf("mqbroker exited during startup: %v", c.broker.waitErr)
		}
		code, route, remark, err := queryRoute(c.nsAddr, "TBW102")
		switch {
		case err != nil:
			last = err.Error()
		case code != 0:
			last = fmt.Sprintf("GET_ROUTEINFO_BY_TOPIC(105) TBW102 -> code %d remark %q", code, remark)
		case !route.hasBroker(c.brokerAddr):
			last = fmt.Sprintf("TBW102 route has no broker %s: %s", c.brokerAddr, route.raw)
		default:
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("broker not registered with namesrv within %s: %s", readyTimeout, last)
}

func (c *cluster) stopBroker() (bool, time.Duration) {
	if c.broker == nil {
		return true, 0
	}
	g, d := c.broker.stop()
	return g, d
}

func (c *cluster) stop() {
	if c.broker != nil {
		c.broker.stop()
	}
	if c.ns != nil {
		c.ns.stop()
	}
}

func (c *cluster) logTails(n int) string {
	var b strings.Builder
	for _, f := range []string{"namesrv.log", "broker.log"} {
		p := filepath.Join(c.dir, f)
		fmt.Fprintf(&b, "----- tail of %s (%s) -----\n%s\n", f, p, tailFile(p, n))
	}
	return b.String()
}

// attachLogs prints the server log tails if the test fails.
func (c *cluster) attachLogs(t *testing.T) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server logs of cluster %q:\n%s", c.name, c.logTails(40))
		}
	})
}

// sharedCluster returns the TestMain cluster, checking it is still alive.
func sharedCluster(t *testing.T) *cluster {
	t.Helper()
	shared.attachLogs(t)
	if shared.ns.exited() || shared.broker.exited() {
		t.Fatalf("shared servers died earlier (namesrv exited=%v %v, broker exited=%v %v)",
			shared.ns.exited(), shared.ns.waitErr, shared.broker.exited(), shared.broker.waitErr)
	}
	return shared
}

// newCluster starts a dedicated namesrv+broker pair for one test.
func newCluster(t *testing.T, name string) *cluster { t.Helper(); return newClusterConf(t, name, "") }

// newClusterConf is newCluster with extra broker.properties lines.
func newClusterConf(t *testing.T, name, extraConf string) *cluster {
	t.Helper()
	c, err := startClusterConf(name, extraConf)
	if c != nil {
		t.Cleanup(c.stop)
		c.attachLogs(t)
	}
	if err != nil {
		t.Fatalf("start cluster %s: %v", name, err)
	}
	return c
}

func waitTCP(p *proc, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if p.exited() {
			return fmt.Errorf("%s exited before listening on %s: %v\n%s", p.name, addr, p.waitErr, tailFile(p.logPath, 30))
		}
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s not accepting on %s within %s: %v", p.name, addr, timeout, last)
}

// ---------------------------------------------------------------------------
// polling + summary

// waitFor polls cond every 50 ms until it is true or timeout elapses.
func waitFor(t *testing.T, timeout time.Duration, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type summaryRow struct {
	test      string
	sent      int
	received  int
	elapsed   time.Duration
	extraInfo string
}

var (
	summaryMu sync.Mutex
	summary   []summaryRow
)

// report logs (and records for the end-of-run table) the scenario numbers.
func report(t *testing.T, start time.Time, sent, received int, extra string) {
	t.Helper()
	el := time.Since(start)
	t.Logf("RESULT %s: sent=%d received=%d elapsed=%.2fs %s", t.Name(), sent, received, el.Seconds(), extra)
	summaryMu.Lock()
	summary = append(summary, summaryRow{t.Name(), sent, received, el, extra})
	summaryMu.Unlock()
}

func printSummary() {
	summaryMu.Lock()
	defer summaryMu.Unlock()
	if len(summary) == 0 {
		return
	}
	fmt.Println("compat summary (scenario, sent, received, seconds):")
	for _, r := range summary {
		fmt.Printf("  %-40s sent=%-5d received=%-5d %6.2fs %s\n", r.test, r.sent, r.received, r.elapsed.Seconds(), r.extraInfo)
	}
}
