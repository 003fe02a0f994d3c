package message

// SEND_BATCH_MESSAGE body (MessageDecoder.encodeMessages): a concatenation
// of inner messages, each
//
//	off  size  field
//	  0     4  TOTALSIZE (this inner message, this field included)
//	  4     4  MAGICCODE (0, not checked)
//	  8     4  BODYCRC (0, not checked)
//	 12     4  FLAG
//	 16     4  BODY length n
//	 20     n  body
//	 20+n   2  PROPERTIES length p (int16)
//	 22+n   p  properties
//
// TOTALSIZE must equal 22 + n + p.

import (
	"encoding/binary"
	"fmt"
)

const batchFixed = 22

// DecodeBatch calls fn for each inner message of a batch body in order.
// body and properties passed to fn are views into the input. It stops at
// the first error from fn (returned as is) or at malformed input
// (ErrShortBuffer / ErrCorrupt, wrapped with the message index).
func DecodeBatch(body []byte, fn func(flag int32, body, properties []byte) error) error {
	be := binary.BigEndian
	for i := 0; len(body) > 0; i++ {
		if len(body) < batchFixed {
			return fmt.Errorf("decode batch message %d: %d bytes: %w", i, len(body), ErrShortBuffer)
		}
		total := int(int32(be.Uint32(body)))
		if total < batchFixed || total > len(body) {
			return fmt.Errorf("decode batch message %d: total size %d, have %d: %w", i, total, len(body), ErrCorrupt)
		}
		m := body[:total]
		flag := int32(be.Uint32(m[12:]))
		n := int(int32(be.Uint32(m[16:])))
		if n < 0 || n > total-batchFixed {
			return fmt.Errorf("decode batch message %d: body length %d: %w", i, n, ErrCorrupt)
		}
		p := int(int16(be.Uint16(m[20+n:])))
		if p < 0 || 22+n+p != total {
			return fmt.Errorf("decode batch message %d: properties length %d, total size %d: %w", i, p, total, ErrCorrupt)
		}
		if err := fn(flag, m[20:20+n:20+n], m[22+n:total:total]); err != nil {
			return err
		}
		body = body[total:]
	}
	return nil
}

// AppendBatchMessage appends one inner message to a batch body.
func AppendBatchMessage(dst []byte, flag int32, body []byte, properties string) ([]byte, error) {
	if len(properties) > MaxPropertiesLen {
		return dst, fmt.Errorf("encode batch message: properties length %d: %w", len(properties), ErrTooLong)
	}
	be := binary.BigEndian
	dst = be.AppendUint32(dst, uint32(batchFixed+len(body)+len(properties)))
	dst = be.AppendUint32(dst, 0)
	dst = be.AppendUint32(dst, 0)
	dst = be.AppendUint32(dst, uint32(flag))
	dst = be.AppendUint32(dst, uint32(len(body)))
	dst = append(dst, body...)
	dst = be.AppendUint16(dst, uint16(len(properties)))
	return append(dst, properties...), nil
}
