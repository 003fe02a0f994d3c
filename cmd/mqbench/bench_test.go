package main

// End-to-end: real mqnamesrv and mqbroker processes on free loopback ports
// with a temporary store, a tiny produce + consume + e2e run through run(),
// simple consumers through the broker's own gRPC proxy, counts checked
// exactly, CSV and SVG parsed back.

import (
	"github.com/rocketgo/rocketgo/internal/adminclient"

	"bytes"
	"encoding/csv"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func buildServers(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", dir+"/", "../mqnamesrv", "../mqbroker")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
}

func startServer(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(dir, name), args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("%s log:\n%s", name, b)
		}
	})
}

func waitFor(t *testing.T, timeout time.Duration, what string, fn func() error) {
	t.Helper()
	end := time.Now().Add(timeout)
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func summaryOf(t *testing.T, sums []summary, role string) summary {
	t.Helper()
	for _, s := range sums {
		if s.role == role {
			return s
		}
	}
	t.Fatalf("no %s summary in %+v", role, sums)
	return summary{}
}

func TestBenchAgainstServers(t *testing.T) {
	dir := t.TempDir()
	buildServers(t, dir)
	nsPort, brokerPort := freePort(t), freePort(t)
	ns := fmt.Sprintf("127.0.0.1:%d", nsPort)
	brokerAddr := fmt.Sprintf("127.0.0.1:%d", brokerPort)
	nsConf := filepath.Join(dir, "namesrv.conf")
	brokerConf := filepath.Join(dir, "broker.conf")
	must(t, os.WriteFile(nsConf, fmt.Appendf(nil, "listenPort=%d\nkvConfigPath=%s\n", nsPort, filepath.Join(dir, "kv.json")), 0o644))
	// The HA and VIP ports default to listenPort+1 and -2, which another
	// package's servers may hold: free ones of their own.
	must(t, os.WriteFile(brokerConf, fmt.Appendf(nil, "brokerName=broker-t\nlistenPort=%d\nhaListenPort=%d\nfastListenPort=%d\n"+
		"brokerIP1=127.0.0.1\nstorePathRootDir=%s\nmappedFileSizeCommitLog=16777216\nenableLmq=true\nenableMultiDispatch=true\n",
		brokerPort, freePort(t), freePort(t), filepath.Join(dir, "store")), 0o644))
	startServer(t, dir, "mqnamesrv", "-c", nsConf)
	waitFor(t, 10*time.Second, "name server up", func() error {
		c, err := net.Dial("tcp", ns)
		if err == nil {
			c.Close()
		}
		return err
	})
	// The broker serves gRPC too (local proxy mode), for grpc-pop.
	grpcAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	proxyConf := filepath.Join(dir, "proxy.json")
	must(t, os.WriteFile(proxyConf, fmt.Appendf(nil, `{"namesrvAddr":%q,"grpcServerPort":%s}`, ns, grpcAddr[len("127.0.0.1:"):]), 0o644))
	startServer(t, dir, "mqbroker", "-c", brokerConf, "-n", ns, "--enable-proxy", "-pc", proxyConf)
	a := adminclient.New([]string{ns})
	defer a.Close()
	waitFor(t, 10*time.Second, "broker registered", func() error {
		_, err := a.Route("TBW102")
		return err
	})
	waitFor(t, 10*time.Second, "broker's gRPC port open", func() error {
		c, err := net.Dial("tcp", grpcAddr)
		if err == nil {
			c.Close()
		}
		return err
	})

	var out bytes.Buffer
	w := io.Writer(&out)
	if testing.Verbose() {
		w = io.MultiWriter(&out, os.Stdout)
	}
	base := func(mode string) *options {
		o, err := parseFlags([]string{mode, "-n", ns, "-t", "BenchTestTopic", "-q", "4", "-c", "2", "-w", "8", "-s", "200",
			"-k", "-tag", "TagA", "-i", "200ms"}, io.Discard)
		must(t, err)
		return o
	}

	// Produce 3000 single messages and 2000 in batches of 16 (the last one short).
	po := base("produce")
	po.createTopic, po.count = true, 3000
	po.csv, po.plot = filepath.Join(dir, "p.csv"), filepath.Join(dir, "p.svg")
	sums, err := run(po, w, nil)
	must(t, err)
	s1 := summaryOf(t, sums, "send")
	po = base("produce")
	po.count, po.batch = 2000, 16
	sums, err = run(po, w, nil)
	must(t, err)
	s2 := summaryOf(t, sums, "send")
	if s1.msgs != 3000 || s1.errs != 0 || s2.msgs != 2000 || s2.errs != 0 {
		t.Fatalf("acknowledged %d+%d (errors %d+%d), want 3000+2000", s1.msgs, s2.msgs, s1.errs, s2.errs)
	}
	var stored int64
	for q := int32(0); q < 4; q++ {
		n, err := a.MaxOffset(brokerAddr, "BenchTestTopic", int(q))
		must(t, err)
		stored += n
	}
	if stored != 5000 {
		t.Fatalf("queues hold %d messages, want 5000", stored)
	}

	// Consume them all, pipelined, from the start.
	co := base("consume")
	co.count, co.duration = 5000, 0
	co.csv, co.plot = filepath.Join(dir, "c.csv"), filepath.Join(dir, "c.svg")
	done := make(chan struct{})
	timer := time.AfterFunc(15*time.Second, func() { close(done) })
	sums, err = run(co, w, done)
	timer.Stop()
	must(t, err)
	if c := summaryOf(t, sums, "pull"); c.msgs != 5000 || c.errs != 0 {
		t.Fatalf("consumed %d (errors %d), want 5000", c.msgs, c.errs)
	}

	// Three more groups read everything again: each reads a queue once,
	// so 15000 means every group read all 5000.
	go3 := base("consume")
	go3.count, go3.duration, go3.groups, go3.group = 15000, 0, 3, "mqbench_groups"
	done = make(chan struct{})
	timer = time.AfterFunc(15*time.Second, func() { close(done) })
	sums, err = run(go3, w, done)
	timer.Stop()
	must(t, err)
	if c := summaryOf(t, sums, "pull"); c.msgs != 15000 || c.errs != 0 {
		t.Fatalf("3 groups consumed %d (errors %d), want 15000", c.msgs, c.errs)
	}
	if _, err := parseFlags([]string{"produce", "-groups", "2"}, io.Discard); err == nil {
		t.Fatal("-groups accepted for produce")
	}
	// -loop: 5000 stored, 12000 read by one group going round.
	lo := base("consume")
	lo.count, lo.duration, lo.loop = 12000, 0, true
	done = make(chan struct{})
	timer = time.AfterFunc(15*time.Second, func() { close(done) })
	sums, err = run(lo, w, done)
	timer.Stop()
	must(t, err)
	if c := summaryOf(t, sums, "pull"); c.msgs < 12000 || c.errs != 0 {
		t.Fatalf("-loop consumed %d (errors %d), want 12000", c.msgs, c.errs)
	}

	// End to end at a fixed rate: everything sent is consumed from the tail.
	eo := base("e2e")
	eo.count, eo.rate = 600, 2000
	eo.csv, eo.plot = filepath.Join(dir, "e.csv"), filepath.Join(dir, "e.svg")
	sums, err = run(eo, w, nil)
	must(t, err)
	es, er := summaryOf(t, sums, "send"), summaryOf(t, sums, "e2e")
	if es.msgs != 600 || er.msgs != 600 || es.errs+er.errs != 0 || er.p99 <= 0 {
		t.Fatalf("e2e sent %d consumed %d errors %d/%d p99 %.3f", es.msgs, er.msgs, es.errs, er.errs, er.p99)
	}
	if er.worstP99 < er.p50 || er.firstMs <= 0 || er.firstLatMs <= 0 || er.firstLatMs > er.max {
		t.Fatalf("e2e worst p99 %.3f (p50 %.3f), first consumed after %.3f ms with latency %.3f (max %.3f)",
			er.worstP99, er.p50, er.firstMs, er.firstLatMs, er.max)
	}
	if !strings.Contains(out.String(), "FIRST topic=BenchTestTopic created=false") {
		t.Fatalf("no FIRST line in output:\n%s", out.String())
	}

	// Lite topics: one message to each of 50, then 50 more round robin;
	// each lite topic's queue holds 2; two clients pop and ack all 100.
	lp := base("produce")
	lp.topic, lp.createTopic, lp.lite, lp.count, lp.tag = "BenchLite", true, 50, 100, ""
	sums, err = run(lp, w, nil)
	must(t, err)
	if s := summaryOf(t, sums, "send"); s.msgs != 100 || s.errs != 0 {
		t.Fatalf("lite sends acknowledged %d (errors %d), want 100", s.msgs, s.errs)
	}
	for _, k := range []int{0, 49} {
		n, err := a.MaxOffset(brokerAddr, "%LMQ%$BenchLite$"+liteName(k), 0)
		must(t, err)
		if n != 2 {
			t.Fatalf("lite topic %s holds %d messages, want 2", liteName(k), n)
		}
	}
	lc := base("lite-consume")
	lc.topic, lc.group, lc.lite, lc.count, lc.duration = "BenchLite", "BenchLiteGroup", 50, 100, 0
	done = make(chan struct{})
	timer = time.AfterFunc(30*time.Second, func() { close(done) })
	sums, err = run(lc, w, done)
	timer.Stop()
	must(t, err)
	if c := summaryOf(t, sums, "pop"); c.msgs != 100 || c.errs != 0 {
		t.Fatalf("lite popped and acked %d (errors %d), want 100", c.msgs, c.errs)
	}
	if _, err := parseFlags([]string{"consume", "-lite", "2"}, io.Discard); err == nil {
		t.Fatal("-lite accepted for consume")
	}

	// Five simple consumers receive and ack all 600 messages of a topic
	// through gRPC: the group made first (-n), each message acked once.
	pp := base("produce")
	pp.topic, pp.createTopic, pp.count, pp.tag = "BenchPop", true, 600, ""
	sums, err = run(pp, w, nil)
	must(t, err)
	if s := summaryOf(t, sums, "send"); s.msgs != 600 || s.errs != 0 {
		t.Fatalf("pop topic sends acknowledged %d (errors %d), want 600", s.msgs, s.errs)
	}
	gp, err := parseFlags([]string{"grpc-pop", "-proxy", grpcAddr, "-n", ns, "-t", "BenchPop", "-g", "BenchPopGroup",
		"-c", "5", "-count", "600", "-d", "30s", "-i", "200ms", "-csv", filepath.Join(dir, "g.csv"), "-plot", filepath.Join(dir, "g.svg")}, io.Discard)
	must(t, err)
	if !gp.durationSet {
		t.Fatal("-d given, durationSet false")
	}
	sums, err = run(gp, w, nil)
	must(t, err)
	if c := summaryOf(t, sums, "pop"); c.msgs != 600 || c.errs != 0 || c.p99 <= 0 {
		t.Fatalf("grpc-pop acked %d (errors %d, p99 %.3f), want 600", c.msgs, c.errs, c.p99)
	}
	if !strings.Contains(out.String(), "POP consumers=5 ") || !strings.Contains(out.String(), " acked=600 ack_failed=0 ") {
		t.Fatalf("no POP line for 5 consumers and 600 acked in output:\n%s", out.String())
	}

	for _, f := range []string{"p", "c", "e", "g"} {
		checkCSV(t, filepath.Join(dir, f+".csv"))
		checkSVG(t, filepath.Join(dir, f+".svg"))
	}
	if !strings.Contains(out.String(), "SUMMARY role=send") {
		t.Fatalf("no summary line in output:\n%s", out.String())
	}
}

func checkCSV(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	must(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	must(t, err)
	if len(recs) < 2 || recs[0][0] != "time_s" || len(recs[0]) != 10 {
		t.Fatalf("%s: %d records, header %v", path, len(recs), recs[0])
	}
}

func checkSVG(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	d := xml.NewDecoder(bytes.NewReader(b))
	var root string
	polylines := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: not well-formed XML: %v", path, err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = se.Name.Local
			}
			if se.Name.Local == "polyline" {
				polylines++
			}
		}
	}
	if root != "svg" || polylines == 0 {
		t.Fatalf("%s: root %q, %d polylines", path, root, polylines)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
