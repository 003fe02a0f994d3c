package remoting

// ROCKETMQ binary header (RocketMQSerializable), big-endian:
//
//	0  int16 code
//	2  uint8 language
//	3  int16 version
//	5  int32 opaque
//	9  int32 flag
//	13 int32 remarkLength R, then R bytes UTF-8
//	   int32 extFieldsLength E, then E bytes of entries:
//	       int16 keyLength, key, int32 valueLength, value
//
// A zero length decodes as "absent" (Java's readStr returns null).

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

func appendBinaryHeader(dst []byte, c *Command) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(c.Code)))
	dst = append(dst, byte(c.Language))
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(c.Version)))
	dst = binary.BigEndian.AppendUint32(dst, uint32(c.Opaque))
	dst = binary.BigEndian.AppendUint32(dst, uint32(c.Flag))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(c.Remark)))
	dst = append(dst, c.Remark...)
	lenAt := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	for _, f := range c.ExtFields {
		if len(f.Key) > 0x7FFF {
			continue // cannot be represented; Java would throw
		}
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(f.Key)))
		dst = append(dst, f.Key...)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(f.Value)))
		dst = append(dst, f.Value...)
	}
	binary.BigEndian.PutUint32(dst[lenAt:], uint32(len(dst)-lenAt-4))
	return dst
}

// decodeBinaryHeader fills c from a binary header. The remark and fields are
// views into b until the caller interns them. Beyond maxFields fields (0: no
// limit) the rest are checked but not stored, and ErrTooManyFields is
// returned with the fixed fields (code, opaque, flag) decoded.
func decodeBinaryHeader(c *Command, b []byte, maxFields int) error {
	if len(b) < 21 {
		return fmt.Errorf("%w: binary header %d bytes, need 21", ErrMalformed, len(b))
	}
	c.Code = int32(int16(binary.BigEndian.Uint16(b)))
	c.Language = LanguageCode(b[2])
	c.Version = int32(int16(binary.BigEndian.Uint16(b[3:])))
	c.Opaque = int32(binary.BigEndian.Uint32(b[5:]))
	c.Flag = int32(binary.BigEndian.Uint32(b[9:]))
	rl := binary.BigEndian.Uint32(b[13:])
	rest := b[17:]
	if uint64(rl) > uint64(len(rest)) {
		return fmt.Errorf("%w: remark length %d exceeds header", ErrMalformed, rl)
	}
	c.Remark = view(rest[:rl])
	rest = rest[rl:]
	if len(rest) < 4 {
		return fmt.Errorf("%w: binary header truncated before extFields", ErrMalformed)
	}
	el := binary.BigEndian.Uint32(rest)
	rest = rest[4:]
	if uint64(el) > uint64(len(rest)) {
		return fmt.Errorf("%w: extFields length %d exceeds header", ErrMalformed, el)
	}
	ext := rest[:el]
	over := false
	for len(ext) > 0 {
		if len(ext) < 2 {
			return fmt.Errorf("%w: truncated extFields key length", ErrMalformed)
		}
		kl := int(binary.BigEndian.Uint16(ext))
		ext = ext[2:]
		if kl > len(ext) {
			return fmt.Errorf("%w: extFields key length %d", ErrMalformed, kl)
		}
		k := ext[:kl]
		ext = ext[kl:]
		if len(ext) < 4 {
			return fmt.Errorf("%w: truncated extFields value length", ErrMalformed)
		}
		vl := binary.BigEndian.Uint32(ext)
		ext = ext[4:]
		if uint64(vl) > uint64(len(ext)) {
			return fmt.Errorf("%w: extFields value length %d", ErrMalformed, vl)
		}
		if kl > 0 && vl > 0 { // Java's readStr turns a zero length into null: absent
			if maxFields > 0 && len(c.ExtFields) >= maxFields {
				over = true
			} else {
				c.ExtFields = append(c.ExtFields, Field{view(k), view(ext[:vl])})
			}
		}
		ext = ext[vl:]
	}
	if over {
		return ErrTooManyFields
	}
	return nil
}

// view is b as a string without copying; valid while b is (see internText).
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
