package main

// Allocation-free request encoding and response-header scanning for the
// benchmark hot path. Requests are written in either header format
// (remoting.md §2.2 JSON, §2.3 ROCKETMQ binary); responses are scanned in
// whichever format the server chose (Apache 5.x answers JSON even to binary
// requests) without building a map. wire_test.go checks both directions
// against the remoting package's codec.

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/rocketgo/rocketgo/remoting"
)

// reqWriter appends one request frame to buf: begin, any number of fields, end.
type reqWriter struct {
	ser      remoting.SerializeType
	buf      []byte
	start    int // frame start in buf
	extStart int // binary: position of the extFields length; JSON: unused
	first    bool
	code     int32
	opaque   int32
}

func (w *reqWriter) begin(code, opaque int32) {
	w.start = len(w.buf)
	w.code, w.opaque = code, opaque
	w.buf = append(w.buf, 0, 0, 0, 0, 0, 0, 0, 0)
	if w.ser == remoting.RocketMQ {
		b := w.buf
		b = binary.BigEndian.AppendUint16(b, uint16(int16(code)))
		b = append(b, byte(remoting.LangJava))
		b = binary.BigEndian.AppendUint16(b, uint16(int16(remoting.ServerVersion())))
		b = binary.BigEndian.AppendUint32(b, uint32(opaque))
		b = binary.BigEndian.AppendUint32(b, 0) // flag
		b = binary.BigEndian.AppendUint32(b, 0) // remark length
		w.extStart = len(b)
		w.buf = append(b, 0, 0, 0, 0)
		return
	}
	w.buf = append(w.buf, `{"code":`...)
	w.buf = strconv.AppendInt(w.buf, int64(code), 10)
	w.buf = append(w.buf, `,"extFields":{`...)
	w.first = true
}

func (w *reqWriter) key(k string) {
	if w.ser == remoting.RocketMQ {
		w.buf = binary.BigEndian.AppendUint16(w.buf, uint16(len(k)))
		w.buf = append(w.buf, k...)
		return
	}
	if !w.first {
		w.buf = append(w.buf, ',')
	}
	w.first = false
	w.buf = append(w.buf, '"')
	w.buf = append(w.buf, k...)
	w.buf = append(w.buf, '"', ':')
}

func (w *reqWriter) str(k string, v []byte) {
	w.key(k)
	if w.ser == remoting.RocketMQ {
		w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(len(v)))
		w.buf = append(w.buf, v...)
		return
	}
	w.buf = appendJSONBytes(w.buf, v)
}

func (w *reqWriter) strS(k, v string) {
	w.key(k)
	if w.ser == remoting.RocketMQ {
		w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(len(v)))
		w.buf = append(w.buf, v...)
		return
	}
	w.buf = appendJSONString(w.buf, v)
}

func (w *reqWriter) int(k string, v int64) {
	w.key(k)
	if w.ser == remoting.RocketMQ {
		at := len(w.buf)
		w.buf = append(w.buf, 0, 0, 0, 0)
		w.buf = strconv.AppendInt(w.buf, v, 10)
		binary.BigEndian.PutUint32(w.buf[at:], uint32(len(w.buf)-at-4))
		return
	}
	w.buf = append(w.buf, '"')
	w.buf = strconv.AppendInt(w.buf, v, 10)
	w.buf = append(w.buf, '"')
}

// end closes the header, appends body parts and fills in the lengths.
func (w *reqWriter) end(body ...[]byte) {
	if w.ser == remoting.RocketMQ {
		binary.BigEndian.PutUint32(w.buf[w.extStart:], uint32(len(w.buf)-w.extStart-4))
	} else {
		w.buf = append(w.buf, `},"flag":0,"language":"JAVA","opaque":`...)
		w.buf = strconv.AppendInt(w.buf, int64(w.opaque), 10)
		w.buf = append(w.buf, `,"serializeTypeCurrentRPC":"JSON","version":`...)
		w.buf = strconv.AppendInt(w.buf, int64(remoting.ServerVersion()), 10)
		w.buf = append(w.buf, '}')
	}
	headerLen := len(w.buf) - w.start - 8
	for _, b := range body {
		w.buf = append(w.buf, b...)
	}
	binary.BigEndian.PutUint32(w.buf[w.start:], uint32(len(w.buf)-w.start-4))
	binary.BigEndian.PutUint32(w.buf[w.start+4:], uint32(w.ser)<<24|uint32(headerLen)&0xFFFFFF)
}

const hexDigits = "0123456789abcdef"

func appendJSONBytes(dst, s []byte) []byte {
	dst = append(dst, '"')
	for _, b := range s {
		switch {
		case b == '"' || b == '\\':
			dst = append(dst, '\\', b)
		case b < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
		default:
			dst = append(dst, b)
		}
	}
	return append(dst, '"')
}

func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case b == '"' || b == '\\':
			dst = append(dst, '\\', b)
		case b < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
		default:
			dst = append(dst, b)
		}
	}
	return append(dst, '"')
}

// resp is a scanned response: the fields the benchmark needs, no map.
type resp struct {
	code, opaque, flag int32
	body               []byte
	// Pull response header fields (-1 when absent).
	nextBeginOffset, minOffset, maxOffset int64
	// Send response: queueOffset (-1 when absent).
	queueOffset int64
}

var errBadResp = errors.New("mqbench: malformed response frame")

// scanFrame scans the bytes after a frame's length field. body aliases frame.
func scanFrame(frame []byte, r *resp) error {
	*r = resp{nextBeginOffset: -1, minOffset: -1, maxOffset: -1, queueOffset: -1}
	if len(frame) < 4 {
		return errBadResp
	}
	word := binary.BigEndian.Uint32(frame)
	hl := int(word & 0xFFFFFF)
	if hl > len(frame)-4 {
		return errBadResp
	}
	h := frame[4 : 4+hl]
	r.body = frame[4+hl:]
	switch remoting.SerializeType(word >> 24) {
	case remoting.RocketMQ:
		return scanBinary(h, r)
	case remoting.JSON:
		return scanJSON(h, r)
	}
	return errBadResp
}

func (r *resp) ext(k, v []byte) {
	var p *int64
	switch string(k) { // no allocation: compiler-optimised comparison
	case "nextBeginOffset":
		p = &r.nextBeginOffset
	case "minOffset":
		p = &r.minOffset
	case "maxOffset":
		p = &r.maxOffset
	case "queueOffset":
		p = &r.queueOffset
	default:
		return
	}
	if n, ok := atoi(v); ok {
		*p = n
	}
}

func atoi(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

func scanBinary(b []byte, r *resp) error {
	if len(b) < 21 {
		return errBadResp
	}
	be := binary.BigEndian
	r.code = int32(int16(be.Uint16(b)))
	r.opaque = int32(be.Uint32(b[5:]))
	r.flag = int32(be.Uint32(b[9:]))
	rl := uint64(be.Uint32(b[13:]))
	rest := b[17:]
	if rl > uint64(len(rest)) {
		return errBadResp
	}
	rest = rest[rl:]
	if len(rest) < 4 {
		return errBadResp
	}
	el := uint64(be.Uint32(rest))
	rest = rest[4:]
	if el > uint64(len(rest)) {
		return errBadResp
	}
	ext := rest[:el]
	for len(ext) > 0 {
		if len(ext) < 2 {
			return errBadResp
		}
		kl := int(be.Uint16(ext))
		ext = ext[2:]
		if kl+4 > len(ext) {
			return errBadResp
		}
		k := ext[:kl]
		vl := uint64(be.Uint32(ext[kl:]))
		ext = ext[kl+4:]
		if vl > uint64(len(ext)) {
			return errBadResp
		}
		r.ext(k, ext[:vl])
		ext = ext[vl:]
	}
	return nil
}

// scanJSON walks a RemotingCommand JSON object: numbers for code, opaque and
// flag, string pairs inside extFields; everything else is skipped. Escapes in
// strings are skipped over, not decoded (the fields read are plain ASCII).
func scanJSON(b []byte, r *resp) error {
	s := jscan{b: b}
	if !s.expect('{') {
		return errBadResp
	}
	if s.peek() == '}' {
		return nil
	}
	for {
		k, ok := s.str()
		if !ok || !s.expect(':') {
			return errBadResp
		}
		switch string(k) {
		case "code", "opaque", "flag":
			n, ok := s.num()
			if !ok {
				return errBadResp
			}
			switch string(k) {
			case "code":
				r.code = int32(n)
			case "opaque":
				r.opaque = int32(n)
			default:
				r.flag = int32(n)
			}
		case "extFields":
			if s.peek() == '{' {
				s.i++
				if s.peek() == '}' {
					s.i++
					break
				}
				for {
					ek, ok := s.str()
					if !ok || !s.expect(':') {
						return errBadResp
					}
					if s.peek() == '"' {
						v, ok := s.str()
						if !ok {
							return errBadResp
						}
						r.ext(ek, v)
					} else if !s.skip() {
						return errBadResp
					}
					if s.peek() == ',' {
						s.i++
						continue
					}
					if !s.expect('}') {
						return errBadResp
					}
					break
				}
			} else if !s.skip() {
				return errBadResp
			}
		default:
			if !s.skip() {
				return errBadResp
			}
		}
		if s.peek() == ',' {
			s.i++
			continue
		}
		if !s.expect('}') {
			return errBadResp
		}
		return nil
	}
}

type jscan struct {
	b []byte
	i int
}

func (s *jscan) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\n' || s.b[s.i] == '\t' || s.b[s.i] == '\r') {
		s.i++
	}
}

func (s *jscan) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *jscan) expect(c byte) bool {
	if s.peek() != c {
		return false
	}
	s.i++
	return true
}

// str returns the raw (still escaped) contents of a string literal.
func (s *jscan) str() ([]byte, bool) {
	if !s.expect('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '\\':
			s.i += 2
		case '"':
			v := s.b[start:s.i]
			s.i++
			return v, true
		default:
			s.i++
		}
	}
	return nil, false
}

func (s *jscan) num() (int64, bool) {
	s.ws()
	start := s.i
	for s.i < len(s.b) && (s.b[s.i] == '-' || (s.b[s.i] >= '0' && s.b[s.i] <= '9')) {
		s.i++
	}
	return atoi(s.b[start:s.i])
}

// skip skips one JSON value of any kind.
func (s *jscan) skip() bool {
	switch c := s.peek(); {
	case c == '"':
		_, ok := s.str()
		return ok
	case c == '{' || c == '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if _, ok := s.str(); !ok {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	default: // number, true, false, null
		start := s.i
		for s.i < len(s.b) && s.b[s.i] != ',' && s.b[s.i] != '}' && s.b[s.i] != ']' {
			s.i++
		}
		return s.i > start
	}
}
