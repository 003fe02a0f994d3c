package compattest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// The Helm chart's preStop, docker/image/bin/mqbroker-drain, run on the
// host against a real name server and broker with Go's mqadmin: the
// broker is routed read-only at once; while an official Go push consumer
// online holds its next messages unconsumed, the drain waits; once it
// consumes them, the drain ends with "drained".
func TestDrainWaitsForConsumers(t *testing.T) {
	c := newCluster(t, "drain")
	topic, group := uniq("DrainT"), uniq("DrainG")
	createTopic(t, c, topic)
	const n = 20
	p := newProducer(t, c)
	p.mustSend(t, primitive.NewMessage(topic, []byte("first")))

	release := make(chan struct{})
	var entered sync.Once
	held := make(chan struct{})
	var consumed atomic.Int64
	var first atomic.Bool
	pc, err := rocketmq.NewPushConsumer(consumer.WithNsResolver(resolver(c)), consumer.WithGroupName(group),
		consumer.WithInstance(uniq("drain")), consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"},
		func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			for _, m := range msgs {
				if string(m.Body) == "first" {
					first.Store(true)
					continue
				}
				entered.Do(func() { close(held) })
				<-release
				consumed.Add(1)
			}
			return consumer.ConsumeSuccess, nil
		}); err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(); err != nil {
		t.Fatal(err)
	}
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
		_ = pc.Shutdown()
	})
	// A group's lag counts on the queues it has an offset for (Apache's
	// GET_CONSUME_STATS), as every group that consumed before has.
	if !waitFor(t, 60*time.Second, func() bool {
		out, err := exec.Command(filepath.Join(binDir, "mqadmin"), "consumerProgress", "-n", c.nsAddr, "-g", group).CombinedOutput()
		return first.Load() && err == nil && strings.Contains(string(out), topic)
	}) {
		t.Fatalf("the group's first offset never reached the broker (first consumed: %v)", first.Load())
	}
	for i := 0; i < n; i++ {
		p.mustSend(t, primitive.NewMessage(topic, []byte("held")))
	}
	select {
	case <-held:
	case <-time.After(60 * time.Second):
		t.Fatal("the consumer got no message in 60 s")
	}

	// The image's layout: ROCKETMQ_HOME/lib/mqadmin.
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(binDir, "mqadmin"), filepath.Join(home, "lib", "mqadmin")); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("..", "docker", "image", "bin", "mqbroker-drain"))
	if err != nil {
		t.Fatal(err)
	}
	var out lockedBuffer
	cmd := exec.Command("sh", script, "90")
	cmd.Env = append(os.Environ(), "ROCKETMQ_HOME="+home, "BROKER_ADDR="+c.brokerAddr, "NAMESRV_ADDR="+c.nsAddr)
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
	})

	if ok, last := waitPerm(t, c, topic, 4); !ok {
		t.Fatalf("the drain never made the route read-only (perm 4): %s\n%s", last, out.String())
	}
	// Three of its 2 s polls see the lag.
	select {
	case err := <-exited:
		t.Fatalf("the drain ended (%v) with %d of %d messages consumed:\n%s", err, consumed.Load(), n, out.String())
	case <-time.After(6 * time.Second):
	}
	close(release)
	released = true
	waited := time.Since(start)
	select {
	case err := <-exited:
		if err != nil || !strings.Contains(out.String(), "drained in") {
			t.Fatalf("drain: %v\n%s", err, out.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the drain did not end within 60 s of the consumer catching up:\n%s", out.String())
	}
	if got := consumed.Load(); got != n {
		t.Fatalf("consumed %d of %d", got, n)
	}
	t.Logf("drain: waited %s with the messages held, ended %s after they were consumed",
		waited.Round(time.Millisecond), (time.Since(start) - waited).Round(time.Millisecond))
}
