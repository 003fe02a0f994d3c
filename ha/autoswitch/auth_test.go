package autoswitch

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/ha"
)

// With AuthSecret a master serves the slave that holds it, and a stranger
// sending a slave's handshake gets nothing but the challenge.
func TestAuthenticatedSlave(t *testing.T) {
	cfg := testConfig()
	cfg.AuthSecret = []byte("s3cret")
	m := openNode(t, cfg)
	m.master(t, 1, 1, []int64{1}, 1)
	put(t, m.st, 0, 100, 2)

	c, err := net.Dial("tcp", m.svc.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(AppendSlaveHandshake(nil, false, false, 2)); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(ha.AuthTimeout + 2*time.Second))
	if got, _ := io.ReadAll(c); len(got) != 21 {
		t.Fatalf("a stranger read %d bytes, want only the 21-byte challenge", len(got))
	}

	sl := openNode(t, cfg)
	if err := sl.svc.BecomeSlave(m.svc.Addr(), 1, 2); err != nil {
		t.Fatal(err)
	}
	sameLogs(t, m, sl, 2)
}
