package timer

// Delivery failures of staged messages (delay levels and timer messages).
//
// A staged message is re-published into its REAL_TOPIC when due. Two kinds
// of failure are told apart, as Apache's TimerMessageStore.doPut does
// (PUT_NEED_RETRY against PUT_NO_RETRY):
//
//   - transient: the store would refuse any message now (closed, not started,
//     disk full, flush timeout, out of memory, file descriptors or disk
//     space). The message is retried after a pause that doubles from 100 ms
//     to 10 s, so a failing store costs a few attempts a second, not a core.
//     Nothing is skipped: the store refuses the messages behind it too.
//   - permanent: anything else — a REAL_TOPIC that is missing, invalid or
//     too long, properties or a body too large once re-published, a record
//     that cannot be read. It would fail forever, so the message is set
//     aside: skipped with an error log line (sampled) naming its queue and
//     commit-log offsets, and progress moves past it, so it blocks neither
//     its level nor the timer and does not come back after a restart. The
//     staged record stays in the commit log until cleanup, where an operator
//     can read it by offset.
//
// Apache 5.3.3 drops a timer message after PUT_NO_RETRY, and (after three
// retries) after PUT_NEED_RETRY too unless timerEnableRetryUntilSuccess; its
// delay levels retry the same message every 100 ms forever in the default
// synchronous mode. rocketgo never drops on a transient failure and never
// retries a permanent one.

import (
	"errors"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/store"
)

const (
	retryFirst = 100 * time.Millisecond
	retryMax   = 10 * time.Second
)

// transientDelivery reports whether a delivery failure is the store's state
// rather than the message's fault.
func transientDelivery(err error) bool {
	switch {
	case errors.Is(err, store.ErrClosed), errors.Is(err, store.ErrNotStarted),
		errors.Is(err, store.ErrDiskFull), errors.Is(err, store.ErrFlushTimeout):
		return true
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.ENOMEM, syscall.ENOSPC, syscall.EDQUOT, syscall.EMFILE, syscall.ENFILE,
			syscall.EAGAIN, syscall.ENOBUFS, syscall.EIO:
			return true
		}
	}
	return false
}

// retryState is the pause before the next attempt after transient failures.
type retryState struct {
	fails int
	at    int64 // unix ms; no attempt before
}

// failed records a transient failure at now and returns the next attempt time.
func (r *retryState) failed(now int64) int64 {
	d := retryFirst << min(r.fails, 10)
	r.fails++
	r.at = now + min(d, retryMax).Milliseconds()
	return r.at
}

func (r *retryState) ok() { *r = retryState{} }

// sampledLog limits a delivery loop's per-message lines: an attacker who
// stages many undeliverable messages gets a few lines a minute, not one each.
func sampledLog(log zerolog.Logger) zerolog.Logger {
	return log.Sample(&zerolog.BurstSampler{Burst: 10, Period: time.Minute})
}
