package autoswitch

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/rocketgo/rocketgo/store"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The byte positions Apache 5.3.3 reads: AutoSwitchHAConnection's reader
// (state 0, isSyncFromLastFile 16-12, isAsyncLearner 16-10, brokerId 16-8;
// report offset 4) and AutoSwitchHAClient's (state 20-20, body size 20-16,
// offset 20-12, epoch 20-4, epoch start 36-16, confirm 36-8).
func TestFrameLayout(t *testing.T) {
	cases := []struct {
		name string
		got  []byte
		want string
	}{
		{"slave handshake", AppendSlaveHandshake(nil, true, false, 3),
			"00000001 0001 0000 0000000000000003"},
		{"slave report", AppendSlaveReport(nil, 0x0102030405),
			"00000002 0000000102030405"},
		{"master handshake", AppendMasterHandshake(nil, 4096, 5, []store.EpochEntry{{Epoch: 1, StartOffset: 0}, {Epoch: 5, StartOffset: 1024}}),
			"00000001 00000018 0000000000001000 00000005 00000001 0000000000000000 00000005 0000000000000400"},
		{"master transfer header", AppendMasterTransferHeader(nil, 7, 2048, 5, 1024, 2000),
			"00000002 00000007 0000000000000800 00000005 0000000000000400 00000000000007d0"},
	}
	for _, c := range cases {
		if want := unhex(t, c.want); !bytes.Equal(c.got, want) {
			t.Errorf("%s:\n got %x\nwant %x", c.name, c.got, want)
		}
	}
}

func TestFrameRoundTrip(t *testing.T) {
	b := AppendSlaveHandshake(nil, false, true, 9)
	b = AppendSlaveReport(b, 77)
	f, n, err := ParseSlaveFrame(b)
	if err != nil || n != SlaveHandshakeSize || f.State != StateHandshake || f.SyncFromLastFile || !f.AsyncLearner || f.BrokerID != 9 {
		t.Fatalf("handshake: %+v %d %v", f, n, err)
	}
	f, n, err = ParseSlaveFrame(b[n:])
	if err != nil || n != SlaveReportSize || f.State != StateTransfer || f.MaxOffset != 77 {
		t.Fatalf("report: %+v %d %v", f, n, err)
	}
	for i := range SlaveHandshakeSize {
		if _, n, err := ParseSlaveFrame(b[:i]); n != 0 || err != nil {
			t.Fatalf("%d bytes: n=%d %v", i, n, err)
		}
	}

	entries := []store.EpochEntry{{Epoch: 2, StartOffset: 10}, {Epoch: 3, StartOffset: 99}}
	m := AppendMasterHandshake(nil, 500, 3, entries)
	m = AppendMasterTransferHeader(m, 3, 99, 3, 99, 60)
	m = append(m, 'a', 'b', 'c')
	mf, n, err := ParseMasterFrame(m, 1<<20)
	if err != nil || n != MasterHandshakeHeaderLen+24 || mf.MaxOffset != 500 || mf.LastEpoch != 3 || len(mf.Epochs) != 2 || mf.Epochs[1] != entries[1] {
		t.Fatalf("master handshake: %+v %d %v", mf, n, err)
	}
	mf, n2, err := ParseMasterFrame(m[n:], 1<<20)
	if err != nil || n2 != MasterTransferHeaderLen+3 || mf.Offset != 99 || mf.Epoch != 3 || mf.EpochStart != 99 || mf.Confirm != 60 || string(mf.Body) != "abc" {
		t.Fatalf("transfer: %+v %d %v", mf, n2, err)
	}
	if _, n, err := ParseMasterFrame(m[n:len(m)-1], 1<<20); n != 0 || err != nil {
		t.Fatalf("short transfer: n=%d %v", n, err)
	}
}

func TestFrameRefusals(t *testing.T) {
	for name, b := range map[string][]byte{
		"slave state READY":    unhex(t, "00000000 0000000000000000"),
		"slave state 7":        unhex(t, "00000007 0000000000000000"),
		"negative report":      unhex(t, "00000002 ffffffffffffffff"),
		"slave state negative": unhex(t, "ffffffff 0000000000000000"),
	} {
		if _, _, err := ParseSlaveFrame(b); !errors.Is(err, ErrFrame) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, b := range map[string][]byte{
		"body above max":       AppendMasterTransferHeader(nil, 1<<20+1, 0, 1, 0, 0),
		"negative body":        unhex(t, "00000002 ffffffff"),
		"partial entry":        unhex(t, "00000001 0000000d"),
		"master state SUSPEND": unhex(t, "00000003 00000000"),
		"negative offset":      AppendMasterTransferHeader(nil, 0, -2, 1, 0, 0),
		"body at offset -1":    append(AppendMasterTransferHeader(nil, 1, -1, 1, 0, 0), 7),
		"negative max offset":  AppendMasterHandshake(nil, -5, 1, nil),
	} {
		if _, _, err := ParseMasterFrame(b, 1<<20); !errors.Is(err, ErrFrame) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// An Apache master with an empty commit log beats at offset -1.
	if f, n, err := ParseMasterFrame(AppendMasterTransferHeader(nil, 0, -1, 1, 0, 0), 1<<20); err != nil || n != MasterTransferHeaderLen || f.Offset != -1 {
		t.Errorf("heartbeat of an empty master: %+v %d %v", f, n, err)
	}
}

// Hostile bytes never panic nor claim more than they hold, and what parses
// re-encodes to the same bytes.
func FuzzParseMasterFrame(f *testing.F) {
	f.Add(AppendMasterHandshake(nil, 500, 3, []store.EpochEntry{{Epoch: 2, StartOffset: 10}}))
	f.Add(append(AppendMasterTransferHeader(nil, 2, 7, 1, 0, 3), 1, 2))
	f.Fuzz(func(t *testing.T, b []byte) {
		mf, n, err := ParseMasterFrame(b, 4096)
		if err != nil || n == 0 {
			return
		}
		if n > len(b) {
			t.Fatalf("consumed %d of %d", n, len(b))
		}
		var re []byte
		if mf.State == StateHandshake {
			re = AppendMasterHandshake(nil, mf.MaxOffset, mf.LastEpoch, mf.Epochs)
		} else {
			re = append(AppendMasterTransferHeader(nil, len(mf.Body), mf.Offset, mf.Epoch, mf.EpochStart, mf.Confirm), mf.Body...)
		}
		if !bytes.Equal(re, b[:n]) {
			t.Fatalf("re-encoded %x, parsed %x", re, b[:n])
		}
	})
}

func FuzzParseSlaveFrame(f *testing.F) {
	f.Add(AppendSlaveHandshake(nil, true, true, 1))
	f.Add(AppendSlaveReport(nil, 5))
	f.Fuzz(func(t *testing.T, b []byte) {
		sf, n, err := ParseSlaveFrame(b)
		if err != nil || n == 0 {
			return
		}
		if n > len(b) {
			t.Fatalf("consumed %d of %d", n, len(b))
		}
		if sf.State == StateTransfer && !bytes.Equal(AppendSlaveReport(nil, sf.MaxOffset), b[:n]) {
			t.Fatalf("report re-encoded differently: %x", b[:n])
		}
	})
}
