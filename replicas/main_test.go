package replicas

import (
	"testing"

	"github.com/rocketgo/rocketgo/store"
	"go.uber.org/goleak"
)

// The controller these tests run in-process leaves hashicorp/raft's inbound
// handlers and ants' pool timers behind (see controller/main_test.go).
func TestMain(m *testing.M) {
	store.FakeDiskUsage(0.5) // no test depends on how full the host disk is
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*goWorker).run.func1"),
		goleak.IgnoreAnyFunction("github.com/hashicorp/raft.(*NetworkTransport).handleConn"))
}
