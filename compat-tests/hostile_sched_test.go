package compattest

// Hostile scheduled messages: timer and delay-level
// messages that can never be delivered, staged the ways a client or an
// operator can stage them, must not spin the broker, flood its log, hold up
// the other scheduled messages or come back after a restart. Also the
// process probes (/proc) the other hostile tests of this area use.

import (
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
)

// hsProcStat returns a process's user+system CPU time in clock ticks (100 Hz
// on Linux) from /proc/<pid>/stat.
func hsProcStat(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("read /proc/%d/stat: %v", pid, err)
	}
	// Fields after the parenthesised command name; utime and stime are the
	// 14th and 15th fields of the whole line.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return ut + st
}

// hsVmRSS returns a process's VmRSS in bytes from /proc/<pid>/status.
func hsVmRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("read /proc/%d/status: %v", pid, err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			kb, _ := strconv.ParseInt(strings.Fields(l)[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

func hsFileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// hsQuiet watches the broker for d: its log must grow by less than maxLog
// bytes and it must use less than half a core (a spin takes a whole one).
func hsQuiet(t *testing.T, c *cluster, d time.Duration, maxLog int64, when string) {
	t.Helper()
	pid := c.broker.cmd.Process.Pid
	logPath := c.broker.logPath
	log0, cpu0, t0 := hsFileSize(t, logPath), hsProcStat(t, pid), time.Now()
	waitFor(t, d, func() bool { return false }) // observe for d; nothing to wait for
	log1, cpu1, el := hsFileSize(t, logPath), hsProcStat(t, pid), time.Since(t0)
	share := float64(cpu1-cpu0) / 100 / el.Seconds()
	t.Logf("%s: broker log +%d bytes, CPU %.0f%% of a core over %s", when, log1-log0, share*100, el.Round(time.Millisecond))
	if log1-log0 > maxLog {
		t.Errorf("%s: broker log grew %d bytes in %s (limit %d): a delivery loop logging in a spin?\n%s",
			when, log1-log0, el, maxLog, tailFile(logPath, 5))
	}
	if share > 0.5 {
		t.Errorf("%s: broker used %.0f%% of a core while idle: a delivery loop spinning?", when, share*100)
	}
}

// hsSend sends one SEND_MESSAGE_V2 with the given properties and body, and
// returns the answer's code and remark.
func hsSend(t *testing.T, addr, topic string, queueID int, props string, body []byte) (int, string) {
	t.Helper()
	req := javaRequest(310, map[string]string{
		"a": "hs-producer", "b": topic, "c": "TBW102", "d": "4", "e": strconv.Itoa(queueID), "f": "0",
		"g": strconv.FormatInt(time.Now().UnixMilli(), 10), "h": "0", "i": props,
		"j": "0", "k": "false", "m": "false",
	}, body)
	resp, err := rawInvoke(addr, req, 10*time.Second)
	if err != nil {
		t.Fatalf("send to %s: %v", topic, err)
	}
	return resp.Code, resp.Remark
}

func hsProps(kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		b.WriteString(kv[i] + "\x01" + kv[i+1] + "\x02")
	}
	return b.String()
}

// hsCountSince counts lines containing sub in the broker log written since
// the last start marker of the broker run number start.
func hsCountSince(t *testing.T, c *cluster, start int, sub string) int {
	t.Helper()
	b, err := os.ReadFile(c.broker.logPath)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if i := strings.LastIndex(s, fmt.Sprintf("===== mqbroker#%d start", start)); i >= 0 {
		s = s[i:]
	}
	return strings.Count(s, sub)
}

// TestHostileSchedPoison stages undeliverable timer and delay messages ahead
// of good ones:
//   - as the attacker did, through the wire: a send straight into
//     rmq_sys_wheel_timer / SCHEDULE_TOPIC_XXXX whose REAL_TOPIC is 200 bytes
//     (once names are checked at the send, that send is refused instead);
//   - a timer message whose properties only overflow 32767 bytes once
//     delivery adds TIMER_ENQUEUE_MS / TIMER_DEQUEUE_MS;
//   - an old store: 64 KiB delay and timer messages staged before the broker
//     restarts with maxMessageSize=32768.
//
// The good delay and timer messages behind them are delivered, the broker
// neither spins nor floods its log, and after a second restart the poison
// stays aside.
func TestHostileSchedPoison(t *testing.T) {
	c := newClusterConf(t, "hspoison", "messageDelayLevel=1s 2s 4s\n")
	topic := uniq("HsReal")
	createTopic(t, c, topic, admin.WithReadQueueNums(1), admin.WithWriteQueueNums(1))

	big := make([]byte, 64<<10)
	_, _ = rand.Read(big)
	for _, p := range []string{hsProps("DELAY", "3"), hsProps("TIMER_DELAY_SEC", "4")} {
		if code, remark := hsSend(t, c.brokerAddr, topic, 0, p, big); code != 0 {
			t.Fatalf("stage 64 KiB message %q: code %d %s", p, code, remark)
		}
	}
	c.stopBroker()
	c.extraConf += "maxMessageSize=32768\n"
	if err := c.startBroker(); err != nil {
		t.Fatalf("restart with maxMessageSize=32768: %v", err)
	}

	long := strings.Repeat("x", 200)
	due := strconv.FormatInt(time.Now().Add(500*time.Millisecond).UnixMilli(), 10)
	for _, w := range []struct{ topic, props string }{
		{"rmq_sys_wheel_timer", hsProps("TIMER_OUT_MS", due, "REAL_TOPIC", long, "REAL_QID", "0")},
		{"SCHEDULE_TOPIC_XXXX", hsProps("REAL_TOPIC", long, "REAL_QID", "0")},
	} {
		code, remark := hsSend(t, c.brokerAddr, w.topic, 0, w.props, []byte("poison"))
		t.Logf("wire poison into %s: code %d %q (a refusal is names validation at the send)", w.topic, code, remark)
	}
	// The largest properties the send accepts: staged, they fit; delivered
	// with two more timer properties, they do not.
	staged := false
	for pad := 32767 - 40; pad > 32767-400 && !staged; pad -= 4 {
		p := hsProps("TIMER_DELAY_SEC", "1", "WAIT", "true", "P", strings.Repeat("p", pad))
		if len(p) > 32767 {
			continue
		}
		code, _ := hsSend(t, c.brokerAddr, topic, 0, p, []byte("overflow"))
		staged = code == 0
	}
	if !staged {
		t.Fatal("no near-limit timer message accepted")
	}

	// Good messages behind the poison, on the same level and the timer.
	col := newCollector("hspoison")
	startConsumer(t, c, uniq("CG_hspoison"), topic, "*", col)
	sent := time.Now()
	var ids []string
	for i, p := range []string{
		hsProps("DELAY", "3", idProp, "delay-3"), hsProps("DELAY", "1", idProp, "delay-1"),
		hsProps("TIMER_DELAY_SEC", "2", idProp, "timer-2"), hsProps("TIMER_DELAY_MS", "500", idProp, "timer-0.5"),
	} {
		if code, remark := hsSend(t, c.brokerAddr, topic, 0, p, []byte("good-"+strconv.Itoa(i))); code != 0 {
			t.Fatalf("send good %q: code %d %s", p, code, remark)
		}
		ids = append(ids, hsID(p))
	}
	waitAll(t, col, ids, 30*time.Second, "good scheduled messages behind the poison")
	for _, id := range ids {
		t.Logf("%s arrived %s after the send", id, col.get(id)[0].At.Sub(sent).Round(time.Millisecond))
	}
	waitFor(t, 5*time.Second, func() bool { return hsCountSince(t, c, c.starts, "set aside") >= 3 })
	n := hsCountSince(t, c, c.starts, "set aside")
	t.Logf("set-aside lines: %d", n)
	if n < 3 {
		t.Errorf("%d set-aside lines, want at least the 3 messages that cannot pass any check", n)
	}
	hsQuiet(t, c, 3*time.Second, 64<<10, "poison due")

	// Restart: the poison stays aside; a new timer message is delivered.
	c.stopBroker()
	if err := c.startBroker(); err != nil {
		t.Fatalf("second restart: %v", err)
	}
	if code, remark := hsSend(t, c.brokerAddr, topic, 0, hsProps("TIMER_DELAY_MS", "300", idProp, "after"), []byte("after")); code != 0 {
		t.Fatalf("send after restart: code %d %s", code, remark)
	}
	waitAll(t, col, []string{"after"}, 30*time.Second, "timer message after the restart")
	hsQuiet(t, c, 2*time.Second, 16<<10, "after restart")
	if n := hsCountSince(t, c, c.starts, "set aside"); n != 0 {
		t.Errorf("poison back after restart: %d set-aside lines\n%s", n, tailFile(c.broker.logPath, 10))
	}
	for _, id := range ids {
		if k := len(col.get(id)); k != 1 {
			t.Errorf("%s delivered %d times", id, k)
		}
	}
}

// hsID returns the compat_id of hsProps output.
func hsID(props string) string {
	i := strings.Index(props, idProp+"\x01")
	rest := props[i+len(idProp)+1:]
	return rest[:strings.IndexByte(rest, '\x02')]
}

// hsPull is a PULL_MESSAGE (11) with its TAG expression in the request
// (subscription flag) and, if suspendMs > 0, the suspend flag.
func hsPull(topic, group, expr string, suspendMs int64) *rawCmd {
	sysFlag := 0x4 // subscription
	if suspendMs > 0 {
		sysFlag |= 0x2
	}
	return javaRequest(11, map[string]string{
		"consumerGroup": group, "topic": topic, "queueId": "0", "queueOffset": "0", "maxMsgNums": "32",
		"sysFlag": strconv.Itoa(sysFlag), "commitOffset": "0", "suspendTimeoutMillis": strconv.FormatInt(suspendMs, 10),
		"subscription": expr, "subVersion": "0", "expressionType": "TAG",
	}, nil)
}

// hsTags is a distinct TAG expression of about n bytes: "<seed>||t1||t2...".
func hsTags(seed string, n int) string {
	var b strings.Builder
	b.WriteString(seed)
	for i := 0; b.Len() < n; i++ {
		b.WriteString("||t")
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}

// TestHostileFilterCache: 20 pulls with distinct 8 MB TAG expressions are
// refused as unparsable (SUBSCRIPTION_PARSE_FAILED) instead of kept (they
// took the broker to 1.3 GB), and 1,500 pulls with distinct 60 KB
// expressions (~10,000 tags each, 1 GB if all kept) leave the cache within
// filterCacheMaxBytes: VmRSS grows by less than 400 MB. The header bound
// (serverMaxHeaderBytes, 256 KiB by default) would close the connection of
// an 8 MB expression before the filter saw it; it is lifted here so that
// the filter's own bounds are what is tested.
func TestHostileFilterCache(t *testing.T) {
	c := newClusterConf(t, "hsfilter", "serverMaxHeaderBytes=16000000\n")
	topic := uniq("HsFilter")
	createTopic(t, c, topic, admin.WithReadQueueNums(1), admin.WithWriteQueueNums(1))
	pid := c.broker.cmd.Process.Pid
	rss0 := hsVmRSS(t, pid)
	conn, err := net.DialTimeout("tcp", c.brokerAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for i := 0; i < 20; i++ {
		resp, err := invokeOn(conn, hsPull(topic, "hs-filter-group", hsTags(strconv.Itoa(i), 8<<20), 0), 30*time.Second)
		if err != nil {
			t.Fatalf("8 MB pull %d: %v", i, err)
		}
		if resp.Code != 23 || resp.Remark != "parse the consumer's subscription failed" {
			t.Errorf("8 MB pull %d: code %d %q, want 23 \"parse the consumer's subscription failed\"", i, resp.Code, resp.Remark)
		}
	}
	rss1 := hsVmRSS(t, pid)
	t.Logf("20 pulls with 8 MB expressions: VmRSS %d -> %d MB", rss0>>20, rss1>>20)
	peak := rss1
	for i := 0; i < 1500; i++ {
		resp, err := invokeOn(conn, hsPull(topic, "hs-filter-group", hsTags("e"+strconv.Itoa(i), 60<<10), 0), 30*time.Second)
		if err != nil || (resp.Code != 19 && resp.Code != 0) {
			t.Fatalf("60 KB pull %d: %v %v", i, resp, err)
		}
		if i%100 == 0 {
			peak = max(peak, hsVmRSS(t, pid))
		}
	}
	peak = max(peak, hsVmRSS(t, pid))
	t.Logf("then 1,500 pulls with distinct 60 KB expressions: VmRSS peak %d MB (from %d MB)", peak>>20, rss0>>20)
	if peak-rss0 > 400<<20 {
		t.Errorf("VmRSS grew %d MB with the filter cache bounded at 64 MiB", (peak-rss0)>>20)
	}
}

// TestHostileParkedPulls: with maxParkedPulls=1000, 3,000 long-polling pulls
// that find nothing park 1,000 and answer the rest at once PULL_NOT_FOUND;
// the event is logged a few times (sampled), not 2,000; once the parked ones
// expire, a new pull parks again.
func TestHostileParkedPulls(t *testing.T) {
	c := newClusterConf(t, "hsparked", "maxParkedPulls=1000\n")
	topic := uniq("HsParked")
	createTopic(t, c, topic, admin.WithReadQueueNums(1), admin.WithWriteQueueNums(1))
	pid := c.broker.cmd.Process.Pid
	rss0 := hsVmRSS(t, pid)
	const conns, per = 10, 300
	var answered atomic.Int32
	var wg sync.WaitGroup
	var cs []net.Conn
	for i := 0; i < conns; i++ {
		conn, err := net.DialTimeout("tcp", c.brokerAddr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, conn)
		var frames []byte
		for j := 0; j < per; j++ {
			frames = append(frames, hsPull(topic, "hs-parked-group", "*", 8000).encode()...)
		}
		if _, err := conn.Write(frames); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				resp, err := readFrame(conn)
				if err != nil {
					return
				}
				if resp.Code == 19 {
					answered.Add(1)
				}
			}
		}()
	}
	defer func() {
		for _, conn := range cs {
			conn.Close()
		}
		wg.Wait()
	}()
	// The 1,000 parked ones are held 8 s: until then only the others answer.
	if !waitFor(t, 6*time.Second, func() bool { return answered.Load() >= conns*per-1000 }) || answered.Load() > conns*per-1000 {
		t.Fatalf("%d pulls answered at once, want %d (1,000 parked)", answered.Load(), conns*per-1000)
	}
	t.Logf("%d of %d long-polling pulls answered at once; VmRSS %d -> %d MB", answered.Load(), conns*per,
		rss0>>20, hsVmRSS(t, pid)>>20)
	if n := hsCountSince(t, c, c.starts, "parked pulls at the bound"); n == 0 || n > 20 {
		t.Errorf("%d log lines for 2,000 refused parks, want a few (sampled)", n)
	}
	// The parked ones are answered when their 8 s expire; places free again.
	if !waitFor(t, 30*time.Second, func() bool { return answered.Load() == conns*per }) {
		t.Fatalf("parked pulls not answered after their hold: %d of %d", answered.Load(), conns*per)
	}
	conn, err := net.DialTimeout("tcp", c.brokerAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	if resp, err := invokeOn(conn, hsPull(topic, "hs-parked-group", "*", 1500), 10*time.Second); err != nil || resp.Code != 19 {
		t.Fatalf("pull after the flood: %v %v", resp, err)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("pull after the flood answered after %s: not parked (places not freed)", d)
	}
}
