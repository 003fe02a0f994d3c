package main

// Producer: each connection keeps up to -w requests in flight. The owner
// goroutine takes a free window slot, appends the SEND_MESSAGE_V2 (310) or
// SEND_BATCH_MESSAGE (320) frame, takes more free slots without blocking
// while the write buffer is small, and writes the lot at once. The reader
// frees a slot per response and records its latency.

import (
	"encoding/binary"
	"math"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/remoting"
)

var epoch = time.Now()

func nanotime() int64 { return int64(time.Since(epoch)) }

const flushAt = 64 << 10 // write once the buffer holds this much

type producer struct {
	o       *options
	targets []target
	st      *stats
	c       *pconn
	idx     int // connection index

	window int32
	free   chan int32
	start  []int64 // per slot: send time (nanotime)
	nmsgs  []int32 // per slot: messages in the request
	seq    int32

	body    []byte
	props   []byte
	batch   []byte
	uniqPfx [16]byte
	sent    int64 // messages issued

	inflight atomic.Int32
}

// uniqSeq numbers UNIQ_KEYs process-wide.
var uniqSeq atomic.Uint64

func newProducer(o *options, idx int, targets []target, st *stats) (*producer, error) {
	p := &producer{o: o, targets: targets, st: st, idx: idx, window: int32(o.window)}
	p.free = make(chan int32, p.window)
	for i := int32(0); i < p.window; i++ {
		p.free <- i
	}
	p.start = make([]int64, p.window)
	p.nmsgs = make([]int32, p.window)
	p.body = make([]byte, o.size)
	for i := range p.body {
		p.body[i] = 'a' + byte(i%26)
	}
	var pfx [8]byte
	binary.BigEndian.PutUint32(pfx[:], 0x7F000001)
	binary.BigEndian.PutUint32(pfx[4:], uint32(os.Getpid())<<16|uint32(idx))
	for i, b := range pfx {
		p.uniqPfx[2*i] = "0123456789ABCDEF"[b>>4]
		p.uniqPfx[2*i+1] = "0123456789ABCDEF"[b&0xF]
	}
	c, err := dialPconn(targets[0].addr, o.ser, bigBuf, p.onResp)
	if err != nil {
		return nil, err
	}
	p.c = c
	return p, nil
}

func (p *producer) onResp(r *resp) {
	now := nanotime()
	slot := r.opaque % p.window
	if slot < 0 || p.start[slot] == 0 {
		return // not ours
	}
	n := int64(p.nmsgs[slot])
	switch r.code {
	case remoting.Success:
		p.st.add(n, n*int64(p.o.size), now-p.start[slot])
	case remoting.FlushDiskTimeout, remoting.FlushSlaveTimeout, remoting.SlaveNotAvailable:
		p.st.add(n, n*int64(p.o.size), now-p.start[slot])
		p.st.storedNotOK(r.code)
	default:
		p.st.fail(r.code)
	}
	p.start[slot] = 0
	p.inflight.Add(-1)
	p.free <- slot
}

// appendProps appends one message's properties: KEYS, TAGS, UNIQ_KEY (as
// the Java producer sets them), __LITE_TOPIC with -lite and, for single
// messages, WAIT=true.
func (p *producer) appendProps(dst []byte, wait bool) []byte {
	if p.o.keys {
		dst = append(dst, "KEYS\x01k"...)
		dst = strconv.AppendUint(dst, uint64(p.idx)<<40|uint64(p.sent), 10)
		dst = append(dst, 2)
	}
	if p.o.tag != "" {
		dst = append(dst, "TAGS\x01"...)
		dst = append(dst, p.o.tag...)
		dst = append(dst, 2)
	}
	if p.o.uniq {
		dst = append(dst, "UNIQ_KEY\x01"...)
		dst = append(dst, p.uniqPfx[:]...)
		u := uniqSeq.Add(1)
		for s := 60; s >= 0; s -= 4 {
			dst = append(dst, "0123456789ABCDEF"[(u>>uint(s))&0xF])
		}
		dst = append(dst, 2)
	}
	if p.o.lite > 0 {
		dst = appendLiteProp(dst, p.o.lite)
	}
	if wait {
		dst = append(dst, "WAIT\x01true\x02"...)
	}
	return dst
}

// stamp writes the wall-clock send time into a body's first 8 bytes (for
// end-to-end latency); bodies shorter than 8 bytes are not stamped.
func stamp(body []byte) {
	if len(body) >= 8 {
		binary.BigEndian.PutUint64(body, uint64(time.Now().UnixNano()))
	}
}

// appendSend appends one send request using slot.
// maxN caps the messages of a batch (the quota's remainder).
func (p *producer) appendSend(slot int32, t *target, maxN int64) int32 {
	p.seq++
	if p.seq > math.MaxInt32/p.window-1 {
		p.seq = 1
	}
	opaque := p.seq*p.window + slot
	w := &p.c.w
	n := int32(1)
	if p.o.batch > 1 {
		n = int32(min(int64(p.o.batch), maxN))
		w.begin(remoting.SendBatchMessage, opaque)
	} else {
		w.begin(remoting.SendMessageV2, opaque)
	}
	w.strS("a", p.o.group)
	w.strS("b", t.topic)
	w.strS("c", "TBW102")
	w.int("d", 4)
	w.int("e", int64(t.queueID))
	w.int("f", 0)
	w.int("g", time.Now().UnixMilli())
	w.int("h", 0)
	if p.o.batch <= 1 {
		p.props = p.appendProps(p.props[:0], true)
		p.sent++
	} else {
		p.props = append(p.props[:0], "WAIT\x01true\x02"...)
	}
	w.str("i", p.props)
	w.int("j", 0)
	w.strS("k", "false")
	if p.o.batch > 1 {
		w.strS("m", "true")
	} else {
		w.strS("m", "false")
	}
	if t.brokerName != "" {
		w.strS("n", t.brokerName)
	}
	if n == 1 && p.o.batch <= 1 {
		w.end(p.body)
		stamp(w.buf[len(w.buf)-len(p.body):])
	} else {
		p.batch = p.batch[:0]
		for i := int32(0); i < n; i++ {
			p.props = p.appendProps(p.props[:0], false)
			p.sent++
			at := len(p.batch) + 20
			// Properties of one message are far below the 32 KiB limit.
			p.batch, _ = appendBatchMessage(p.batch, p.body, p.props)
			stamp(p.batch[at:])
		}
		w.end(p.batch)
	}
	p.nmsgs[slot] = n
	p.start[slot] = nanotime()
	p.inflight.Add(1)
	return n
}

func appendBatchMessage(dst, body, props []byte) ([]byte, error) {
	be := binary.BigEndian
	dst = be.AppendUint32(dst, uint32(22+len(body)+len(props)))
	dst = be.AppendUint32(dst, 0)
	dst = be.AppendUint32(dst, 0)
	dst = be.AppendUint32(dst, 0)
	dst = be.AppendUint32(dst, uint32(len(body)))
	dst = append(dst, body...)
	dst = be.AppendUint16(dst, uint16(len(props)))
	return append(dst, props...), nil
}

// run sends until quota messages were issued (quota <= 0: no limit), stop is
// closed, or the connection fails; then waits up to drain for answers.
func (p *producer) run(quota int64, stop <-chan struct{}, drain time.Duration) error {
	defer p.c.close()
	var interval time.Duration // per-connection pacing with -rate
	if p.o.rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(p.o.conns) / p.o.rate)
	}
	next := time.Now()
	ti := p.idx
	per := int64(1)
	if p.o.batch > 1 {
		per = int64(p.o.batch)
	}
	var err error
loop:
	for quota <= 0 || p.sent < quota {
		if interval > 0 {
			if d := time.Until(next); d > 0 {
				select {
				case <-time.After(d):
				case <-stop:
					break loop
				case <-p.c.done:
					break loop
				}
			}
			next = next.Add(interval * time.Duration(per))
		}
		var slot int32
		select {
		case slot = <-p.free:
		case <-stop:
			break loop
		case <-p.c.done:
			break loop
		}
		p.appendSend(slot, &p.targets[ti%len(p.targets)], p.remaining(quota))
		ti++
		// Coalesce: more free slots without waiting, up to flushAt bytes.
		for interval == 0 && len(p.c.w.buf) < flushAt && (quota <= 0 || p.sent < quota) {
			select {
			case slot = <-p.free:
				p.appendSend(slot, &p.targets[ti%len(p.targets)], p.remaining(quota))
				ti++
				continue
			default:
			}
			break
		}
		if err = p.c.flush(); err != nil {
			break
		}
	}
	deadline := time.Now().Add(drain)
	for p.inflight.Load() > 0 && time.Now().Before(deadline) {
		select {
		case <-p.c.done:
			return p.c.err
		case <-time.After(time.Millisecond):
		}
	}
	if n := p.inflight.Load(); n > 0 {
		for range n {
			p.st.fail(-1) // no answer within the drain time
		}
	}
	return err
}

func (p *producer) remaining(quota int64) int64 {
	if quota <= 0 {
		return math.MaxInt64
	}
	return quota - p.sent
}

// runProducers starts -c producers over the targets and blocks until done.
func runProducers(o *options, targets []target, r *role, stop <-chan struct{}) error {
	// Connections are spread over brokers; each sends to its broker's queues.
	byAddr := map[string][]target{}
	var addrs []string
	for _, t := range targets {
		if _, ok := byAddr[t.addr]; !ok {
			addrs = append(addrs, t.addr)
		}
		byAddr[t.addr] = append(byAddr[t.addr], t)
	}
	ps := make([]*producer, o.conns)
	for i := range ps {
		p, err := newProducer(o, i, byAddr[addrs[i%len(addrs)]], r.newStats())
		if err != nil {
			for _, q := range ps[:i] {
				q.c.close()
			}
			return err
		}
		ps[i] = p
	}
	var wg sync.WaitGroup
	errs := make([]error, len(ps))
	for i, p := range ps {
		quota := int64(0)
		if o.count > 0 {
			quota = o.count / int64(o.conns)
			if int64(i) < o.count%int64(o.conns) {
				quota++
			}
			if quota == 0 {
				p.c.close()
				continue
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.run(quota, stop, 10*time.Second)
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
