package store

// The epoch file (controller mode, spec ha.md §3.4) maps each master epoch
// to the commit log offset where that master started writing. AutoSwitch
// HA compares two brokers' epoch lists to find the offset up to which their
// commit logs agree (ConsistentPoint) and never ships bytes of one epoch in
// a frame tagged with another. The file is Apache's CheckpointFile text so
// that an Apache store directory opens here and ours in Apache:
//
//	<number of entries>\n
//	<CRC-32 of the entry lines & 0x7FFFFFFF, decimal; 0 = not checked>\n
//	<epoch>-<startOffset>\n   one line per entry, epochs ascending
//
// Start offsets never go down, and two epochs may start at one offset: a
// term in which nothing was written keeps its entry, empty. Apache refuses
// the later of the two, so a master elected where the previous term began
// writes under that term's label; a replica which wrote in that term then
// finds the consistent point at the end of its own bytes, not at the term's
// start, and keeps a tail no other replica has. Apache reads such a file
// (it checks no order).
//
// Written with the previous content kept as <path>.bak; read falls back to
// the .bak when the main file is missing, empty or does not parse.

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/rocketgo/rocketgo/config"
)

// FileEpochCheckpoint is the default name of the epoch file under the
// store root (storePathEpochFile).
const FileEpochCheckpoint = "epochFileCheckpoint"

// ErrEpochOrder is returned when an epoch entry does not have a larger
// epoch than the last one, or starts before it.
var ErrEpochOrder = errors.New("epoch entry not after the last entry")

// ErrEpochFile is wrapped by every refusal of an epoch file's content.
var ErrEpochFile = errors.New("bad epoch file")

// EpochEntry is one master term: its commit log range is
// [StartOffset, EndOffset); the last entry's EndOffset is math.MaxInt64
// until a caller closes it with SetLastEnd.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
	EndOffset   int64
}

// EpochCache is an ordered list of epoch entries, optionally backed by an
// epoch file that every change rewrites. A master's handshake is turned
// into an unbacked cache (NewEpochCache) to compare with the local one.
//
// Readers (heartbeats, role answers on an event loop) take only mu, which
// no file write holds: a change is made under fmu then mu, and written to
// the file under fmu alone, so changes reach the file in their order and
// a change returns once its file is written.
type EpochCache struct {
	fmu     sync.Mutex // one change at a time, from the list to the file
	mu      sync.RWMutex
	path    string // "" = not backed by a file
	entries []EpochEntry
}

// NewEpochCache returns an unbacked cache of entries, which must be in
// strictly increasing epoch order, their starts never going down; end
// offsets are derived from the next entry's start.
func NewEpochCache(entries []EpochEntry) (*EpochCache, error) {
	c := &EpochCache{}
	if err := c.set(entries); err != nil {
		return nil, err
	}
	return c, nil
}

// OpenEpochFile loads the epoch file at path (or its .bak). Neither
// existing is an empty cache; the file is created by the first change.
func OpenEpochFile(path string) (*EpochCache, error) {
	entries, err := readEpochFile(path)
	if err != nil {
		return nil, err
	}
	c := &EpochCache{path: path}
	if err := c.set(entries); err != nil {
		return nil, fmt.Errorf("epoch file %s: %w", path, err)
	}
	return c, nil
}

func (c *EpochCache) set(entries []EpochEntry) error {
	out := make([]EpochEntry, len(entries))
	for i, e := range entries {
		if i > 0 && (e.Epoch <= out[i-1].Epoch || e.StartOffset < out[i-1].StartOffset) {
			return fmt.Errorf("entry %d-%d after %d-%d: %w", e.Epoch, e.StartOffset,
				out[i-1].Epoch, out[i-1].StartOffset, ErrEpochOrder)
		}
		out[i] = EpochEntry{Epoch: e.Epoch, StartOffset: e.StartOffset, EndOffset: math.MaxInt64}
		if i > 0 {
			out[i-1].EndOffset = e.StartOffset
		}
	}
	c.entries = out
	return nil
}

// Len returns the number of entries.
func (c *EpochCache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}

// All returns a copy of the entries, oldest first.
func (c *EpochCache) All() []EpochEntry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return append([]EpochEntry(nil), c.entries...)
}

// First returns the oldest entry; false when the cache is empty.
func (c *EpochCache) First() (EpochEntry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if len(c.entries) == 0 {
		return EpochEntry{}, false
	}
	return c.entries[0], true
}

// Last returns the newest entry; false when the cache is empty.
func (c *EpochCache) Last() (EpochEntry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if len(c.entries) == 0 {
		return EpochEntry{}, false
	}
	return c.entries[len(c.entries)-1], true
}

// LastEpoch returns the newest epoch, -1 when the cache is empty (the
// value Apache reports in heartbeats and handshakes).
func (c *EpochCache) LastEpoch() int32 {
	if e, ok := c.Last(); ok {
		return e.Epoch
	}
	return -1
}

// Entry returns the entry of epoch.
func (c *EpochCache) Entry(epoch int32) (EpochEntry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if i := c.index(epoch); i >= 0 {
		return c.entries[i], true
	}
	return EpochEntry{}, false
}

func (c *EpochCache) index(epoch int32) int {
	for i := range c.entries {
		if c.entries[i].Epoch == epoch {
			return i
		}
	}
	return -1
}

// ByOffset returns the entry whose range holds offset.
func (c *EpochCache) ByOffset(offset int64) (EpochEntry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, e := range c.entries {
		if e.StartOffset <= offset && offset < e.EndOffset {
			return e, true
		}
	}
	return EpochEntry{}, false
}

// Next returns the first entry with an epoch above epoch.
func (c *EpochCache) Next(epoch int32) (EpochEntry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, e := range c.entries {
		if e.Epoch > epoch {
			return e, true
		}
	}
	return EpochEntry{}, false
}

// Append adds the entry of a new term starting at startOffset and persists
// the list (a slave learning its master's term). The epoch must exceed the
// last entry's and the start must not be below it.
func (c *EpochCache) Append(epoch int32, startOffset int64) error {
	return c.change(func() error { return c.appendLocked(epoch, startOffset) })
}

func (c *EpochCache) appendLocked(epoch int32, startOffset int64) error {
	if n := len(c.entries); n > 0 {
		last := &c.entries[n-1]
		if last.Epoch >= epoch || last.StartOffset > startOffset {
			return fmt.Errorf("append %d-%d after %d-%d: %w", epoch, startOffset,
				last.Epoch, last.StartOffset, ErrEpochOrder)
		}
		last.EndOffset = startOffset
	}
	c.entries = append(c.entries, EpochEntry{Epoch: epoch, StartOffset: startOffset, EndOffset: math.MaxInt64})
	return nil
}

// BeginTerm records that this store's own term epoch begins at start, its
// commit log end (a broker becoming master): entries of epoch and later
// are dropped, as are entries starting beyond start (bytes the store no
// longer holds), then (epoch, start) is appended and the list persisted.
// Nothing is written when the last entry already is (epoch, start).
func (c *EpochCache) BeginTerm(epoch int32, start int64) error {
	c.mu.RLock()
	n := len(c.entries)
	same := n > 0 && c.entries[n-1].Epoch == epoch && c.entries[n-1].StartOffset == start
	c.mu.RUnlock()
	if same {
		return nil
	}
	return c.change(func() error {
		n := len(c.entries)
		for n > 0 && (c.entries[n-1].Epoch >= epoch || c.entries[n-1].StartOffset > start) {
			n--
		}
		c.entries = c.entries[:n]
		return c.appendLocked(epoch, start)
	})
}

// SetLastEnd closes the last entry at end (the owner's max offset) so
// ConsistentPoint compares real ranges; ignored if end is before its start.
// Not persisted: the file holds start offsets only.
func (c *EpochCache) SetLastEnd(end int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.entries); n > 0 && c.entries[n-1].StartOffset <= end {
		c.entries[n-1].EndOffset = end
	}
}

// ConsistentPoint returns the offset up to which the commit logs described
// by c and other agree: walking c newest to oldest, the first epoch other
// has with the same start offset gives min(both ends). -1 when none
// matches. Both caches should have their last end set (SetLastEnd).
func (c *EpochCache) ConsistentPoint(other *EpochCache) int64 {
	p, _, _ := c.Consistent(other)
	return p
}

// Consistent is ConsistentPoint with the epoch that gave the point (the
// newest epoch both have at the same start); false when none matches.
func (c *EpochCache) Consistent(other *EpochCache) (point int64, epoch int32, ok bool) {
	local := c.All()
	for i := len(local) - 1; i >= 0; i-- {
		o, found := other.Entry(local[i].Epoch)
		if found && o.StartOffset == local[i].StartOffset {
			return min(local[i].EndOffset, o.EndOffset), local[i].Epoch, true
		}
	}
	return -1, 0, false
}

// TruncateFromEpoch removes the entries of epoch and later, reopens the
// new last entry and persists the list.
func (c *EpochCache) TruncateFromEpoch(epoch int32) error {
	return c.truncateSuffix(func(e EpochEntry) bool { return e.Epoch >= epoch })
}

// TruncateFromOffset removes the entries starting at or after offset (the
// commit log is being truncated to offset), reopens the new last entry and
// persists the list.
func (c *EpochCache) TruncateFromOffset(offset int64) error {
	return c.truncateSuffix(func(e EpochEntry) bool { return e.StartOffset >= offset })
}

func (c *EpochCache) truncateSuffix(drop func(EpochEntry) bool) error {
	return c.change(func() error {
		n := len(c.entries)
		for n > 0 && drop(c.entries[n-1]) {
			n--
		}
		c.entries = c.entries[:n]
		if n > 0 {
			c.entries[n-1].EndOffset = math.MaxInt64
		}
		return nil
	})
}

// TrimBefore removes the entries wholly below offset (end ≤ offset): the
// commit log files holding them were deleted. Persists the list.
func (c *EpochCache) TrimBefore(offset int64) error {
	return c.change(func() error {
		i := 0
		for i < len(c.entries) && c.entries[i].EndOffset <= offset {
			i++
		}
		c.entries = append([]EpochEntry(nil), c.entries[i:]...)
		return nil
	})
}

// change applies edit to the entries under both locks, then rewrites the
// file under fmu alone. An empty list is not written, as in Apache
// (CheckpointFile.write), so truncating every entry leaves the old file:
// the next open sees those entries again, which Apache does as well.
func (c *EpochCache) change(edit func() error) error {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	c.mu.Lock()
	err := edit()
	var file []byte
	if err == nil && c.path != "" && len(c.entries) > 0 {
		file = EncodeEpochFile(c.entries)
	}
	c.mu.Unlock()
	if file == nil {
		return err
	}
	if err := config.WriteFile(c.path, file); err != nil {
		return fmt.Errorf("write epoch file: %w", err)
	}
	return nil
}

// EncodeEpochFile renders entries in Apache's CheckpointFile format.
func EncodeEpochFile(entries []EpochEntry) []byte {
	var body bytes.Buffer
	for _, e := range entries {
		body.WriteString(strconv.FormatInt(int64(e.Epoch), 10))
		body.WriteByte('-')
		body.WriteString(strconv.FormatInt(e.StartOffset, 10))
		body.WriteByte('\n')
	}
	out := make([]byte, 0, body.Len()+24)
	out = strconv.AppendInt(out, int64(len(entries)), 10)
	out = append(out, '\n')
	out = strconv.AppendInt(out, int64(maskedCRC(body.Bytes())), 10)
	out = append(out, '\n')
	return append(out, body.Bytes()...)
}

// maskedCRC is Apache's UtilAll.crc32: CRC-32 (IEEE) with the sign bit
// cleared.
func maskedCRC(b []byte) int32 {
	return int32(crc32.ChecksumIEEE(b) & 0x7FFFFFFF)
}

// ParseEpochFile decodes Apache's CheckpointFile text. Lines end in \n,
// \r\n or \r (Java's readLine); the CRC is computed over the entry lines
// each followed by \n, as Apache's reader does on Linux. A line that does
// not split into exactly two fields at '-' is skipped like Apache's
// serializer does (and then fails the entry count); a field that is not a
// number fails the file (Apache throws there and the broker does not start).
func ParseEpochFile(b []byte) ([]EpochEntry, error) {
	lines := splitLines(b)
	if len(lines) < 2 {
		return nil, fmt.Errorf("%d lines, want the size and CRC lines: %w", len(lines), ErrEpochFile)
	}
	size, err := strconv.ParseInt(lines[0], 10, 32)
	if err != nil {
		return nil, fmt.Errorf("size line %q: %w", lines[0], ErrEpochFile)
	}
	crc, err := strconv.ParseInt(lines[1], 10, 32)
	if err != nil {
		return nil, fmt.Errorf("crc line %q: %w", lines[1], ErrEpochFile)
	}
	var body bytes.Buffer
	var entries []EpochEntry
	for _, l := range lines[2:] {
		body.WriteString(l)
		body.WriteByte('\n')
		f := javaSplitDash(l)
		if len(f) != 2 {
			continue
		}
		epoch, err := strconv.ParseInt(f[0], 10, 32)
		if err != nil {
			return nil, fmt.Errorf("epoch %q: %w", f[0], ErrEpochFile)
		}
		start, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("start offset %q: %w", f[1], ErrEpochFile)
		}
		entries = append(entries, EpochEntry{Epoch: int32(epoch), StartOffset: start})
	}
	if int64(len(entries)) != size {
		return nil, fmt.Errorf("expect %d entries, found %d: %w", size, len(entries), ErrEpochFile)
	}
	if crc != 0 && int32(crc) != maskedCRC(body.Bytes()) {
		return nil, fmt.Errorf("crc %d, entries have %d: %w", crc, maskedCRC(body.Bytes()), ErrEpochFile)
	}
	return entries, nil
}

// splitLines splits like repeated BufferedReader.readLine: a final line
// without terminator counts, a final terminator does not start a new line.
func splitLines(b []byte) []string {
	var lines []string
	for len(b) > 0 {
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			lines = append(lines, string(b))
			break
		}
		lines = append(lines, string(b[:i]))
		if b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n' {
			i++
		}
		b = b[i+1:]
	}
	return lines
}

// javaSplitDash is String.split("-"): trailing empty fields are removed.
func javaSplitDash(s string) []string {
	f := strings.Split(s, "-")
	for len(f) > 0 && f[len(f)-1] == "" {
		f = f[:len(f)-1]
	}
	return f
}

// readEpochFile reads path, falling back to path.bak when path is missing,
// empty, holds no entries or does not parse. An error only when the .bak
// cannot be used either while the main file was unusable for a reason
// other than absence.
func readEpochFile(path string) ([]EpochEntry, error) {
	entries, err := readEpochFileOnce(path)
	if err == nil && len(entries) > 0 {
		return entries, nil
	}
	bak, bakErr := readEpochFileOnce(path + ".bak")
	if bakErr != nil {
		if err != nil {
			return nil, fmt.Errorf("%w (and %s.bak: %w)", err, path, bakErr)
		}
		return nil, bakErr
	}
	if len(bak) == 0 && err != nil {
		return nil, err
	}
	return bak, nil
}

func readEpochFileOnce(path string) ([]EpochEntry, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) == 0 {
		return nil, nil
	}
	entries, err := ParseEpochFile(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return entries, nil
}
