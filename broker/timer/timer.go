package timer

// Timer messages (5.x TIMER_DELIVER_MS / TIMER_DELAY_SEC / TIMER_DELAY_MS).
//
// A timer message is stored in rmq_sys_wheel_timer queue 0 with TIMER_OUT_MS
// (the delivery time), REAL_TOPIC and REAL_QID (the broker stages it there), as Apache
// does. Instead of Apache's timerlog + timer wheel files, one goroutine keeps
// the pending messages in a min-heap keyed by delivery time (a pointer to
// the record, 40 bytes each, no body), fed from the timer queue behind the
// dispatcher. It sleeps until the heap's head is due or a new entry is
// dispatched; each delivery pops the head — O(log n), no scan of the pending
// set on any tick.
//
// Restart: config/timerProgress.json holds a checkpoint taken right after a
// delivery pass at time readTimeMs:
//
//	{"enqueueOffset":E,"lowOffset":W,"readTimeMs":R}
//
// Invariant: every timer queue entry below W was delivered; entries in [W,E)
// are delivered iff their delivery time is ≤ R; entries from E on were not
// read yet. On start the loop re-reads [W,E), keeping entries due after R,
// then continues at E. W is the oldest pending queue offset, kept with a FIFO
// of queue offsets in read order; -1 when not known (a checkpoint copied from
// an Apache master: the queue is re-read from its oldest entry). A slave
// copies its master's checkpoint, so that it starts from there if it becomes
// master (sync.go). A crash between a delivery and the next
// checkpoint (written every second) delivers those messages again. A message
// that cannot be delivered is retried with a pause or set aside (deliver.go);
// one set aside counts as delivered for the checkpoint, so it stays aside
// across restarts.

import (
	"container/heap"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

type timerItem struct {
	due, qoff, phy int64
	size           int32
	topic          string // REAL_TOPIC, for TimerStats
}

type timerHeap []timerItem

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	return h[i].due < h[j].due || h[i].due == h[j].due && h[i].qoff < h[j].qoff
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)   { *h = append(*h, x.(timerItem)) }
func (h *timerHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type timerCheckpoint struct {
	EnqueueOffset int64 `json:"enqueueOffset"`
	LowOffset     int64 `json:"lowOffset"`
	ReadTimeMs    int64 `json:"readTimeMs"`
}

// Timers delivers timer messages when they are due.
type Timers struct {
	st      Store
	reput   Reput
	stats   *stats.TimerStats
	path    string
	log     zerolog.Logger
	sampled zerolog.Logger // per-message lines (deliver.go)
	wake    chan struct{}

	// Owned by the run goroutine (and load, before it starts).
	enq       int64 // next timer queue offset to read
	rescanEnd int64 // below this, entries due ≤ rescanTime were delivered before a restart
	rescanT   int64
	fence     atomic.Int64 // the commit log's end when this run's term began (sync.go)
	pending   timerHeap
	waiting   map[int64]struct{} // queue offsets in pending
	fifo      []int64            // queue offsets in read order, front may be delivered
	deletes   map[string]int     // delete markers read and not yet due, by "<topic>+<UNIQ_KEY>" (broker/send, recall.go)
	retry     retryState         // pause after a transient delivery failure

	mu      sync.Mutex
	ckpt    timerCheckpoint      // guarded by mu
	version remoting.DataVersion // of ckpt, guarded by mu: for an Apache slave (sync.go)
	dirty   atomic.Bool
	running atomic.Bool // a run delivers: the checkpoint is this broker's own
}

// NewTimers makes the delivery of timer messages from st, through reput,
// counted in counts; its checkpoint is the file at path (Load reads it).
func NewTimers(st Store, reput Reput, counts *stats.TimerStats, path string, log zerolog.Logger) *Timers {
	return &Timers{st: st, reput: reput, stats: counts, path: path, log: log, sampled: sampledLog(log),
		wake: make(chan struct{}, 1), waiting: map[int64]struct{}{}, deletes: map[string]int{}}
}

// Load reads the checkpoint file; a run starts from it.
func (ts *Timers) Load() error {
	raw, err := config.ReadFile(ts.path)
	if err != nil || raw == nil {
		return err
	}
	var c timerCheckpoint
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("decode %s: %w", ts.path, err)
	}
	ts.ckpt = c // a run starts from it (reset)
	return nil
}

// PersistIfDirty writes the checkpoint file when the checkpoint changed
// since it was last written.
func (ts *Timers) PersistIfDirty() error {
	return config.PersistIfDirty(ts.path, &ts.dirty, func() ([]byte, error) {
		ts.mu.Lock()
		c := ts.ckpt
		ts.mu.Unlock()
		return json.Marshal(c)
	})
}

// Poke wakes the delivery loop (a timer queue entry was dispatched).
func (ts *Timers) Poke() {
	select {
	case ts.wake <- struct{}{}:
	default:
	}
}

// Run delivers until quit closes. A broker runs it only as a master: the
// checkpoint is then its own, and a master's is not taken (Take).
func (ts *Timers) Run(quit <-chan struct{}) {
	ts.running.Store(true)
	defer ts.running.Store(false)
	if !ts.reset(quit) {
		return
	}
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		ts.enqueue()
		now := time.Now().UnixMilli()
		readTime := ts.deliver(now)
		ts.checkpoint(readTime)
		next := int64(-1)
		if len(ts.pending) > 0 {
			next = ts.pending[0].due
		}
		ts.stats.HeadDue.Store(max(next, 0))
		ts.stats.Behind.Store(max(ts.st.MaxOffset(message.TimerTopic, 0)-ts.enq, 0))
		if readTime < now { // a transient failure: not before the retry time
			next = max(next, ts.retry.at)
		}
		wait := time.Hour
		if next >= 0 {
			wait = max(time.Duration(next-time.Now().UnixMilli())*time.Millisecond, 0)
		}
		t.Reset(wait)
		select {
		case <-quit:
			return
		case <-ts.wake:
		case <-t.C:
		}
	}
}

// enqueue reads new timer queue entries into the heap.
func (ts *Timers) enqueue() {
	for {
		// The end first: an entry dispatched after an empty read is not
		// an unreadable slot.
		end := ts.st.MaxOffset(message.TimerTopic, 0)
		es := ts.st.ReadQueue(message.TimerTopic, 0, ts.enq, 256)
		if len(es) == 0 {
			if ts.enq < end {
				ts.enq++ // unreadable slot
				continue
			}
			return
		}
		for _, e := range es {
			ts.enq = e.QueueOffset + 1
			rec, err := ts.st.RecordAt(e.PhyOffset, e.Size)
			var v message.RecordView
			if err == nil {
				v, _, err = message.DecodeRecordView(rec)
			}
			var due int64
			if err == nil {
				due, err = strconv.ParseInt(string(message.PropertyBytes(v.Properties, message.PropTimerOutMs)), 10, 64)
			}
			if err != nil {
				ts.sampled.Error().Err(err).Int64("offset", e.QueueOffset).Int64("commitLogOffset", e.PhyOffset).
					Msg("timer message unreadable, set aside")
				continue
			}
			if e.QueueOffset < ts.rescanEnd && e.PhyOffset < ts.fence.Load() && due <= ts.rescanT {
				continue // delivered before the restart, or by the master this broker followed
			}
			if key := message.PropertyBytes(v.Properties, message.PropTimerDelUniqKey); len(key) > 0 {
				ts.deletes[string(key)]++ // a delete marker: in force until it is due itself
			}
			topic := string(message.PropertyBytes(v.Properties, message.PropRealTopic))
			heap.Push(&ts.pending, timerItem{due: due, qoff: e.QueueOffset, phy: e.PhyOffset, size: e.Size, topic: topic})
			ts.stats.Enqueued(topic)
			ts.waiting[e.QueueOffset] = struct{}{}
			ts.fifo = append(ts.fifo, e.QueueOffset)
		}
	}
}

// deliver re-publishes every due message; it returns the time up to which
// everything due was delivered or set aside (now, or just before a message
// whose delivery failed transiently: it and the messages behind it are
// retried at ts.retry.at).
func (ts *Timers) deliver(now int64) int64 {
	for len(ts.pending) > 0 && ts.pending[0].due <= now {
		it := ts.pending[0]
		if now < ts.retry.at {
			return it.due - 1
		}
		rec, err := ts.st.RecordAt(it.phy, it.size)
		recalled := err == nil && ts.recalled(rec)
		if err == nil && !recalled {
			_, _, err = ts.reput(rec, message.PropTimerEnqueueMs, strconv.FormatInt(recordStoreTime(rec), 10),
				message.PropTimerDequeueMs, strconv.FormatInt(now, 10))
		}
		switch {
		case recalled:
			ts.sampled.Info().Int64("offset", it.qoff).Str("topic", it.topic).Msg("timer message recalled, not delivered")
		case err == nil:
			ts.retry.ok()
		case transientDelivery(err):
			at := ts.retry.failed(now)
			if !errors.Is(err, store.ErrClosed) {
				ts.sampled.Error().Err(err).Int64("offset", it.qoff).Int64("retryInMs", at-now).
					Msg("deliver timer message, retrying")
			}
			return it.due - 1
		default:
			ts.sampled.Error().Err(err).Int64("offset", it.qoff).Int64("commitLogOffset", it.phy).
				Int32("size", it.size).Msg("timer message cannot be delivered, set aside")
		}
		heap.Pop(&ts.pending)
		delete(ts.waiting, it.qoff)
		ts.stats.Left(it.topic, err == nil && !recalled)
	}
	return now
}

// recalled reports whether rec is not to be delivered: a delete marker,
// whose key it forgets (what it deletes is due before it), or a message a
// marker in force deletes.
func (ts *Timers) recalled(rec []byte) bool {
	v, _, err := message.DecodeRecordView(rec)
	if err != nil {
		return false // reputReal reports it
	}
	if key := message.PropertyBytes(v.Properties, message.PropTimerDelUniqKey); len(key) > 0 {
		if n := ts.deletes[string(key)]; n > 1 {
			ts.deletes[string(key)] = n - 1
		} else {
			delete(ts.deletes, string(key))
		}
		return true
	}
	if len(ts.deletes) == 0 {
		return false
	}
	key := string(message.PropertyBytes(v.Properties, message.PropRealTopic)) + "+" +
		string(message.PropertyBytes(v.Properties, message.PropUniqClientMessageID))
	return ts.deletes[key] > 0
}

func recordStoreTime(rec []byte) int64 {
	v, _, err := message.DecodeRecordView(rec)
	if err != nil {
		return 0
	}
	return v.StoreTimestamp
}

func (ts *Timers) checkpoint(readTime int64) {
	for len(ts.fifo) > 0 {
		if _, ok := ts.waiting[ts.fifo[0]]; ok {
			break
		}
		ts.fifo = ts.fifo[1:]
	}
	low := ts.enq
	if len(ts.fifo) > 0 {
		low = ts.fifo[0]
	}
	c := timerCheckpoint{EnqueueOffset: ts.enq, LowOffset: low, ReadTimeMs: readTime}
	if ts.enq < ts.rescanEnd { // still re-reading after a restart
		c.EnqueueOffset, c.ReadTimeMs = ts.rescanEnd, min(readTime, ts.rescanT)
	}
	ts.mu.Lock()
	if c != ts.ckpt {
		ts.ckpt = c
		ts.version.Next()
		ts.dirty.Store(true)
	}
	ts.mu.Unlock()
}
