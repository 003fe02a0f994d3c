package store

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Cleanup (CleanCommitLogService, CleanConsumeQueueService): every
// cleanResourceInterval, delete commit log files from the oldest (never the
// last, never one from the middle) that are older than fileReservedTime,
// when the hour is in deleteWhen or the disk is fuller than
// diskMaxUsedSpaceRatio; above diskSpaceCleanForciblyRatio regardless of
// age; above diskSpaceWarningLevelRatio writes are refused (ErrDiskFull)
// until usage is back at the force-clean ratio. Then consume queue and
// index files wholly below the new commit log min offset go too.
//
// A deleted commit log file leaves the list under the write lock and is
// unlinked at once, but stays mapped while pull answers hold it (slices of
// it queued for writev): the last release hands it to the unmapper
// (mappedFile refs, Store.reapLater). Unmapping and unlinking happen after
// the list's lock is released: appends (a roll), pulls and the dispatcher
// take it, and munmap of a resident gigabyte takes milliseconds. Readers
// hold what they read outside the lock, and the flusher skips fully
// flushed files, so neither can touch the file once it left the list.

func (s *Store) cleanupLoop() {
	tick := time.NewTicker(time.Duration(s.cfg.CleanResourceInterval) * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-tick.C:
		}
		if _, err := s.cleanOnce(); err != nil {
			s.log.Error().Err(err).Msg("cleanup failed")
		}
	}
}

// manualDeleteRounds is Apache's MAX_MANUAL_DELETE_FILE_TIMES.
const manualDeleteRounds = 20

// DeleteExpiredManually is DELETE_EXPIRED_COMMITLOG (mqadmin
// deleteExpiredCommitLog, Apache's executeDeleteFilesManually): the next 20
// cleanup rounds delete expired commit log files whatever the hour.
func (s *Store) DeleteExpiredManually() {
	s.manualDeletes.Store(manualDeleteRounds)
	s.log.Warn().Msg("expired commit log files to be deleted at the next cleanup rounds (manual)")
}

// timeToDelete reports whether now's local hour is listed in deleteWhen.
func (s *Store) timeToDelete(now time.Time) bool {
	for _, h := range strings.Split(s.cfg.DeleteWhen, ";") {
		if n, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && n == now.Hour() {
			return true
		}
	}
	return false
}

// cleanOnce runs one cleanup round and returns the number of commit log
// files deleted.
func (s *Store) cleanOnce() (int, error) {
	now := s.now()
	usage, err := s.checkSpace() // also sets or clears the disk-full flag
	if err != nil {
		return 0, err
	}
	cleanNow := usage > clampRatio(s.cfg.DiskSpaceCleanForciblyRatio, 30, 85) && s.cfg.CleanFileForciblyEnable
	manual := s.manualDeletes.Load() > 0
	trigger := cleanNow || manual || s.timeToDelete(now) || usage > clampRatio(s.cfg.DiskMaxUsedSpaceRatio, 10, 95)
	if !trigger {
		return 0, nil
	}
	if manual {
		s.manualDeletes.Add(-1)
	}
	reserved := time.Duration(s.cfg.FileReservedTime) * time.Hour
	deleted := 0
	var errs []error
	for deleted < s.cfg.DeleteFileBatchMax {
		ok, err := s.deleteOldestCommitLog(now, reserved, cleanNow)
		if err != nil {
			errs = append(errs, err)
		}
		if !ok {
			break
		}
		deleted++
		if d := s.cfg.DeleteCommitLogFilesInterval; d > 0 {
			select {
			case <-s.quit:
				return deleted, errors.Join(errs...)
			case <-time.After(time.Duration(d) * time.Millisecond):
			}
		}
	}
	if deleted > 0 {
		errs = append(errs, s.cleanLogics())
	}
	return deleted, errors.Join(errs...)
}

// deleteOldestCommitLog deletes the first commit log file if it is not the
// last, is fully flushed and dispatched, and is expired (or cleanNow).
func (s *Store) deleteOldestCommitLog(now time.Time, reserved time.Duration, cleanNow bool) (bool, error) {
	q := &s.cl.q
	q.mu.RLock()
	if len(q.files) < 2 {
		q.mu.RUnlock()
		return false, nil
	}
	mf := q.files[0]
	q.mu.RUnlock()
	if mf.flushed.Load() < mf.wrote.Load() || s.reput.Load() < mf.start+mf.size {
		return false, nil // not on disk or not in the consume queues yet
	}
	if !cleanNow {
		fi, err := os.Stat(mf.path)
		if err != nil {
			return false, fmt.Errorf("cleanup: stat %s: %w", mf.path, err)
		}
		if now.Before(fi.ModTime().Add(reserved)) {
			return false, nil
		}
	}
	// Only cleanup removes the head of the list, and appends only add at
	// the tail, so files[0] is still mf.
	q.mu.Lock()
	q.files[0] = nil
	q.files = q.files[1:]
	held := mf.held()
	unmap, err := q.retireLocked(mf)
	q.mu.Unlock()
	if unmap {
		err = errors.Join(err, mf.unmap())
	}
	// Unlinking a mapped file is fine: holders keep reading the pages, the
	// space comes back when the last mapping goes.
	if rmErr := q.ops.removeFile(mf.path); rmErr != nil {
		err = errors.Join(err, rmErr)
	}
	s.log.Info().Str("file", mf.path).Bool("forcibly", cleanNow).Bool("unmapDeferred", held).Msg("commit log file deleted")
	if err != nil {
		return true, fmt.Errorf("cleanup: delete %s: %w", mf.path, err)
	}
	return true, nil
}

// cleanLogics deletes consume queue and index files below the commit log
// min offset and moves the queues' min offsets forward.
func (s *Store) cleanLogics() error {
	clMin := s.cl.minOffset()
	var errs []error
	for _, cq := range s.allQueues() {
		cq.wmu.Lock() // not while destroy runs
		if !cq.closed {
			if _, err := cq.deleteBelow(clMin); err != nil {
				errs = append(errs, fmt.Errorf("cleanup consumequeue %s-%d: %w", cq.topic, cq.queueID, err))
			}
		}
		cq.wmu.Unlock()
	}
	if s.idx != nil {
		if _, err := s.idx.deleteBelow(clMin); err != nil {
			errs = append(errs, fmt.Errorf("cleanup index: %w", err))
		}
	}
	return errors.Join(errs...)
}

// reapLater hands a commit log file whose last hold went (a pull answer
// released on a network event loop) to the unmapper goroutine.
func (s *Store) reapLater(mf *mappedFile) {
	s.reapMu.Lock()
	s.reapList = append(s.reapList, mf)
	s.reapMu.Unlock()
	s.signal(s.unmapCh)
}

// reap unmaps the files reapLater was given.
func (s *Store) reap() {
	s.reapMu.Lock()
	list := s.reapList
	s.reapList = nil
	s.reapMu.Unlock()
	for _, mf := range list {
		if err := mf.unmap(); err != nil {
			s.log.Error().Err(err).Str("file", mf.path).Msg("unmap released commit log file")
		}
	}
}

// CleanExpiredQueues is CLEAN_EXPIRED_CONSUMEQUEUE (Apache's
// cleanExpiredConsumerQueue): now rather than at the next cleanup round,
// the consume queue and index files below the commit log's min offset go.
func (s *Store) CleanExpiredQueues() error { return s.cleanLogics() }
