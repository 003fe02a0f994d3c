// Package testutil holds what every package's tests share: the goroutine
// leak check, the test logger and polling waits.
//
// Owns: test scaffolding only. Never: imported by non-test code.
package testutil

import (
	"os"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// VerifyNoLeaks runs the package's tests and fails if goroutines outlive
// them. gnet's ants pool starts two goroutines when gnet is imported, and
// keeps a worker for 10 s after each task (remoting registers every
// accepted connection through it); they are not ours to stop.
func VerifyNoLeaks(m *testing.M) { goleak.VerifyTestMain(m, antsIgnores()...) }

func antsIgnores() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*goWorker).run.func1"),
	}
}

// VerifyNoLeaksRaft is VerifyNoLeaks for packages whose tests run a
// controller in-process: hashicorp/raft leaves its inbound connection
// handlers behind after Shutdown.
func VerifyNoLeaksRaft(m *testing.M) {
	goleak.VerifyTestMain(m, append(antsIgnores(), goleak.IgnoreAnyFunction("github.com/hashicorp/raft.(*NetworkTransport).handleConn"))...)
}

// Logger discards logs unless ROCKETGO_LOG=debug, then writes them to the test log.
func Logger() zerolog.Logger {
	if os.Getenv("ROCKETGO_LOG") == "debug" {
		return zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr}).Level(zerolog.DebugLevel) // a TestWriter needs a t, which callers do not pass
	}
	return zerolog.Nop()
}

// WaitFor polls cond until it holds, failing t after timeout.
func WaitFor(t testing.TB, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", timeout)
		}
		time.Sleep(2 * time.Millisecond) // polling interval, not a wait for an outcome
	}
}
