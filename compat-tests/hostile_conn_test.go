package compattest

// Hostile connections against real mqnamesrv / mqbroker processes (issue
// #11, "Connections, frames and output"): a connection flood past the open
// file limit, frames left incomplete, pulls whose answers are never read,
// a huge header, and idle connections. After each, the official Go client
// still sends and consumes.

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// hostileTarget is one server of a cluster and a request it must keep answering on
// an open connection.
type hostileTarget struct {
	name  string
	addr  string
	p     *proc
	probe func(net.Conn) error
}

func hostileTargets(c *cluster) []hostileTarget {
	return []hostileTarget{
		{"broker", c.brokerAddr, c.broker, func(nc net.Conn) error {
			resp, err := invokeOn(nc, newRequest(codeGetMaxOffset, map[string]string{"topic": "TBW102", "queueId": "0"}, nil), 10*time.Second)
			if err == nil && resp.Code != 0 {
				err = fmt.Errorf("GET_MAX_OFFSET: code %d %q", resp.Code, resp.Remark)
			}
			return err
		}},
		{"namesrv", c.nsAddr, c.ns, func(nc net.Conn) error {
			resp, err := invokeOn(nc, newRequest(codeGetRouteInfoByTopic, map[string]string{"topic": "TBW102"}, nil), 10*time.Second)
			if err == nil && resp.Code != 0 {
				err = fmt.Errorf("GET_ROUTEINFO_BY_TOPIC: code %d %q", resp.Code, resp.Remark)
			}
			return err
		}},
	}
}

// watchClose reads nc until the server closes it (or the test does) and
// then counts it in closed.
func watchClose(nc net.Conn, closed *atomic.Int32, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(io.Discard, nc)
		closed.Add(1)
	}()
}

// Connections past the open file limit. The broker derives its connection
// limit from the limit and refuses the rest; the name server is configured
// above it, so its accepts run out of descriptors (EMFILE), which used to
// stop gnet's engine and end the process with status 0.
func TestHostileConnFlood(t *testing.T) {
	start := time.Now()
	const nofile, flood = 256, 600
	c := newHostileCluster(t, "connflood", nofile, "serverMaxConnections=100000\n", "")
	for _, tg := range hostileTargets(c) {
		t.Run(tg.name, func(t *testing.T) {
			keep, err := net.Dial("tcp", tg.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer keep.Close()
			if err := tg.probe(keep); err != nil {
				t.Fatalf("before the flood: %v", err)
			}
			var (
				closed atomic.Int32
				wg     sync.WaitGroup
				conns  []net.Conn
			)
			defer func() {
				for _, nc := range conns {
					nc.Close()
				}
				wg.Wait()
			}()
			for i := range flood {
				nc, err := net.DialTimeout("tcp", tg.addr, 10*time.Second)
				if err != nil {
					t.Fatalf("dial %d: %v", i, err)
				}
				conns = append(conns, nc)
				watchClose(nc, &closed, &wg)
			}
			// At most nofile descriptors: everything beyond is closed at once.
			if !waitFor(t, 30*time.Second, func() bool { return closed.Load() >= flood-nofile }) {
				t.Fatalf("%d of %d connections closed by the server; want at least %d", closed.Load(), flood, flood-nofile)
			}
			requireAlive(t, c)
			if err := tg.probe(keep); err != nil {
				t.Fatalf("during the flood, an open connection: %v", err)
			}
			if n := openFDs(tg.p); n > nofile {
				t.Fatalf("%d descriptors open, limit %d", n, nofile)
			}
			t.Logf("%s: %d of %d flood connections closed at once, %d kept; %d descriptors open",
				tg.name, closed.Load(), flood, int32(flood)-closed.Load(), openFDs(tg.p))
			for _, nc := range conns {
				nc.Close()
			}
			conns = nil
			wg.Wait()
			// Served again once the flood is gone.
			if !waitFor(t, 30*time.Second, func() bool {
				nc, err := net.DialTimeout("tcp", tg.addr, 5*time.Second)
				if err != nil {
					return false
				}
				defer nc.Close()
				return tg.probe(nc) == nil
			}) {
				t.Fatal("new connections not served after the flood")
			}
		})
	}
	officialClientWorks(t, c, 20)
	report(t, start, 20, 20, fmt.Sprintf("flood=%d nofile=%d", flood, nofile))
}

// Connections that each send all but one byte of a 16 MiB frame: held input
// is bounded by serverInputBufferMaxBytes (128 MiB), the frames are dropped
// after serverIncompleteFrameTimeoutMillis, and the memory goes back to the
// system once they are gone (it used to stay: 2.5 GB for the broker).
func TestHostilePartialFrames(t *testing.T) {
	start := time.Now()
	c := newHostileCluster(t, "partialframes", 0,
		"serverIncompleteFrameTimeoutMillis=3000\n", "serverIncompleteFrameTimeoutMillis=3000\n")
	header := newRequest(codeGetRouteInfoByTopic, map[string]string{"topic": "TBW102"}, nil).jsonHeader()
	const frameLen = 16 << 20 // the largest frame: length field 16 MiB - 4
	partial := frame(serializeJSON, header, make([]byte, frameLen-8-len(header)))[:frameLen-1]
	var summary []string
	for _, tg := range hostileTargets(c) {
		n := map[string]int{"broker": 64, "namesrv": 128}[tg.name]
		t.Run(tg.name, func(t *testing.T) {
			base := rssMB(tg.p)
			rss := sampleRSS(tg.p)
			var (
				closed  atomic.Int32
				readers sync.WaitGroup
				writers sync.WaitGroup
				conns   = make([]net.Conn, n)
			)
			for i := range n {
				nc, err := net.DialTimeout("tcp", tg.addr, 10*time.Second)
				if err != nil {
					t.Fatalf("dial %d: %v", i, err)
				}
				conns[i] = nc
				defer nc.Close()
				watchClose(nc, &closed, &readers)
				writers.Add(1)
				go func() {
					defer writers.Done()
					_, _ = nc.Write(partial) // fails once the server closes the connection
				}()
			}
			writers.Wait()
			// Every one closed: over the budget at once, the rest after the time limit.
			if !waitFor(t, 60*time.Second, func() bool { return closed.Load() == int32(n) }) {
				t.Fatalf("%d of %d connections with an incomplete frame still open (VmRSS %d MB before, peak %d MB)",
					int32(n)-closed.Load(), n, base, rss.peak())
			}
			peak := rss.peak()
			requireAlive(t, c)
			var after int64
			if !waitFor(t, 30*time.Second, func() bool { after = rssMB(tg.p); return after < base+64 }) {
				t.Fatalf("VmRSS %d MB after the connections closed, %d MB before", after, base)
			}
			line := fmt.Sprintf("%s: %d x 16 MiB - 1: VmRSS %d MB before, peak %d MB, %d MB after", tg.name, n, base, peak, after)
			t.Log(line)
			summary = append(summary, line)
			if peak > base+512 {
				t.Fatalf("VmRSS peaked at %d MB (%d before)", peak, base)
			}
			conn, err := net.DialTimeout("tcp", tg.addr, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := tg.probe(conn); err != nil {
				t.Fatalf("after the attack: %v", err)
			}
		})
	}
	officialClientWorks(t, c, 20)
	report(t, start, 20, 20, fmt.Sprint(summary))
}

// dialSmallWindow dials with a 4 KiB receive buffer, so that what the
// client does not read stays on the server.
func dialSmallWindow(addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: 10 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10) })
		return errors.Join(err, serr)
	}}
	return d.Dial("tcp", addr)
}

// 20 connections that each pipeline 500 pulls of 256 KiB answers and never
// read: the broker stops reading them above writeBufferHighWaterMark, cuts
// them after serverSlowConsumerTimeoutMillis, and its memory stays bounded
// (it used to buffer everything: 2.2 GB).
func TestHostileNonReadingPulls(t *testing.T) {
	start := time.Now()
	c := newHostileCluster(t, "slowpulls", 0, "", "serverSlowConsumerTimeoutMillis=3000\n")
	topic := uniq("SlowPulls")
	createTopic(t, c, topic, admin.WithReadQueueNums(1), admin.WithWriteQueueNums(1))
	p := newProducer(t, c)
	for i := range 64 {
		body := make([]byte, 8<<10) // 32 of them: a 256 KiB pull answer (random: the client compresses text)
		_, _ = rand.Read(body)
		m := primitive.NewMessage(topic, body)
		m.WithProperty(idProp, strconv.Itoa(i))
		p.mustSend(t, m)
	}
	p.shutdown()
	// A consumer's heartbeat, then its pulls, on each connection: pulls need
	// the group's subscription, registered per connection.
	group := uniq("SlowCG")
	heartbeat := newRequest(codeHeartbeat, nil, []byte(`{"clientID":"slow@1","consumerDataSet":[{"groupName":"`+group+
		`","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET",`+
		`"subscriptionDataSet":[{"topic":"`+topic+`","subString":"*","tagsSet":[],"codeSet":[],"subVersion":0,"expressionType":"TAG"}],`+
		`"unitMode":false}],"producerDataSet":[]}`))
	pull := func() *rawCmd {
		return newRequest(11, map[string]string{
			"consumerGroup": group, "topic": topic, "queueId": "0", "queueOffset": "0", "maxMsgNums": "32",
			"sysFlag": "0", "commitOffset": "0", "suspendTimeoutMillis": "0", "subscription": "*", "subVersion": "0",
			"expressionType": "TAG",
		}, nil)
	}
	// Wait until a pull answers about 256 KiB (the broker's maxTransferBytesOnMessageInMemory).
	if !waitFor(t, 30*time.Second, func() bool {
		nc, err := net.DialTimeout("tcp", c.brokerAddr, 5*time.Second)
		if err != nil {
			return false
		}
		defer nc.Close()
		if _, err := invokeOn(nc, heartbeat, 10*time.Second); err != nil {
			return false
		}
		resp, err := invokeOn(nc, pull(), 10*time.Second)
		return err == nil && resp.Code == 0 && len(resp.Body) >= 200<<10
	}) {
		t.Fatal("messages not pullable")
	}
	pulls := heartbeat.encode()
	for range 500 {
		pulls = append(pulls, pull().encode()...)
	}
	const n = 20
	base := rssMB(c.broker)
	rss := sampleRSS(c.broker)
	conns := make([]net.Conn, n)
	for i := range n {
		nc, err := dialSmallWindow(c.brokerAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		conns[i] = nc
		if _, err := nc.Write(pulls); err != nil {
			t.Fatalf("pipelining pulls on connection %d: %v", i, err)
		}
	}
	// The broker closes all of them. (Not seen by reading: a client that
	// reads is served again.)
	open := func() (k int) {
		for _, nc := range conns {
			if tcpEstablished(c.brokerPort, nc.LocalAddr().(*net.TCPAddr).Port) {
				k++
			}
		}
		return k
	}
	if !waitFor(t, 60*time.Second, func() bool { return open() == 0 }) {
		t.Fatalf("%d of %d non-reading connections still open on the broker (VmRSS %d MB before, peak %d MB)",
			open(), n, base, rss.peak())
	}
	peak := rss.peak()
	requireAlive(t, c)
	// What reaches the client is what the kernel had; then the close.
	for i, nc := range conns {
		_ = nc.SetReadDeadline(time.Now().Add(30 * time.Second))
		got, err := io.Copy(io.Discard, nc)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("connection %d: not closed (read %d bytes)", i, got)
		}
		if got >= 500*(256<<10)/4 {
			t.Fatalf("connection %d: read %d bytes: the broker served it all", i, got)
		}
	}
	var after int64
	if !waitFor(t, 30*time.Second, func() bool { after = rssMB(c.broker); return after < base+64 }) {
		t.Fatalf("VmRSS %d MB after, %d MB before", after, base)
	}
	line := fmt.Sprintf("%d x 500 pulls unread: VmRSS %d MB before, peak %d MB, %d MB after", n, base, peak, after)
	t.Log(line)
	if peak > base+512 {
		t.Fatalf("VmRSS peaked at %d MB (%d before)", peak, base)
	}
	officialClientWorks(t, c, 20)
	report(t, start, 84, 20, line)
}

// A 13 MB header with a million fields is refused before it is read: the
// connection is closed on its first 8 bytes. A header within the byte limit
// but with more fields than serverMaxHeaderFields is answered SYSTEM_ERROR.
func TestHostileHugeHeader(t *testing.T) {
	start := time.Now()
	c := newHostileCluster(t, "hugeheader", 0, "", "")
	var h bytes.Buffer
	h.WriteString(`{"code":105,"flag":0,"language":"GO","opaque":7,"version":317,"extFields":{"topic":"TBW102"`)
	for i := range 1_000_000 {
		fmt.Fprintf(&h, `,"k%d":"v"`, i)
	}
	h.WriteString(`}}`)
	huge := frame(serializeJSON, h.Bytes(), nil)
	fields := map[string]string{"topic": "TBW102"}
	for i := range 1000 {
		fields["k"+strconv.Itoa(i)] = "v"
	}
	var summary []string
	for _, tg := range hostileTargets(c) {
		t.Run(tg.name, func(t *testing.T) {
			base := rssMB(tg.p)
			nc, err := net.DialTimeout("tcp", tg.addr, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			t0 := time.Now()
			go func() { _, _ = nc.Write(huge) }()
			_ = nc.SetReadDeadline(time.Now().Add(20 * time.Second))
			_, err = io.Copy(io.Discard, nc)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("a %d MB header was not refused", len(huge)>>20)
			}
			took := time.Since(t0)
			requireAlive(t, c)
			after := rssMB(tg.p)
			line := fmt.Sprintf("%s: %d MB header closed after %v, VmRSS %d -> %d MB", tg.name, len(huge)>>20, took.Round(time.Millisecond), base, after)
			t.Log(line)
			summary = append(summary, line)
			if after > base+32 {
				t.Fatalf("VmRSS grew from %d to %d MB", base, after)
			}
			// Too many fields, within the byte limit: an error answer, and
			// the connection goes on.
			conn, err := net.DialTimeout("tcp", tg.addr, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			req := newRequest(tg.codeFor(), fields, nil)
			resp, err := invokeOn(conn, req, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Code != 1 {
				t.Fatalf("1000 header fields: code %d %q, want SYSTEM_ERROR (1)", resp.Code, resp.Remark)
			}
			if err := tg.probe(conn); err != nil {
				t.Fatalf("same connection after: %v", err)
			}
		})
	}
	officialClientWorks(t, c, 20)
	report(t, start, 20, 20, fmt.Sprint(summary))
}

// codeFor is a request code each server serves (for the field-limit case).
func (tg hostileTarget) codeFor() int {
	if tg.name == "broker" {
		return codeGetMaxOffset
	}
	return codeGetRouteInfoByTopic
}

// A connection nothing is read from is closed after
// serverChannelMaxIdleTimeSeconds; one that sends requests stays.
func TestHostileIdleConnection(t *testing.T) {
	start := time.Now()
	c := newHostileCluster(t, "idle", 0, "serverChannelMaxIdleTimeSeconds=2\n", "serverChannelMaxIdleTimeSeconds=2\n")
	for _, tg := range hostileTargets(c) {
		t.Run(tg.name, func(t *testing.T) {
			idle, err := net.DialTimeout("tcp", tg.addr, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer idle.Close()
			busy, err := net.DialTimeout("tcp", tg.addr, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer busy.Close()
			t0 := time.Now()
			stop, failed := make(chan struct{}), make(chan error, 1)
			go func() {
				for {
					select {
					case <-stop:
						failed <- nil
						return
					case <-time.After(300 * time.Millisecond):
					}
					if err := tg.probe(busy); err != nil {
						failed <- err
						return
					}
				}
			}()
			_ = idle.SetReadDeadline(time.Now().Add(30 * time.Second))
			_, err = io.Copy(io.Discard, idle)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatal("idle connection not closed")
			}
			took := time.Since(t0)
			close(stop)
			if err := <-failed; err != nil {
				t.Fatalf("a connection sending requests was cut: %v", err)
			}
			if took < 2*time.Second {
				t.Fatalf("idle connection closed after %v, before the 2 s limit", took)
			}
			t.Logf("%s: idle connection closed after %v", tg.name, took.Round(time.Millisecond))
			if err := tg.probe(busy); err != nil {
				t.Fatal(err)
			}
		})
	}
	officialClientWorks(t, c, 20)
	report(t, start, 20, 20, "")
}
