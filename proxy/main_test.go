package proxy

import (
	"testing"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

func TestMain(m *testing.M) { testutil.VerifyNoLeaks(m) }

func zerologNop() zerolog.Logger { return zerolog.Nop() }
