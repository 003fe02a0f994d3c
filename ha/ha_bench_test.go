package ha

import (
	"context"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/store"
)

// BenchmarkReplicate measures master → slave throughput in-process over
// loopback TCP: one op is a fresh slave copying the master's 64 MiB commit
// log (1 KiB messages, 16 MiB files; all but a seed of 4 KiB) in haTransferBatchSize frames, both
// stores on disk, dispatch included on the slave. allocs/frame counts
// every allocation of the process during the copy over the frames sent.
func BenchmarkReplicate(b *testing.B) {
	const total = 64 << 20
	m := benchMaster(b, 16<<20)
	body := make([]byte, 1024)
	for m.MaxPhyOffset() < total {
		if _, err := m.Put(&store.PutMessage{Topic: "TopicHA", QueueID: int32(m.MaxPhyOffset() % 8), Body: body, BornHost: host, StoreHost: host}); err != nil {
			b.Fatal(err)
		}
	}
	end := m.MaxPhyOffset()
	cfg := DefaultConfig()
	ms := startService(b, cfg, m)
	frames := (end + int64(cfg.HATransferBatchSize) - 1) / int64(cfg.HATransferBatchSize)

	const seed = 4096
	b.SetBytes(end - seed)
	b.ReportAllocs()
	var mallocs uint64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		dir, err := os.MkdirTemp(b.TempDir(), "slave")
		if err != nil {
			b.Fatal(err)
		}
		scfg := storeConfig(dir, true)
		scfg.MappedFileSizeCommitLog = m.CommitLogFileSize()
		scfg.MappedFileSizeConsumeQueue = store.DefaultConfig().MappedFileSizeConsumeQueue
		sl, err := store.Open(scfg, testutil.Logger())
		if err != nil {
			b.Fatal(err)
		}
		if err := sl.Start(); err != nil {
			b.Fatal(err)
		}
		// A slave reporting 0 would start at the master's last file: seed
		// it with the first bytes so that it copies the whole log.
		sp, _ := m.ReadReplica(0, seed)
		if err := sl.AppendReplica(0, sp.Bytes); err != nil {
			b.Fatal(err)
		}
		sp.Release()
		c := DefaultConfig()
		c.BrokerRole = Slave
		c.HAMasterAddress = ms.Addr()
		ss, err := New(c, "", sl, testutil.Logger())
		if err != nil {
			b.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		b.StartTimer()
		if err := ss.Start(); err != nil {
			b.Fatal(err)
		}
		for sl.MaxPhyOffset() < end {
			time.Sleep(time.Millisecond) // polling for the end of the copy, not synchronisation
		}
		b.StopTimer()
		runtime.ReadMemStats(&after)
		mallocs += after.Mallocs - before.Mallocs
		_ = ss.Shutdown(context.Background())
		_ = sl.Shutdown(context.Background())
		_ = os.RemoveAll(dir)
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(mallocs)/float64(int64(b.N)*frames), "allocs/frame")
}

// BenchmarkSyncMasterPut is one SYNC_MASTER send's store part: a 1 KiB
// put, then the wait until an in-process slave (over loopback TCP)
// acknowledged it. One put at a time: the latency of the round trip.
func BenchmarkSyncMasterPut(b *testing.B) {
	m := benchMaster(b, 64<<20)
	cfg := DefaultConfig()
	cfg.BrokerRole = SyncMaster
	ms := startService(b, cfg, m)
	scfg := storeConfig(b.TempDir(), true)
	scfg.MappedFileSizeCommitLog = m.CommitLogFileSize()
	scfg.MappedFileSizeConsumeQueue = store.DefaultConfig().MappedFileSizeConsumeQueue
	sl, err := store.Open(scfg, testutil.Logger())
	if err != nil {
		b.Fatal(err)
	}
	if err := sl.Start(); err != nil {
		b.Fatal(err)
	}
	defer sl.Shutdown(context.Background())
	c := DefaultConfig()
	c.BrokerRole = Slave
	c.HAMasterAddress = ms.Addr()
	ss, err := New(c, "", sl, testutil.Logger())
	if err != nil {
		b.Fatal(err)
	}
	if err := ss.Start(); err != nil {
		b.Fatal(err)
	}
	defer ss.Shutdown(context.Background())
	for ms.usable.Load() == 0 {
		time.Sleep(time.Millisecond) // polling for the slave's first report
	}
	msg := &store.PutMessage{Topic: "TopicHA", Body: make([]byte, 1024), BornHost: host, StoreHost: host}
	done := make(chan error, 1)
	answer := func(err error) { done <- err }
	b.SetBytes(1024)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		r, err := m.Put(msg)
		if err != nil {
			b.Fatal(err)
		}
		m.Wait(r.PhysicalOffset+int64(r.WroteBytes), store.Replicated, answer)
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}

// benchMaster opens and starts a master store with commit log files of
// fileSize (consume queue files of Apache's size), shut down when b ends.
func benchMaster(b *testing.B, fileSize int64) *store.Store {
	b.Helper()
	cfg := storeConfig(b.TempDir(), false)
	cfg.MappedFileSizeCommitLog = fileSize
	cfg.MappedFileSizeConsumeQueue = store.DefaultConfig().MappedFileSizeConsumeQueue
	m, err := store.Open(cfg, testutil.Logger())
	if err != nil {
		b.Fatal(err)
	}
	if err := m.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	return m
}
