package main

// Consumer: PULL_MESSAGE (11) straight to the brokers, no heartbeat: every
// pull carries its subscription ("*", TAG) with the SUBSCRIPTION bit, so the
// broker needs no registered consumer (Apache and rocketgo both resolve the
// subscription from the request then). Queues are spread over -c workers,
// one connection each. Per queue up to -w pulls are in flight: bounded pulls
// over disjoint offset ranges [s, s+n) below the queue's last known
// maxOffset; when a worker has read up to maxOffset it parks one long-poll
// pull (SUSPEND) at the queue's next offset. A range answered short (byte
// limit) is re-pulled from nextBeginOffset, so no message is counted twice.
// With -loop a worker that has read a queue to its end reads it again from
// where it started, so a short backlog keeps the pulls busy for -d.

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

const (
	pullSuspend      = 0x2
	pullSubscription = 0x4
	longPollMillis   = 15000
)

type pullRange struct {
	start, end int64 // end < 0: open (long poll / first pull)
}

type qstate struct {
	t        target
	first    int64 // where the run started reading (-loop goes back there)
	next     int64 // first offset not yet covered by a pull
	maxOff   int64 // last maxOffset the broker reported (-1 unknown)
	gaps     []pullRange
	inflight int
	open     bool // an open pull is outstanding
}

type pullDone struct {
	q      int
	rng    pullRange
	code   int32
	n      int   // records in the body
	nb     int64 // nextBeginOffset
	maxOff int64
}

type consumer struct {
	o      *options
	qs     []*qstate
	c      *pconn
	st     *stats
	e2e    bool
	events chan pullDone

	mu    sync.Mutex // guards slots: written by the owner, read by the reader
	slots map[int32]pullRange
	slotQ map[int32]int
	start map[int32]int64
	seq   int32
	lats  []int64 // reader scratch
	total *counter
	first *firstMsg // e2e: the first message consumed, or nil
}

// firstMsg records the first message any consumer of a run delivers: when
// (Unix ns) and its born-to-consumed latency, set once.
type firstMsg struct {
	at  atomic.Int64
	lat atomic.Int64
}

func (f *firstMsg) note(wall, lat int64) {
	if f.at.Load() == 0 && f.at.CompareAndSwap(0, wall) {
		f.lat.Store(lat)
	}
}

// counter is the shared consumed-message total that ends a counted run.
type counter struct {
	mu     sync.Mutex
	n      int64
	target int64
	done   chan struct{}
}

func (c *counter) add(n int64) {
	c.mu.Lock()
	c.n += n
	if c.target > 0 && c.n >= c.target && c.done != nil {
		close(c.done)
		c.done = nil
	}
	c.mu.Unlock()
}

func (cs *consumer) onResp(r *resp) {
	now := nanotime()
	cs.mu.Lock()
	rng, ok := cs.slots[r.opaque]
	q := cs.slotQ[r.opaque]
	started := cs.start[r.opaque]
	delete(cs.slots, r.opaque)
	delete(cs.slotQ, r.opaque)
	delete(cs.start, r.opaque)
	cs.mu.Unlock()
	if !ok {
		return
	}
	d := pullDone{q: q, rng: rng, code: r.code, nb: r.nextBeginOffset, maxOff: r.maxOffset}
	if r.code == remoting.Success {
		var bytes int64
		cs.lats = cs.lats[:0]
		wall := time.Now().UnixNano()
		for b := r.body; len(b) >= 4; {
			size := int(int32(binary.BigEndian.Uint32(b)))
			if size <= 0 || size > len(b) {
				break
			}
			if cs.e2e {
				if v, _, err := message.DecodeRecordView(b[:size]); err == nil {
					bytes += int64(len(v.Body))
					if len(v.Body) >= 8 {
						cs.lats = append(cs.lats, wall-int64(binary.BigEndian.Uint64(v.Body)))
					}
				}
			} else {
				bytes += int64(size)
			}
			d.n++
			b = b[size:]
		}
		if cs.first != nil && len(cs.lats) > 0 {
			cs.first.note(wall, cs.lats[0])
		}
		if !cs.e2e && rng.end >= 0 {
			cs.lats = append(cs.lats, now-started) // pull round trip
		}
		cs.st.addLats(int64(d.n), bytes, cs.lats)
		if cs.total != nil {
			cs.total.add(int64(d.n))
		}
	} else if r.code != remoting.PullNotFound && r.code != remoting.PullRetryImmediately && r.code != remoting.PullOffsetMoved {
		cs.st.fail(r.code)
	}
	cs.events <- d
}

func (cs *consumer) issue(qi int, rng pullRange) error {
	qs := cs.qs[qi]
	cs.seq++
	if cs.seq <= 0 {
		cs.seq = 1
	}
	opaque := cs.seq
	n := int64(cs.o.pullBatch)
	sysFlag := int64(pullSubscription)
	suspend := int64(0)
	if rng.end >= 0 {
		n = rng.end - rng.start
	} else if qs.maxOff >= 0 { // open pull after catching up: long poll
		sysFlag |= pullSuspend
		suspend = longPollMillis
	}
	cs.mu.Lock()
	cs.slots[opaque] = rng
	cs.slotQ[opaque] = qi
	cs.start[opaque] = nanotime()
	cs.mu.Unlock()
	w := &cs.c.w
	w.begin(remoting.PullMessage, opaque)
	group := qs.t.group
	if group == "" {
		group = cs.o.group
	}
	w.strS("consumerGroup", group)
	w.strS("topic", qs.t.topic)
	w.int("queueId", int64(qs.t.queueID))
	w.int("queueOffset", rng.start)
	w.int("maxMsgNums", n)
	w.int("sysFlag", sysFlag)
	w.int("commitOffset", 0)
	w.int("suspendTimeoutMillis", suspend)
	w.strS("subscription", "*")
	w.int("subVersion", 0)
	w.strS("expressionType", "TAG")
	if qs.t.brokerName != "" {
		w.strS("bname", qs.t.brokerName)
	}
	w.end()
	qs.inflight++
	if rng.end < 0 {
		qs.open = true
	}
	return nil
}

// fill issues pulls for queue qi up to the window.
func (cs *consumer) fill(qi int) {
	qs := cs.qs[qi]
	b := int64(cs.o.pullBatch)
	for qs.inflight < cs.o.window && !qs.open {
		switch {
		case len(qs.gaps) > 0:
			g := qs.gaps[0]
			qs.gaps = qs.gaps[1:]
			if g.end-g.start > b {
				qs.gaps = append([]pullRange{{g.start + b, g.end}}, qs.gaps...)
				g.end = g.start + b
			}
			_ = cs.issue(qi, g)
		case qs.next < qs.maxOff:
			end := min(qs.next+b, qs.maxOff)
			_ = cs.issue(qi, pullRange{qs.next, end})
			qs.next = end
		case cs.o.loop && qs.maxOff > qs.first:
			qs.next = qs.first // read the queue again instead of waiting at its end
		case qs.inflight == 0:
			_ = cs.issue(qi, pullRange{qs.next, -1})
		default:
			return
		}
	}
}

func (cs *consumer) handle(d pullDone) {
	qs := cs.qs[d.q]
	qs.inflight--
	if d.maxOff > qs.maxOff {
		qs.maxOff = d.maxOff
	}
	if d.rng.end < 0 { // open pull: it decides where the queue continues
		qs.open = false
		if d.nb >= 0 {
			qs.next = d.nb
		}
		if qs.maxOff < 0 {
			qs.maxOff = qs.next // answered without a maxOffset: treat as caught up
		}
		return
	}
	switch {
	case d.code == remoting.Success && d.nb >= d.rng.end:
	case d.code == remoting.Success && d.nb > d.rng.start:
		qs.gaps = append(qs.gaps, pullRange{d.nb, d.rng.end})
	default: // not there yet (or refused): pull the range again
		qs.gaps = append(qs.gaps, d.rng)
		if d.code != remoting.Success && d.code != remoting.PullNotFound && d.code != remoting.PullRetryImmediately {
			time.Sleep(10 * time.Millisecond) // a refusal: do not spin
		}
	}
}

func (cs *consumer) run(stop <-chan struct{}) error {
	defer cs.c.close()
	for i := range cs.qs {
		cs.fill(i)
	}
	if err := cs.c.flush(); err != nil {
		return err
	}
	for {
		select {
		case d := <-cs.events:
			cs.handle(d)
			// Drain what else arrived before refilling and writing once.
			more := true
			for more {
				select {
				case d = <-cs.events:
					cs.handle(d)
				default:
					more = false
				}
			}
			for i := range cs.qs {
				cs.fill(i)
			}
			if err := cs.c.flush(); err != nil {
				return err
			}
		case <-stop:
			return nil
		case <-cs.c.done:
			select {
			case <-stop:
				return nil
			default:
			}
			return fmt.Errorf("connection to %s: %w", cs.c.addr, cs.c.err)
		}
	}
}

// runConsumers pulls targets with -c workers until stop is closed.
// startAt gives each target's first offset.
func runConsumers(o *options, targets []target, startAt []int64, r *role, e2e bool, stop <-chan struct{}, total *counter, first *firstMsg) error {
	// Workers are spread over brokers; a broker's queues over its workers.
	byAddr := map[string][]int{}
	var addrs []string
	for i, t := range targets {
		if _, ok := byAddr[t.addr]; !ok {
			addrs = append(addrs, t.addr)
		}
		byAddr[t.addr] = append(byAddr[t.addr], i)
	}
	workers := max(min(o.conns, len(targets)), len(addrs))
	css := make([]*consumer, workers)
	for w := range css {
		css[w] = &consumer{o: o, st: r.newStats(), e2e: e2e, total: total, first: first,
			slots: map[int32]pullRange{}, slotQ: map[int32]int{}, start: map[int32]int64{}}
	}
	// Worker w serves broker addrs[w % len(addrs)].
	for bi, addr := range addrs {
		var mine []*consumer
		for w := bi; w < workers; w += len(addrs) {
			mine = append(mine, css[w])
		}
		for k, ti := range byAddr[addr] {
			cs := mine[k%len(mine)]
			cs.qs = append(cs.qs, &qstate{t: targets[ti], first: startAt[ti], next: startAt[ti], maxOff: -1})
		}
	}
	for i, cs := range css {
		if len(cs.qs) == 0 {
			continue
		}
		cs.events = make(chan pullDone, len(cs.qs)*o.window+1)
		c, err := dialPconn(cs.qs[0].t.addr, o.ser, bigBuf, cs.onResp)
		if err != nil {
			for _, x := range css[:i] {
				if x.c != nil {
					x.c.close()
				}
			}
			return err
		}
		cs.c = c
	}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for i, cs := range css {
		if cs.c == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = cs.run(stop)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
