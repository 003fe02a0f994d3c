package compattest

// The soak's floods, from raw sockets, beside the workload until the load
// phase ends. Each is bounded in this process: a fixed number of sockets, one
// shared zero buffer for partial frames, frames built once and reused.
//
//	conn      1500 connections to the broker (past the servers' RLIMIT_NOFILE
//	          of 1024, see ROCKETGO_SOAK_NOFILE) and 500 to the name server,
//	          held 10 s, released 5 s, again
//	partial   64 connections to each server announcing a 16 MiB frame and
//	          sending all of it but the last byte; held until the server
//	          closes them or 30 s, again
//	pipeline  20 connections to the broker, each writing 500 pulls of ~256 KB
//	          answers and not reading for 30 s, again
//	header    every 5 s, a ~13 MB header of a million fields (JSON, then
//	          ROCKETMQ binary) to the broker and the name server in turn
//	filter    every 5 s, a pull with a new 8 MB TAG expression
//	names     every 3 s, hostile names (see hostileRound)

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type floodStats struct {
	opened, dialErrors, closedByServer, frames, bytes atomic.Int64
	// churn(addr) changes whenever that server is killed or back up; a dial
	// failing while it is down (odd), or a connection that lived across a
	// change, tells nothing about refusals: our kill -9 did it.
	churn func(addr string) int64
}

const (
	floodConnsBroker  = 1500
	floodConnsNamesrv = 500
	floodPartialConns = 64
	floodPipeConns    = 20
	floodPipePulls    = 500
	floodFrameLength  = 16<<20 - 4 // the largest length field either server accepts
	floodHeaderFields = 1_000_000
	floodFilterBytes  = 8 << 20
)

func (s *soak) startFloods(ctx context.Context, wg *sync.WaitGroup) {
	run := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	b, n := s.c.brokerAddr, s.c.nsAddr
	if s.cfg.floods["conn"] {
		st := s.floods["conn"]
		never := func() bool { return false }
		run(func() { connFlood(ctx, st, b, floodConnsBroker, never) })
		// The name server's connections are let go while the broker restarts:
		// a name server at its connection limit rightly refuses the broker's
		// registration too, and the broker retries only every 30 s.
		run(func() { connFlood(ctx, st, n, floodConnsNamesrv, s.restarting.Load) })
	}
	if s.cfg.floods["partial"] {
		st := s.floods["partial"]
		for i := 0; i < floodPartialConns; i++ {
			run(func() { partialFrameFlood(ctx, st, b) })
			run(func() { partialFrameFlood(ctx, st, n) })
		}
	}
	if s.cfg.floods["pipeline"] {
		st := s.floods["pipeline"]
		var pulls []byte
		for i := 0; i < floodPipePulls; i++ {
			pulls = append(pulls, soakPull(s.tFlood, "soak_flood_pull", 0, 0, "*").encode()...)
		}
		for i := 0; i < floodPipeConns; i++ {
			run(func() { pipelineFlood(ctx, st, b, pulls, floodPipePulls) })
		}
	}
	if s.cfg.floods["header"] {
		st := s.floods["header"]
		run(func() { headerFlood(ctx, st, b, n) })
	}
	if s.cfg.floods["filter"] {
		st := s.floods["filter"]
		run(func() { filterFlood(ctx, st, b, s.tFlood) })
	}
	if s.cfg.floods["names"] {
		st := s.floods["names"]
		run(func() { s.namesFlood(ctx, st) })
	}
}

// floodConn is a flood's connection, remembering the server's churn when it
// was opened.
type floodConn struct {
	net.Conn
	st    *floodStats
	addr  string
	epoch int64
}

func floodDial(ctx context.Context, st *floodStats, addr string) (*floodConn, bool) {
	epoch := st.churn(addr)
	d := net.Dialer{Timeout: 2 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		if ctx.Err() == nil && epoch%2 == 0 && st.churn(addr) == epoch {
			st.dialErrors.Add(1)
		}
		return nil, false
	}
	st.opened.Add(1)
	return &floodConn{Conn: c, st: st, addr: addr, epoch: epoch}, true
}

// cut counts err as the server closing the connection, unless it was our
// timeout, the end of the run, or a kill of the server since the dial.
func (c *floodConn) cut(ctx context.Context, err error) {
	if closedByPeer(err) && ctx.Err() == nil && c.st.churn(c.addr) == c.epoch {
		c.st.closedByServer.Add(1)
	}
}

// closedByPeer tells a connection the server closed (EOF, reset, broken pipe)
// from a timeout of ours.
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// connFlood opens up to n connections (stopping at the first refusal), holds
// them 10 s, counts those the server closed meanwhile, closes all, pauses 5 s.
// While yield() is true it holds nothing.
func connFlood(ctx context.Context, st *floodStats, addr string, n int, yield func() bool) {
	var one [1]byte
	for ctx.Err() == nil {
		for yield() && sleepCtx(ctx, 100*time.Millisecond) {
		}
		conns := make([]*floodConn, 0, n)
		for len(conns) < n && !yield() {
			c, ok := floodDial(ctx, st, addr)
			if !ok {
				break
			}
			conns = append(conns, c)
		}
		for hold := time.Now().Add(10 * time.Second); time.Now().Before(hold) && !yield(); {
			if !sleepCtx(ctx, 100*time.Millisecond) {
				break
			}
		}
		for _, c := range conns {
			_ = c.SetReadDeadline(time.Now().Add(time.Millisecond))
			_, err := c.Read(one[:])
			c.cut(ctx, err)
			c.Close()
		}
		sleepCtx(ctx, 5*time.Second)
	}
}

var floodZeros = make([]byte, 1<<20) // read-only, shared by every partial-frame writer

// partialFrameFlood announces a frame of floodFrameLength bytes and sends all
// of it but the last byte, then waits for the server to close the connection
// (at most 30 s) and starts again.
func partialFrameFlood(ctx context.Context, st *floodStats, addr string) {
	var lenBuf [4]byte
	binary.BigEndian.PutUint32(lenBuf[:], floodFrameLength)
	var one [1]byte
	for ctx.Err() == nil {
		c, ok := floodDial(ctx, st, addr)
		if !ok {
			sleepCtx(ctx, time.Second)
			continue
		}
		stop := context.AfterFunc(ctx, func() { c.Close() })
		_ = c.SetWriteDeadline(time.Now().Add(30 * time.Second))
		st.frames.Add(1)
		_, err := c.Write(lenBuf[:])
		for left := floodFrameLength - 1; err == nil && left > 0; {
			n := min(left, len(floodZeros))
			n, err = c.Write(floodZeros[:n])
			st.bytes.Add(int64(n))
			left -= n
		}
		if err == nil {
			_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
			_, err = c.Read(one[:])
		}
		c.cut(ctx, err)
		stop()
		c.Close()
		if closedByPeer(err) {
			// Cut at once (the input budget is spent): redialling without
			// a pause copies a MiB into a dying socket thousands of times a
			// second and starves the load the floods run beside.
			sleepCtx(ctx, 200*time.Millisecond)
		}
	}
}

// pipelineFlood writes count pulls and does not read the answers for 30 s.
func pipelineFlood(ctx context.Context, st *floodStats, addr string, pulls []byte, count int) {
	for ctx.Err() == nil {
		c, ok := floodDial(ctx, st, addr)
		if !ok {
			sleepCtx(ctx, time.Second)
			continue
		}
		stop := context.AfterFunc(ctx, func() { c.Close() })
		_ = c.SetWriteDeadline(time.Now().Add(30 * time.Second))
		n, err := c.Write(pulls)
		st.bytes.Add(int64(n))
		st.frames.Add(int64(n * count / len(pulls)))
		c.cut(ctx, err)
		if err == nil && sleepCtx(ctx, 30*time.Second) {
			// Did the server cut this client that does not read? Read what
			// is buffered for up to 2 s: EOF or a reset says yes.
			_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
			_, err := io.Copy(io.Discard, c)
			if err == nil {
				err = io.EOF
			}
			c.cut(ctx, err)
		}
		stop()
		c.Close()
	}
}

// hugeJSONHeader is a request whose JSON header carries floodHeaderFields
// extFields besides the ones the code needs.
func hugeJSONHeader(code int, ext map[string]string) []byte {
	var b strings.Builder
	b.Grow(14 << 20)
	fmt.Fprintf(&b, `{"code":%d,"language":"JAVA","version":409,"opaque":7,"flag":0,"extFields":{`, code)
	for k, v := range ext {
		fmt.Fprintf(&b, "%q:%q,", k, v)
	}
	for i := 0; i < floodHeaderFields; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"f`)
		b.WriteString(strconv.Itoa(i))
		b.WriteString(`":"v"`)
	}
	b.WriteString("}}")
	return frame(serializeJSON, []byte(b.String()), nil)
}

// hugeBinaryHeader is the same in the ROCKETMQ binary header layout: code,
// language, version, opaque, flag, remark length, ext length, then each
// field as a 2-byte key length, key, 4-byte value length, value.
func hugeBinaryHeader(code int, ext map[string]string) []byte {
	var fields []byte
	put := func(k, v string) {
		fields = binary.BigEndian.AppendUint16(fields, uint16(len(k)))
		fields = append(fields, k...)
		fields = binary.BigEndian.AppendUint32(fields, uint32(len(v)))
		fields = append(fields, v...)
	}
	for k, v := range ext {
		put(k, v)
	}
	for i := 0; i < floodHeaderFields; i++ {
		put("f"+strconv.Itoa(i), "v")
	}
	h := binary.BigEndian.AppendUint16(nil, uint16(code))
	h = append(h, 0) // JAVA
	h = binary.BigEndian.AppendUint16(h, 409)
	h = binary.BigEndian.AppendUint32(h, 8) // opaque
	h = binary.BigEndian.AppendUint32(h, 0) // flag
	h = binary.BigEndian.AppendUint32(h, 0) // remark length
	h = binary.BigEndian.AppendUint32(h, uint32(len(fields)))
	h = append(h, fields...)
	return frame(serializeRocketMQ, h, nil)
}

// oneShot writes a frame on a new connection and waits up to 20 s for an
// answer or the server closing the connection.
func oneShot(ctx context.Context, st *floodStats, addr string, f []byte) {
	c, ok := floodDial(ctx, st, addr)
	if !ok {
		return
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	n, err := c.Write(f)
	st.bytes.Add(int64(n))
	if err == nil {
		st.frames.Add(1)
		_, err = readFrame(c)
	}
	c.cut(ctx, err)
}

func headerFlood(ctx context.Context, st *floodStats, broker, ns string) {
	bext := map[string]string{"topic": "TBW102", "queueId": "0"}
	next := map[string]string{"topic": "TBW102"}
	frames := []struct {
		addr string
		f    []byte
	}{
		{broker, hugeJSONHeader(30, bext)},
		{ns, hugeJSONHeader(105, next)},
		{broker, hugeBinaryHeader(30, bext)},
		{ns, hugeBinaryHeader(105, next)},
	}
	for i := 0; sleepCtx(ctx, 5*time.Second); i++ {
		x := frames[i%len(frames)]
		oneShot(ctx, st, x.addr, x.f)
	}
}

// filterFlood pulls with a TAG expression of ~8 MB that is new each time
// (distinct tags), so a filter cache counting entries, not bytes, grows.
func filterFlood(ctx context.Context, st *floodStats, broker, topic string) {
	var b strings.Builder
	for round := 0; sleepCtx(ctx, 5*time.Second); round++ {
		b.Reset()
		b.Grow(floodFilterBytes + 64)
		b.WriteString("TagF")
		for i := 0; b.Len() < floodFilterBytes; i++ {
			fmt.Fprintf(&b, "||x%d_%d", round, i)
		}
		oneShot(ctx, st, broker, soakPull(topic, "soak_flood_filter", 0, 0, b.String()).encode())
	}
}

// ---------------------------------------------------------------------------
// hostile names

// Paths the store builds from a name are <store>/consumequeue/<topic>/<queue>,
// so no name here climbs above the store's parent directory even on a server
// that does not validate: "../../x" from consumequeue is <store>/../x, and a
// group "soak/../../../x" makes %RETRY%soak/../../../x the same. The store
// guard then sees what appeared next to the store.
var hostileGroups = []string{"soak/slash", "soak\x01ctrl\x7f", "soak/../../../evil-hb", "soak\nline"}

func hostileHeartbeat(group, topic string) []byte {
	hb := map[string]any{
		"clientID":        "soak-hostile@" + strconv.Itoa(os.Getpid()),
		"producerDataSet": []map[string]any{{"groupName": group}},
		"consumerDataSet": []map[string]any{{
			"groupName": group, "consumeType": "CONSUME_PASSIVELY", "messageModel": "CLUSTERING",
			"consumeFromWhere": "CONSUME_FROM_LAST_OFFSET", "unitMode": false,
			"subscriptionDataSet": []map[string]any{{
				"topic": topic, "subString": "*", "tagsSet": []string{}, "codeSet": []int{},
				"subVersion": time.Now().UnixMilli(), "expressionType": "TAG", "classFilterMode": false,
			}},
		}},
	}
	b, _ := json.Marshal(hb) // control characters come out as \u0001 etc.
	return b
}

// soakSendV2 is SEND_MESSAGE_V2 (310) with raw properties.
func soakSendV2(topic string, queueID int, props string, body []byte) *rawCmd {
	return javaRequest(310, map[string]string{
		"a": "soak-hostile-pg", "b": topic, "c": "TBW102", "d": "4", "e": strconv.Itoa(queueID), "f": "0",
		"g": strconv.FormatInt(time.Now().UnixMilli(), 10), "h": "0",
		"i": props + "\x02UNIQ_KEY\x01" + fmt.Sprintf("%032X", time.Now().UnixNano()),
		"j": "0", "k": "false", "m": "false",
	}, body)
}

type hostileReq struct {
	name string
	req  func() *rawCmd
}

func (s *soak) hostileRound() []hostileReq {
	var rs []hostileReq
	for _, g := range hostileGroups {
		rs = append(rs, hostileReq{fmt.Sprintf("34 HEARTBEAT group %q", g), func() *rawCmd {
			return javaRequest(34, nil, hostileHeartbeat(g, s.tMain))
		}})
	}
	ctrl := hostileGroups[1]
	rs = append(rs, hostileReq{fmt.Sprintf("15 UPDATE_CONSUMER_OFFSET group %q", ctrl), func() *rawCmd {
		return javaRequest(15, map[string]string{"consumerGroup": ctrl, "topic": s.tMain, "queueId": "0", "commitOffset": "1"}, nil)
	}})
	for _, sb := range []struct{ group, level string }{
		{"soak/../../../evil-retry", "0"}, {"soak/../../../evil-dlq", "-1"}, {"soak\x02sendback", "0"},
	} {
		rs = append(rs, hostileReq{fmt.Sprintf("36 CONSUMER_SEND_MSG_BACK group %q delayLevel %s", sb.group, sb.level), func() *rawCmd {
			return javaRequest(36, map[string]string{
				"group": sb.group, "offset": strconv.FormatInt(s.floodPhy, 10), "delayLevel": sb.level,
				"originTopic": s.tFlood, "unitMode": "false", "maxReconsumeTimes": "16",
			}, nil)
		}})
	}
	huge := "SoakHugeQueues_" + strconv.Itoa(os.Getpid())
	rs = append(rs,
		hostileReq{"17 UPDATE_AND_CREATE_TOPIC queues 2147483647", func() *rawCmd {
			return createTopicReq(huge, 2147483647, 2147483647)
		}},
		hostileReq{"202 GET_TOPIC_STATS_INFO of that topic", func() *rawCmd {
			return javaRequest(202, map[string]string{"topic": huge}, nil)
		}},
		hostileReq{`17 UPDATE_AND_CREATE_TOPIC "../../evil-create"`, func() *rawCmd {
			return createTopicReq("../../evil-create", 1, 1)
		}},
		hostileReq{`310 SEND to "../../evil-create"`, func() *rawCmd {
			return soakSendV2("../../evil-create", 0, "TAGS\x01t", []byte("hostile"))
		}},
		hostileReq{"17 UPDATE_AND_CREATE_TOPIC SCHEDULE_TOPIC_XXXX perm 2, 1 queue", func() *rawCmd {
			return createTopicReq("SCHEDULE_TOPIC_XXXX", 1, 1)
		}},
		hostileReq{`310 SEND to rmq_sys_wheel_timer REAL_TOPIC "../../evil-timer"`, func() *rawCmd {
			props := "TIMER_OUT_MS\x01" + strconv.FormatInt(time.Now().Add(time.Second).UnixMilli(), 10) +
				"\x02REAL_TOPIC\x01../../evil-timer\x02REAL_QID\x010"
			return soakSendV2("rmq_sys_wheel_timer", 0, props, []byte("hostile"))
		}},
		hostileReq{`310 SEND to SCHEDULE_TOPIC_XXXX REAL_TOPIC "../../evil-delay"`, func() *rawCmd {
			return soakSendV2("SCHEDULE_TOPIC_XXXX", 0, "REAL_TOPIC\x01../../evil-delay\x02REAL_QID\x010", []byte("hostile"))
		}},
		hostileReq{`215 DELETE_TOPIC_IN_BROKER "../../sentinel"`, func() *rawCmd {
			return javaRequest(215, map[string]string{"topic": "../../sentinel"}, nil)
		}},
		hostileReq{`215 DELETE_TOPIC_IN_BROKER ".."`, func() *rawCmd {
			return javaRequest(215, map[string]string{"topic": ".."}, nil)
		}},
	)
	return rs
}

// namesFlood sends one round of hostile requests every 3 s on one
// connection, reconnecting when the broker closed it (or was killed).
func (s *soak) namesFlood(ctx context.Context, st *floodStats) {
	var c *floodConn
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	for sleepCtx(ctx, 3*time.Second) {
		for _, h := range s.hostileRound() {
			if ctx.Err() != nil {
				return
			}
			if c == nil {
				var ok bool
				if c, ok = floodDial(ctx, st, s.c.brokerAddr); !ok {
					s.hostile.note(h.name, nil, errors.New("broker not reachable"))
					continue
				}
			}
			req := h.req()
			resp, err := invokeOn(c, req, 5*time.Second)
			st.frames.Add(1)
			st.bytes.Add(int64(len(req.Body) + 200))
			s.hostile.note(h.name, resp, err)
			if err != nil {
				c.cut(ctx, err)
				c.Close()
				c = nil
			}
		}
	}
}
