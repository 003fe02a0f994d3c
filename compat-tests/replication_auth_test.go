package compattest

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// TestReplicationAuthenticated: a SYNC_MASTER and its slave with the same
// haAuthSecret replicate, and the HA port serves nobody else: a stranger
// that connects and reports offset 0 gets the 21-byte challenge and
// nothing of the commit log, and is closed within the challenge's 5 s; a
// slave with another secret is refused and copies nothing; 200
// connections opened at once do not stop the slave acknowledging SYNC_MASTER
// sends.
func TestReplicationAuthenticated(t *testing.T) {
	t.Parallel()
	haPort, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	const secret = "haAuthSecret=ha-secret-1\n"
	c := newClusterConf(t, uniq("haauth"), replConf+fmt.Sprintf("brokerRole=SYNC_MASTER\nslaveTimeout=3000\nhaListenPort=%d\n", haPort)+secret)
	haAddr := fmt.Sprintf("127.0.0.1:%d", haPort)
	startSlave(t, c, secret)
	wrong := startPeer(t, c, "wrongslave", "brokerId=2\nbrokerRole=SLAVE\nslaveSynchronizePeriod=1000\nhaAuthSecret=not-the-secret\n")
	topic := uniq("HAAuth")
	createTopic(t, c, topic, admin.WithReadQueueNums(1), admin.WithWriteQueueNums(1))
	p := newProducer(t, c)
	body := "secret-body-" + uniq("b")
	if !waitFor(t, 30*time.Second, func() bool {
		r, err := p.sendSync(context.Background(), newMsg(topic, body, ""))
		return err == nil && r.Status == primitive.SendOK
	}) {
		t.Fatal("SYNC_MASTER never acknowledged a send with its authenticated slave")
	}

	// A stranger reports offset 0 and reads what it gets.
	conn, err := net.DialTimeout("tcp", haAddr, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var report [8]byte
	binary.BigEndian.PutUint64(report[:], 0)
	if _, err := conn.Write(report[:]); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, _ := io.ReadAll(conn)
	conn.Close()
	if len(got) > 21 || strings.Contains(string(got), body) {
		t.Fatalf("a stranger read %d bytes from the HA port (the challenge is 21)", len(got))
	}

	// The slave with the wrong secret copies nothing.
	time.Sleep(3 * time.Second)
	info, err := runtimeInfo(wrong.addr)
	if err != nil {
		t.Fatal(err)
	}
	if off, _ := strconv.ParseInt(info["commitLogMaxOffset"], 10, 64); off != 0 {
		t.Fatalf("the slave with the wrong secret holds %d bytes of commit log", off)
	}
	if log, _ := os.ReadFile(filepath.Join(c.dir, "broker.log")); !strings.Contains(string(log), "not authenticated") {
		t.Error("the master did not log the refused slave")
	}

	// 200 connections at once, held open, while sends go on.
	var flood []net.Conn
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c, err := net.DialTimeout("tcp", haAddr, 3*time.Second); err == nil {
				mu.Lock()
				flood = append(flood, c)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	defer func() {
		for _, c := range flood {
			c.Close()
		}
	}()
	for i := range 20 {
		r, err := p.sendSync(context.Background(), newMsg(topic, "flood-"+strconv.Itoa(i), ""))
		if err != nil || r.Status != primitive.SendOK {
			t.Fatalf("send %d during the flood: %+v %v", i, r, err)
		}
	}
	t.Logf("stranger read %d bytes; wrong-secret slave at offset 0; 20 SYNC_MASTER sends acked during a 200-connection flood (%d connected)", len(got), len(flood))
}
