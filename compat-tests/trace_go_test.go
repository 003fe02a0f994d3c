package compattest

// The Go client's trace (rocketmq-client-go/v2 WithTrace) on rocketgo and on
// Apache: its records (its own encoding: Pub and SubBefore carry a trailing
// client host) must land the same on both, and mqadmin's queryMsgTraceById
// (5.3.3 tools) must read them the same. The client keeps one trace client
// per process (instance INNER_TRACE_CLIENT_DEFAULT), bound to the first name
// server it was given: each target's clients run in a process of their own,
// this test binary run again for TestTraceGoClient.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

const goTraceCount = 3

// runGoTrace runs TestTraceGoClient against tg in a child process, then
// reads the trace topic and queries each message's trace with mqadmin.
func runGoTrace(t *testing.T, tg target, run string, ja *javaAdmin) *traceRun {
	t.Helper()
	topic := "trace-go-" + run
	createTopic4(t, tg, topic)
	cmd := exec.Command(os.Args[0], "-test.run=^TestTraceGoClient$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "ROCKETGO_TRACE_GO_CHILD=1", "ROCKETGO_TRACE_GO_NS="+tg.nsAddr,
		"ROCKETGO_TRACE_GO_TOPIC="+topic, "ROCKETGO_TRACE_GO_RUN="+run, "ROCKETGO_BIN_DIR="+binDir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: the traced Go clients failed: %v\n%s", tg.name, err, tail(string(out), 40))
	}
	r := &traceRun{tg: tg, run: run, ids: map[string]string{}, admin: map[string]string{}}
	var msgIDs []string
	for _, m := range traceMsgLine.FindAllStringSubmatch(string(out), -1) {
		r.ids[m[4]] = "<msg" + m[3] + ">"
		r.ids[m[5]] = "<offsetMsgId" + m[3] + ">"
		msgIDs = append(msgIDs, m[4])
	}
	if len(msgIDs) != goTraceCount {
		t.Fatalf("%s: the traced Go producer reported %d sends:\n%s", tg.name, len(msgIDs), tail(string(out), 40))
	}
	r.collect(t, defaultTraceTopic, []string{"Pub", "SubBefore", "SubAfter"})
	for _, id := range msgIDs {
		var out string
		waitFor(t, 20*time.Second, func() bool {
			out = ja.run(t, []string{"queryMsgTraceById", "-n", tg.nsAddr, "-i", id})
			return adminShows(out)
		})
		r.admin[r.ids[id]] = r.normalizeAdmin(out)
	}
	t.Logf("%s Go client: %d trace records, %d queryMsgTraceById outputs", tg.name, len(r.records), len(r.admin))
	return r
}

// TestTraceGoClient is the child process of runGoTrace: a traced Go producer
// sends goTraceCount messages ("MSG go go i msgId offsetMsgId" lines), a
// traced push consumer reads them, and both stay up until the records are
// in the trace topic.
func TestTraceGoClient(t *testing.T) {
	if os.Getenv("ROCKETGO_TRACE_GO_CHILD") == "" {
		t.Skip("the child process of TestTrace/go")
	}
	ns, topic, run := os.Getenv("ROCKETGO_TRACE_GO_NS"), os.Getenv("ROCKETGO_TRACE_GO_TOPIC"), os.Getenv("ROCKETGO_TRACE_GO_RUN")
	resolver := primitive.NewPassthroughResolver([]string{ns})
	traceCfg := func(group string) *primitive.TraceConfig {
		return &primitive.TraceConfig{GroupName: group, Access: primitive.Local, Resolver: resolver}
	}
	p, err := rocketmq.NewProducer(producer.WithNsResolver(resolver), producer.WithGroupName("go-trace-pg-"+run),
		producer.WithInstanceName("go-trace-prod-"+run), producer.WithTrace(traceCfg("go-trace-pg-"+run)))
	if err != nil {
		t.Fatalf("NewProducer: %v", err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("producer.Start: %v", err)
	}
	defer func() { _ = p.Shutdown() }()
	var ids []string
	for i := 0; i < goTraceCount; i++ {
		m := primitive.NewMessage(topic, []byte(fmt.Sprintf("go-trace-body-%d", i)))
		m.WithTag("TagG")
		m.WithKeys([]string{fmt.Sprintf("gkey-%d", i), fmt.Sprintf("gkey2-%d", i)})
		res, err := p.SendSync(context.Background(), m)
		if err != nil || res.Status != primitive.SendOK {
			t.Fatalf("traced send %d: %v %v", i, res, err)
		}
		fmt.Printf("MSG go go %d %s %s\n", i, res.MsgID, res.OffsetMsgID)
		ids = append(ids, res.MsgID)
	}

	var mu sync.Mutex
	seen := map[string]bool{}
	pc, err := rocketmq.NewPushConsumer(consumer.WithNsResolver(resolver), consumer.WithGroupName("go-trace-cg-"+run),
		consumer.WithInstance("go-trace-cons-"+run), consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithTrace(traceCfg("go-trace-cg-"+run)))
	if err != nil {
		t.Fatalf("NewPushConsumer: %v", err)
	}
	err = pc.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"},
		func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range msgs {
				seen[m.MsgId] = true
			}
			return consumer.ConsumeSuccess, nil
		})
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	if err := pc.Start(); err != nil {
		t.Fatalf("consumer.Start: %v", err)
	}
	defer func() { _ = pc.Shutdown() }()
	if !waitFor(t, 60*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) >= goTraceCount
	}) {
		t.Fatalf("the traced Go consumer got %d of %d messages", len(seen), goTraceCount)
	}
	// The dispatcher sends every 5 ms; its sends are asynchronous and a
	// shutdown drops those in flight: wait for the consumer's records.
	tg := target{name: "child", nsAddr: ns}
	r := &traceRun{tg: tg, ids: map[string]string{}}
	for i, id := range ids {
		r.ids[id] = fmt.Sprintf("<msg%d>", i)
	}
	r.collect(t, defaultTraceTopic, []string{"Pub", "SubBefore", "SubAfter"})
}

// adminShows reports whether a queryMsgTraceById output has the producer's
// and the consumer's rows.
func adminShows(out string) bool {
	pub, sub := false, false
	for _, l := range lines(out) {
		if m := adminRow.FindStringSubmatch(l); m != nil {
			pub = pub || m[1] == "Pub"
			sub = sub || m[1] == "Sub"
		}
	}
	return pub && sub
}
