package send

import (
	"fmt"
	"testing"

	"github.com/rocketgo/rocketgo/store"
)

// A wait's failure maps to Apache's send statuses; a record cut after the
// broker lost the master role is a replication failure when the send
// waited for replicas, a flush failure when it waited only for the disk.
func TestWaitStatus(t *testing.T) {
	cut := fmt.Errorf("at 100: %w", store.ErrTruncated)
	for _, c := range []struct {
		need store.Durability
		err  error
		want Status
	}{
		{store.Flushed | store.Replicated, nil, OK},
		{store.Replicated, store.ErrReplicaNotAvailable, SlaveNotAvailable},
		{store.Flushed | store.Replicated, store.ErrReplicaTimeout, FlushSlaveTimeout},
		{store.Replicated, cut, FlushSlaveTimeout},
		{store.Flushed | store.Replicated, cut, FlushSlaveTimeout},
		{store.Flushed, cut, FlushDiskTimeout},
		{store.Flushed, store.ErrFlushTimeout, FlushDiskTimeout},
	} {
		if got := waitStatus(c.need, c.err); got != c.want {
			t.Errorf("waitStatus(%v, %v) = %v, want %v", c.need, c.err, got, c.want)
		}
	}
}
