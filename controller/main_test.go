package controller

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks for leaked goroutines as testutil.VerifyNoLeaks does,
// and also lets hashicorp/raft's inbound connection handlers outlive a
// test: NetworkTransport.Close closes its listener but not its pooled
// outbound connections, so a peer's handler waits for a read until the
// process ends.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*goWorker).run.func1"),
		goleak.IgnoreAnyFunction("github.com/hashicorp/raft.(*NetworkTransport).handleConn"))
}
