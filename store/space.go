package store

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Disk space guard (Apache's DISK_FULL running flag and ratios): when the
// partition holding the commit log or the consume queues is used above
// diskSpaceWarningLevelRatio (90% at most), appends are refused with
// ErrDiskFull until usage is back at diskSpaceCleanForciblyRatio; reads go
// on. Usage is read
//   - at Open: a store opened on a full disk refuses writes from the first
//     one and serves reads;
//   - by the space goroutine: once a second; when the append path has
//     written an eighth of the room left below the warning level since the
//     last reading (a byte count under the append lock, never a statfs per
//     message); at every commit log roll; while appends are refused (so
//     they are taken again as soon as space is freed), at most every
//     spaceMinInterval;
//   - by cleanup, which deletes files on the same readings.
//
// Between readings the disk can still fill (another process, or the
// store's own consume queue and index files). Every file gets its blocks
// before anything is stored through its mapping (fallocate at creation,
// zeros written ahead of a consume queue's writer), so the shortage is
// ENOSPC where a file is made or written (ErrDiskFull, answered like the
// flag), never a SIGBUS, and nothing written before is touched.

const spaceMinInterval = 10 * time.Millisecond

// diskSpace is UtilAll.getDiskPartitionSpaceUsedPercent: used / (used +
// available to unprivileged users) of the partition holding path, rounded
// up to a whole percent, and that sum in bytes.
func diskSpace(path string) (float64, int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, 0, fmt.Errorf("statfs %s: %w", path, err)
	}
	used := (st.Blocks - st.Bfree) * uint64(st.Bsize)
	entire := used + st.Bavail*uint64(st.Bsize)
	if entire == 0 {
		return 0, 0, nil
	}
	pct := used * 100 / entire
	if used*100%entire != 0 {
		pct++
	}
	return float64(pct) / 100, int64(entire), nil
}

// fakeUsage, when set, is what every store opened afterwards reads
// instead of statfs (FakeDiskUsage).
var fakeUsage atomic.Pointer[float64]

// FakeDiskUsage makes every store opened afterwards in this process read
// each of its partitions as used at ratio, of 1 TiB, instead of asking the
// file system: for the TestMain of a package whose tests open stores, so
// that no unit test depends on how full the host disk is. Servers never
// call it; tests of the disk-full behaviour set the store's own hook
// (fileOps.diskSpace) instead.
func FakeDiskUsage(ratio float64) { fakeUsage.Store(&ratio) }

// hostOps are the system calls Open uses: sysOps, with the disk usage
// FakeDiskUsage set, if any.
func hostOps() fileOps {
	ops := sysOps
	if r := fakeUsage.Load(); r != nil {
		ratio := *r
		ops.diskSpace = func(string) (float64, int64, error) { return ratio, 1 << 40, nil }
	}
	return ops
}

func clampRatio(v, lo, hi int) float64 { return float64(min(max(v, lo), hi)) / 100 }

// checkSpace reads the usage of the commit log's and the consume queues'
// partitions, sets or clears the disk-full flag and returns the higher
// usage.
func (s *Store) checkSpace() (float64, error) {
	s.lastSpaceCheck.Store(time.Now().UnixNano())
	usage, entire, err := s.ops.diskSpace(s.cl.q.dir)
	if err != nil {
		s.usedRatios[0].Store(math.Float64bits(-1))
		return 0, err
	}
	s.usedRatios[0].Store(math.Float64bits(usage))
	if entire > 0 && !s.aheadMade() {
		// The next commit log file is made ahead (allocate.go) and takes
		// its space as soon as it is made: at Open (Shutdown removed it),
		// or while it is being made, that space counts as used already,
		// so that a restart on a full disk does not accept writes into
		// the space the allocator takes at once.
		usage += float64(s.cfg.MappedFileSizeCommitLog) / float64(entire)
	}
	cq, e, err := s.ops.diskSpace(s.cqRoot)
	if err != nil {
		cq = -1
	} else if cq > usage {
		usage, entire = cq, e
	}
	s.usedRatios[1].Store(math.Float64bits(cq))
	if u, _, err := s.ops.diskSpace(mustStorePath(s.cfg.StorePathRootDir, dirIndex)); err == nil {
		s.usedRatios[2].Store(math.Float64bits(u))
	} else {
		s.usedRatios[2].Store(math.Float64bits(-1))
	}
	warn := clampRatio(s.cfg.DiskSpaceWarningLevelRatio, 35, 90)
	force := clampRatio(s.cfg.DiskSpaceCleanForciblyRatio, 30, 85)
	switch {
	case usage > warn:
		if !s.diskFull.Swap(true) {
			s.log.Error().Float64("diskUsage", usage).Float64("warningRatio", warn).Msg("disk full, writes refused")
		}
	case usage <= force:
		if s.diskFull.Swap(false) {
			s.log.Info().Float64("diskUsage", usage).Msg("disk usage back to normal, writes accepted")
		}
	}
	room := int64((warn - usage) * float64(entire))
	s.checkEvery.Store(min(max(room/8, 64<<10), 64<<20))
	return usage, nil
}

// logClamped says which configured ratios the store uses other than as
// given: Apache clamps them to its bounds without a word.
func (s *Store) logClamped() {
	for _, r := range []struct {
		key       string
		v, lo, hi int
	}{
		{"diskSpaceWarningLevelRatio", s.cfg.DiskSpaceWarningLevelRatio, 35, 90},
		{"diskSpaceCleanForciblyRatio", s.cfg.DiskSpaceCleanForciblyRatio, 30, 85},
	} {
		if used := min(max(r.v, r.lo), r.hi); used != r.v {
			s.log.Warn().Int(r.key, r.v).Int("used", used).Int("min", r.lo).Int("max", r.hi).
				Msg("disk ratio out of bounds, used clamped")
		}
	}
}

// spaceLoop reads the disk usage once a second and when signalled.
func (s *Store) spaceLoop() {
	s.logClamped()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-tick.C:
		case <-s.spaceCh:
			if time.Since(time.Unix(0, s.lastSpaceCheck.Load())) < spaceMinInterval {
				continue
			}
		}
		if _, err := s.checkSpace(); err != nil {
			s.sampled.Error().Err(err).Msg("disk usage unknown")
		}
	}
}

// wroteLocked counts appended bytes and asks for a usage reading when
// enough were written since the last one. Caller holds the append lock.
func (s *Store) wroteLocked(n int64) {
	s.sinceCheck += n
	if s.sinceCheck >= s.checkEvery.Load() {
		s.sinceCheck = 0
		s.signal(s.spaceCh)
	}
}

// DiskUsedRatios are the used fractions of the partitions holding the
// commit log, the consume queues and the index files at the last reading
// (Apache's diskUtil remark), -1 where unknown. No statfs: a refused send
// on an event loop reads what the space goroutine measured.
func (s *Store) DiskUsedRatios() (commitLog, consumeQueue, index float64) {
	r := func(i int) float64 { return math.Float64frombits(s.usedRatios[i].Load()) }
	return r(0), r(1), r(2)
}
