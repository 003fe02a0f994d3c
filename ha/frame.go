package ha

import (
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
)

// Classic HA frames (spec/ha.md §1.2), big-endian, no handshake, no magic,
// no checksum:
//
//	slave → master, a report, repeated:
//	  0  8  the slave's max commit log offset (end of the bytes it holds)
//
//	master → slave, a transfer:
//	  0  8  commit log offset at which the body starts
//	  8  4  body size (0 = heartbeat)
//	 12  n  the master's commit log bytes from that offset: a raw range,
//	        records split anywhere, never across a commit log file end,
//	        a file's BLANK record and unused tail included
const (
	reportSize = 8
	headerSize = 12
	// slaveReadBuffer is the most a slave accepts as one frame: Apache's
	// slave reads into a 4 MiB buffer, so a larger body can never complete
	// there either. A master sends at most haTransferBatchSize (32 KiB).
	slaveReadBuffer = 4 << 20
)

// appendReport appends a report of offset to dst.
func appendReport(dst []byte, offset int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(offset))
}

// putHeader writes a transfer header.
func putHeader(b *[headerSize]byte, offset int64, size int) {
	binary.BigEndian.PutUint64(b[0:], uint64(offset))
	binary.BigEndian.PutUint32(b[8:], uint32(size))
}

// lastReport is the last complete report in b (Apache's reader takes the
// last whole 8 bytes of what arrived) and the number of bytes it consumed
// (a multiple of 8); ok is false when b holds no complete report.
func lastReport(b []byte) (offset int64, used int, ok bool) {
	used = len(b) &^ (reportSize - 1)
	if used == 0 {
		return 0, 0, false
	}
	return int64(binary.BigEndian.Uint64(b[used-reportSize:])), used, true
}

// errFrame marks a transfer the slave refuses: the connection closes.
type errFrame struct{ msg string }

func (e *errFrame) Error() string { return "ha: bad frame: " + e.msg }

// readFrame reads one transfer from r: the header into hdr, the body into
// buf (whose length bounds it). The body aliases buf. A negative size, or
// one larger than buf, is an errFrame before any body byte is read.
func readFrame(r io.Reader, hdr *[headerSize]byte, buf []byte) (offset int64, body []byte, err error) {
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	offset = int64(binary.BigEndian.Uint64(hdr[0:]))
	size := int32(binary.BigEndian.Uint32(hdr[8:]))
	switch {
	case offset < 0:
		return 0, nil, &errFrame{fmt.Sprintf("offset %d", offset)}
	case size < 0 || int(size) > len(buf):
		return 0, nil, &errFrame{fmt.Sprintf("body size %d at offset %d, read buffer %d", size, offset, len(buf))}
	}
	body = buf[:size]
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, nil, err
	}
	return offset, body, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
