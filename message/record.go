package message

// Stored message record: CommitLog record and pull/query response body
// record (CommitLog / MessageExtEncoder / MessageDecoder). Big-endian.
// Offsets for IPv4 born and store hosts; each IPv6 host is 20 bytes instead
// of 8 and shifts what follows by 12.
//
//	off  size  field
//	  0     4  TOTALSIZE (whole record, this field included)
//	  4     4  MAGICCODE  MagicV1 (1-byte topic length) / MagicV2 (2-byte)
//	  8     4  BODYCRC    crc32 IEEE of body & 0x7FFFFFFF
//	 12     4  QUEUEID
//	 16     4  FLAG
//	 20     8  QUEUEOFFSET (entry index in the consume queue)
//	 28     8  PHYSICALOFFSET (commit log offset of byte 0)
//	 36     4  SYSFLAG
//	 40     8  BORNTIMESTAMP ms
//	 48   8/20 BORNHOST addr(4|16) + port int32   (IPv6 if SYSFLAG&0x10)
//	 56     8  STORETIMESTAMP ms
//	 64   8/20 STOREHOST addr(4|16) + port int32  (IPv6 if SYSFLAG&0x20)
//	 72     4  RECONSUMETIMES
//	 76     8  PREPARED TRANSACTION OFFSET
//	 84  4+n   BODY length int32, body bytes
//	 ..  1+t   TOPIC length (V1: 1 byte, V2: 2 bytes), topic bytes
//	 ..  2+p   PROPERTIES length int16, properties bytes
//
// Fixed overhead for V1 with two IPv4 hosts: 91 bytes.
//
// End-of-file BLANK record: TOTALSIZE = bytes left in the file, MAGICCODE =
// MagicBlank; only those 8 bytes are written.

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"net/netip"
)

// Positions of fixed fields (valid whatever the host widths).
const (
	PosTotalSize      = 0
	PosMagic          = 4
	PosBodyCRC        = 8
	PosQueueID        = 12
	PosFlag           = 16
	PosQueueOffset    = 20
	PosPhysicalOffset = 28
	PosSysFlag        = 36
	PosBornTimestamp  = 40
	PosBornHost       = 48
)

// Record is a stored message. DecodeRecord fills Body as a view into its
// input; Topic and Properties are copies.
type Record struct {
	QueueID                   int32
	Flag                      int32
	QueueOffset               int64
	PhysicalOffset            int64
	SysFlag                   int32
	BornTimestamp             int64
	BornHost                  netip.AddrPort
	StoreTimestamp            int64
	StoreHost                 netip.AddrPort
	ReconsumeTimes            int32
	PreparedTransactionOffset int64
	// BodyCRC is the masked body CRC. AppendRecord computes it when zero
	// (so callers may compute it ahead, outside a lock).
	BodyCRC    int32
	Body       []byte
	Topic      string
	Properties string
}

// RecordView is a decoded record whose Body, Topic and Properties are
// views into the decoded buffer (no allocation). Valid only as long as the
// buffer is.
type RecordView struct {
	TotalSize                 int32
	Magic                     int32
	BodyCRC                   int32
	QueueID                   int32
	Flag                      int32
	QueueOffset               int64
	PhysicalOffset            int64
	SysFlag                   int32
	BornTimestamp             int64
	BornHost                  netip.AddrPort
	StoreTimestamp            int64
	StoreHost                 netip.AddrPort
	ReconsumeTimes            int32
	PreparedTransactionOffset int64
	Body                      []byte
	Topic                     []byte
	Properties                []byte
}

// BodyCRC is UtilAll.crc32: CRC-32/IEEE of body masked with 0x7FFFFFFF.
func BodyCRC(body []byte) int32 {
	return int32(crc32.ChecksumIEEE(body) & 0x7FFFFFFF)
}

// hostLen is the width of a host field for the given v6 flag.
func hostLen(v6 bool) int {
	if v6 {
		return 20
	}
	return 8
}

func isV6(a netip.AddrPort) bool {
	ad := a.Addr()
	return ad.IsValid() && !ad.Is4() && !ad.Is4In6()
}

// HostFlags returns sysFlag with the IPv6 host bits set to match bornHost
// and storeHost.
func HostFlags(sysFlag int32, bornHost, storeHost netip.AddrPort) int32 {
	sysFlag &^= FlagBornHostV6 | FlagStoreHostV6
	if isV6(bornHost) {
		sysFlag |= FlagBornHostV6
	}
	if isV6(storeHost) {
		sysFlag |= FlagStoreHostV6
	}
	return sysFlag
}

// RecordSize is the encoded size of a record (MessageExtEncoder
// calMsgLength). topicLen > MaxTopicLenV1 selects the V2 layout.
func RecordSize(sysFlag int32, bodyLen, topicLen, propsLen int) int {
	topicLenSize := 1
	if topicLen > MaxTopicLenV1 {
		topicLenSize = 2
	}
	return 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 +
		hostLen(sysFlag&FlagBornHostV6 != 0) + 8 +
		hostLen(sysFlag&FlagStoreHostV6 != 0) + 4 + 8 +
		4 + bodyLen + topicLenSize + topicLen + 2 + propsLen
}

// EncodedSize is RecordSize for r (host flags derived from r's hosts).
func (r *Record) EncodedSize() int {
	return RecordSize(HostFlags(r.SysFlag, r.BornHost, r.StoreHost), len(r.Body), len(r.Topic), len(r.Properties))
}

// putHost writes addr (4 or 16 bytes) and int32 port into b, returning the
// bytes written. IPv4-mapped addresses and the zero Addr are written as IPv4.
func putHost(b []byte, h netip.AddrPort) int {
	if isV6(h) {
		a := h.Addr().As16()
		copy(b, a[:])
		binary.BigEndian.PutUint32(b[16:], uint32(h.Port()))
		return 20
	}
	var a [4]byte
	if h.Addr().IsValid() {
		a = h.Addr().Unmap().As4()
	}
	copy(b, a[:])
	binary.BigEndian.PutUint32(b[4:], uint32(h.Port()))
	return 8
}

// AppendRecord appends r encoded as a V1 record (V2 if the topic is longer
// than MaxTopicLenV1 bytes) to dst. The IPv6 bits of SysFlag are set from
// the hosts; BodyCRC is computed when r.BodyCRC is 0. It returns ErrTooLong
// for an over-long topic or properties string; body size limits are the
// caller's business. It does not allocate when cap(dst) suffices.
func AppendRecord(dst []byte, r *Record) ([]byte, error) {
	if len(r.Topic) > MaxTopicLenV2 || len(r.Topic) == 0 {
		return dst, fmt.Errorf("encode record: topic length %d: %w", len(r.Topic), ErrTooLong)
	}
	if len(r.Properties) > MaxPropertiesLen {
		return dst, fmt.Errorf("encode record: properties length %d: %w", len(r.Properties), ErrTooLong)
	}
	sysFlag := HostFlags(r.SysFlag, r.BornHost, r.StoreHost)
	size := RecordSize(sysFlag, len(r.Body), len(r.Topic), len(r.Properties))
	crc := r.BodyCRC
	if crc == 0 {
		crc = BodyCRC(r.Body)
	}
	magic := MagicV1
	if len(r.Topic) > MaxTopicLenV1 {
		magic = MagicV2
	}
	start := len(dst)
	dst = grow(dst, size)
	b := dst[start : start+size]
	be := binary.BigEndian
	be.PutUint32(b[0:], uint32(size))
	be.PutUint32(b[4:], uint32(magic))
	be.PutUint32(b[8:], uint32(crc))
	be.PutUint32(b[12:], uint32(r.QueueID))
	be.PutUint32(b[16:], uint32(r.Flag))
	be.PutUint64(b[20:], uint64(r.QueueOffset))
	be.PutUint64(b[28:], uint64(r.PhysicalOffset))
	be.PutUint32(b[36:], uint32(sysFlag))
	be.PutUint64(b[40:], uint64(r.BornTimestamp))
	p := 48
	p += putHost(b[p:], r.BornHost)
	be.PutUint64(b[p:], uint64(r.StoreTimestamp))
	p += 8
	p += putHost(b[p:], r.StoreHost)
	be.PutUint32(b[p:], uint32(r.ReconsumeTimes))
	p += 4
	be.PutUint64(b[p:], uint64(r.PreparedTransactionOffset))
	p += 8
	be.PutUint32(b[p:], uint32(len(r.Body)))
	p += 4
	p += copy(b[p:], r.Body)
	if magic == MagicV1 {
		b[p] = byte(len(r.Topic))
		p++
	} else {
		be.PutUint16(b[p:], uint16(len(r.Topic)))
		p += 2
	}
	p += copy(b[p:], r.Topic)
	be.PutUint16(b[p:], uint16(len(r.Properties)))
	p += 2
	p += copy(b[p:], r.Properties)
	if p != size {
		panic("BUG: message: record size mismatch")
	}
	return dst, nil
}

// AppendBlank appends the 8-byte BLANK record announcing that total bytes
// (TOTALSIZE) are left unused at the end of a file.
func AppendBlank(dst []byte, total int32) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(total))
	return binary.BigEndian.AppendUint32(dst, 0xCBD43194) // MagicBlank
}

// grow extends dst by n bytes (contents of the new bytes unspecified).
func grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst[:len(dst)+n]
	}
	nb := make([]byte, len(dst)+n, 2*cap(dst)+n)
	copy(nb, dst)
	return nb
}

// StoreTimestampPos is the position of STORETIMESTAMP for sysFlag.
func StoreTimestampPos(sysFlag int32) int {
	return PosBornHost + hostLen(sysFlag&FlagBornHostV6 != 0)
}

// DecodeRecordView decodes one record from the start of b without
// allocating and returns the bytes after it. Errors (wrapped):
// ErrShortBuffer when b ends inside the record (or is shorter than 8 bytes),
// ErrBlank for a BLANK record (TotalSize set in the view), ErrBadMagic,
// ErrCorrupt when lengths are inconsistent with TOTALSIZE. The body CRC is
// not verified (see BodyCRC).
func DecodeRecordView(b []byte) (RecordView, []byte, error) {
	var v RecordView
	if len(b) < 8 {
		return v, b, fmt.Errorf("decode record: %d bytes: %w", len(b), ErrShortBuffer)
	}
	be := binary.BigEndian
	v.TotalSize = int32(be.Uint32(b[0:]))
	v.Magic = int32(be.Uint32(b[4:]))
	switch v.Magic {
	case MagicV1, MagicV2:
	case MagicBlank:
		return v, b, ErrBlank
	default:
		return v, b, fmt.Errorf("decode record: magic %#x: %w", uint32(v.Magic), ErrBadMagic)
	}
	total := int(v.TotalSize)
	if total < RecordSize(0, 0, 0, 0) {
		return v, b, fmt.Errorf("decode record: total size %d: %w", v.TotalSize, ErrCorrupt)
	}
	if total > len(b) {
		return v, b, fmt.Errorf("decode record: total size %d, have %d: %w", total, len(b), ErrShortBuffer)
	}
	r := b[:total]
	v.BodyCRC = int32(be.Uint32(r[8:]))
	v.QueueID = int32(be.Uint32(r[12:]))
	v.Flag = int32(be.Uint32(r[16:]))
	v.QueueOffset = int64(be.Uint64(r[20:]))
	v.PhysicalOffset = int64(be.Uint64(r[28:]))
	v.SysFlag = int32(be.Uint32(r[36:]))
	v.BornTimestamp = int64(be.Uint64(r[40:]))
	fixed := RecordSize(v.SysFlag, 0, 0, 0) - 1 - 2 // up to and including the body length field
	if total < fixed {
		return v, b, fmt.Errorf("decode record: total size %d below fixed part: %w", total, ErrCorrupt)
	}
	p := 48
	var n int
	v.BornHost, n = readHost(r[p:], v.SysFlag&FlagBornHostV6 != 0)
	p += n
	v.StoreTimestamp = int64(be.Uint64(r[p:]))
	p += 8
	v.StoreHost, n = readHost(r[p:], v.SysFlag&FlagStoreHostV6 != 0)
	p += n
	v.ReconsumeTimes = int32(be.Uint32(r[p:]))
	p += 4
	v.PreparedTransactionOffset = int64(be.Uint64(r[p:]))
	p += 8
	bodyLen := int(int32(be.Uint32(r[p:])))
	p += 4
	if bodyLen < 0 || bodyLen > total-p {
		return v, b, fmt.Errorf("decode record: body length %d: %w", bodyLen, ErrCorrupt)
	}
	v.Body = r[p : p+bodyLen : p+bodyLen]
	p += bodyLen
	var topicLen int
	if v.Magic == MagicV1 {
		if p+1 > total {
			return v, b, fmt.Errorf("decode record: topic length: %w", ErrCorrupt)
		}
		topicLen = int(r[p])
		p++
	} else {
		if p+2 > total {
			return v, b, fmt.Errorf("decode record: topic length: %w", ErrCorrupt)
		}
		topicLen = int(int16(be.Uint16(r[p:])))
		p += 2
	}
	if topicLen < 0 || topicLen > total-p {
		return v, b, fmt.Errorf("decode record: topic length %d: %w", topicLen, ErrCorrupt)
	}
	v.Topic = r[p : p+topicLen : p+topicLen]
	p += topicLen
	if p+2 > total {
		return v, b, fmt.Errorf("decode record: properties length: %w", ErrCorrupt)
	}
	propsLen := int(int16(be.Uint16(r[p:])))
	p += 2
	if propsLen < 0 || propsLen != total-p {
		return v, b, fmt.Errorf("decode record: properties length %d, total size %d: %w", propsLen, total, ErrCorrupt)
	}
	v.Properties = r[p:total:total]
	return v, b[total:], nil
}

func readHost(b []byte, v6 bool) (netip.AddrPort, int) {
	if v6 {
		a := netip.AddrFrom16([16]byte(b[:16]))
		return netip.AddrPortFrom(a, uint16(binary.BigEndian.Uint32(b[16:]))), 20
	}
	a := netip.AddrFrom4([4]byte(b[:4]))
	return netip.AddrPortFrom(a, uint16(binary.BigEndian.Uint32(b[4:]))), 8
}

// DecodeRecord is DecodeRecordView returning a Record: Body is a view into
// b, Topic and Properties are copies.
func DecodeRecord(b []byte) (Record, []byte, error) {
	v, rest, err := DecodeRecordView(b)
	if err != nil {
		return Record{}, rest, err
	}
	return v.Record(), rest, nil
}

// Record converts the view; Body stays a view, Topic and Properties are copied.
func (v *RecordView) Record() Record {
	return Record{
		QueueID:                   v.QueueID,
		Flag:                      v.Flag,
		QueueOffset:               v.QueueOffset,
		PhysicalOffset:            v.PhysicalOffset,
		SysFlag:                   v.SysFlag,
		BornTimestamp:             v.BornTimestamp,
		BornHost:                  v.BornHost,
		StoreTimestamp:            v.StoreTimestamp,
		StoreHost:                 v.StoreHost,
		ReconsumeTimes:            v.ReconsumeTimes,
		PreparedTransactionOffset: v.PreparedTransactionOffset,
		BodyCRC:                   v.BodyCRC,
		Body:                      v.Body,
		Topic:                     string(v.Topic),
		Properties:                string(v.Properties),
	}
}
