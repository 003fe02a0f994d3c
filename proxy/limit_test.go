package proxy

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

// A connection past grpcMaxConnections is closed at once; one freed makes
// room again.
func TestConnectionLimit(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NamesrvAddr = "127.0.0.1:1"
	cfg.GrpcMaxConnections = 1
	s, err := New(cfg, testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Shutdown(context.Background()) }()
	first, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	// The first is counted once accepted: wait until a second one is refused.
	refused := func() bool {
		c, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			return false
		}
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		_, err = c.Read(make([]byte, 1))
		return err == io.EOF
	}
	testutil.WaitFor(t, 5*time.Second, refused)
	_ = first.Close()
	testutil.WaitFor(t, 5*time.Second, func() bool { return !refused() })
}
