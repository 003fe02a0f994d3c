package admin

import (
	"testing"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/store"
)

func TestMain(m *testing.M) {
	store.FakeDiskUsage(0.5) // no test depends on how full the host disk is
	testutil.VerifyNoLeaks(m)
}
