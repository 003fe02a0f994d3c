package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/message"
)

// load maps the files and recovers (DefaultMessageStore.load + recover):
// consume queues first, then the commit log (normal: from the third-from-
// last file; after a crash: from the newest file the checkpoint proves
// indexed), then truncates dirty consume queue entries, re-dispatches what
// the consume queues miss and rebuilds the queue offset table.
func (s *Store) load() error {
	aborted, sameBoot := readAbort(s.abortPath(), s.bootID)
	lastExitOK := !aborted
	var err error
	if s.ckpt, err = loadCheckpoint(mustStorePath(s.cfg.StorePathRootDir, fileCheckpoint)); err != nil {
		return err
	}
	if err := s.cl.q.load(); err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	rebuildIndexFrom := int64(-1)
	if s.idx != nil {
		if rebuildIndexFrom, err = s.idx.load(lastExitOK, sameBoot, s.ckpt.index.Load()); err != nil {
			return fmt.Errorf("open store: %w", err)
		}
	}
	if err := s.loadConsumeQueues(lastExitOK); err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	files := s.cl.q.files
	if len(files) == 0 {
		// No commit log: consume queues index nothing (Java destroys them).
		var derr error
		s.eachCQLocked(func(cq *consumeQueue) {
			if err := cq.destroy(); err != nil && derr == nil {
				derr = err
			}
		})
		if derr != nil {
			return fmt.Errorf("open store: %w", derr)
		}
		clear(s.cqs)
		clear(s.lmqs)
		s.lmqNum.Store(0)
		s.log.Info().Bool("lastExitOK", lastExitOK).Msg("store loaded empty")
		return nil
	}

	start := max(len(files)-3, 0)
	if !lastExitOK {
		start = s.abnormalStartFile()
	}
	lastLog := time.Now()
	processOffset, why := s.cl.scanFrom(start, s.cfg.CheckCRCOnRecover, s.cfg.Replica, func(done, total int64) {
		if time.Since(lastLog) >= 5*time.Second {
			lastLog = time.Now()
			s.log.Info().Int64("bytesDone", done).Int64("bytesTotal", total).Msg("commit log recovery progress")
		}
	})
	ev := s.log.Info()
	endOfData := why != nil && zeroHeaderAt(files, processOffset)
	if !lastExitOK || (why != nil && !endOfData) {
		ev = s.log.Warn()
	}
	ev = ev.Bool("lastExitOK", lastExitOK).Int64("startOffset", files[start].start).Int64("processOffset", processOffset)
	if endOfData {
		// A scan ends at the zeros after the last record: that is where
		// the data ends, not a bad record.
		ev = ev.Str("stopReason", "end of data")
	} else {
		ev = ev.AnErr("stopReason", why)
	}
	ev.Msg("commit log recovered")
	scanStart := files[start].start
	if why != nil {
		// A bad record followed by a later file that starts with a valid
		// one is damage, not a torn tail: truncating would drop good data.
		for _, mf := range files {
			if mf.start <= processOffset {
				continue
			}
			if _, res, _ := checkRecord(mf.data, s.cfg.CheckCRCOnRecover); res == scanOK {
				return fmt.Errorf("open store: commit log damaged at offset %d (%v) but %s holds valid records; "+
					"not truncating, restore or move the damaged files: %w", processOffset, why, mf.path, ErrCorrupt)
			}
		}
	}
	if err := s.cl.q.truncate(processOffset, truncSync); err != nil {
		return fmt.Errorf("open store: truncate commit log at %d: %w", processOffset, err)
	}
	s.cl.maxOffset.Store(processOffset)
	s.cl.flushedWhere.Store(processOffset)

	clMin := s.cl.q.files[0].start
	var maxCQPhy int64
	zeroed := !lastExitOK // consume queue tails zeroed by recover
	var cqErr error
	s.eachCQLocked(func(cq *consumeQueue) {
		if cqErr != nil {
			return
		}
		cut, err := cq.truncateDirty(processOffset)
		if err == nil {
			err = cq.correctMinOffsetLocked(clMin)
		}
		if err != nil {
			cqErr = err
			return
		}
		zeroed = zeroed || cut
		maxCQPhy = max(maxCQPhy, cq.maxPhy)
	})
	if cqErr != nil {
		return fmt.Errorf("open store: %w", cqErr)
	}
	if zeroed && s.cqCountLocked() > 0 {
		// One sync for every consume queue tail zeroed (truncZero).
		if err := s.ops.syncFS(s.cqRoot); err != nil {
			return fmt.Errorf("open store: %w", err)
		}
	}
	reput := maxCQPhy
	if !lastExitOK {
		reput = min(reput, scanStart)
	}
	if rebuildIndexFrom >= 0 {
		// Apache loses the entries of a deleted index file that lie before
		// the abnormal-recovery start; re-dispatching from the file's begin
		// offset rebuilds them (consume queue entries are idempotent).
		reput = min(reput, rebuildIndexFrom)
	}
	reput = min(max(reput, clMin), processOffset)
	s.reput.Store(reput)
	if s.cfg.ConfirmGate {
		// Apache's recoverNormally/Abnormally correction of the kept
		// confirm offset into the recovered log.
		s.confirm.Store(min(max(s.ckpt.confirm.Load(), clMin), processOffset))
	}
	t0 := time.Now()
	derr := s.dispatchAvailable()
	if processOffset-reput > 0 {
		s.log.Info().Int64("fromOffset", reput).Int64("toOffset", processOffset).
			Dur("took", time.Since(t0)).Msg("commit log re-dispatched to consume queues and index")
	}
	if s.dispatchStalled.Load() {
		return fmt.Errorf("open store: commit log undecodable at %d before recovered end %d: %w", s.reput.Load(), processOffset, ErrCorrupt)
	}
	s.eachCQLocked(func(cq *consumeQueue) {
		s.queueOffsets[queueKey{cq.topic, cq.queueID}] = cq.maxLogical.Load()
	})
	if derr == nil && s.reput.Load() < processOffset && s.cfg.ConfirmGate {
		// Held at the confirm offset: the records after it still own
		// their queue offsets.
		if err := s.scanQueueOffsets(s.reput.Load(), processOffset); err != nil {
			return fmt.Errorf("open store: %w", err)
		}
	}
	if derr != nil {
		// Not the data's fault (a resource, most likely): the dispatcher
		// retries once started. Appends must still get the next queue
		// offsets, which the records not yet dispatched carry.
		s.log.Warn().Err(derr).Int64("offset", s.reput.Load()).Int64("toOffset", processOffset).
			Msg("re-dispatch incomplete, the dispatcher retries after start")
		if err := s.scanQueueOffsets(s.reput.Load(), processOffset); err != nil {
			return fmt.Errorf("open store: %w", err)
		}
	}
	return nil
}

// scanQueueOffsets raises the offset table to one past the queue offset of
// every record in [from, to) (records recovery has checked).
func (s *Store) scanQueueOffsets(from, to int64) error {
	for cur := from; cur < to; {
		mf := s.cl.q.findLocked(cur)
		if mf == nil {
			return fmt.Errorf("scan queue offsets at %d: no commit log file: %w", cur, ErrCorrupt)
		}
		pos, end := cur-mf.start, min(mf.size, to-mf.start)
		for pos < end {
			v, _, err := message.DecodeRecordView(mf.data[pos:end])
			if errors.Is(err, message.ErrBlank) {
				break
			}
			if err != nil {
				return fmt.Errorf("scan queue offsets at %d: %w (%w)", mf.start+pos, err, ErrCorrupt)
			}
			if hasQueueOffset(v.SysFlag) && checkQueueName(string(v.Topic), v.QueueID) == nil {
				key := queueKey{string(v.Topic), v.QueueID}
				s.queueOffsets[key] = max(s.queueOffsets[key], v.QueueOffset+1)
				if s.multiDispatch() {
					s.scanLMQOffsets(&v)
				}
			}
			pos += int64(v.TotalSize)
		}
		cur = mf.start + mf.size
	}
	return nil
}

// abnormalStartFile is the newest commit log file whose first record was
// stored no later than the checkpoint's min timestamp (0 if none).
func (s *Store) abnormalStartFile() int {
	minTs := s.ckpt.minTimestamp()
	files := s.cl.q.files
	for i := len(files) - 1; i >= 0; i-- {
		v, _, err := message.DecodeRecordView(files[i].data)
		if err != nil {
			continue
		}
		if v.StoreTimestamp != 0 && v.StoreTimestamp <= minTs {
			return i
		}
	}
	return 0
}

// loadConsumeQueues maps and recovers every consumequeue/<topic>/<queueId>.
// Anything else there (files, symbolic links, names no topic or queue id
// can have) is left alone and logged: it is not the store's.
func (s *Store) loadConsumeQueues(lastExitOK bool) error {
	topics, err := os.ReadDir(s.cqRoot)
	if err != nil {
		return fmt.Errorf("load consumequeue: %w", err)
	}
	foreign := func(name string) {
		s.log.Warn().Str("path", filepath.Join(s.cqRoot, name)).Msg("foreign entry under consumequeue ignored")
	}
	for _, t := range topics {
		if !t.IsDir() || !SafeName(t.Name()) {
			foreign(t.Name())
			continue
		}
		tdir := mustStorePath(s.cqRoot, t.Name())
		qids, err := os.ReadDir(tdir)
		if err != nil {
			return fmt.Errorf("load consumequeue %s: %w", t.Name(), err)
		}
		for _, q := range qids {
			id, err := strconv.ParseInt(q.Name(), 10, 32)
			if !q.IsDir() || err != nil || id < 0 || strconv.FormatInt(id, 10) != q.Name() {
				foreign(filepath.Join(t.Name(), q.Name()))
				continue
			}
			dir, err := cqDir(s.cqRoot, t.Name(), int32(id))
			if err != nil {
				return fmt.Errorf("BUG: load consumequeue: %w", err)
			}
			cq := newConsumeQueue(dir, t.Name(), int32(id), s)
			if err := cq.q.load(); err != nil {
				return fmt.Errorf("load consumequeue: %w", err)
			}
			cq.shareFirstPath()
			if err := cq.recover(lastExitOK); err != nil {
				return err
			}
			s.addCQLocked(cq)
		}
	}
	return nil
}

// zeroHeaderAt reports whether the commit log has a zero record header at
// off: the never-written rest of a file, where every clean scan stops.
func zeroHeaderAt(files []*mappedFile, off int64) bool {
	for _, mf := range files {
		if off >= mf.start && off+8 <= mf.start+int64(len(mf.data)) {
			return binary.BigEndian.Uint64(mf.data[off-mf.start:]) == 0
		}
	}
	return false
}
