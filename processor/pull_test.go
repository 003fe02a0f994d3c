package processor

import (
	"bytes"
	"context"
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// startBroker serves a broker with the processor table and returns a
// client for it.
func startBroker(t *testing.T) (*broker.Broker, *remoting.Client) {
	t.Helper()
	return serveBroker(t, nil, nil)
}

func pullReq(topic string, offset int64, sysFlag int32, sub string) *remoting.Command {
	req := remoting.NewRequest(remoting.PullMessage, map[string]string{
		"consumerGroup":        "G",
		"topic":                topic,
		"queueId":              "0",
		"queueOffset":          strconv.FormatInt(offset, 10),
		"maxMsgNums":           "32",
		"sysFlag":              strconv.Itoa(int(sysFlag)),
		"commitOffset":         "0",
		"suspendTimeoutMillis": "5000",
		"subscription":         sub,
		"subVersion":           "0",
		"expressionType":       "TAG",
	}, nil)
	req.Language, req.Version = remoting.LangGo, 317
	return req
}

// putBig stores n messages of 2 KiB in one batch, so a parked pull woken by
// their dispatch finds them all.
func putBig(t *testing.T, b *broker.Broker, topic string, from, n int) {
	t.Helper()
	h := netip.MustParseAddrPort("127.0.0.1:1234")
	ms := make([]store.PutMessage, 0, n)
	for i := from; i < from+n; i++ {
		body := bytes.Repeat([]byte{byte('a' + i%26)}, 2<<10)
		ms = append(ms, store.PutMessage{Topic: topic, Body: body, BornHost: h, StoreHost: h,
			Properties: string(message.AppendProperty(nil, message.PropTags, "TagA")), BornTimestamp: int64(i)})
	}
	if _, err := b.Store.PutBatch(ms, nil); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { return b.Store.MaxOffset(topic, 0) == int64(from+n) })
}

// checkRecords decodes a pull answer's body and compares it with what the
// store copies out for the same query.
func checkRecords(t *testing.T, b *broker.Broker, resp *remoting.Command, topic string, offset int64, want int) {
	t.Helper()
	expectCode(t, resp, remoting.Success)
	n := 0
	for rest := resp.Body; len(rest) > 0; n++ {
		r, next, err := message.DecodeRecord(rest)
		if err != nil || r.QueueOffset != offset+int64(n) || len(r.Body) != 2<<10 {
			t.Fatalf("record %d: queue offset %d, %d bytes: %v", n, r.QueueOffset, len(r.Body), err)
		}
		rest = next
	}
	if n != want {
		t.Fatalf("%d records, want %d", n, want)
	}
	c := b.Store.GetMessages(nil, topic, 0, offset, want, 1<<30, nil)
	if !bytes.Equal(c.Body, resp.Body) {
		t.Fatal("the answer differs from the stored records")
	}
}

// Pull answers leave the mapped commit log by writev, inline and late
// (long poll answered from Holds), and give their files back once written.
func TestPullFromMappedCommitLog(t *testing.T) {
	b, cl := startBroker(t)
	if err := b.Topics.Put(tables.TopicConfig{TopicName: "T", ReadQueueNums: 1, WriteQueueNums: 1,
		Perm: message.PermRead | message.PermWrite}); err != nil {
		t.Fatal(err)
	}
	putBig(t, b, "T", 0, 40)
	held := func() bool { return b.Store.HeldCommitLogFiles() == 0 }

	// Inline: 32 × 2 KiB, above the size remoting copies.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cl.Invoke(ctx, b.Config().Addr(), pullReq("T", 0, pullSubscription, "*"))
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, b, resp, "T", 0, 32)
	testutil.WaitFor(t, 5*time.Second, held)

	// Nothing matches: no answer body, nothing held.
	resp, err = cl.Invoke(ctx, b.Config().Addr(), pullReq("T", 0, pullSubscription, "TagZ"))
	if err != nil {
		t.Fatal(err)
	}
	expectCode(t, resp, remoting.PullRetryImmediately)
	testutil.WaitFor(t, 5*time.Second, held)

	// Late: a pull at the end of the queue parks (holding nothing); the
	// answer to a request sent behind it on the same connection proves it
	// did. Then messages arrive and Holds answers through AsyncWritev.
	conn, err := net.Dial("tcp", b.Config().Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	pull := pullReq("T", 40, pullSubscription|pullSuspend, "*")
	pull.Opaque = 1
	probe := remoting.NewRequest(9999, nil, nil)
	probe.Opaque = 2
	if _, err := conn.Write(remoting.AppendFrame(remoting.AppendFrame(nil, pull), probe)); err != nil {
		t.Fatal(err)
	}
	if r := readFrame(t, conn); r.Opaque != 2 {
		t.Fatalf("first answer opaque %d code %d: the pull did not park", r.Opaque, r.Code)
	}
	if !held() {
		t.Fatal("a parked pull holds a commit log file")
	}
	putBig(t, b, "T", 40, 32)
	r := readFrame(t, conn)
	if r.Opaque != 1 {
		t.Fatalf("answer opaque %d", r.Opaque)
	}
	checkRecords(t, b, r, "T", 40, 32)
	testutil.WaitFor(t, 5*time.Second, held)
}

func readFrame(t *testing.T, conn net.Conn) *remoting.Command {
	t.Helper()
	c, err := remoting.ReadFrame(conn)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
