package store

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The offset waiter: one completion mechanism keyed by commit log offset,
// the shape of etcd's pkg/wait WaitTime (waiters keyed by a monotonic
// position, a trigger answers everything at or below it). A caller asks
// to be told once the commit log is durable up to an offset in every way
// it needs; each source reports how far it got:
//
//   - Flushed: fsynced here. The commit log flush goroutine reports
//     flushedWhere after every flush; one msync answers every waiter it
//     covers (group commit, Apache's GroupCommitService).
//   - Replicated: acknowledged by enough replicas (SYNC_MASTER, Apache's
//     GroupTransferService). Reported by ha through Advance and FailWaits
//     once it exists; until EnableSource turns it on, a waiter needing it
//     is answered ErrReplicaNotAvailable at once.
//
// A waiter is answered nil once every source it needs reached its offset,
// or with the error of the first source that fails it: its timeout passed
// (ErrFlushTimeout after syncFlushTimeout, ErrReplicaTimeout), the source
// failed (a sticky flush error; replicas lost), or the store closed
// (ErrClosed). When two fail in the same pass the replica's error wins, as
// in Apache's thenCombine of the flush and replica futures. Apache waits for
// both futures before answering; a failure here answers at once, which
// differs only in when a waiter failed by both hears it.
//
// Answers come from the goroutine that reports progress (the flush
// goroutine, ha, Shutdown), in offset order per combination of sources,
// one pass at a time; a waiter already satisfied, or one the store can no
// longer satisfy, is answered inside Wait, on the caller's goroutine.
// Waiting allocates nothing per waiter beyond the caller's callback: the
// lists and the answer buffer are reused.

// Durability is a set of sources a waiter needs (a bit per source).
type Durability uint8

// Sources of durability.
const (
	// Flushed: the commit log is fsynced up to the offset (SYNC_FLUSH).
	Flushed Durability = 1 << iota
	// Replicated: replicas acknowledged the offset (SYNC_MASTER).
	Replicated

	numSources = iota
)

func (d Durability) String() string {
	switch d {
	case 0:
		return "none"
	case Flushed:
		return "flushed"
	case Replicated:
		return "replicated"
	case Flushed | Replicated:
		return "flushed+replicated"
	}
	return fmt.Sprintf("Durability(%#x)", uint8(d))
}

// sourceIndex is the index of a single source's bit.
func sourceIndex(src Durability) int {
	for i := range numSources {
		if src == 1<<i {
			return i
		}
	}
	panic(fmt.Sprintf("BUG: %v is not one source", src))
}

// sourceState is one source's progress; guarded by offsetWaiter.mu except
// timeout.
type sourceState struct {
	enabled bool
	// unavailable: a new waiter is refused at once (ErrReplicaNotAvailable:
	// no replica connected); waiters already registered keep waiting.
	unavailable bool
	// maxGap: a new waiter whose end is maxGap or more beyond reached is
	// refused at once (haSlaveFallbehindMax); 0 = no limit.
	maxGap  int64
	reached int64        // the source's offset: everything below is durable
	err     error        // sticky failure: every waiter needing it gets err
	timeout atomic.Int64 // ns; a waiter unsatisfied by then gets timeoutErr
	// timeoutErr is what a waiter hears when the source misses its timeout.
	timeoutErr error
}

// waitReq is one waiter.
type waitReq struct {
	end  int64 // the offset to reach: a record's end
	at   int64 // when it was registered, ns since offsetWaiter.epoch
	done func(error)
}

// waitAnswer is an answer to give outside the lock.
type waitAnswer struct {
	done func(error)
	err  error
}

// offsetWaiter holds the waiters, one list per combination of sources,
// each sorted by end: a source reaching an offset answers a prefix.
type offsetWaiter struct {
	epoch time.Time

	// answerMu serialises the passes that answer (a pass collects under mu
	// and calls back after releasing it). Wait never takes it: a callback
	// may Wait again, but must not call Advance or FailWaits.
	answerMu sync.Mutex
	out      []waitAnswer // guarded by answerMu

	// end is the commit log's end (nil: not checked). A waiter's record was
	// appended before it waits, so an end beyond it means a truncation cut
	// the record first; read under mu, which cut takes after the end came
	// down, so a waiter is either cut or refused.
	end *atomic.Int64

	mu     sync.Mutex
	closed error // guarded by mu: once set, every waiter gets it
	srcs   [numSources]sourceState
	lists  [1 << numSources][]waitReq // by Durability; guarded by mu
	n      atomic.Int64               // waiters in the lists
}

func newOffsetWaiter() *offsetWaiter {
	w := &offsetWaiter{epoch: time.Now()}
	w.srcs[sourceIndex(Flushed)].timeoutErr = ErrFlushTimeout
	w.srcs[sourceIndex(Replicated)].timeoutErr = ErrReplicaTimeout
	return w
}

func (w *offsetWaiter) now() int64 { return int64(time.Since(w.epoch)) }

// enable turns a source on with its timeout and its offset so far.
func (w *offsetWaiter) enable(src Durability, timeout time.Duration, reached int64) {
	w.mu.Lock()
	st := &w.srcs[sourceIndex(src)]
	st.enabled = true
	st.reached = max(st.reached, reached)
	st.timeout.Store(int64(timeout))
	w.mu.Unlock()
}

// limit sets a source's availability and maximum gap (see sourceState).
func (w *offsetWaiter) limit(src Durability, available bool, maxGap int64) {
	w.mu.Lock()
	st := &w.srcs[sourceIndex(src)]
	st.unavailable = !available
	st.maxGap = maxGap
	w.mu.Unlock()
}

// setTimeout changes a source's timeout for waiters registered from now on
// and those waiting (their deadline is registration + timeout).
func (w *offsetWaiter) setTimeout(src Durability, timeout time.Duration) {
	w.srcs[sourceIndex(src)].timeout.Store(int64(timeout))
}

// pending is the number of waiters not answered yet.
func (w *offsetWaiter) pending() int64 { return w.n.Load() }

// pendingFor reports whether a waiter needs src.
func (w *offsetWaiter) pendingFor(src Durability) bool {
	if w.n.Load() == 0 {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for need, l := range w.lists {
		if Durability(need)&src != 0 && len(l) > 0 {
			return true
		}
	}
	return false
}

// wait registers done to be called once end is durable for every source of
// need (nil), or with the error that ends the wait. It calls done itself,
// before returning, when end is durable already or cannot become so.
func (w *offsetWaiter) wait(end int64, need Durability, done func(error)) {
	if need == 0 || need >= 1<<numSources {
		done(fmt.Errorf("BUG: wait for %v", need))
		return
	}
	w.mu.Lock()
	if w.end != nil && end > w.end.Load() {
		w.mu.Unlock()
		done(fmt.Errorf("commit log offset %d beyond the end %d: %w", end, w.end.Load(), ErrTruncated))
		return
	}
	if w.closed == nil && end <= w.reachedLocked(need) {
		w.mu.Unlock()
		done(nil) // durable already, even if a source failed since
		return
	}
	if err := w.refusalLocked(need, end); err != nil {
		w.mu.Unlock()
		done(err)
		return
	}
	l := append(w.lists[need], waitReq{end: end, at: w.now(), done: done})
	// Registrations come nearly in offset order (each after its append,
	// outside the append lock): one step back, rarely more.
	i := len(l) - 1
	for ; i > 0 && l[i-1].end > end; i-- {
	}
	if i < len(l)-1 {
		r := l[len(l)-1]
		copy(l[i+1:], l[i:len(l)-1])
		l[i] = r
	}
	w.lists[need] = l
	w.n.Add(1)
	w.mu.Unlock()
}

// refusalLocked is why a waiter for need up to end cannot wait at all, or
// nil.
func (w *offsetWaiter) refusalLocked(need Durability, end int64) error {
	if w.closed != nil {
		return w.closed
	}
	for i := range numSources {
		if need&(1<<i) == 0 {
			continue
		}
		st := &w.srcs[i]
		switch {
		case !st.enabled:
			if Durability(1<<i) == Replicated {
				return ErrReplicaNotAvailable
			}
			return fmt.Errorf("BUG: wait for disabled source %v", Durability(1<<i))
		case st.err != nil:
			return st.err
		case st.unavailable:
			return fmt.Errorf("commit log offset %d: no replica: %w", end, ErrReplicaNotAvailable)
		case st.maxGap > 0 && end-st.reached >= st.maxGap:
			return fmt.Errorf("commit log offset %d: best replica at %d, %d or more behind: %w",
				end, st.reached, st.maxGap, ErrReplicaNotAvailable)
		}
	}
	return nil
}

// reachedLocked is the offset every source of need reached.
func (w *offsetWaiter) reachedLocked(need Durability) int64 {
	r := int64(-1)
	for i := range numSources {
		if need&(1<<i) != 0 && (r < 0 || w.srcs[i].reached < r) {
			r = w.srcs[i].reached
		}
	}
	return r
}

// advance records that src reached offset and answers the waiters that
// completes.
func (w *offsetWaiter) advance(src Durability, offset int64) {
	w.answerMu.Lock()
	defer w.answerMu.Unlock()
	w.mu.Lock()
	st := &w.srcs[sourceIndex(src)]
	if offset > st.reached {
		st.reached = offset
		for need := range w.lists {
			if Durability(need)&src != 0 && len(w.lists[need]) > 0 {
				w.answerUpToLocked(Durability(need), w.reachedLocked(Durability(need)))
			}
		}
	}
	w.mu.Unlock()
	w.answerCollected()
}

// answerUpToLocked moves the waiters of need with end <= reached to out.
// Caller holds answerMu and mu.
func (w *offsetWaiter) answerUpToLocked(need Durability, reached int64) {
	l := w.lists[need]
	k := 0
	for k < len(l) && l[k].end <= reached {
		w.out = append(w.out, waitAnswer{done: l[k].done})
		k++
	}
	w.dropLocked(need, k)
}

// dropLocked removes the first k waiters of need (answered).
func (w *offsetWaiter) dropLocked(need Durability, k int) {
	if k == 0 {
		return
	}
	l := w.lists[need]
	n := copy(l, l[k:])
	clear(l[n:]) // no callback stays reachable from the spare capacity
	w.lists[need] = l[:n]
	w.n.Add(-int64(k))
}

// expire answers the waiters a source's timeout has passed for.
func (w *offsetWaiter) expire() {
	if w.n.Load() == 0 {
		return
	}
	w.answerMu.Lock()
	defer w.answerMu.Unlock()
	now := w.now()
	w.mu.Lock()
	for need := range w.lists {
		l := w.lists[need]
		if len(l) == 0 {
			continue
		}
		keep := l[:0]
		for _, r := range l {
			if err := w.timedOutLocked(Durability(need), r, now); err != nil {
				w.out = append(w.out, waitAnswer{done: r.done, err: err})
				continue
			}
			keep = append(keep, r)
		}
		clear(l[len(keep):])
		w.n.Add(-int64(len(l) - len(keep)))
		w.lists[need] = keep
	}
	w.mu.Unlock()
	w.answerCollected()
}

// timedOutLocked is the error of the source of need that r timed out on
// (the replica's first), or nil.
func (w *offsetWaiter) timedOutLocked(need Durability, r waitReq, now int64) error {
	for i := numSources - 1; i >= 0; i-- {
		st := &w.srcs[i]
		if need&(1<<i) != 0 && st.reached < r.end && now-r.at >= st.timeout.Load() {
			return fmt.Errorf("commit log offset %d not %v within %v: %w",
				r.end, Durability(1<<i), time.Duration(st.timeout.Load()), st.timeoutErr)
		}
	}
	return nil
}

// fail answers every waiter that needs src and src has not covered with
// err. Sticky: later waiters needing src get err at once (a failed fsync);
// else the source goes on (replicas lost now may come back).
func (w *offsetWaiter) fail(src Durability, err error, sticky bool) {
	w.answerMu.Lock()
	defer w.answerMu.Unlock()
	w.mu.Lock()
	st := &w.srcs[sourceIndex(src)]
	if sticky && st.err == nil {
		st.err = err
	}
	for need := range w.lists {
		if Durability(need)&src == 0 {
			continue
		}
		l := w.lists[need]
		keep := l[:0]
		for _, r := range l {
			if r.end > st.reached {
				w.out = append(w.out, waitAnswer{done: r.done, err: err})
				continue
			}
			keep = append(keep, r)
		}
		clear(l[len(keep):])
		w.n.Add(-int64(len(l) - len(keep)))
		w.lists[need] = keep
	}
	w.mu.Unlock()
	w.answerCollected()
}

// cut is a truncation of the commit log at offset: the bytes beyond it are
// gone, so no source covers them any more (a source's offset comes down to
// offset) and every waiter whose record ended beyond it gets err. Records
// written there later have other contents: a waiter for the cut one must
// not be answered by their progress.
func (w *offsetWaiter) cut(offset int64, err error) {
	w.answerMu.Lock()
	defer w.answerMu.Unlock()
	w.mu.Lock()
	for i := range w.srcs {
		w.srcs[i].reached = min(w.srcs[i].reached, offset)
	}
	for need := range w.lists {
		l := w.lists[need]
		k := len(l) // sorted by end: the cut waiters are a suffix
		for k > 0 && l[k-1].end > offset {
			k--
		}
		for _, r := range l[k:] {
			w.out = append(w.out, waitAnswer{done: r.done, err: err})
		}
		clear(l[k:])
		w.n.Add(-int64(len(l) - k))
		w.lists[need] = l[:k]
	}
	w.mu.Unlock()
	w.answerCollected()
}

// close answers every waiter with err, and every later one.
func (w *offsetWaiter) close(err error) {
	w.answerMu.Lock()
	defer w.answerMu.Unlock()
	w.mu.Lock()
	if w.closed == nil {
		w.closed = err
	}
	for need, l := range w.lists {
		for _, r := range l {
			w.out = append(w.out, waitAnswer{done: r.done, err: w.closed})
		}
		w.dropLocked(Durability(need), len(l))
	}
	w.mu.Unlock()
	w.answerCollected()
}

// answerCollected calls back what a pass collected, in order. Caller
// holds answerMu, not mu.
func (w *offsetWaiter) answerCollected() {
	for i := range w.out {
		w.out[i].done(w.out[i].err)
	}
	clear(w.out)
	w.out = w.out[:0]
	if cap(w.out) > 4096 {
		w.out = slices.Clip(w.out[:0:0]) // a burst's buffer is not kept for good
	}
}

// Wait calls done once the commit log is durable up to end (a record's
// PhysicalOffset + WroteBytes) for every source of need: nil, or the error
// that ends the wait — ErrFlushTimeout (after syncFlushTimeout; the broker
// answers FLUSH_DISK_TIMEOUT), ErrReplicaTimeout (FLUSH_SLAVE_TIMEOUT),
// ErrReplicaNotAvailable (SLAVE_NOT_AVAILABLE: no replication source), a
// sticky flush error, or ErrClosed when the store shuts down first. done is
// called from the goroutine that made the progress (the flush goroutine,
// ha) or, when end is durable already or cannot become so, before Wait
// returns; it must not block, nor call Advance or FailWaits.
func (s *Store) Wait(end int64, need Durability, done func(error)) {
	if s.closing.Load() {
		done(ErrClosed)
		return
	}
	s.waits.wait(end, need, done)
	if need&Flushed != 0 {
		s.signal(s.flushCh) // group commit: one flush for every waiter since the last
	}
}

// WaitFlush is Wait(end, Flushed, done): SYNC_FLUSH.
func (s *Store) WaitFlush(end int64, done func(error)) { s.Wait(end, Flushed, done) }

// EnableSource turns on a source other than Flushed (Replicated: ha, when
// it serves SYNC_MASTER) with its timeout (Apache's slaveTimeout) and the
// offset it covers already.
func (s *Store) EnableSource(src Durability, timeout time.Duration, reached int64) {
	s.waits.enable(src, timeout, reached)
}

// Advance reports that src covers the commit log up to offset (ha: the
// offset enough replicas acknowledged) and answers the waiters it
// completes, from the caller's goroutine.
func (s *Store) Advance(src Durability, offset int64) { s.waits.advance(src, offset) }

// FailWaits answers every waiter that needs src and is not covered by it
// with err now (ha: ErrReplicaNotAvailable when no replica is in sync).
// Later waiters wait as usual.
func (s *Store) FailWaits(src Durability, err error) { s.waits.fail(src, err, false) }

// LimitSource sets when a new waiter for src (Replicated) is refused at
// once with ErrReplicaNotAvailable instead of waiting: while !available
// (no replica connected), or when its end is maxGap or more beyond what
// src reached (haSlaveFallbehindMax; 0 = no limit). Waiters registered
// before keep waiting: a replica back within their timeout answers them.
func (s *Store) LimitSource(src Durability, available bool, maxGap int64) {
	s.waits.limit(src, available, maxGap)
}
