package testutil

import (
	"bytes"
	"testing"
)

func TestParseVector(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []byte
		bad      bool
	}{
		{"hex pairs and blanks", "0000 0073\tDA\r\n", []byte{0, 0, 0, 0x73, 0xda}, false},
		{"comments", "# all comment\n01 # 02\n03#04", []byte{1, 3}, false},
		{"strings", "02 \"a#b\\x01\" `c\"d` 03", []byte("\x02a#b\x01c\"d\x03"), false},
		{"odd digits", "012", nil, true},
		{"not hex", "0g", nil, true},
		{"sign", "+1", nil, true},
		{"open string", `"abc`, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseVector(tc.in)
			if tc.bad {
				if err == nil {
					t.Fatalf("parsed %x, want an error", got)
				}
				return
			}
			if err != nil || !bytes.Equal(got, tc.want) {
				t.Fatalf("got %x, %v; want %x", got, err, tc.want)
			}
		})
	}
}
