package compattest

// END_TRANSACTION (37) attacks over raw sockets against real processes:
// every offset, group and state a producer sends is hostile
// until checked. Each is refused with Apache's code and remark, none
// commits or resolves anything, a flood of them costs a few sampled log
// lines, and the real END_TRANSACTION still commits afterwards.

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	codeEndTransaction = 37
	codeSystemError    = 1
	sysFlagPrepared    = 4
	sysFlagCommit      = 8
	sysFlagRollback    = 12
	transOpTopic       = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
)

// halfSent is what a prepared send's answer tells the producer.
type halfSent struct {
	group       string
	queueOffset int64
	commitLog   int64 // decoded from the offset msg id, as the clients do
	uniq        string
}

// sendPrepared sends a half message of group to topic/0 as the official
// clients do (TRAN_MSG=true, PGROUP, sysFlag PREPARED) and decodes its answer.
func sendPrepared(t *testing.T, addr, topic, group string, body []byte) halfSent {
	t.Helper()
	uniqKey := fmt.Sprintf("%032X", rand.Uint64())
	resp := invokeBroker(t, addr, javaRequest(310, map[string]string{
		"a": group, "b": topic, "c": "TBW102", "d": "4", "e": "0", "f": strconv.Itoa(sysFlagPrepared),
		"g": strconv.FormatInt(time.Now().UnixMilli(), 10), "h": "0",
		"i": propsOf("TRAN_MSG", "true", "PGROUP", group, "UNIQ_KEY", uniqKey, "WAIT", "true"),
		"j": "0", "k": "false", "m": "false",
	}, body))
	if resp.Code != 0 {
		t.Fatalf("prepared send: code %d %q", resp.Code, resp.Remark)
	}
	return halfSent{group: group, queueOffset: mustInt(t, resp.ExtFields["queueOffset"]),
		commitLog: offsetOfMsgID(t, resp.ExtFields["msgId"]), uniq: resp.ExtFields["transactionId"]}
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

// offsetOfMsgID is the commit log offset in an offset message id (its last
// 16 hex digits).
func offsetOfMsgID(t *testing.T, id string) int64 {
	t.Helper()
	if len(id) != 32 && len(id) != 56 {
		t.Fatalf("offset msg id %q", id)
	}
	n, err := strconv.ParseUint(id[len(id)-16:], 16, 64)
	if err != nil {
		t.Fatalf("offset msg id %q: %v", id, err)
	}
	return int64(n)
}

func endTxReq(h halfSent, state int) *rawCmd {
	return javaRequest(codeEndTransaction, map[string]string{
		"producerGroup": h.group, "tranStateTableOffset": strconv.FormatInt(h.queueOffset, 10),
		"commitLogOffset": strconv.FormatInt(h.commitLog, 10), "commitOrRollback": strconv.Itoa(state),
		"fromTransactionCheck": "false", "msgId": h.uniq, "transactionId": h.uniq,
	}, nil)
}

// forgedHalfRecord is a V1 commit log record (IPv4 hosts) of the half
// topic, group group, queue offset 0: what a message body may carry to
// pass for a half message.
func forgedHalfRecord(group, realTopic string) []byte {
	topic, body := "RMQ_SYS_TRANS_HALF_TOPIC", []byte("forged")
	props := propsOf("PGROUP", group, "REAL_TOPIC", realTopic, "REAL_QID", "0", "TRAN_MSG", "true")
	size := 91 + len(body) + len(topic) + len(props)
	b := make([]byte, 0, size)
	be := binary.BigEndian
	b = be.AppendUint32(b, uint32(size))
	b = be.AppendUint32(b, 0xDAA320A7) // MESSAGE_MAGIC_CODE (V1)
	b = be.AppendUint32(b, 0)          // body CRC
	b = be.AppendUint32(b, 0)          // queue id
	b = be.AppendUint32(b, 0)          // flag
	b = be.AppendUint64(b, 0)          // queue offset
	b = be.AppendUint64(b, 0)          // physical offset
	b = be.AppendUint32(b, 0)          // sysFlag
	b = be.AppendUint64(b, uint64(time.Now().UnixMilli()))
	b = append(b, 127, 0, 0, 1, 0, 0, 0x27, 0x0F)
	b = be.AppendUint64(b, uint64(time.Now().UnixMilli()))
	b = append(b, 127, 0, 0, 1, 0, 0, 0x27, 0x0F)
	b = be.AppendUint32(b, 0) // reconsume times
	b = be.AppendUint64(b, 0) // prepared transaction offset
	b = be.AppendUint32(b, uint32(len(body)))
	b = append(b, body...)
	b = append(b, byte(len(topic)))
	b = append(b, topic...)
	b = be.AppendUint16(b, uint16(len(props)))
	return append(b, props...)
}

func TestTxHostileEndTransaction(t *testing.T) {
	start := time.Now()
	// No check runs during the test: only END_TRANSACTION acts.
	h := newHostile(t, "tx-hostile", "transactionTimeOut=600000\ntransactionCheckInterval=600000\n")
	addr := h.brokerAddr
	topic := uniq("TxHostile")
	createTopic(t, h.cluster, topic)
	half := sendPrepared(t, addr, topic, "PG_tx", []byte("the-half"))
	other := sendPrepared(t, addr, topic, "PG_other", []byte("other-half"))

	// A plain message of the topic whose body is a well-formed half record
	// of group PG_tx: its offset is inside a real record (88 bytes in, IPv4).
	resp := invokeBroker(t, addr, javaRequest(310, map[string]string{
		"a": "PG_plain", "b": topic, "c": "TBW102", "d": "4", "e": "0", "f": "0",
		"g": strconv.FormatInt(time.Now().UnixMilli(), 10), "h": "0", "i": propsOf("WAIT", "true"),
		"j": "0", "k": "false", "m": "false",
	}, forgedHalfRecord("PG_tx", topic)))
	if resp.Code != 0 {
		t.Fatalf("plain send: %d %q", resp.Code, resp.Remark)
	}
	plainOff := offsetOfMsgID(t, resp.ExtFields["msgId"])
	waitFor(t, 10*time.Second, func() bool { n, _ := getMaxOffset(addr, topic, 0); return n == 1 })

	const notFound = "Find prepared transaction message failed"
	with := func(edit func(r *rawCmd)) *rawCmd {
		r := endTxReq(half, sysFlagCommit)
		edit(r)
		return r
	}
	set := func(k, v string) func(*rawCmd) { return func(r *rawCmd) { r.ExtFields[k] = v } }
	for _, tc := range []struct {
		name   string
		req    *rawCmd
		remark string
	}{
		{"negative offset", with(set("commitLogOffset", "-1")), notFound},
		{"min int64", with(set("commitLogOffset", "-9223372036854775808")), notFound},
		{"past the end", with(set("commitLogOffset", "1073741824")), notFound},
		{"max int64", with(set("commitLogOffset", "9223372036854775807")), notFound},
		{"one byte into the half", with(set("commitLogOffset", strconv.FormatInt(half.commitLog+1, 10))), notFound},
		{"into the half's body", with(set("commitLogOffset", strconv.FormatInt(half.commitLog+88, 10))), notFound},
		{"a plain message", with(set("commitLogOffset", strconv.FormatInt(plainOff, 10))), notFound},
		{"a record forged in a body", with(func(r *rawCmd) {
			r.ExtFields["commitLogOffset"] = strconv.FormatInt(plainOff+88, 10)
			r.ExtFields["tranStateTableOffset"] = "0"
		}), notFound},
		{"another group's half", func() *rawCmd { r := endTxReq(other, sysFlagCommit); r.ExtFields["producerGroup"] = "PG_tx"; return r }(),
			"The producer group wrong"},
		{"rollback of another group's half", func() *rawCmd {
			r := endTxReq(other, sysFlagRollback)
			r.ExtFields["producerGroup"] = "PG_tx"
			return r
		}(), "The producer group wrong"},
		{"queue offset", with(set("tranStateTableOffset", "12345")), "The transaction state table offset wrong"},
		{"negative queue offset", with(set("tranStateTableOffset", "-1")), "The transaction state table offset wrong"},
		{"unknown state", with(set("commitOrRollback", "5")), "commitOrRollback field wrong"},
		{"offset not a number", with(set("commitLogOffset", "0x10")), ""},
		{"offset overflows", with(set("commitLogOffset", "92233720368547758070")), ""},
		{"no producer group", with(func(r *rawCmd) { delete(r.ExtFields, "producerGroup") }), "The producer group wrong"},
		{"no commit log offset", with(func(r *rawCmd) { delete(r.ExtFields, "commitLogOffset") }), ""},
		{"no state", with(func(r *rawCmd) { delete(r.ExtFields, "commitOrRollback") }), ""},
	} {
		resp := invokeBroker(t, addr, tc.req)
		expectRefused(t, tc.name, resp, codeSystemError, tc.remark)
	}

	// The pending state (0) is never answered: the next request on the
	// connection is answered first.
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	pending := endTxReq(half, 0)
	probe := newRequest(codeGetMaxOffset, map[string]string{"topic": topic, "queueId": "0"}, nil)
	if _, err := conn.Write(append(pending.encode(), probe.encode()...)); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	first, err := readFrame(conn)
	if err != nil || first.Opaque != probe.Opaque {
		t.Fatalf("after a pending END_TRANSACTION the first answer is %v (%v), want the probe's", first, err)
	}

	// A flood of one-way END_TRANSACTIONs at every kind of offset, Java's
	// form: no answer, no effect, few log lines.
	end, _ := getMaxOffset(addr, topic, 0)
	flood, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer flood.Close()
	var buf []byte
	const floods = 5000
	for i := range floods {
		r := endTxReq(half, []int{sysFlagCommit, sysFlagRollback}[i%2])
		r.Flag |= 2 // one-way
		r.ExtFields["commitLogOffset"] = strconv.FormatInt(rand.Int64N(half.commitLog+4096)-64, 10)
		if r.ExtFields["commitLogOffset"] == strconv.FormatInt(half.commitLog, 10) {
			r.ExtFields["tranStateTableOffset"] = "999"
		}
		buf = append(buf, r.encode()...)
	}
	if _, err := flood.Write(buf); err != nil {
		t.Fatal(err)
	}
	// The broker served the flood when it answers behind it on that connection.
	if _, err := getMaxOffsetOn(flood, topic, 0); err != nil {
		t.Fatalf("broker after the flood: %v", err)
	}
	requireAlive(t, h.cluster)
	if n, _ := getMaxOffset(addr, topic, 0); n != end {
		t.Fatalf("hostile END_TRANSACTIONs committed: %s/0 max offset %d, was %d", topic, n, end)
	}
	// None of them can resolve anything, whenever the workers serve them.
	if n, _ := getMaxOffset(addr, transOpTopic, 0); n != 0 {
		t.Fatalf("hostile END_TRANSACTIONs wrote %d op records", n)
	}

	// The real END_TRANSACTION commits, once.
	if resp := invokeBroker(t, addr, endTxReq(half, sysFlagCommit)); resp.Code != 0 {
		t.Fatalf("real commit: %d %q", resp.Code, resp.Remark)
	}
	if !waitFor(t, 10*time.Second, func() bool { n, _ := getMaxOffset(addr, topic, 0); return n == end+1 }) {
		t.Fatal("the real commit is not in the topic")
	}
	if n, _ := getMaxOffset(addr, transOpTopic, 0); n != 1 {
		t.Fatalf("op records after the real commit: %d, want 1", n)
	}
	pr := pullReq(topic, "CG_txh", 0, end)
	pr.ExtFields["sysFlag"] = "4" // the subscription is in the request
	pull := invokeBroker(t, addr, pr)
	if pull.Code != 0 || !strings.Contains(string(pull.Body), "the-half") {
		t.Fatalf("pulled the commit: code %d body %q", pull.Code, pull.Body)
	}

	// Log lines: refusals are sampled, not one per request.
	logged, _ := os.ReadFile(h.broker.logPath)
	if n := strings.Count(string(logged), "end transaction"); n > 100 {
		t.Errorf("%d log lines about %d hostile END_TRANSACTIONs", n, floods)
	}
	h.survive(t)
	report(t, start, floods, 0, fmt.Sprintf("hostile END_TRANSACTIONs refused; log lines %d",
		strings.Count(string(logged), "end transaction")))
}

// A producer group that never answers checks, with a producer connection
// that never reads, and thousands of half messages (a third inside a huge
// CHECK_IMMUNITY_TIME_IN_SECONDS, which Apache re-appends at every run
// without bound): the check service writes at most its budget (2000 per
// queue) into the half queue per run, the deaf connection is cut by the
// remoting limits, and the broker goes on serving.
func TestTxHostileCheckFlood(t *testing.T) {
	start := time.Now()
	const interval = 300 // ms
	h := newHostile(t, "tx-flood", fmt.Sprintf("transactionTimeOut=0\ntransactionCheckInterval=%d\n"+
		"writeBufferHighWaterMark=65536\nwriteBufferLowWaterMark=32768\nserverSlowConsumerTimeoutMillis=1000\n", interval))
	addr := h.brokerAddr
	topic := uniq("TxFlood")
	createTopic(t, h.cluster, topic)

	deaf, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer deaf.Close()
	_ = deaf.(*net.TCPConn).SetReadBuffer(4096)
	hb, _ := json.Marshal(map[string]any{"clientID": "deaf@1", "consumerDataSet": []any{},
		"producerDataSet": []any{map[string]any{"groupName": "PG_flood"}}})
	if _, err := deaf.Write(javaRequest(codeHeartbeat, nil, hb).encode()); err != nil {
		t.Fatal(err)
	}
	if !waitFor(t, 10*time.Second, func() bool {
		resp, err := rawInvoke(addr, javaRequest(204, map[string]string{"producerGroup": "PG_flood"}, nil), 5*time.Second)
		return err == nil && resp.Code == 0
	}) {
		t.Fatal("the producer group was not registered")
	}

	const n = 3000
	sender, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer sender.Close()
	var buf []byte
	for i := range n {
		props := propsOf("TRAN_MSG", "true", "PGROUP", "PG_flood", "UNIQ_KEY", fmt.Sprintf("%032X", i))
		if i%3 == 0 {
			props += propsOf("CHECK_IMMUNITY_TIME_IN_SECONDS", "1000000")
		}
		buf = append(buf, javaRequest(310, map[string]string{
			"a": "PG_flood", "b": topic, "c": "TBW102", "d": "4", "e": "0", "f": strconv.Itoa(sysFlagPrepared),
			"g": strconv.FormatInt(time.Now().UnixMilli(), 10), "h": "0", "i": props, "j": "0", "k": "false", "m": "false",
		}, []byte(strings.Repeat("x", 100))).encode()...)
	}
	first := time.Now() // no half message of the group exists before
	if _, err := sender.Write(buf); err != nil {
		t.Fatal(err)
	}
	_ = sender.SetReadDeadline(time.Now().Add(60 * time.Second))
	for range n {
		resp, err := readFrame(sender)
		if err != nil {
			t.Fatalf("prepared sends: %v", err)
		}
		if resp.Code != 0 {
			t.Fatalf("prepared send: %d %q", resp.Code, resp.Remark)
		}
	}

	// The broker closes the deaf producer's connection (its output passed
	// 4 x writeBufferHighWaterMark): the group loses it
	// (GET_PRODUCER_CONNECTION_LIST refuses a group without connections).
	producers := func() int {
		resp, err := rawInvoke(addr, javaRequest(204, map[string]string{"producerGroup": "PG_flood"}, nil), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Code
	}
	if !waitFor(t, 60*time.Second, func() bool { return producers() != 0 }) {
		t.Fatal("the deaf producer's connection was not cut")
	}
	// The broker closed its end (no process holds it: not ESTABLISHED).
	local := deaf.LocalAddr().(*net.TCPAddr).Port
	if !waitFor(t, 30*time.Second, func() bool { return !tcpEstablished(h.brokerPort, local) }) {
		t.Fatal("the broker's end of the deaf producer's connection is still established")
	}
	// The half queue grew by at most the budget per run. Runs start at
	// least interval apart, so elapsed/interval+1 bounds their number since
	// the first half message on any machine.
	max, err := getMaxOffset(addr, "RMQ_SYS_TRANS_HALF_TOPIC", 0)
	if err != nil {
		t.Fatal(err)
	}
	runs := int64(time.Since(first)/(interval*time.Millisecond)) + 1
	if grown := max - n; grown > runs*2000 {
		t.Fatalf("half queue grew by %d in at most %d runs (budget 2000 each)", grown, runs)
	}
	requireAlive(t, h.cluster)
	h.survive(t)
	report(t, start, n, 0, fmt.Sprintf("half queue %d after %d runs at most; deaf producer cut", max, runs))
}
