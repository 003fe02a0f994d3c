package processor

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// txConn is a producer's connection: requests out, frames in.
type txConn struct {
	t  *testing.T
	nc net.Conn
	op int32
}

func dialTx(t *testing.T, b *broker.Broker) *txConn {
	t.Helper()
	nc, err := net.Dial("tcp", b.Config().Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	return &txConn{t: t, nc: nc, op: 100}
}

func (c *txConn) write(req *remoting.Command) int32 {
	c.t.Helper()
	c.op++
	req.Opaque = c.op
	if _, err := c.nc.Write(remoting.AppendFrame(nil, req)); err != nil {
		c.t.Fatal(err)
	}
	return req.Opaque
}

// next reads frames until one satisfies want (20 s at most).
func (c *txConn) next(want func(*remoting.Command) bool) *remoting.Command {
	c.t.Helper()
	if err := c.nc.SetReadDeadline(time.Now().Add(20 * time.Second)); err != nil {
		c.t.Fatal(err)
	}
	for {
		f, err := remoting.ReadFrame(c.nc)
		if err != nil {
			c.t.Fatalf("reading: %v", err)
		}
		if want(f) {
			return f
		}
	}
}

func (c *txConn) call(req *remoting.Command) *remoting.Command {
	c.t.Helper()
	op := c.write(req)
	return c.next(func(f *remoting.Command) bool { return f.IsResponse() && f.Opaque == op })
}

func txBrokerServed(t *testing.T) *broker.Broker {
	t.Helper()
	b := runBroker(t, func(c *broker.Config) {
		c.TransactionTimeOut = 0
		c.TransactionCheckInterval = 50
	}, nil)
	if err := b.Topics.Put(tables.TopicConfig{TopicName: "T", ReadQueueNums: 4, WriteQueueNums: 4,
		Perm: message.PermRead | message.PermWrite}); err != nil {
		t.Fatal(err)
	}
	return b
}

func preparedSend(group string) *remoting.Command {
	return remoting.NewRequest(remoting.SendMessageV2, map[string]string{"a": group, "b": "T", "c": "TBW102", "d": "4",
		"e": "2", "f": strconv.Itoa(int(message.TransactionPrep)), "g": strconv.FormatInt(time.Now().UnixMilli(), 10), "h": "7",
		"i": "TRAN_MSG\x01true\x02PGROUP\x01" + group + "\x02UNIQ_KEY\x01U-1\x02WAIT\x01true\x02"}, []byte("tx-body"))
}

// The check service asks the producer group's connection about an old half
// message with CHECK_TRANSACTION_STATE (one-way, header and body as Apache
// 5.3.3 sends them), and the answer (END_TRANSACTION, request form, from
// the check) commits the message.
func TestCheckTransactionStateRoundTrip(t *testing.T) {
	b := txBrokerServed(t)
	c := dialTx(t, b)
	hb, _ := json.Marshal(map[string]any{"clientID": "p@1", "producerDataSet": []any{map[string]any{"groupName": "PG"}}})
	expectCode(t, c.call(remoting.NewRequest(remoting.HeartBeat, nil, hb)), remoting.Success)
	sent := c.call(preparedSend("PG"))
	expectCode(t, sent, remoting.Success)

	chk := c.next(func(f *remoting.Command) bool { return !f.IsResponse() && f.Code == remoting.CheckTransactionState })
	if !chk.IsOneway() {
		t.Errorf("check not one-way: flag %d", chk.Flag)
	}
	h := chk.FieldMap()
	_, copyOff, err := message.DecodeOffsetMsgID(h["offsetMsgId"])
	if err != nil || h["commitLogOffset"] != strconv.FormatInt(copyOff, 10) || h["tranStateTableOffset"] != "1" ||
		h["msgId"] != "U-1" || h["transactionId"] != "U-1" || h["topic"] != message.TransHalfTopic || h["bname"] != "b" {
		t.Fatalf("check header %v (%v)", h, err)
	}
	rec, _, err := message.DecodeRecord(chk.Body)
	if err != nil {
		t.Fatal(err)
	}
	p := message.ParseProperties(rec.Properties)
	if rec.Topic != "T" || rec.QueueID != 2 || rec.QueueOffset != 1 || rec.PhysicalOffset != copyOff || rec.Flag != 7 ||
		string(rec.Body) != "tx-body" || p["PGROUP"] != "PG" || p["UNIQ_KEY"] != "U-1" ||
		p["TRANSACTION_CHECK_TIMES"] != "1" || p["WAIT"] != "false" {
		t.Fatalf("check body: topic %s queue %d offsets %d/%d flag %d body %q props %v", rec.Topic, rec.QueueID,
			rec.QueueOffset, rec.PhysicalOffset, rec.Flag, rec.Body, p)
	}

	end := remoting.NewRequest(remoting.EndTransaction, map[string]string{"producerGroup": "PG",
		"tranStateTableOffset": h["tranStateTableOffset"], "commitLogOffset": h["commitLogOffset"],
		"commitOrRollback": "8", "fromTransactionCheck": "true", "msgId": "U-1", "transactionId": "U-1"}, nil)
	expectCode(t, c.call(end), remoting.Success)
	testutil.WaitFor(t, 10*time.Second, func() bool { return b.Store.MaxOffset("T", 2) == 1 })
}

// Java's one-way END_TRANSACTION gets no answer and commits; the pending
// state gets no answer in either form.
func TestEndTransactionOneway(t *testing.T) {
	b := runBroker(t, nil, nil)
	if err := b.Topics.Put(tables.TopicConfig{TopicName: "T", ReadQueueNums: 4, WriteQueueNums: 4,
		Perm: message.PermRead | message.PermWrite}); err != nil {
		t.Fatal(err)
	}
	c := dialTx(t, b)
	sent := c.call(preparedSend("PG"))
	expectCode(t, sent, remoting.Success)
	_, off, err := message.DecodeOffsetMsgID(sent.Str("msgId"))
	if err != nil {
		t.Fatal(err)
	}
	endReq := func(state string, oneway bool) *remoting.Command {
		r := remoting.NewRequest(remoting.EndTransaction, map[string]string{"producerGroup": "PG",
			"tranStateTableOffset": sent.Str("queueOffset"), "commitLogOffset": strconv.FormatInt(off, 10),
			"commitOrRollback": state, "msgId": "U-1"}, nil)
		if oneway {
			r.Flag |= remoting.FlagOneway
		}
		return r
	}
	pending := c.write(endReq("0", false))
	c.write(endReq("8", true))
	probe := c.write(remoting.NewRequest(remoting.GetMaxOffset, map[string]string{"topic": "T", "queueId": "2"}, nil))
	got := c.next(func(f *remoting.Command) bool { return f.IsResponse() })
	if got.Opaque != probe {
		t.Fatalf("first answer opaque %d (pending %d, probe %d)", got.Opaque, pending, probe)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return b.Store.MaxOffset("T", 2) == 1 })
	testutil.WaitFor(t, 10*time.Second, func() bool { return b.Store.MaxOffset(message.TransOpHalfTopic, 0) == 1 })
}
