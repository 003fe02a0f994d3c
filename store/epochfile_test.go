package store

import (
	"bufio"
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const epochGolden = "testdata/epochfile"

// apacheEpochView reads apache.txt: per case, the entries (epoch, start,
// end) Apache's EpochFileCache held after writing the golden files.
func apacheEpochView(t *testing.T) (map[string][]EpochEntry, map[string]int64) {
	t.Helper()
	f, err := os.Open(filepath.Join(epochGolden, "apache.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	view := map[string][]EpochEntry{}
	points := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if fields[0] == "consistent" {
			p, err := strconv.ParseInt(fields[2], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			points[fields[1]] = p
			continue
		}
		var entries []EpochEntry
		for _, s := range fields[1:] {
			p := strings.Split(s, "-")
			e, _ := strconv.ParseInt(p[0], 10, 32)
			st, _ := strconv.ParseInt(p[1], 10, 64)
			end, _ := strconv.ParseInt(p[2], 10, 64)
			entries = append(entries, EpochEntry{Epoch: int32(e), StartOffset: st, EndOffset: end})
		}
		view[fields[0]] = entries
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return view, points
}

// Every golden file Apache wrote parses to the entries Apache held, and
// re-encodes to the same bytes.
func TestEpochFileApacheGolden(t *testing.T) {
	view, _ := apacheEpochView(t)
	for name, want := range view {
		path := filepath.Join(epochGolden, name, FileEpochCheckpoint)
		c, err := OpenEpochFile(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := c.All()
		if name == "suffix" {
			// Apache's truncateSuffix reopens a copy of the last entry, so
			// its in-memory end stays 2048 until the next append; the file
			// holds start offsets only, and a reopened cache (Apache's too)
			// has the last entry open-ended, as ours does at once.
			want[len(want)-1].EndOffset = math.MaxInt64
		}
		if !equalEntries(got, want) {
			t.Errorf("%s: got %v, Apache held %v", name, got, want)
		}
		for _, p := range []string{path, path + ".bak"} {
			raw, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			entries, err := ParseEpochFile(raw)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if enc := EncodeEpochFile(entries); !bytes.Equal(enc, raw) {
				t.Errorf("%s: encoded\n%s\nApache wrote\n%s", p, enc, raw)
			}
		}
	}
}

// The same operations Apache's generator ran produce byte-equal files,
// main and .bak.
func TestEpochFileWritesLikeApache(t *testing.T) {
	dir := t.TempDir()
	type op func(c *EpochCache) error
	appendOp := func(e int32, s int64) op { return func(c *EpochCache) error { return c.Append(e, s) } }
	cases := map[string][]op{
		"three": {appendOp(1, 0), appendOp(2, 1024), appendOp(5, 409600)},
		"suffix": {appendOp(1, 0), appendOp(2, 1024), appendOp(3, 2048),
			func(c *EpochCache) error { return c.TruncateFromOffset(1500) }},
		"prefix": {appendOp(1, 0), appendOp(2, 1024), appendOp(3, 2048),
			func(c *EpochCache) error { return c.TrimBefore(1024) }},
		"big": {appendOp(7, 1<<30), appendOp(math.MaxInt32, math.MaxInt64-1)},
	}
	for name, ops := range cases {
		path := filepath.Join(dir, name, FileEpochCheckpoint)
		c, err := OpenEpochFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range ops {
			if err := o(c); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		for _, suffix := range []string{"", ".bak"} {
			got, err := os.ReadFile(path + suffix)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(epochGolden, name, FileEpochCheckpoint+suffix))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s%s: wrote\n%s\nApache wrote\n%s", name, suffix, got, want)
			}
		}
	}
}

// Appends that do not move the epoch forward, or move the start back, are
// refused; an epoch starting where the last began (a term in which
// nothing was written) is kept, unlike Apache's appendEntry.
func TestEpochFileAppendOrder(t *testing.T) {
	c, err := OpenEpochFile(filepath.Join(t.TempDir(), FileEpochCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Append(1, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Append(5, 100); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []EpochEntry{{Epoch: 5, StartOffset: 500}, {Epoch: 6, StartOffset: 99}, {Epoch: 4, StartOffset: 900}} {
		if err := c.Append(bad.Epoch, bad.StartOffset); !errors.Is(err, ErrEpochOrder) {
			t.Errorf("append %d-%d: %v, want ErrEpochOrder", bad.Epoch, bad.StartOffset, err)
		}
	}
	if c.LastEpoch() != 5 || c.Len() != 2 {
		t.Fatalf("after refusals: %v", c.All())
	}
	if err := c.Append(6, 100); err != nil {
		t.Fatalf("an epoch at the last one's start: %v", err)
	}
	if e, ok := c.ByOffset(99); !ok || e.Epoch != 1 {
		t.Errorf("ByOffset(99) = %v %v", e, ok)
	}
	if e, ok := c.ByOffset(100); !ok || e.Epoch != 6 {
		t.Errorf("ByOffset(100) = %v %v: the empty epoch 5 holds no offset", e, ok)
	}
	if e, ok := c.Next(1); !ok || e.Epoch != 5 {
		t.Errorf("Next(1) = %v %v", e, ok)
	}
	if _, ok := c.Next(6); ok {
		t.Error("Next(6) found an entry")
	}
	reopened, err := OpenEpochFile(c.path)
	if err != nil {
		t.Fatal(err)
	}
	if got := reopened.All(); !slices.Equal(got, c.All()) {
		t.Errorf("reopened %v, wrote %v", got, c.All())
	}
}

// BeginTerm drops the entries of the term and later and those past the
// store's end, then appends the term.
func TestEpochFileBeginTerm(t *testing.T) {
	c, err := OpenEpochFile(filepath.Join(t.TempDir(), FileEpochCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []EpochEntry{{Epoch: 1, StartOffset: 0}, {Epoch: 3, StartOffset: 100}, {Epoch: 4, StartOffset: 300}} {
		if err := c.Append(e.Epoch, e.StartOffset); err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range []struct {
		epoch int32
		start int64
		want  []EpochEntry
	}{
		// The store ends inside epoch 3: epoch 4's entry goes.
		{5, 200, []EpochEntry{{1, 0, 100}, {3, 100, 200}, {5, 200, math.MaxInt64}}},
		// The same term again, its start moved by bytes received late.
		{5, 260, []EpochEntry{{1, 0, 100}, {3, 100, 260}, {5, 260, math.MaxInt64}}},
		// Nothing written in 5: 6 starts at the same offset, 5 stays empty.
		{6, 260, []EpochEntry{{1, 0, 100}, {3, 100, 260}, {5, 260, 260}, {6, 260, math.MaxInt64}}},
		{6, 260, []EpochEntry{{1, 0, 100}, {3, 100, 260}, {5, 260, 260}, {6, 260, math.MaxInt64}}},
	} {
		if err := c.BeginTerm(step.epoch, step.start); err != nil {
			t.Fatalf("BeginTerm(%d, %d): %v", step.epoch, step.start, err)
		}
		if got := c.All(); !slices.Equal(got, step.want) {
			t.Fatalf("BeginTerm(%d, %d): %v, want %v", step.epoch, step.start, got, step.want)
		}
	}
}

// A replica that wrote in a term its successor began at the same offset
// without writing finds the point at the term's start: its own bytes of
// that term are not kept under the successor's.
func TestEpochFileConsistentPointEmptyTerm(t *testing.T) {
	// The old master wrote 4000..4500 in epoch 7; the new master had epoch
	// 7's entry from a heartbeat, nothing of its bytes, and wrote 4000..4800
	// in epoch 8.
	old, err := NewEpochCache([]EpochEntry{{Epoch: 2, StartOffset: 0}, {Epoch: 7, StartOffset: 4000}})
	if err != nil {
		t.Fatal(err)
	}
	old.SetLastEnd(4500)
	newer, err := NewEpochCache([]EpochEntry{{Epoch: 2, StartOffset: 0}, {Epoch: 7, StartOffset: 4000}, {Epoch: 8, StartOffset: 4000}})
	if err != nil {
		t.Fatal(err)
	}
	newer.SetLastEnd(4800)
	if p, e, ok := old.Consistent(newer); !ok || p != 4000 || e != 7 {
		t.Errorf("old against new: point %d epoch %d %v, want 4000 in epoch 7", p, e, ok)
	}
}

// The consistent point of Apache's slave/master pair is the one Apache's
// findConsistentPoint computed, both ways round; disjoint histories give -1.
func TestEpochFileConsistentPoint(t *testing.T) {
	_, points := apacheEpochView(t)
	slave, err := OpenEpochFile(filepath.Join(epochGolden, "slave", FileEpochCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	master, err := OpenEpochFile(filepath.Join(epochGolden, "master", FileEpochCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	slave.SetLastEnd(3500)
	master.SetLastEnd(5000)
	if got, want := slave.ConsistentPoint(master), points["slave/master"]; got != want {
		t.Errorf("slave/master: %d, Apache %d", got, want)
	}
	if got, want := master.ConsistentPoint(slave), points["master/slave"]; got != want {
		t.Errorf("master/slave: %d, Apache %d", got, want)
	}
	other, err := NewEpochCache([]EpochEntry{{Epoch: 1, StartOffset: 7}, {Epoch: 9, StartOffset: 3000}})
	if err != nil {
		t.Fatal(err)
	}
	if got := slave.ConsistentPoint(other); got != -1 {
		t.Errorf("disjoint: %d, want -1", got)
	}
	if _, err := NewEpochCache([]EpochEntry{{Epoch: 2, StartOffset: 7}, {Epoch: 2, StartOffset: 9}}); !errors.Is(err, ErrEpochOrder) {
		t.Errorf("duplicate epoch: %v", err)
	}
}

// A damaged main file falls back to the .bak; truncating to nothing
// leaves the file (Apache skips writing an empty list).
func TestEpochFileBackupAndDamage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileEpochCheckpoint)
	c, err := OpenEpochFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != 0 || c.LastEpoch() != -1 {
		t.Fatalf("no file: %v", c.All())
	}
	for i, s := range []int64{0, 10, 20} {
		if err := c.Append(int32(i+1), s); err != nil {
			t.Fatal(err)
		}
	}
	damaged := map[string]string{
		"crc":    "3\n12345\n1-0\n2-10\n3-20\n",
		"count":  "4\n0\n1-0\n2-10\n3-20\n",
		"number": "3\n0\n1-0\n2-1x\n3-20\n",
		"size":   "three\n0\n",
		"empty":  "",
		"order":  "2\n0\n2-10\n1-0\n",
	}
	for name, content := range damaged {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := OpenEpochFile(path)
		if err != nil && name != "order" {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if name == "order" {
			// Parses, so the .bak is not consulted; the order is refused.
			if !errors.Is(err, ErrEpochOrder) {
				t.Errorf("order: %v", err)
			}
			continue
		}
		if got := c.All(); len(got) != 2 || got[1].StartOffset != 10 {
			t.Errorf("%s: read %v, want the .bak's two entries", name, got)
		}
	}
	if err := os.WriteFile(path, []byte("2\n0\r\n1-0\r\n2-10"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = OpenEpochFile(path)
	if err != nil || c.Len() != 2 {
		t.Fatalf("crc 0, CRLF, no final newline: %v %v", c, err)
	}
	before, _ := os.ReadFile(path)
	if err := c.TruncateFromEpoch(1); err != nil {
		t.Fatal(err)
	}
	if c.Len() != 0 {
		t.Fatalf("truncated: %v", c.All())
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Errorf("empty list rewrote the file: %q", after)
	}
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".bak", []byte("y"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenEpochFile(path); !errors.Is(err, ErrEpochFile) {
		t.Errorf("both damaged: %v", err)
	}
}

func equalEntries(a, b []EpochEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// ParseEpochFile never panics, and whatever it accepts re-encodes to a
// file it parses back to the same entries.
func FuzzParseEpochFile(f *testing.F) {
	for _, name := range []string{"three", "suffix", "prefix", "big", "slave", "master"} {
		b, err := os.ReadFile(filepath.Join(epochGolden, name, FileEpochCheckpoint))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("1\n0\n-5-3\n"))
	f.Add([]byte("1\n0\n5-\r3-1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := ParseEpochFile(b)
		if err != nil {
			return
		}
		back, err := ParseEpochFile(EncodeEpochFile(entries))
		if err != nil {
			t.Fatalf("re-encoded %v: %v", entries, err)
		}
		if !equalEntries(back, entries) {
			t.Fatalf("round trip %v -> %v", entries, back)
		}
	})
}
