package store

import (
	"errors"

	"github.com/rocketgo/rocketgo/message"
)

// dispatchLoop builds consume queue entries behind the append, woken by
// every Put (ReputMessageService).
func (s *Store) dispatchLoop() {
	for {
		select {
		case <-s.quit:
			return
		case <-s.dispatchCh:
		}
		s.dispatchAvailable()
	}
}

// dispatchAvailable dispatches every complete record between the reput
// cursor and the commit log end, then calls OnDispatch for touched queues.
// Only one goroutine calls it at a time (the dispatcher, or Open/Shutdown
// when the dispatcher is not running).
func (s *Store) dispatchAvailable() {
	s.round++
	s.touched = s.touched[:0]
	for !s.dispatchStalled.Load() {
		cur, end := s.reput.Load(), s.cl.maxOffset.Load()
		if cur >= end {
			break
		}
		cur = s.dispatchFile(cur, end)
		s.reput.Store(cur)
	}
	if s.onDispatch != nil {
		for _, cq := range s.touched {
			s.onDispatch(cq.topic, cq.queueID, cq.maxLogical.Load())
		}
	}
	clear(s.touched)
}

// dispatchFile dispatches records of the file holding cur, up to end, and
// returns the new cursor.
func (s *Store) dispatchFile(cur, end int64) int64 {
	s.cl.q.mu.RLock()
	defer s.cl.q.mu.RUnlock()
	mf := s.cl.q.findLocked(cur)
	if mf == nil {
		if len(s.cl.q.files) > 0 && cur < s.cl.q.files[0].start {
			return s.cl.q.files[0].start // deleted files: skip ahead
		}
		s.stall(cur, errors.New("no commit log file"))
		return cur
	}
	limit := min(mf.wrote.Load(), end-mf.start)
	pos := cur - mf.start
	for pos < limit {
		v, _, err := message.DecodeRecordView(mf.data[pos:limit])
		if errors.Is(err, message.ErrBlank) {
			return mf.start + mf.size
		}
		if err != nil {
			s.stall(mf.start+pos, err)
			return mf.start + pos
		}
		if err := s.dispatchRecord(&v); err != nil {
			s.stall(mf.start+pos, err)
			return mf.start + pos
		}
		pos += int64(v.TotalSize)
	}
	if pos >= mf.size {
		return mf.start + mf.size
	}
	return mf.start + pos
}

func (s *Store) stall(at int64, err error) {
	s.dispatchStalled.Store(true)
	s.log.Error().Err(err).Int64("offset", at).Msg("dispatch stopped at undecodable commit log data")
}

// dispatchRecord builds the index entries and the consume queue entry of
// one record. An index failure stops indexing (logged once), not dispatch.
func (s *Store) dispatchRecord(v *message.RecordView) error {
	if s.idx != nil {
		if err := s.idx.build(v); err != nil {
			s.log.Error().Err(err).Int64("offset", v.PhysicalOffset).Msg("index build failed, indexing stopped")
		}
	}
	if !hasQueueOffset(v.SysFlag) {
		return nil
	}
	cq := s.findOrCreateCQ(v.Topic, v.QueueID)
	if cq == nil {
		return nil
	}
	wrote, err := cq.put(cqEntry{phy: v.PhysicalOffset, size: v.TotalSize, tagsCode: s.tagsCode(v)}, v.QueueOffset)
	if err != nil {
		return err
	}
	if wrote {
		s.lastDispatchTs.Store(v.StoreTimestamp)
		if cq.touched != s.round {
			cq.touched = s.round
			s.touched = append(s.touched, cq)
		}
	}
	return nil
}
