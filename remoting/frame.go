package remoting

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// MaxFrameLength is the largest length field accepted or produced (Netty's
// frameMaxLength 16 MiB counts the 4-byte length field too).
const MaxFrameLength = 16<<20 - 4

var (
	// ErrFrameTooLarge: the length field exceeds MaxFrameLength.
	ErrFrameTooLarge = errors.New("remoting: frame too large")
	// ErrMalformed: a frame or header that cannot be decoded.
	ErrMalformed = errors.New("remoting: malformed frame")
)

// AppendFrame appends c as a whole frame (length field included) to dst.
func AppendFrame(dst []byte, c *Command) []byte {
	return c.appendBody(AppendFrameHeader(dst, c))
}

// AppendFrameHeader appends everything of c's frame but the body; the length
// field counts the body, which the caller writes right after (writev).
func AppendFrameHeader(dst []byte, c *Command) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
	switch c.Serialize {
	case RocketMQ:
		dst = appendBinaryHeader(dst, c)
	default:
		dst = appendJSONHeader(dst, c)
	}
	headerLen := len(dst) - start - 8
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4+c.BodyLen()))
	binary.BigEndian.PutUint32(dst[start+4:], uint32(c.Serialize)<<24|uint32(headerLen)&0xFFFFFF)
	return dst
}

// DecodeFrame decodes the bytes that follow a frame's length field. The body
// of the returned Command aliases frame, so frame must be owned by the caller.
func DecodeFrame(frame []byte) (*Command, error) {
	c := &Command{}
	if err := decodeInto(c, frame, nil, 0); err != nil {
		return nil, err
	}
	return c, nil
}

// decodeInto fills c, whose fields are empty, from frame. Body aliases
// frame; the header's text is copied into arena (see internText). With more
// than maxFields header fields (0: no limit) it returns ErrTooManyFields and
// c holds only what an error answer needs: code, opaque, flag, serialize type.
func decodeInto(c *Command, frame []byte, arena *[]byte, maxFields int) error {
	if len(frame) < 4 {
		return fmt.Errorf("%w: %d bytes, need 4", ErrMalformed, len(frame))
	}
	word := binary.BigEndian.Uint32(frame)
	typ := SerializeType(word >> 24)
	headerLen := int(word & 0xFFFFFF)
	if headerLen > len(frame)-4 {
		return fmt.Errorf("%w: header length %d exceeds frame %d", ErrMalformed, headerLen, len(frame)-4)
	}
	header := frame[4 : 4+headerLen]
	var err error
	switch typ {
	case JSON:
		err = decodeJSONHeader(c, header, maxFields)
	case RocketMQ:
		err = decodeBinaryHeader(c, header, maxFields)
	default:
		return fmt.Errorf("%w: serialize type %d", ErrMalformed, typ)
	}
	if errors.Is(err, ErrTooManyFields) {
		c.Remark, c.ExtFields = "", c.ExtFields[:0] // views into frame: not to be kept
		c.Serialize = typ
		return err
	}
	if err != nil {
		return err
	}
	c.internText(arena)
	if !c.pooled {
		c.scratch = nil // only a pooled command reuses it
	}
	c.Serialize = typ
	if body := frame[4+headerLen:]; len(body) > 0 {
		c.Body = body
	}
	return nil
}
