package testutil

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
)

// Pipeline writes frames (n requests with binary headers) on nc and reads
// n answers into in, failing on any code but SUCCESS (0). It allocates
// nothing itself: the send benchmarks count the broker's allocations.
func Pipeline(tb testing.TB, nc net.Conn, frames []byte, n int, in []byte) {
	if _, err := nc.Write(frames); err != nil {
		tb.Fatal(err)
	}
	var lp [4]byte
	for range n {
		if _, err := io.ReadFull(nc, lp[:]); err != nil {
			tb.Fatal(err)
		}
		frame := in[:binary.BigEndian.Uint32(lp[:])]
		if _, err := io.ReadFull(nc, frame); err != nil {
			tb.Fatal(err)
		}
		// Binary header: the code is its first int16.
		if code := int16(binary.BigEndian.Uint16(frame[4:])); code != 0 {
			tb.Fatalf("answer code %d", code)
		}
	}
}
