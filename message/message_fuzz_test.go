package message

import (
	"bytes"
	"errors"
	"maps"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func FuzzDecodeRecord(f *testing.F) {
	_, good := goldenRecord(f)
	f.Add(good)
	f.Add(AppendBlank(nil, 64))
	r6 := Record{
		BornHost: netip.MustParseAddrPort("[::1]:1"), StoreHost: netip.MustParseAddrPort("[::2]:2"),
		Body: []byte("x"), Topic: strings.Repeat("t", 130), Properties: "a\x01b\x02",
	}
	b6, _ := AppendRecord(nil, &r6)
	f.Add(b6)
	two := append(append([]byte(nil), good...), b6...)
	f.Add(two)
	for i := 0; i < len(good); i += 7 {
		f.Add(good[:i])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for len(b) > 0 {
			r, rest, err := DecodeRecord(b)
			if err != nil {
				if !errors.Is(err, ErrShortBuffer) && !errors.Is(err, ErrBlank) && !errors.Is(err, ErrBadMagic) && !errors.Is(err, ErrCorrupt) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			rec := b[:len(b)-len(rest)]
			// Round trip: re-encoding with the stored CRC gives the same bytes
			// (hosts normalise; compare only when flags match).
			r.BodyCRC = int32(uint32(r.BodyCRC))
			if r.BodyCRC != 0 && HostFlags(r.SysFlag, r.BornHost, r.StoreHost) == r.SysFlag && len(r.Topic) > 0 &&
				(len(r.Topic) > MaxTopicLenV1) == (rec[4] == 0xAB) {
				enc, err := AppendRecord(nil, &r)
				if err != nil {
					t.Fatalf("re-encode: %v", err)
				}
				// Ports are int32 on disk but uint16 in AddrPort: compare
				// decoded values (stable), and bytes when no port overflowed.
				r2, rest2, err := DecodeRecord(enc)
				if err != nil || len(rest2) != 0 || !reflect.DeepEqual(r, r2) {
					t.Fatalf("round trip unstable: %v\n%+v\n%+v", err, r, r2)
				}
				if len(enc) == len(rec) && !bytes.Equal(enc, rec) && portsFit(rec, r.SysFlag) {
					t.Fatalf("round trip\n got %x\nwant %x", enc, rec)
				}
			}
			b = rest
		}
	})
}

func FuzzDecodeBatch(f *testing.F) {
	var body []byte
	body, _ = AppendBatchMessage(body, 1, []byte("a"), "TAGS\x01x\x02")
	body, _ = AppendBatchMessage(body, 2, nil, "")
	f.Add(body)
	f.Add(body[:10])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var re []byte
		err := DecodeBatch(b, func(flag int32, body, props []byte) error {
			var err error
			re, err = AppendBatchMessage(re, flag, body, string(props))
			return err
		})
		if err != nil {
			return
		}
		// Magic and CRC fields are not checked, so compare with them zeroed.
		want := append([]byte(nil), b...)
		for p := 0; p < len(want); {
			total := int(uint32(want[p])<<24 | uint32(want[p+1])<<16 | uint32(want[p+2])<<8 | uint32(want[p+3]))
			clear(want[p+4 : p+12])
			p += total
		}
		if !bytes.Equal(re, want) {
			t.Fatalf("round trip\n got %x\nwant %x", re, want)
		}
	})
}

func FuzzParseProperties(f *testing.F) {
	f.Add("TAGS\x01TagA\x02KEYS\x01k1 k2\x02")
	f.Add("a\x01b\x01c\x02\x01x\x02y\x01\x02")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		m := ParseProperties(s)
		for k, v := range m {
			if k == "" || v == "" {
				t.Fatalf("empty name or value kept: %q=%q", k, v)
			}
			if got := Property(s, k); got != v {
				t.Fatalf("Property(%q) = %q, want %q", k, got, v)
			}
		}
		// Names and values without separators survive a round trip.
		clean := true
		for k, v := range m {
			if strings.ContainsAny(k, "\x01\x02") || strings.ContainsAny(v, "\x02") {
				clean = false
			}
		}
		if clean {
			if again := ParseProperties(string(AppendProperties(nil, m))); !maps.Equal(again, m) {
				t.Fatalf("round trip %q -> %q", m, again)
			}
		}
	})
}

func portsFit(rec []byte, sysFlag int32) bool {
	p := PosBornHost + hostLen(sysFlag&FlagBornHostV6 != 0) - 4
	q := StoreTimestampPos(sysFlag) + 8 + hostLen(sysFlag&FlagStoreHostV6 != 0) - 4
	return rec[p] == 0 && rec[p+1] == 0 && rec[q] == 0 && rec[q+1] == 0
}
