package proxy

import (
	"context"
	"errors"
	"sync"
	"time"

	v2 "github.com/rocketgo/rocketgo/apis/v2"
)

// Receipt-handle auto-renew, as Apache's DefaultReceiptHandleManager: a
// message received with auto_renew (the 5.x push consumers) is popped for
// defaultInvisibleTimeMills and its handle kept here, per client and group,
// until the client acknowledges it or changes its invisible time. A scan
// every renewSchedulePeriodMillis renews each handle that becomes visible
// within renewAheadTimeMillis, for 1, 3, 5, 10, 30 minutes and then an hour
// at a time (RenewStrategyPolicy), up to renewMaxTimeMillis after it was
// received; then it is handed back with the group's retry delay. When the
// client goes offline (unknown to the proxy: terminated or idle), its
// handles are made visible again after invisibleTimeMillisWhenClear.
//
// Invariants: an ack or invisible-time change of a kept handle uses the
// handle's latest form (a renewal changes it) and removes it first; a
// renewal in flight holds the entry's lock, so the ack waits for the handle
// it leaves. The number of kept handles is bounded (maxRenewHandles): past
// it a message is simply not renewed.

// renewSchedule is RenewStrategyPolicy's schedule (ms) by renewal count.
var renewSchedule = []int64{60_000, 180_000, 300_000, 600_000, 1_800_000, 3_600_000}

// maxRenewHandles bounds the handles kept for renewal (rocketgo's bound).
const maxRenewHandles = 200_000

type renewKey struct{ client, group string }

// renewed is one kept handle.
type renewed struct {
	mu         sync.Mutex // held across a renewal's call
	gone       bool       // removed: a renewal that gets the lock later does nothing
	handle     receiptHandle
	topic      string
	liteTopic  string // the lite topic a lite consumer's message came from, "" otherwise
	received   time.Time
	reconsume  int32
	renewTimes int
	retries    int
}

type renewals struct {
	mu    sync.Mutex
	byKey map[renewKey]map[string]*renewed // original handle -> entry
	n     int
}

func newRenewals() *renewals { return &renewals{byKey: make(map[renewKey]map[string]*renewed)} }

// add keeps a handle just received; false when the bound is reached.
func (r *renewals) add(k renewKey, original string, e *renewed) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n >= maxRenewHandles {
		return false
	}
	m := r.byKey[k]
	if m == nil {
		m = make(map[string]*renewed)
		r.byKey[k] = m
	}
	if _, dup := m[original]; !dup {
		r.n++
	}
	m[original] = e
	return true
}

// count is the number of handles kept for k (a lite consumer's un-acked
// messages).
func (r *renewals) count(k renewKey) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.byKey[k])
}

// take removes the handle a client acks (or changes) and returns its latest
// form, waiting for a renewal in flight; ok is false when it is not kept.
func (r *renewals) take(k renewKey, original string) (receiptHandle, bool) {
	r.mu.Lock()
	e := r.byKey[k][original]
	if e != nil {
		r.removeLocked(k, original)
	}
	r.mu.Unlock()
	if e == nil {
		return receiptHandle{}, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.gone = true
	return e.handle, true
}

func (r *renewals) removeLocked(k renewKey, original string) {
	m := r.byKey[k]
	if _, ok := m[original]; !ok {
		return
	}
	delete(m, original)
	r.n--
	if len(m) == 0 {
		delete(r.byKey, k)
	}
}

// dueEntry is a handle the scan works on, outside the lock.
type dueEntry struct {
	k        renewKey
	original string
	e        *renewed
	clear    bool // the client is offline: hand back, do not renew
}

// due lists the handles of offline clients (removed) and those visible
// within ahead.
func (r *renewals) due(now time.Time, ahead time.Duration, online func(string) bool) []dueEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []dueEntry
	for k, m := range r.byKey {
		off := !online(k.client)
		for orig, e := range m {
			if off {
				out = append(out, dueEntry{k, orig, e, true})
				continue
			}
			if e.mu.TryLock() { // busy: a renewal or an ack has it
				next := e.handle.popTime + e.handle.invisibleTime
				e.mu.Unlock()
				if next-now.UnixMilli() <= ahead.Milliseconds() {
					out = append(out, dueEntry{k, orig, e, false})
				}
			}
		}
		if off {
			r.n -= len(m)
			delete(r.byKey, k)
		}
	}
	return out
}

// renewLoop scans the kept handles until Shutdown, then hands every one
// back (Apache's clearAllHandle).
func (s *Server) renewLoop() {
	period := time.Duration(s.cfg.RenewSchedulePeriodMillis) * time.Millisecond
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			s.clearRenewals()
			return
		case now := <-t.C:
			s.renewDue(now)
		}
	}
}

func (s *Server) renewDue(now time.Time) {
	online := func(id string) bool { return s.clients.lookup(id) != nil }
	for _, d := range s.renew.due(now, time.Duration(s.cfg.RenewAheadTimeMillis)*time.Millisecond, online) {
		select {
		case <-s.quit:
			return
		default:
		}
		if d.clear {
			s.handBack(d, s.cfg.InvisibleTimeMillisWhenClear)
			continue
		}
		s.renewOne(d, now)
	}
}

// renewOne is startRenewMessage: renew, or past renewMaxTimeMillis hand the
// message back with the group's retry delay.
func (s *Server) renewOne(d dueEntry, now time.Time) {
	e := d.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gone {
		return
	}
	drop := func() {
		e.gone = true
		s.renew.mu.Lock()
		if s.renew.byKey[d.k][d.original] == e {
			s.renew.removeLocked(d.k, d.original)
		}
		s.renew.mu.Unlock()
	}
	ctx, cancel := context.WithTimeout(s.base, s.cluster.timeout)
	defer cancel()
	if now.Sub(e.received) >= time.Duration(s.cfg.RenewMaxTimeMillis)*time.Millisecond {
		delay := defaultRetryNext[min(int(e.reconsume)+2, len(defaultRetryNext)-1)]
		if g, _ := s.groupConfig(ctx, d.k.group); g != nil {
			delay = g.nextDelay(e.reconsume)
		}
		if _, err := s.changeInvisible(ctx, e.handle, d.k.group, e.topic, delay, e.liteTopic, false); err != nil {
			s.sampled.Warn().Err(err).Str("group", d.k.group).Msg("hand back after the longest renewal")
		}
		drop()
		return
	}
	nh, err := s.changeInvisible(ctx, e.handle, d.k.group, e.topic, renewSchedule[min(e.renewTimes, len(renewSchedule)-1)], e.liteTopic, false)
	if err == nil {
		e.handle, err = parseReceiptHandle(nh)
	}
	if err != nil {
		e.retries++
		var r *refusal
		if (errors.As(err, &r) && r.code == v2.Code_INVALID_RECEIPT_HANDLE) || e.retries >= s.cfg.MaxRenewRetryTimes {
			s.sampled.Warn().Err(err).Str("group", d.k.group).Int("retries", e.retries).Msg("receipt handle no longer renewed")
			drop()
		}
		return
	}
	e.renewTimes++
	e.retries = 0
}

// handBack makes a removed handle's message visible again after ms.
func (s *Server) handBack(d dueEntry, ms int64) {
	e := d.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gone {
		return
	}
	e.gone = true
	ctx, cancel := context.WithTimeout(context.Background(), s.cluster.timeout)
	defer cancel()
	if _, err := s.changeInvisible(ctx, e.handle, d.k.group, e.topic, ms, e.liteTopic, false); err != nil {
		s.sampled.Warn().Err(err).Str("group", d.k.group).Msg("hand back a renewed message")
	}
}

// clearRenewals hands every kept handle back (shutdown).
func (s *Server) clearRenewals() {
	for _, d := range s.renew.due(time.Now(), 0, func(string) bool { return false }) {
		s.handBack(d, s.cfg.InvisibleTimeMillisWhenClear)
	}
}

// nextDelay is the group's RetryPolicy.nextDelayDuration (ms).
func (g *groupConfig) nextDelay(reconsume int32) int64 {
	n := max(int(reconsume), 0)
	if rp := g.GroupRetryPolicy; rp != nil && rp.Type == "EXPONENTIAL" && rp.ExponentialRetryPolicy != nil {
		e := rp.ExponentialRetryPolicy
		d := float64(e.Initial)
		for i := 0; i < min(n, 32) && d < float64(e.Max); i++ {
			d *= float64(e.Multiplier)
		}
		return min(e.Max, int64(d))
	}
	next := defaultRetryNext
	if rp := g.GroupRetryPolicy; rp != nil && rp.CustomizedRetryPolicy != nil && len(rp.CustomizedRetryPolicy.Next) > 0 {
		next = rp.CustomizedRetryPolicy.Next
	}
	return next[min(n+2, len(next)-1)]
}
