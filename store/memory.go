package store

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// How much of the commit log's end a reader may take as in memory.
//
// Apache estimates that the newest accessMessageInMemoryMaxRatio percent of
// physical memory's worth of the commit log is in the page cache and reads
// it without asking. rocketgo asks the kernel (mincore) before an event loop
// reads older records, but that costs about 50 ns per page: at the 2 GB/s a
// catch-up reads, a tenth of a core. Within Apache's estimate the check is
// skipped, so a reader of recent data pays nothing and one of a backlog
// larger than the page cache can hold is still kept off the disk.

// minHotTail: records ending within this many bytes of the end of the
// commit log were appended moments ago (a consumer keeping up reads
// nothing else) and are never checked, whatever the ratio.
const minHotTail = 16 << 20

// hotTailFor is the distance from the end of the commit log within which
// records are read without a residency check.
func hotTailFor(ratio int) int64 {
	return max(minHotTail, physicalMemory()/100*int64(ratio))
}

// physicalMemory is the memory the process may fill: the machine's, or its
// control group's limit when lower (a container), or 0 if neither is known.
func physicalMemory() int64 {
	var si unix.Sysinfo_t
	var mem int64
	if unix.Sysinfo(&si) == nil {
		mem = int64(si.Totalram) * int64(si.Unit)
	}
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && (mem == 0 || n < mem) {
			mem = n // "max" (no limit) does not parse
		}
	}
	return mem
}
