package store

import (
	"slices"
	"strconv"
)

// GetStatus is Apache's GetMessageStatus.
type GetStatus int

// Statuses of GetMessages (see remoting.md §6.5 for the response codes the
// broker maps them to).
const (
	Found               GetStatus = iota // ≥ 1 message returned
	NoMatchedMessage                     // entries examined, all filtered out
	MessageWasRemoving                   // entries point at deleted commit log data
	OffsetFoundNull                      // no entry readable at offset
	OffsetOverflowBadly                  // offset > max offset
	OffsetOverflowOne                    // offset == max offset (caught up)
	OffsetTooSmall                       // offset < min offset
	NoMatchedLogicQueue                  // queue unknown
	NoMessageInQueue                     // queue empty (max offset 0)
	// PagesNotResident (rocketgo's, GetMessageViews with ResidentPages):
	// the pages of the first record to read are not in memory; nothing
	// was read.
	PagesNotResident
)

var getStatusNames = [...]string{
	Found:               "FOUND",
	NoMatchedMessage:    "NO_MATCHED_MESSAGE",
	MessageWasRemoving:  "MESSAGE_WAS_REMOVING",
	OffsetFoundNull:     "OFFSET_FOUND_NULL",
	OffsetOverflowBadly: "OFFSET_OVERFLOW_BADLY",
	OffsetOverflowOne:   "OFFSET_OVERFLOW_ONE",
	OffsetTooSmall:      "OFFSET_TOO_SMALL",
	NoMatchedLogicQueue: "NO_MATCHED_LOGIC_QUEUE",
	NoMessageInQueue:    "NO_MESSAGE_IN_QUEUE",
	PagesNotResident:    "PAGES_NOT_RESIDENT",
}

func (g GetStatus) String() string {
	if g >= 0 && int(g) < len(getStatusNames) {
		return getStatusNames[g]
	}
	return "GetStatus(" + strconv.Itoa(int(g)) + ")"
}

// GetResult is the outcome of GetMessages or GetMessageViews.
type GetResult struct {
	Status GetStatus
	// NextBeginOffset is where the consumer should pull next (already
	// corrected to min/max for the offset statuses, as a master does).
	NextBeginOffset int64
	MinOffset       int64
	MaxOffset       int64
	// Count is the number of records returned.
	Count int
	// SuggestPullingFromSlave is Apache's getMessage flag: the last entry
	// examined lies further behind the commit log end than
	// accessMessageInMemoryMaxRatio percent of physical memory, so its
	// record has most likely left the page cache (the broker then suggests
	// whichBrokerWhenConsumeSlowly when slaveReadEnable). False when Count
	// is 0.
	SuggestPullingFromSlave bool
	// Body (GetMessages) is dst with the records appended, exactly as stored.
	Body []byte
	// Vec (GetMessageViews) is the records as slices of the mapped commit
	// log, adjacent records of one file in one slice. Read-only: the
	// mapping is the commit log itself.
	Vec [][]byte
	// Release (GetMessageViews; nil unless Status is Found) lets go of the
	// files Vec points into and recycles Vec. Call it exactly once, after
	// the last read of Vec.
	Release func()
}

// maxFilterEntries bounds the entries examined per call (Java:
// max(16000 bytes, maxMsgNums*20) of consume queue).
func maxFilterEntries(maxMsgNums int) int {
	return max(16000/cqEntrySize, maxMsgNums)
}

// GetMessages reads up to maxMsgNums records (and about maxBytes, always at
// least the first) from topic/queueID starting at queue offset offset,
// appending them to dst. match, when non-nil, is called with the entry's
// tags code and the record (a view into the result, valid during the call);
// unmatched records are dropped. Reads stay inside one consume queue file
// (as Apache's do), so a result may be short.
//
// The broker pulls with GetMessageViews; this copying read is what the view
// tests compare against (its record reads go through commitLog.read, not
// the pinning path) and the benchmarks' baseline.
func (s *Store) GetMessages(dst []byte, topic string, queueID int32, offset int64, maxMsgNums int, maxBytes int,
	match func(tagsCode int64, record []byte) bool) GetResult {
	g := gather{body: dst}
	res := s.get(&g, topic, queueID, offset, maxMsgNums, maxBytes, match)
	res.Body = g.body
	return res
}

// GetMessageViews is GetMessages without the copy: the records come back
// as slices of the mapped commit log files (res.Vec), which stay mapped,
// even if cleanup deletes them, until res.Release is called. match is
// called with the record's view. At most maxViewSlices slices are
// returned; a result needing more is cut short like one reaching maxBytes.
// pages says what to do about records not in memory (views.go): an event
// loop asks for ResidentPages, and the answer is then cut short before
// the first such record (PagesNotResident if that is the first).
// Store.Shutdown unmaps whatever is still held: stop every reader first.
func (s *Store) GetMessageViews(topic string, queueID int32, offset int64, maxMsgNums int, maxBytes int,
	match func(tagsCode int64, record []byte) bool, pages Residency) GetResult {
	p := pinsPool.Get().(*pins)
	p.s = s
	p.setPages(&s.cl, pages)
	g := gather{p: p}
	res := s.get(&g, topic, queueID, offset, maxMsgNums, maxBytes, match)
	if res.Count == 0 {
		p.Release() // filtered records may have pinned a file
		return res
	}
	res.Vec, res.Release = p.vec, p.release
	return res
}

// gather is where get puts the records it keeps: copies appended to body,
// or, with p set, views pinned by p.
type gather struct {
	body  []byte
	p     *pins
	bytes int // record bytes kept
}

// recordOutcome is what gathering one record came to.
type recordOutcome int

const (
	recordKept        recordOutcome = iota
	recordFiltered                  // match said no
	recordGone                      // not (or no longer) in the commit log
	recordNotResident               // its pages are not in memory (ResidentPages): not read
)

// add gathers the record of e unless match refuses it.
func (g *gather) add(cl *commitLog, e cqEntry, match func(int64, []byte) bool) recordOutcome {
	if g.p != nil {
		rec, mf, pos, ok := g.p.view(cl, e.phy, e.size)
		if !ok {
			return recordGone
		}
		if e.phy+int64(e.size) <= g.p.checkBelow && !g.p.resident(mf, pos, int64(len(rec))) {
			return recordNotResident // its file, if newly held, stays so until Release: harmless
		}
		if match != nil && !match(e.tagsCode, rec) {
			return recordFiltered // its file, if newly held, stays so until Release: harmless
		}
		g.p.keep(mf, pos, int64(len(rec)))
		g.bytes += len(rec)
		return recordKept
	}
	start := len(g.body)
	b, ok := cl.read(g.body, e.phy, e.size)
	if !ok {
		return recordGone
	}
	if match != nil && !match(e.tagsCode, b[start:]) {
		g.body = b[:start]
		return recordFiltered
	}
	g.body = b
	g.bytes += len(b) - start
	return recordKept
}

// full reports whether the result cannot take more slices.
func (g *gather) full() bool { return g.p != nil && len(g.p.vec) >= maxViewSlices }

// get is the loop of GetMessages and GetMessageViews.
func (s *Store) get(g *gather, topic string, queueID int32, offset int64, maxMsgNums int, maxBytes int,
	match func(tagsCode int64, record []byte) bool) GetResult {
	res := GetResult{Status: NoMatchedLogicQueue, NextBeginOffset: offset}
	cq := s.findCQ(topic, queueID)
	if cq == nil {
		res.NextBeginOffset = 0
		return res
	}
	minOff, maxOff := cq.minLogical.Load(), cq.maxLogical.Load()
	res.MinOffset, res.MaxOffset = minOff, maxOff
	switch {
	case maxOff == 0:
		res.Status, res.NextBeginOffset = NoMessageInQueue, 0
		return res
	case offset < minOff:
		res.Status, res.NextBeginOffset = OffsetTooSmall, minOff
		return res
	case offset == maxOff:
		res.Status, res.NextBeginOffset = OffsetOverflowOne, offset
		return res
	case offset > maxOff:
		res.Status = OffsetOverflowBadly
		if minOff == 0 {
			res.NextBeginOffset = minOff
		} else {
			res.NextBeginOffset = maxOff
		}
		return res
	}
	if maxMsgNums <= 0 {
		maxMsgNums = 1
	}
	clMin := s.cl.minOffset()
	limit := maxFilterEntries(maxMsgNums)
	var buf [32 * cqEntrySize]byte
	examined := 0
	lastPhy := int64(-1) // the last entry examined (Apache's maxPhyOffsetPulling)
	res.Status = NoMatchedMessage
	readAny := false
loop:
	for examined < limit {
		n, err := cq.read(buf[:min(len(buf), (limit-examined)*cqEntrySize)], offset+int64(examined))
		if err != nil && !readAny {
			// An unmapped file that cannot be read now (no descriptor):
			// nothing found here, and the consumer stays where it is.
			s.sampled.Warn().Err(err).Str("topic", topic).Int32("queueId", queueID).Msg("consume queue not readable now")
			res.Status = OffsetFoundNull
			return res
		}
		if n == 0 {
			break
		}
		readAny = true
		if g.p == nil {
			g.body = growFor(g.body, buf[:n*cqEntrySize], maxMsgNums-res.Count, maxBytes-g.bytes)
		}
		for i := 0; i < n; i++ {
			e := readEntry(buf[i*cqEntrySize:])
			if res.Count > 0 && (res.Count >= maxMsgNums || g.bytes+int(e.size) > maxBytes || g.full()) {
				break loop
			}
			examined++
			lastPhy = e.phy
			if e.filler() || e.phy < clMin {
				if res.Count == 0 {
					res.Status = MessageWasRemoving
				}
				continue
			}
			switch g.add(&s.cl, e, match) {
			case recordNotResident:
				// Left for a reader that may wait: the answer ends before it.
				examined--
				if res.Count == 0 {
					res.Status = PagesNotResident
				}
				break loop
			case recordGone:
				if res.Count == 0 {
					res.Status = MessageWasRemoving
				}
			case recordFiltered:
				if res.Count == 0 {
					res.Status = NoMatchedMessage
				}
			case recordKept:
				res.Count++
				res.Status = Found
			}
		}
		if n < len(buf)/cqEntrySize {
			break // end of file or of the queue
		}
	}
	if !readAny {
		res.Status = OffsetFoundNull
		res.NextBeginOffset = min(cq.rollNextFile(offset), maxOff)
		return res
	}
	res.NextBeginOffset = offset + int64(examined)
	res.SuggestPullingFromSlave = res.Count > 0 && lastPhy >= 0 && s.cl.maxOffset.Load()-lastPhy > s.coldDistance
	return res
}

// growFor makes room in body for the records the entries will most likely
// add (up to count of them within maxBytes, at least one), so a pull copies
// each record once instead of re-growing the result.
func growFor(body, entries []byte, count, maxBytes int) []byte {
	need := 0
	for i := 0; i+cqEntrySize <= len(entries) && count > 0; i += cqEntrySize {
		e := readEntry(entries[i:])
		if e.filler() || e.size <= 0 {
			continue
		}
		if need > 0 && need+int(e.size) > maxBytes {
			break
		}
		need += int(e.size)
		count--
	}
	return slices.Grow(body, need)
}
