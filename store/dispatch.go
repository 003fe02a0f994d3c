package store

import (
	"errors"
	"fmt"
	"time"

	"github.com/rocketgo/rocketgo/message"
)

// dispatchLoop builds consume queue entries behind the append, woken by
// every Put (ReputMessageService). A record it cannot dispatch for a
// reason other than its bytes (the kernel refusing a mapping, a
// descriptor or space) is retried after a pause that doubles up to a
// second, with a sampled log line; only undecodable data stops dispatch
// for good (dispatchStalled).
func (s *Store) dispatchLoop() {
	var retry <-chan time.Time
	var backoff time.Duration
	var since time.Time
	for {
		if retry == nil {
			select {
			case <-s.quit:
				return
			case <-s.dispatchCh:
			}
		} else {
			select {
			case <-s.quit:
				return
			case <-retry:
			}
		}
		s.dispatchMu.Lock()
		err := s.dispatchAvailable()
		s.dispatchMu.Unlock()
		if err == nil {
			if retry != nil {
				s.log.Info().Int64("offset", s.reput.Load()).Dur("waited", time.Since(since)).Msg("dispatch resumed")
			}
			backoff, retry = 0, nil
			continue
		}
		if retry == nil {
			since = time.Now()
		}
		backoff = min(max(2*backoff, 10*time.Millisecond), time.Second)
		s.sampled.Warn().Err(err).Int64("offset", s.reput.Load()).Dur("retryIn", backoff).
			Msg("dispatch cannot proceed, retrying")
		retry = time.After(backoff)
	}
}

// dispatchAvailable dispatches every complete record between the reput
// cursor and the commit log end, then calls OnDispatch for touched queues.
// It stops at a record it cannot dispatch now and returns why (the cursor
// stays at that record). Only one goroutine calls it at a time (the
// dispatcher, or Open/Shutdown when the dispatcher is not running).
func (s *Store) dispatchAvailable() error {
	s.round = s.entries + 1 // never 0, the touched of a queue never written
	s.touched = s.touched[:0]
	var err error
	for !s.dispatchStalled.Load() {
		cur, end := s.reput.Load(), s.dispatchEnd()
		if cur >= end {
			break
		}
		next, ferr := s.dispatchFile(cur, end)
		s.reput.Store(next)
		if err = ferr; err != nil || next == cur {
			break // stopped, or waiting at a split record (replica.go)
		}
	}
	for _, cq := range s.touched {
		max := cq.maxLogical.Load()
		s.arrivals.arrived(cq.topic, cq.queueID, max)
		if s.onDispatch != nil {
			s.onDispatch(cq.topic, cq.queueID, max)
		}
	}
	clear(s.touched)
	return err
}

// dispatchFile dispatches records of the file holding cur, up to end, and
// returns the new cursor. The file is held, not the list locked, while its
// records are dispatched: that makes consume queue and index files, and a
// roll of the commit log (the list's write lock, under the append lock)
// must not wait for it.
func (s *Store) dispatchFile(cur, end int64) (int64, error) {
	s.cl.q.mu.RLock()
	mf := s.cl.q.findLocked(cur)
	if mf == nil {
		next := cur
		if len(s.cl.q.files) > 0 && cur < s.cl.q.files[0].start {
			next = s.cl.q.files[0].start // deleted files: skip ahead
		}
		s.cl.q.mu.RUnlock()
		if next == cur {
			s.stall(cur, errors.New("no commit log file"))
		}
		return next, nil
	}
	mf.hold()
	s.cl.q.mu.RUnlock()
	defer func() {
		if err := mf.release(); err != nil {
			s.log.Error().Err(err).Msg("dispatch: release commit log file")
		}
	}()
	wrote := mf.wrote.Load()
	limit := min(wrote, end-mf.start)
	pos := cur - mf.start
	s.splitAt.Store(-1)
	replica := s.replicaDispatch.Load()
	for pos < limit {
		if replica && partialRecord(mf.data[pos:limit], mf.size-pos) {
			// A frame ended inside this record: the rest comes with the
			// next (checked first: a failed decode costs an error value).
			s.splitAt.Store(mf.start + pos)
			return mf.start + pos, nil
		}
		if limit < wrote && (limit-pos < 8 || int64(be32(mf.data[pos:])) > limit-pos) {
			// The confirm offset (confirm.go) lies inside this record: a
			// slave's ack ends where its last frame did. Wait for it.
			s.splitAt.Store(mf.start + pos)
			return mf.start + pos, nil
		}
		v, _, err := message.DecodeRecordView(mf.data[pos:limit])
		if errors.Is(err, message.ErrBlank) {
			return mf.start + mf.size, nil
		}
		if err != nil {
			s.stall(mf.start+pos, err)
			return mf.start + pos, nil
		}
		if err := s.dispatchRecord(&v); err != nil {
			return mf.start + pos, fmt.Errorf("dispatch record at %d: %w", mf.start+pos, err)
		}
		pos += int64(v.TotalSize)
	}
	if pos >= mf.size {
		return mf.start + mf.size, nil
	}
	return mf.start + pos, nil
}

func (s *Store) stall(at int64, err error) {
	s.dispatchStalled.Store(true)
	s.log.Error().Err(err).Int64("offset", at).Msg("dispatch stopped at undecodable commit log data")
}

// dispatchRecord builds the index entries and the consume queue entry of
// one record. Index and consume queue entries are idempotent, so a record
// that failed is dispatched again from the start. The index never holds
// dispatch back: a resource shortage pauses indexing (index.go), another
// failure stops it (logged once).
func (s *Store) dispatchRecord(v *message.RecordView) error {
	if s.idx != nil {
		if err := s.idx.build(v); err != nil {
			s.log.Error().Err(err).Int64("offset", v.PhysicalOffset).Msg("index build failed, indexing stopped")
		}
	}
	if s.replicaDispatch.Load() {
		// A slave's records are the master's: the newest dispatched one
		// dates what its flush covers (the checkpoint's physic time).
		s.cl.lastStoreTs.Store(v.StoreTimestamp)
	}
	if !hasQueueOffset(v.SysFlag) {
		return nil
	}
	cq := s.findOrCreateCQ(v.Topic, v.QueueID)
	if cq == nil {
		return nil
	}
	e := cqEntry{phy: v.PhysicalOffset, size: v.TotalSize, tagsCode: s.tagsCode(v)}
	wrote, err := cq.put(e, v.QueueOffset, v.StoreTimestamp)
	if err != nil {
		return err
	}
	if wrote {
		s.entries++
		s.lastDispatchTs.Store(v.StoreTimestamp)
		if cq.touched.Load() != s.round {
			cq.touched.Store(s.round)
			s.touched = append(s.touched, cq)
		}
	}
	if s.multiDispatch() {
		return s.dispatchLMQ(v, e) // after the parent's: a retry rewrites neither twice
	}
	return nil
}
