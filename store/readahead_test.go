package store

import (
	"testing"
	"unsafe"
)

// The scan's read-ahead advises each byte of the log once, in order,
// across file ends, keeping between half a window and a window ahead.
func TestReadAheadAdvisesAheadOnce(t *testing.T) {
	const size, window = 1000, 256
	var files []*mappedFile
	backing := make([]byte, 3*size)
	for i := range 3 {
		files = append(files, &mappedFile{start: int64(i) * size, size: size, data: backing[i*size : (i+1)*size]})
	}
	var advised []int64           // log offsets, a pair per call
	ra := newReadAhead(files[1:]) // a scan from the second file
	ra.window = window
	ra.advise = func(b []byte) {
		off := int64(uintptr(unsafe.Pointer(&b[0])) - uintptr(unsafe.Pointer(&backing[0])))
		advised = append(advised, off, off+int64(len(b)))
	}
	for i, mf := range ra.files {
		for pos := int64(0); pos < mf.size; pos += 10 {
			ra.at(i, pos)
			end := advised[len(advised)-1]
			if ahead := end - (mf.start + pos); end < 3*size && (ahead < window/2 || ahead > window) {
				t.Fatalf("scan at %d: advised to %d, %d ahead", mf.start+pos, end, ahead)
			}
		}
	}
	want := int64(size) // contiguous from the scan's start to the log's end
	for k := 0; k < len(advised); k += 2 {
		if advised[k] != want {
			t.Fatalf("advice %d starts at %d, want %d: %v", k/2, advised[k], want, advised)
		}
		want = advised[k+1]
	}
	if want != 3*size {
		t.Fatalf("advised up to %d of %d", want, 3*size)
	}
}
