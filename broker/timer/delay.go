package timer

// Delay levels (Apache ScheduleMessageService). A message with DELAY=n is
// stored in SCHEDULE_TOPIC_XXXX queue n-1 (the broker stages it there); the store's
// dispatcher writes its delivery time (store time + level delay) into the
// consume queue's tags slot. Every entry of one level queue has the same
// delay, so delivery times rise along the queue: the delivery goroutine only
// looks at the head of each level queue, never at the pending messages
// behind it. Progress per level is config/delayOffset.json,
// {"offsetTable":{1:17,2:0}} (level → next queue offset), written with
// fastjson's bare integer keys every flushDelayOffsetInterval and at shutdown.
// A crash between a delivery and the next write delivers again (at least once).
// A message that cannot be delivered is retried or set aside (deliver.go).

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/store"
)

// Delays delivers the messages of the delay levels when they are due.
type Delays struct {
	st      Store
	reput   Reput
	stats   *stats.Stats
	levels  []int64 // ms per level; index 0 = level 1
	path    string
	log     zerolog.Logger
	sampled zerolog.Logger // per-message lines (deliver.go)
	wake    chan struct{}
	retry   []retryState // per level, index 0 = level 1; owned by run

	mu      sync.Mutex
	offsets map[int]int64 // level → next queue offset of queue level-1
	dirty   atomic.Bool
}

// NewDelays makes the delivery of the delay levels (ms each, level 1
// first) from st, through reput, counted in counts; its progress is the
// file at path (Load reads it).
func NewDelays(st Store, reput Reput, counts *stats.Stats, path string, levels []int64, log zerolog.Logger) *Delays {
	return &Delays{st: st, reput: reput, stats: counts, levels: levels, path: path, log: log, sampled: sampledLog(log),
		wake: make(chan struct{}, 1), retry: make([]retryState, len(levels)), offsets: make(map[int]int64)}
}

// Levels are the delay levels' delays in ms, level 1 first.
func (d *Delays) Levels() []int64 { return d.levels }

type delayOffsetFile struct {
	OffsetTable map[string]int64 `json:"offsetTable"`
}

// Load reads delayOffset.json and clamps each offset into its queue's
// [min, max] (as 5.x does).
func (d *Delays) Load() error {
	b, err := config.ReadFile(d.path)
	if err != nil {
		return err
	}
	var f delayOffsetFile
	if b != nil {
		if err := json.Unmarshal(b, &f); err != nil {
			return fmt.Errorf("decode %s: %w", d.path, err)
		}
	}
	offsets := make(map[int]int64, len(f.OffsetTable))
	for k, v := range f.OffsetTable {
		lvl, err := strconv.Atoi(k)
		if err != nil || lvl <= 0 {
			return fmt.Errorf("decode %s: bad level %q", d.path, k)
		}
		offsets[lvl] = v
	}
	dirty := false
	for lvl := 1; lvl <= len(d.levels); lvl++ {
		q := int32(lvl - 1)
		off := max(offsets[lvl], d.st.MinOffset(message.ScheduleTopic, q))
		off = min(off, d.st.MaxOffset(message.ScheduleTopic, q))
		if off != offsets[lvl] {
			offsets[lvl] = off
			dirty = true
		}
	}
	d.mu.Lock()
	d.offsets = offsets
	d.mu.Unlock()
	d.dirty.Store(dirty)
	return nil
}

// Take replaces the offsets with a master's, GET_ALL_DELAY_OFFSET's body
// (a slave's metadata sync; a slave delivers nothing, so no delivery loop
// reads them meanwhile). Apache writes the master's delayOffset.json as is
// and reloads it.
func (d *Delays) Take(body []byte) error {
	var f delayOffsetFile
	if err := json.Unmarshal(config.QuoteBareKeys(body), &f); err != nil {
		return err
	}
	offsets := make(map[int]int64, len(f.OffsetTable))
	for k, v := range f.OffsetTable {
		lvl, err := strconv.Atoi(k)
		if err != nil || lvl <= 0 || lvl > 1000 {
			return fmt.Errorf("bad delay level %.64q", k)
		}
		offsets[lvl] = v
	}
	d.mu.Lock()
	d.offsets = offsets
	d.mu.Unlock()
	d.dirty.Store(true)
	return nil
}

// Marshal writes {"offsetTable":{1:17,...}} with fastjson's bare keys.
func (d *Delays) Marshal() []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	lvls := make([]int, 0, len(d.offsets))
	for l := range d.offsets {
		lvls = append(lvls, l)
	}
	slices.Sort(lvls)
	out := []byte(`{"offsetTable":{`)
	for i, l := range lvls {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendInt(out, int64(l), 10)
		out = append(out, ':')
		out = strconv.AppendInt(out, d.offsets[l], 10)
	}
	return append(out, "}}"...)
}

// PersistIfDirty writes the file when the offsets changed since it was
// last written.
func (d *Delays) PersistIfDirty() error {
	return config.PersistIfDirty(d.path, &d.dirty, func() ([]byte, error) { return d.Marshal(), nil })
}

// Poke wakes the delivery loop (a SCHEDULE_TOPIC_XXXX entry was dispatched).
func (d *Delays) Poke() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run delivers until quit closes.
func (d *Delays) Run(quit <-chan struct{}) {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		next := d.deliverDue(time.Now().UnixMilli(), quit)
		wait := time.Hour
		if next > 0 {
			wait = max(time.Duration(next-time.Now().UnixMilli())*time.Millisecond, 0)
		}
		t.Reset(wait)
		select {
		case <-quit:
			return
		case <-d.wake:
		case <-t.C:
		}
	}
}

// deliverDue re-publishes every due message of every level and returns the
// earliest delivery time still pending (0: none).
func (d *Delays) deliverDue(now int64, quit <-chan struct{}) int64 {
	var next int64
	soonest := func(t int64) {
		if next == 0 || t < next {
			next = t
		}
	}
	for lvl := 1; lvl <= len(d.levels); lvl++ {
		select {
		case <-quit:
			return 0
		default:
		}
		if t := d.deliverLevel(lvl, now); t > 0 {
			soonest(t)
		}
	}
	return next
}

// deliverLevel delivers the due head of one level queue; it returns when
// the head is not due yet (its time), when a transient failure asks for a
// pause (the retry time) or when the queue is drained (0).
func (d *Delays) deliverLevel(lvl int, now int64) int64 {
	q := int32(lvl - 1)
	retry := &d.retry[lvl-1]
	if now < retry.at {
		return retry.at
	}
	d.mu.Lock()
	off := d.offsets[lvl]
	d.mu.Unlock()
	for budget := 0; budget < 4096; {
		// The end first: an entry dispatched after an empty read is not
		// an unreadable slot.
		end := d.st.MaxOffset(message.ScheduleTopic, q)
		es := d.st.ReadQueue(message.ScheduleTopic, q, off, 64)
		if len(es) == 0 {
			if off < end {
				d.advance(lvl, off+1) // unreadable slot (deleted file)
				off++
				continue
			}
			return 0
		}
		for _, e := range es {
			due := e.TagsCode
			if due > now+d.levels[lvl-1] { // Apache's correctDeliverTimestamp
				due = now
			}
			if due > now {
				return due
			}
			rec, err := d.st.RecordAt(e.PhyOffset, e.Size)
			var topic string
			var wrote int32
			if err == nil {
				topic, wrote, err = d.reput(rec)
			}
			switch {
			case err == nil:
				retry.ok()
				// Apache counts a delivery out of SCHEDULE_TOPIC_XXXX to its
				// schedule consumer group and into the real topic as delay.
				d.stats.Out(message.ScheduleConsumerGroup, message.ScheduleTopic, 1, int64(wrote))
				d.stats.In(topic, stats.MessageDelay, 1, int64(wrote))
			case transientDelivery(err):
				at := retry.failed(now)
				if !errors.Is(err, store.ErrClosed) {
					d.sampled.Error().Err(err).Int("delayLevel", lvl).Int64("offset", e.QueueOffset).
						Int64("retryInMs", at-now).Msg("deliver delayed message, retrying")
				}
				return at
			default:
				d.sampled.Error().Err(err).Int("delayLevel", lvl).Int64("offset", e.QueueOffset).
					Int64("commitLogOffset", e.PhyOffset).Int32("size", e.Size).
					Msg("delayed message cannot be delivered, set aside")
			}
			off = e.QueueOffset + 1
			d.advance(lvl, off)
			budget++
		}
	}
	return now // budget spent: come back at once
}

func (d *Delays) advance(lvl int, off int64) {
	d.mu.Lock()
	d.offsets[lvl] = off
	d.dirty.Store(true)
	d.mu.Unlock()
}
