package processor

import (
	"context"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
)

func TestMain(m *testing.M) { testutil.VerifyNoLeaks(m) }

// clientUntilShutdown returns a client for a server the test started; at
// cleanup the client closes and the server shuts down.
func clientUntilShutdown(t *testing.T, shutdown func(context.Context) error) *remoting.Client {
	cl := remoting.NewClient(testutil.Logger())
	t.Cleanup(func() {
		_ = cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return cl
}

func expectCode(t *testing.T, resp *remoting.Command, code int32) {
	t.Helper()
	if resp.Code != code {
		t.Fatalf("code %d (remark %q), want %d", resp.Code, resp.Remark, code)
	}
}
