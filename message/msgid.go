package message

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Offset message id (MessageDecoder.createMessageId), uppercase hex of:
//
//	IPv4: storeHost addr(4) | port int32(4) | commit log offset int64(8)  -> 32 chars
//	IPv6: storeHost addr(16) | port int32(4) | commit log offset int64(8) -> 56 chars
//
// Decoders tell the two apart by length only.
const (
	OffsetMsgIDLenV4 = 32
	OffsetMsgIDLenV6 = 56
)

const hexUpper = "0123456789ABCDEF"

// AppendOffsetMsgID appends the offset message id of a record stored at
// phyOffset by storeHost. An IPv4-mapped IPv6 address is written as IPv4.
func AppendOffsetMsgID(dst []byte, storeHost netip.AddrPort, phyOffset int64) []byte {
	var raw [28]byte
	n := putHost(raw[:], storeHost)
	binary.BigEndian.PutUint64(raw[n:], uint64(phyOffset))
	return appendHex(dst, raw[:n+8])
}

// OffsetMsgID returns the offset message id as a string.
func OffsetMsgID(storeHost netip.AddrPort, phyOffset int64) string {
	var buf [OffsetMsgIDLenV6]byte
	return string(AppendOffsetMsgID(buf[:0], storeHost, phyOffset))
}

// DecodeOffsetMsgID parses an offset message id (either case of hex).
func DecodeOffsetMsgID(id string) (netip.AddrPort, int64, error) {
	var raw [28]byte
	var ipLen int
	switch len(id) {
	case OffsetMsgIDLenV4:
		ipLen = 4
	case OffsetMsgIDLenV6:
		ipLen = 16
	default:
		return netip.AddrPort{}, 0, fmt.Errorf("decode offset msg id %q: length %d: %w", id, len(id), ErrBadMsgID)
	}
	n := len(id) / 2
	for i := 0; i < n; i++ {
		hi, ok1 := unhex(id[2*i])
		lo, ok2 := unhex(id[2*i+1])
		if !ok1 || !ok2 {
			return netip.AddrPort{}, 0, fmt.Errorf("decode offset msg id %q: not hex: %w", id, ErrBadMsgID)
		}
		raw[i] = hi<<4 | lo
	}
	var addr netip.Addr
	if ipLen == 4 {
		addr = netip.AddrFrom4([4]byte(raw[:4]))
	} else {
		addr = netip.AddrFrom16([16]byte(raw[:16]))
	}
	port := int32(binary.BigEndian.Uint32(raw[ipLen:]))
	if port < 0 || port > 65535 {
		return netip.AddrPort{}, 0, fmt.Errorf("decode offset msg id %q: port %d: %w", id, port, ErrBadMsgID)
	}
	off := int64(binary.BigEndian.Uint64(raw[ipLen+4:]))
	return netip.AddrPortFrom(addr, uint16(port)), off, nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

func appendHex(dst, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, hexUpper[c>>4], hexUpper[c&0xF])
	}
	return dst
}

// UniqIDGen creates UNIQ_KEY values the way Java's MessageClientIDSetter
// does, uppercase hex of:
//
//	ip(4 or 16) | pid int16 | hash int32 | ms since start of month (local time) int32 | counter int16
//
// (32 hex chars for IPv4). Safe for concurrent use.
type UniqIDGen struct {
	prefix  []byte // hex of ip|pid|hash, immutable
	counter atomic.Uint32

	mu        sync.Mutex
	startTime int64 // ms, start of the current month
	nextStart int64 // ms, start of the next month
}

// NewUniqIDGen returns a generator for a process at ip with the given pid
// and a per-instance hash (Java uses the class loader's hash code).
func NewUniqIDGen(ip netip.Addr, pid int, hash int32) *UniqIDGen {
	ip = ip.Unmap()
	var raw [22]byte
	var n int
	if ip.Is4() {
		a := ip.As4()
		n = copy(raw[:], a[:])
	} else {
		a := ip.As16()
		n = copy(raw[:], a[:])
	}
	binary.BigEndian.PutUint16(raw[n:], uint16(int16(pid)))
	binary.BigEndian.PutUint32(raw[n+2:], uint32(hash))
	return &UniqIDGen{prefix: appendHex(nil, raw[:n+6])}
}

// Append appends a new id for time now to dst.
func (g *UniqIDGen) Append(dst []byte, now time.Time) []byte {
	ms := now.UnixMilli()
	g.mu.Lock()
	if ms >= g.nextStart || ms < g.startTime-1_000_000 {
		y, mo, _ := now.Date()
		start := time.Date(y, mo, 1, 0, 0, 0, 0, now.Location())
		g.startTime = start.UnixMilli()
		g.nextStart = start.AddDate(0, 1, 0).UnixMilli()
	}
	diff := int32(ms - g.startTime)
	g.mu.Unlock()
	if diff < 0 && diff > -1_000_000 {
		diff = 0
	}
	cnt := uint16(g.counter.Add(1) - 1)
	dst = append(dst, g.prefix...)
	var raw [6]byte
	binary.BigEndian.PutUint32(raw[:], uint32(diff))
	binary.BigEndian.PutUint16(raw[4:], cnt)
	return appendHex(dst, raw[:])
}

// Next returns a new id for time now.
func (g *UniqIDGen) Next(now time.Time) string {
	var buf [64]byte
	return string(g.Append(buf[:0], now))
}
