package proxy

import (
	"testing"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

func TestMain(m *testing.M) { testutil.VerifyNoLeaks(m) }
