package remoting

// Commands on the serving path are recycled, and the header text of requests
// goes into a per-connection arena, so decoding a request and answering it
// allocate nothing in the steady state.
//
// Invariants:
//   - A pooled request lives from its decode until its handler returns; a
//     pooled response until the connection has written or dropped it.
//   - Nothing keeps a pooled Command, its Body, its ExtFields slice or a
//     response's field values past that point. Handlers that answer later
//     keep req.Clone() (a pull parked in Holds).
//   - Header strings are immutable views into a text arena: an arena is only
//     ever appended to, and a full one is replaced, never reused, so handlers
//     may keep header strings (topic and group names) as long as they like.
//     A string kept for good pins its arena (textArenaSize): tables that keep
//     names for the broker's lifetime clone them.
//   - Under the race detector recycled commands are poisoned and never
//     reused, so a use after recycling shows up as garbage in the tests.

import (
	"sync"
	"unsafe"
)

var commandPool = sync.Pool{New: func() any { return &Command{pooled: true} }}

// Buffers above these sizes are dropped at recycling rather than kept in the
// pool: one 4 MiB message must not pin 4 MiB per pooled command.
const (
	maxPooledFrame   = 1 << 20
	maxPooledScratch = 64 << 10
	maxPooledFields  = 64
)

// newPooledRequest returns a pooled command whose frame has room for n bytes.
func newPooledRequest(n int) *Command {
	c := commandPool.Get().(*Command)
	c.free = false
	if cap(c.frame) < n {
		c.frame = make([]byte, n, max(n, 4<<10))
	}
	c.frame = c.frame[:n]
	return c
}

// recycle returns a pooled command to the pool; others are left to the GC.
func (c *Command) recycle() {
	if c == nil || !c.pooled || c.free {
		return
	}
	if poisonRecycled {
		c.poison()
		return
	}
	frame, fields, scratch := c.frame[:0], c.ExtFields[:0], c.scratch[:0]
	clear(fields[:cap(fields)]) // drop the strings
	if cap(frame) > maxPooledFrame {
		frame = nil
	}
	if cap(scratch) > maxPooledScratch {
		scratch = nil
	}
	if cap(fields) > maxPooledFields {
		fields = nil
	}
	*c = Command{pooled: true, free: true, frame: frame, ExtFields: fields, scratch: scratch}
	commandPool.Put(c)
}

// poison makes every later read of a recycled command visibly wrong.
func (c *Command) poison() {
	for i := range c.frame {
		c.frame[i] = 0xA5
	}
	for i := range c.scratch {
		c.scratch[i] = '!'
	}
	for i := range c.ExtFields {
		c.ExtFields[i] = Field{"RECYCLED", "RECYCLED"}
	}
	c.Code, c.Opaque, c.Remark = -999, -999, "RECYCLED"
	c.pooled = false // a second recycle is a no-op
}

// Scratch returns an empty buffer with room for n bytes that a handler may
// use until it returns: the request is recycled then, and the buffer with it.
// For text the store copies (a send's stored properties).
func (c *Command) Scratch(n int) []byte {
	if !c.pooled {
		return make([]byte, 0, n)
	}
	if cap(c.scratch) < n {
		c.scratch = make([]byte, 0, max(n, 512))
	}
	return c.scratch[:0] // the decode's unescaped text was interned: free again
}

// Clone returns a copy of c that owns all its memory and is not pooled: what
// a handler keeps when it answers after returning.
func (c *Command) Clone() *Command {
	d := &Command{Code: c.Code, Language: c.Language, Version: c.Version, Opaque: c.Opaque, Flag: c.Flag,
		Remark: c.Remark, Serialize: c.Serialize, Began: c.Began}
	d.ExtFields = append([]Field(nil), c.ExtFields...) // the strings are immutable: no scratch in requests
	if c.Body != nil {
		d.Body = append([]byte(nil), c.Body...)
	}
	return d
}

// textArenaSize is the size of a connection's header text arena: about 60
// requests of the official clients per allocation.
const textArenaSize = 16 << 10

// internText copies the remark and every key and value into arena (a fresh
// buffer when arena is nil) and points the fields at the copies: after
// decoding they are views into the frame or the unescape scratch, both of
// which are reused. Bytes in an arena are written once, below its capacity,
// so the views stay valid for as long as they are referenced.
func (c *Command) internText(arena *[]byte) {
	n := len(c.Remark)
	for _, f := range c.ExtFields {
		n += len(f.Key) + len(f.Value)
	}
	if n == 0 {
		return
	}
	var buf []byte
	switch {
	case arena == nil:
		buf = make([]byte, 0, n)
	case cap(*arena)-len(*arena) < n:
		// The full arena lives on while strings point into it.
		buf = make([]byte, 0, max(textArenaSize, n))
	default:
		buf = *arena
	}
	take := func(s string) string {
		if s == "" {
			return ""
		}
		at := len(buf)
		buf = append(buf, s...) // within capacity: never moves
		return unsafe.String(&buf[at], len(s))
	}
	c.Remark = take(c.Remark)
	for i := range c.ExtFields {
		c.ExtFields[i] = Field{take(c.ExtFields[i].Key), take(c.ExtFields[i].Value)}
	}
	if arena != nil {
		*arena = buf
	}
}
