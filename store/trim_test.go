package store

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
)

// residentUnder sums the Rss of this process's mappings of files under dir
// (from /proc/self/smaps): what VmRSS counts for them.
func residentUnder(t *testing.T, dir string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	var total int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		switch {
		case len(fs) >= 5 && strings.Contains(fs[0], "-"): // a mapping's header line
			in = len(fs) >= 6 && strings.HasPrefix(fs[5], dir)
		case in && fs[0] == "Rss:":
			kb, _ := strconv.ParseInt(fs[1], 10, 64)
			total += kb << 10
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return total
}

// TestTrimUnmapsColdPages: trimming drops the mapped pages below the kept
// windows and nothing else; the data reads back the same, including what
// was trimmed before it was flushed, and survives a restart.
func TestTrimUnmapsColdPages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(dir) // 64 KiB commit log files
	cfg.MappedFileSizeConsumeQueue = 10 * pageSize / cqEntrySize * cqEntrySize
	s := openStarted(t, cfg)
	putN(t, s, "T", 2, 0, 3000)
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
	want := [][]message.Record{readAll(t, s, "T", 0), readAll(t, s, "T", 1)} // maps every page read

	cl, cq, idx := filepath.Join(dir, "commitlog"), filepath.Join(dir, "consumequeue"), filepath.Join(dir, "index")
	// The commit log file made ahead (allocate.go) is not the trimmer's:
	// its first pages are populated for the appends after the next roll.
	last := s.cl.q.files[len(s.cl.q.files)-1]
	ahead := mustStorePath(cl, fileName(last.start+last.size))
	residentCL := func() int64 { return residentUnder(t, cl) - residentUnder(t, ahead) }
	before := [3]int64{residentCL(), residentUnder(t, cq), residentUnder(t, idx)}
	const keep = 64 << 10
	// Between sweeps only the last trimRecentFiles files are trimmed.
	oldest := s.cl.q.files[0].path
	s.trimCommitLog(keep, false)
	if r := residentUnder(t, oldest); r == 0 || residentCL() >= before[0] {
		t.Errorf("recent trim: oldest file resident %d, all %d of %d", r, residentCL(), before[0])
	}
	s.trimCommitLog(keep, true)
	s.trimConsumeQueues(pageSize)
	s.idx.trim(pageSize)
	after := [3]int64{residentCL(), residentUnder(t, cq), residentUnder(t, idx)}
	t.Logf("resident before %v, after %v", before, after)
	// Commit log: the window can straddle two files, plus the page that
	// holds its first byte.
	if before[0] < 4*keep || after[0] > 2*keep+pageSize {
		t.Errorf("commit log resident %d before, %d after trimming to %d", before[0], after[0], keep)
	}
	// Queues: the last file of each of the 2 queues keeps one page and
	// the page being written.
	if before[1] <= 4*2*pageSize || after[1] > 2*2*pageSize {
		t.Errorf("consume queues resident %d before, %d after", before[1], after[1])
	}
	// Index: the header and hash slots (written at random) stay.
	if after[2] >= before[2] {
		t.Errorf("index resident %d before, %d after", before[2], after[2])
	}

	got := [][]message.Record{readAll(t, s, "T", 0), readAll(t, s, "T", 1)}
	if !reflect.DeepEqual(got, want) {
		t.Fatal("records differ after trimming")
	}
	// Unflushed pages trimmed from the mapping are still written by the
	// shutdown flush.
	putN(t, s, "T", 2, 3000, 500)
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
	s.trimCommitLog(0, true)
	s.trimConsumeQueues(0)
	shutdown(t, s)
	s = openStarted(t, cfg)
	defer shutdown(t, s)
	checkQueues(t, s, "T", 2, 3500)
}
