package store

// IndexFile (index/IndexFile, IndexHeader), big-endian. Total size
// 40 + maxHashSlotNum×4 + maxIndexNum×20 (420 000 040 bytes by default):
//
//	header (40 bytes)
//	  off  size  field
//	    0     8  beginTimestamp  store time of the first indexed message
//	    8     8  endTimestamp    store time of the last indexed message
//	   16     8  beginPhyOffset
//	   24     8  endPhyOffset
//	   32     4  hashSlotCount   slots ever used
//	   36     4  indexCount      next free entry position; starts at 1
//	slots (maxHashSlotNum × 4 bytes at 40 + slot×4)
//	  position of the newest entry of the bucket; 0 (or > indexCount) = empty
//	entries (maxIndexNum × 20 bytes at 40 + slots×4 + position×20; position 0 unused)
//	  off  size  field
//	    0     4  key hash = abs(Java hash of "topic#key"), MIN_VALUE → 0
//	    4     8  commit log physical offset
//	   12     4  (store time − beginTimestamp) / 1000, clamped to [0, MaxInt32];
//	             0 while beginTimestamp ≤ 0
//	   16     4  previous entry position in the bucket (0 = end of chain)
//
// slot = key hash % maxHashSlotNum. Files are named by the local time of
// their creation, yyyyMMddHHmmssSSS, and hold maxIndexNum−1 entries. Only
// the hash is stored, so a lookup can return records of other keys.

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/rocketgo/rocketgo/message"
)

const (
	indexHeaderSize = 40
	indexSlotSize   = 4
	indexEntrySize  = 20
)

// indexFileSize is the size of an index file with the given geometry.
func indexFileSize(slots, entries int) int64 {
	return indexHeaderSize + int64(slots)*indexSlotSize + int64(entries)*indexEntrySize
}

// indexFile is one mapped index file. The header lives in the mapping and
// is read and written through it; the owning indexService's lock serialises
// the writer (dispatcher) with readers and deletion.
type indexFile struct {
	mf      *mappedFile
	name    string
	slots   int32
	entries int32
	flushed bool // a full file's final msync is done; guarded by indexService.mu
	// allocated: [0, allocated) has its blocks. The dispatcher reads and
	// moves it for the file it writes (indexService.reserve, create), and
	// flush for a loaded file no longer written (indexService.back).
	allocated int64
	// backed: every slot and stored entry has its blocks, so a query may
	// read them; a loaded sparse file on a full tmpfs would fault (SIGBUS)
	// reading a hole. The header always has its blocks.
	backed atomic.Bool
}

// indexAllocStep is how far ahead of the writer an index file's entries
// get their blocks: 209,715 entries, more than one record adds. The file
// itself is sparse (Apache's is too: it never fallocates), so a small disk
// is not asked for 420 MB at once, and no store through the mapping meets
// a page without a block (a SIGBUS on a full disk).
const indexAllocStep = 4 << 20

// allocate gives [allocated, end) its blocks; the first time all of
// [0, end): a loaded file may be sparse anywhere below its writer. Once
// they reach the last stored entry the file is backed.
func (f *indexFile) allocate(end int64) error {
	end = min(end, f.mf.size)
	if end <= f.allocated {
		return nil
	}
	fd, err := f.mf.ops.openFile(f.mf.path, unix.O_RDWR)
	if err != nil {
		return err
	}
	defer unix.Close(fd) // no data written through fd
	if err := f.mf.ops.allocateRange(fd, f.mf.path, f.allocated, end-f.allocated); err != nil {
		return err
	}
	f.allocated = end
	if f.mf.data != nil && end >= f.entryPos(f.indexCount()) { // create maps after
		f.backed.Store(true)
	}
	return nil
}

func (f *indexFile) u64(off int64) int64 { return int64(binary.BigEndian.Uint64(f.mf.data[off:])) }
func (f *indexFile) u32(off int64) int32 { return int32(binary.BigEndian.Uint32(f.mf.data[off:])) }
func (f *indexFile) put64(off, v int64)  { binary.BigEndian.PutUint64(f.mf.data[off:], uint64(v)) }
func (f *indexFile) put32(off int64, v int32) {
	binary.BigEndian.PutUint32(f.mf.data[off:], uint32(v))
}

func (f *indexFile) beginTimestamp() int64 { return f.u64(0) }
func (f *indexFile) endTimestamp() int64   { return f.u64(8) }
func (f *indexFile) beginPhyOffset() int64 { return f.u64(16) }
func (f *indexFile) endPhyOffset() int64   { return f.u64(24) }
func (f *indexFile) hashSlotCount() int32  { return f.u32(32) }
func (f *indexFile) indexCount() int32     { return f.u32(36) }
func (f *indexFile) full() bool            { return f.indexCount() >= f.entries }

// initHeader prepares a new file: indexCount 1, begin = end = the previous
// file's end values (IndexFile's constructor).
func (f *indexFile) initHeader(endPhy, endTs int64) {
	if endPhy > 0 {
		f.put64(16, endPhy)
		f.put64(24, endPhy)
	}
	if endTs > 0 {
		f.put64(0, endTs)
		f.put64(8, endTs)
	}
	if f.indexCount() <= 0 {
		f.put32(36, 1)
	}
}

// indexKeyHash is IndexFile.indexKeyHashMethod: abs of the Java hash of
// "topic#key", with MinInt32 mapped to 0.
func indexKeyHash(topic, key []byte) int32 {
	h := message.JavaHashMore(message.JavaHashMore(message.JavaHashMore(0, topic), "#"), key)
	if h == math.MinInt32 {
		return 0
	}
	if h < 0 {
		return -h
	}
	return h
}

func (f *indexFile) slotPos(hash int32) int64 {
	return indexHeaderSize + int64(hash%f.slots)*indexSlotSize
}

func (f *indexFile) entryPos(n int32) int64 {
	return indexHeaderSize + int64(f.slots)*indexSlotSize + int64(n)*indexEntrySize
}

// putKey adds one entry (IndexFile.putKey); false when the file is full.
func (f *indexFile) putKey(hash int32, phy, storeTs int64) bool {
	count := f.indexCount()
	if count >= f.entries {
		return false
	}
	sp := f.slotPos(hash)
	prev := f.u32(sp)
	if prev <= 0 || prev > count {
		prev = 0
	}
	begin := f.beginTimestamp()
	diff := (storeTs - begin) / 1000
	switch {
	case begin <= 0, diff < 0:
		diff = 0
	case diff > math.MaxInt32:
		diff = math.MaxInt32
	}
	ep := f.entryPos(count)
	f.put32(ep, hash)
	f.put64(ep+4, phy)
	f.put32(ep+12, int32(diff))
	f.put32(ep+16, prev)
	f.put32(sp, count)
	if count <= 1 {
		f.put64(16, phy)
		f.put64(0, storeTs)
	}
	if prev == 0 {
		f.put32(32, f.hashSlotCount()+1)
	}
	f.put32(36, count+1)
	f.put64(24, phy)
	f.put64(8, storeTs)
	return true
}

// repairTornPut undoes what a put stopped by a kill left in the file's
// mapping, given next, the bytes of the entry after the last counted one
// (read with pread: that entry's blocks may not be given). putKey writes
// the entry, then its slot, then the count, then the end offset and time;
// so the slot of next may point at it, and the end offset and time may
// lag the last counted entry. A slot never holds the count otherwise.
func (f *indexFile) repairTornPut(next []byte) {
	count := f.indexCount()
	if h := int32(binary.BigEndian.Uint32(next)); count >= 1 && count < f.entries && h >= 0 {
		if sp := f.slotPos(h); f.u32(sp) == count {
			prev := int32(binary.BigEndian.Uint32(next[16:]))
			if prev <= 0 || prev >= count {
				prev = 0
			}
			f.put32(sp, prev)
		}
	}
	if count > 1 {
		ep := f.entryPos(count - 1)
		if phy := f.u64(ep + 4); phy > f.endPhyOffset() {
			f.put64(24, phy)
		}
		if begin := f.beginTimestamp(); begin > 0 {
			if ts := begin + int64(f.u32(ep+12))*1000; ts > f.endTimestamp() {
				f.put64(8, ts)
			}
		}
	}
}

// holds reports whether an entry for hash and phy is among the newest
// entries of hash's slot that index phy (a record's entries are written
// together, so they head their slots' chains until the next record's).
func (f *indexFile) holds(hash int32, phy int64) bool {
	count := f.indexCount()
	for next := f.u32(f.slotPos(hash)); next > 0 && next < count; {
		ep := f.entryPos(next)
		if f.u64(ep+4) != phy {
			return false
		}
		if f.u32(ep) == hash {
			return true
		}
		prev := f.u32(ep + 16)
		if prev >= next {
			return false
		}
		next = prev
	}
	return false
}

// timeMatched is IndexFile.isTimeMatched.
func (f *indexFile) timeMatched(begin, end int64) bool {
	b, e := f.beginTimestamp(), f.endTimestamp()
	return (begin < b && end > e) || (begin >= b && begin <= e) || (end >= b && end <= e)
}

// selectPhyOffsets appends the physical offsets of entries with the key's
// hash stored within [begin, end] (IndexFile.selectPhyOffset).
func (f *indexFile) selectPhyOffsets(dst []int64, hash int32, maxNum int, begin, end int64) []int64 {
	count := f.indexCount()
	next := f.u32(f.slotPos(hash))
	if next <= 0 || next > count || count <= 1 {
		return dst
	}
	fileBegin := f.beginTimestamp()
	for len(dst) < maxNum {
		ep := f.entryPos(next)
		h := f.u32(ep)
		phy := f.u64(ep + 4)
		diff := int64(f.u32(ep + 12))
		prev := f.u32(ep + 16)
		if diff < 0 {
			break
		}
		t := fileBegin + diff*1000
		if h == hash && t >= begin && t <= end {
			dst = append(dst, phy)
		}
		if prev <= 0 || prev > count || prev == next || t < begin {
			break
		}
		next = prev
	}
	return dst
}

// flush msyncs the whole mapping (writes are scattered over the file).
func (f *indexFile) flush() error {
	if err := f.mf.ops.msync(f.mf.path, f.mf.data); err != nil {
		return fmt.Errorf("msync index file %s: %w", f.mf.path, err)
	}
	return nil
}
