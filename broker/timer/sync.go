package timer

// The timer's progress as a slave copies it from its master
// (GET_TIMER_CHECK_POINT 60, Apache's SlaveSynchronize.syncTimerCheckPoint),
// so that a slave that becomes master — in controller mode, or restarted
// as one — neither delivers again what its master delivered nor skips what
// it had not. As Apache's, the copy is as old as the last sync: what the
// master delivered after it is delivered again by the new master.
//
// Apache's TimerCheckpoint is 56 bytes, big-endian: lastReadTimeMs,
// lastTimerLogFlushPos, lastTimerQueueOffset, masterTimerQueueOffset and a
// data version (stateVersion, timestamp, counter). rocketgo's checkpoint
// (Timers) maps onto it as readTimeMs → lastReadTimeMs and enqueueOffset →
// lastTimerQueueOffset and masterTimerQueueOffset; an Apache slave takes
// lastReadTimeMs, masterTimerQueueOffset and the version, with the same
// meaning: below masterTimerQueueOffset, what was due by lastReadTimeMs was
// delivered. rocketgo's lowOffset has no Apache field: it travels in the
// answer's extField timerLowOffset, which Apache's client does not read.
// From an Apache master a slave re-reads the timer queue from its oldest
// entry instead.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/internal/logging"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// LowOffsetField carries the checkpoint's lowOffset in the answer.
const LowOffsetField = "timerLowOffset"

// CheckpointLen is TimerCheckpoint.encode's size; 32 bytes
// (without the data version) is what 4.x-era brokers wrote, and decode
// accepts both, as Apache's does.
const CheckpointLen = 56

// Checkpoint answers GET_TIMER_CHECK_POINT: the checkpoint in Apache's
// encoding, and the lowOffset to send along.
func (ts *Timers) Checkpoint() (body []byte, lowOffset int64) {
	ts.mu.Lock()
	c, version := ts.ckpt, ts.version
	ts.mu.Unlock()
	body = make([]byte, CheckpointLen)
	for i, v := range []int64{c.ReadTimeMs, 0, c.EnqueueOffset, c.EnqueueOffset,
		version.StateVersion, version.Timestamp, version.Counter} {
		binary.BigEndian.PutUint64(body[i*8:], uint64(v))
	}
	return body, c.LowOffset
}

// TakeCheckpoint is the slave's half: the master's checkpoint (its answer
// to GET_TIMER_CHECK_POINT) becomes this broker's, persisted with the rest,
// read when a master's timer run starts here (reset). It refuses an answer
// that is not one, and any while a run delivers here (ErrRunning).
func (ts *Timers) TakeCheckpoint(resp *remoting.Command) error {
	body := resp.Body
	if len(body) < 32 {
		return fmt.Errorf("timer checkpoint of %d bytes", len(body))
	}
	read := int64(binary.BigEndian.Uint64(body[0:]))
	enq := int64(binary.BigEndian.Uint64(body[24:])) // masterTimerQueueOffset
	if read < 0 || enq < 0 {
		return fmt.Errorf("bad timer checkpoint: lastReadTimeMs %d, masterTimerQueueOffset %d", read, enq)
	}
	low := int64(-1) // unknown: from the timer queue's oldest entry
	if v, ok := resp.Lookup(LowOffsetField); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > enq {
			return fmt.Errorf("bad %s %q", LowOffsetField, logging.Cut(v))
		}
		low = n
	}
	var version remoting.DataVersion
	if len(body) >= CheckpointLen {
		version = remoting.DataVersion{StateVersion: int64(binary.BigEndian.Uint64(body[32:])),
			Timestamp: int64(binary.BigEndian.Uint64(body[40:])), Counter: int64(binary.BigEndian.Uint64(body[48:]))}
	}
	return ts.take(timerCheckpoint{EnqueueOffset: enq, LowOffset: low, ReadTimeMs: read}, version)
}

// ErrRunning: a checkpoint offered while this broker delivers timer
// messages itself (a master does not take another's progress).
var ErrRunning = errors.New("timer delivery runs here")

// take replaces the checkpoint with a master's.
func (ts *Timers) take(c timerCheckpoint, version remoting.DataVersion) error {
	if ts.running.Load() {
		return ErrRunning
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if c != ts.ckpt {
		ts.ckpt = c
		ts.dirty.Store(true)
	}
	ts.version = version
	return nil
}

// FenceAt records the commit log's end before the broker takes sends in a
// master's term: a timer entry at or past it was written in this term and
// read by no earlier run, whatever the checkpoint says. Without it, a
// message sent in the moment before reset reads the queue's end would fall
// inside the range re-read against the checkpoint's read time.
func (ts *Timers) FenceAt(phy int64) { ts.fence.Store(phy) }

// Running reports whether a run delivers here.
func (ts *Timers) Running() bool { return ts.running.Load() }

// dispatchWait bounds how long a timer run starting on a new master waits
// for the consume queues to reach the fence (reset).
const dispatchWait = 5 * time.Second

// reset starts a delivery run from the checkpoint: what this broker's last
// run left, or what its master's last sync gave. The offsets are clamped to
// the local timer queue: entries past its end are not here (a slave behind
// its master, a truncated tail) and those written there later were never
// read by anyone (and the fence keeps apart those written since the term
// began, fenceAt). So that a queue still being dispatched is not mistaken
// for a short one, it first waits (bounded) for dispatch to reach the
// fence. It reports false when quit closed first.
func (ts *Timers) reset(quit <-chan struct{}) bool {
	st := ts.st
	deadline := time.Now().Add(dispatchWait)
	for st.DispatchedPhyOffset() < ts.fence.Load() && time.Now().Before(deadline) {
		select {
		case <-quit:
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
	ts.mu.Lock()
	c := ts.ckpt
	ts.mu.Unlock()
	for _, it := range ts.pending {
		ts.stats.Left(it.topic, false)
	}
	ts.pending, ts.fifo, ts.retry = ts.pending[:0], nil, retryState{}
	clear(ts.waiting)
	clear(ts.deletes)
	minQ, maxQ := st.MinOffset(message.TimerTopic, 0), st.MaxOffset(message.TimerTopic, 0)
	end := min(c.EnqueueOffset, maxQ)
	ts.rescanEnd, ts.rescanT = end, c.ReadTimeMs
	ts.enq = min(max(c.LowOffset, minQ), max(end, minQ))
	ts.log.Info().Int64("from", ts.enq).Int64("rescanEnd", end).Int64("readTimeMs", c.ReadTimeMs).
		Int64("queueMax", maxQ).Msg("timer delivery starts")
	return true
}
