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
	for k, v := range c.ExtFields {
		if len(k) > 0x7FFF {
			continue // cannot be represented; Java would throw
		}
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(k)))
		dst = append(dst, k...)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(v)))
		dst = append(dst, v...)
	}
	binary.BigEndian.PutUint32(dst[lenAt:], uint32(len(dst)-lenAt-4))
	return dst
}

// decodeBinaryHeader copies the header's text into one string; the remark and
// every key and value are substrings of it.
func decodeBinaryHeader(b []byte) (*Command, error) {
	if len(b) < 21 {
		return nil, fmt.Errorf("%w: binary header %d bytes, need 21", ErrMalformed, len(b))
	}
	c := &Command{
		Code:     int32(int16(binary.BigEndian.Uint16(b))),
		Language: LanguageCode(b[2]),
		Version:  int32(int16(binary.BigEndian.Uint16(b[3:]))),
		Opaque:   int32(binary.BigEndian.Uint32(b[5:])),
		Flag:     int32(binary.BigEndian.Uint32(b[9:])),
	}
	text := string(b) // one allocation for all strings below
	rl := binary.BigEndian.Uint32(b[13:])
	rest := b[17:]
	at := func(sub []byte) int { return len(b) - len(sub) } // offset of sub in b
	if uint64(rl) > uint64(len(rest)) {
		return nil, fmt.Errorf("%w: remark length %d exceeds header", ErrMalformed, rl)
	}
	c.Remark = text[at(rest) : at(rest)+int(rl)]
	rest = rest[rl:]
	if len(rest) < 4 {
		return nil, fmt.Errorf("%w: binary header truncated before extFields", ErrMalformed)
	}
	el := binary.BigEndian.Uint32(rest)
	rest = rest[4:]
	if uint64(el) > uint64(len(rest)) {
		return nil, fmt.Errorf("%w: extFields length %d exceeds header", ErrMalformed, el)
	}
	ext := rest[:el]
	if len(ext) > 0 {
		c.ExtFields = make(map[string]string, 16)
	}
	for len(ext) > 0 {
		if len(ext) < 2 {
			return nil, fmt.Errorf("%w: truncated extFields key length", ErrMalformed)
		}
		kl := int(binary.BigEndian.Uint16(ext))
		ext = ext[2:]
		if kl > len(ext) {
			return nil, fmt.Errorf("%w: extFields key length %d", ErrMalformed, kl)
		}
		k := text[at(ext) : at(ext)+kl]
		ext = ext[kl:]
		if len(ext) < 4 {
			return nil, fmt.Errorf("%w: truncated extFields value length", ErrMalformed)
		}
		vl := binary.BigEndian.Uint32(ext)
		ext = ext[4:]
		if uint64(vl) > uint64(len(ext)) {
			return nil, fmt.Errorf("%w: extFields value length %d", ErrMalformed, vl)
		}
		if kl > 0 && vl > 0 {
			c.ExtFields[k] = text[at(ext) : at(ext)+int(vl)]
		}
		ext = ext[vl:]
	}
	return c, nil
}
